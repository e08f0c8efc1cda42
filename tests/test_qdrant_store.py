"""The experimental Qdrant backend in qdrant-client's local mode (same API as a cluster,
no server): the mirrored BM25 gives SQLite's scores, counts and filters agree, dense
search honours set/type filters, and `doc4llm search` answers the same through it."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from test_search_helpers import CLAUDE, NO_EMBED, OPENCODE, make_upstream

from doc4llm.index import build, lexstats
from doc4llm.search import levels
from doc4llm.search.analyze import analyze

pytest.importorskip("qdrant_client")
from doc4llm.index.qdrant_store import QdrantIndex  # noqa: E402

QUERIES = ["model configuration", "troubleshooting installation", "keybinds leader key", "plugins hooks",
           "get started with hooks", "PreToolUse", "opencode models provider"]


@pytest.fixture(scope="module")
def mirrored(tmp_path_factory):
    d = tmp_path_factory.mktemp("qd")
    docs = make_upstream(d / "docs")
    conn, _ = build.sync(docs, full=True)
    ids = [r[0] for r in conn.execute("SELECT id FROM sections ORDER BY id")]
    # synthetic unit vectors: section i points along axis i % 16, a little towards axis 17
    vecs = []
    for i in ids:
        v = [0.0] * 18
        v[i % 16], v[17] = 1.0, 0.1 * (i % 7)
        vecs.append(v)
    store = QdrantIndex.open(path=str(d / "qdrant"))
    assert store.export(conn, {"body": (ids, vecs)}) == len(ids)
    yield conn, store, ids
    store.close()
    conn.close()


@pytest.mark.parametrize("query", QUERIES)
def test_bm25_scores_equal_sqlite(mirrored, query):
    conn, store, _ = mirrored
    qa = analyze(query)
    found = 0
    for sets in ([CLAUDE, OPENCODE], [OPENCODE]):
        want = levels.bm25(conn, qa, sets, limit=15)
        got = store.bm25(qa.stems, sets, limit=15)
        found += len(want)
        assert sorted(got.values(), reverse=True) == pytest.approx(sorted(want.values(), reverse=True), rel=1e-5)
        for sid, score in got.items():
            if sid in want:
                assert score == pytest.approx(want[sid], rel=1e-5)
    assert found, query


def test_counts_and_set_filters(mirrored):
    conn, store, _ = mirrored
    for sets in ([CLAUDE, OPENCODE], [CLAUDE]):
        assert store.section_count(sets) == lexstats.section_count(conn, sets)
        for tok in ("model", "hook", "keybind", "zzqx"):
            assert store.doc_freq(tok, sets) == lexstats.doc_freq(conn, tok, sets)
    only = store.bm25(["model"], [CLAUDE], limit=50)
    marks = {r[0]: r[1] for r in conn.execute("SELECT id, set_name FROM sections")}
    assert only and {marks[sid] for sid in only} == {CLAUDE}


def test_dense_search_with_filters(mirrored):
    conn, store, ids = mirrored
    target = ids[5]
    q = [0.0] * 18
    q[target % 16], q[17] = 1.0, 0.1 * (target % 7)
    hits = store.vector_search("body", q, 3)
    assert hits[0][0] == target and hits[0][1] == pytest.approx(1.0, abs=1e-4)
    set_of = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT id, set_name, content_type FROM sections")}
    other = OPENCODE if set_of[target][0] == CLAUDE else CLAUDE
    assert all(set_of[sid][0] == other for sid, _ in store.vector_search("body", q, 5, [other]))
    ctype = set_of[target][1] or "prose"
    assert all((set_of[sid][1] or "prose") == ctype for sid, _ in store.vector_search("body", q, 5, None, ctype))


def test_cli_index_mirrors_and_search_answers_the_same(tmp_path):
    docs = make_upstream(tmp_path / "docs")
    env = {**NO_EMBED, "DOC4LLM_QDRANT_PATH": str(tmp_path / "qdrant")}
    plain = [json.loads(run_cli("search", "--docs-dir", docs, "--json", q, env=NO_EMBED).stdout) for q in QUERIES[:3]]
    proc = run_cli("index", "--docs-dir", docs, "--no-vectors", "--json", env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["qdrant"] > 0
    for q, want in zip(QUERIES[:3], plain, strict=True):
        proc = run_cli("search", "--docs-dir", docs, "--json", q, env=env)
        assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
        got = json.loads(proc.stdout)
        assert [(r["page"], r["heading_path"]) for r in got["results"]] == \
            [(r["page"], r["heading_path"]) for r in want["results"]]
        assert got["confidence"] == want["confidence"]


def test_search_takes_bm25_from_the_mirror_until_the_index_changes(tmp_path, monkeypatch):
    from doc4llm.index import qdrant_store
    from doc4llm.search.engine import Searcher

    docs = make_upstream(tmp_path / "docs")
    s = Searcher(docs, embedder="none", quiet=True)
    try:
        want = [r["heading_path"] for r in s.search("model configuration")["results"]]
        monkeypatch.setenv("DOC4LLM_QDRANT_PATH", str(tmp_path / "qdrant"))
        assert qdrant_store.for_search(s.conn) is None  # configured, not mirrored yet
        assert qdrant_store.mirror(s.conn, docs) > 0
        calls = []
        real = QdrantIndex.bm25
        monkeypatch.setattr(QdrantIndex, "bm25", lambda self, *a, **k: calls.append(a) or real(self, *a, **k))
        got = [r["heading_path"] for r in s.search("model configuration")["results"]]
        assert calls and got == want
        s.conn.execute("DELETE FROM sections WHERE id = (SELECT max(id) FROM sections)")
        assert qdrant_store.for_search(s.conn) is None  # the index changed: SQLite answers
    finally:
        s.close()
        qdrant_store.close_all()


def test_search_takes_vectors_from_the_mirror(tmp_path, monkeypatch):
    import threading

    from test_index_vectors import _FakeEmbeddings

    from doc4llm.index import qdrant_store
    from doc4llm.index.service import build_index
    from doc4llm.search.engine import Searcher

    server = _FakeEmbeddings()
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    docs = make_upstream(tmp_path / "docs")
    try:
        assert build_index(docs, embedder="openai:model-a")["vectors"]
        queries = ["change the model", "keyboard shortcuts", "hooks before a tool runs"]

        def scores() -> list[list[float]]:
            s = Searcher(docs, embedder="openai:model-a", quiet=True, auto_index=False)
            try:
                return [[round(r["score"], 4) for r in s.search(q, strategy="vector", k=4)["results"]]
                        for q in queries]
            finally:
                s.close()

        want = scores()
        monkeypatch.setenv("DOC4LLM_QDRANT_PATH", str(tmp_path / "qdrant"))
        out = build_index(docs, embedder="openai:model-a")
        assert out["qdrant"] > 0
        calls = []
        real = QdrantIndex.vector_search
        monkeypatch.setattr(QdrantIndex, "vector_search", lambda self, *a, **k: calls.append(a) or real(self, *a, **k))
        assert scores() == want and all(want)
        assert calls
    finally:
        qdrant_store.close_all()
        server.shutdown()
        server.server_close()
