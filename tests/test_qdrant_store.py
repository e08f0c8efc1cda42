"""The experimental Qdrant backend in qdrant-client's local mode (same API as a cluster,
no server): every primitive of index/backend.py answers as SQLite does, a reader with no
local index gives the same search JSON, exports are incremental per set, a rebuild
switches an alias, and a vanished set is dropped."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from conftest import run_cli
from test_search_helpers import CLAUDE, NO_EMBED, OPENCODE, make_upstream

from doc4llm.index import build
from doc4llm.index.backend import SqliteBackend
from doc4llm.search import levels
from doc4llm.search.analyze import analyze

pytest.importorskip("qdrant_client")
from doc4llm.index import qdrant_store  # noqa: E402
from doc4llm.index.qdrant_store import Publisher, QdrantBackend  # noqa: E402

QUERIES = ["model configuration", "troubleshooting installation", "keybinds leader key", "plugins hooks",
           "get started with hooks", "PreToolUse", "opencode models provider", "how do I change the leader key"]


def _json(result: dict) -> dict:
    """The contract minus what legitimately differs: timings, absolute paths, and result 1's
    neighbouring headings, which are read from the page file (a stateless reader has none)."""
    out = {k: v for k, v in result.items() if k != "timing_ms"}
    out["results"] = [{k: v for k, v in r.items() if k not in ("toc_path", "content_path", "nearby")}
                      for r in result["results"]]
    return out


def _search(docs, queries, **kw) -> list[dict]:
    from doc4llm.search.engine import Searcher

    s = Searcher(docs, embedder="none", quiet=True, **kw)
    try:
        return [_json(s.search(q)) for q in queries]
    finally:
        s.close()


def _points(qpath, set_name: str) -> dict[int, str]:
    """{point id: content hash} of a set's live collection."""
    client = qdrant_store.client_for({"path": str(qpath)})
    alias = qdrant_store.alias_of(set_name)
    return {int(p.id): p.payload["h"] for p in qdrant_store._scroll_points(client, alias, None, ["h"])}


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    d = tmp_path_factory.mktemp("qd")
    docs = make_upstream(d / "docs")
    with pytest.MonkeyPatch.context() as mp:  # selected while publishing only
        mp.setenv("DOC4LLM_QDRANT_PATH", str(d / "qdrant"))
        conn, _ = build.sync(docs, full=True)
        assert qdrant_store.mirror(conn, docs) == conn.execute("SELECT count(*) FROM sections").fetchone()[0]
        store = qdrant_store.for_search(None)
        assert store is not None and store.set_names() == sorted([CLAUDE, OPENCODE])
    yield conn, store, docs, d
    conn.close()
    qdrant_store.close_all()


@pytest.mark.parametrize("query", QUERIES)
def test_every_primitive_answers_as_sqlite(published, query):
    conn, store, _, _ = published
    lite = SqliteBackend(conn)
    qa = analyze(query)
    for sets in ([CLAUDE, OPENCODE], [OPENCODE]):
        want, got = lite.bm25(qa.stems, sets, 15), store.bm25(qa.stems, sets, 15)
        assert sorted(got.values(), reverse=True) == pytest.approx(sorted(want.values(), reverse=True), rel=1e-5)
        assert {s: want[s] for s in got if s in want} == pytest.approx({s: got[s] for s in got if s in want}, rel=1e-5)
        # L1's candidates in the same order (rapidfuzz breaks ties at its limit by it)
        assert list(levels.title_candidates(store, query, sets).items()) == \
            list(levels.title_candidates(conn, query, sets).items())
        for level in (levels.toc_grep, levels.title_match, levels.content_grep):
            assert level(store, qa, sets, 20) == pytest.approx(level(conn, qa, sets, 20)), level.__name__
        assert store.section_count(sets) == lite.section_count(sets)
        for tok in qa.stems:
            assert store.doc_freq(tok, sets) == lite.doc_freq(tok, sets)
    ids = list(want)[:5]
    assert store.section_rows(ids) == lite.section_rows(ids)
    pages = sorted({r["page_id"] for r in lite.section_rows(ids).values()})
    assert store.pages(pages) == lite.pages(pages)
    assert store.page_headings(pages) == lite.page_headings(pages)
    assert store.page_entries(pages) == lite.page_entries(pages) and set(lite.page_entries(pages)) == set(pages)
    for r in lite.section_rows(ids).values():
        assert store.line_span(r["page_id"], r["idx"] - 2, r["idx"] + 2) == lite.line_span(r["page_id"], r["idx"] - 2,
                                                                                           r["idx"] + 2)


def test_symbols_summaries_and_sets(published):
    conn, store, _, _ = published
    lite = SqliteBackend(conn)
    names = [r[0] for r in conn.execute("SELECT DISTINCT lname FROM symbols ORDER BY lname LIMIT 20")]
    sets = [CLAUDE, OPENCODE]
    assert sorted(store.symbol_rows(names, sets)) == sorted(lite.symbol_rows(names, sets))
    assert store.set_summaries(sets) == lite.set_summaries(sets)
    assert store.indexed_sets() == lite.indexed_sets()
    assert store.web_source(CLAUDE) == lite.web_source(CLAUDE)
    for token in ("isn't", "don't", "settings.json", "pre-tool", "model"):  # FTS5 reads some as phrases
        assert store.doc_freq(token, sets) == lite.doc_freq(token, sets), token


def test_stateless_reader_gives_the_same_json(published, tmp_path, monkeypatch):
    conn, _, docs, d = published
    want = _search(docs, QUERIES)
    monkeypatch.setenv("DOC4LLM_QDRANT_PATH", str(d / "qdrant"))
    reader = tmp_path / "reader"  # the markdown without .doc4llm: nothing to sync, nothing written
    shutil.copytree(docs, reader, ignore=shutil.ignore_patterns(".doc4llm"))
    assert _search(reader, QUERIES) == want
    assert _search(tmp_path / "no-markdown-at-all", QUERIES[:2]) == want[:2]
    assert not (reader / ".doc4llm").exists() and not (tmp_path / "no-markdown-at-all").exists()
    only = _search(tmp_path / "none", ["model configuration"], )[0]
    assert only["sets"] == sorted([CLAUDE, OPENCODE])


def test_cli_reader_with_no_local_index(published, tmp_path):
    _, _, docs, d = published
    qdrant_store.close_all()  # local mode: one process at a time on a path
    env = {**NO_EMBED, "DOC4LLM_QDRANT_PATH": str(d / "qdrant")}
    want = json.loads(run_cli("search", "--docs-dir", docs, "--json", QUERIES[0], env=NO_EMBED).stdout)
    proc = run_cli("search", "--docs-dir", tmp_path / "empty", "--json", "--set", "Claude*", QUERIES[0], env=env)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    got = json.loads(proc.stdout)
    assert got["sets"] == [CLAUDE] and got["results"]
    assert all(r["doc_set"] == CLAUDE for r in got["results"])
    assert got["results"][0]["heading_path"] in [r["heading_path"] for r in want["results"]]


def test_incremental_export_touches_only_the_edited_page(tmp_path, monkeypatch):
    docs = make_upstream(tmp_path / "docs")
    qpath = tmp_path / "qdrant"
    monkeypatch.setenv("DOC4LLM_QDRANT_PATH", str(qpath))
    try:
        conn, _ = build.sync(docs, full=True)
        qdrant_store.mirror(conn, docs)
        before = {s: _points(qpath, s) for s in (CLAUDE, OPENCODE)}
        assert qdrant_store.mirror(conn, docs) == 0  # nothing changed: nothing written
        page_ids = {r[0] for r in conn.execute(
            "SELECT s.id FROM sections s WHERE s.set_name=? AND s.page='Keybinds'", (OPENCODE,))}
        content = docs / OPENCODE / "Keybinds" / "docContent.md"
        content.write_text(content.read_text(encoding="utf-8") + "\n\n## Zebra keys\n\nA zebrakey binding.\n",
                           encoding="utf-8")
        conn, report = build.sync(docs, conn=conn)
        assert report.pages_updated == 1
        written = qdrant_store.mirror(conn, docs)
        after = {s: _points(qpath, s) for s in (CLAUDE, OPENCODE)}
        assert after[CLAUDE] == before[CLAUDE]  # the other set is not rewritten
        new_ids = {r[0] for r in conn.execute(
            "SELECT s.id FROM sections s WHERE s.set_name=? AND s.page='Keybinds'", (OPENCODE,))}
        changed = {i for i in set(before[OPENCODE]) | set(after[OPENCODE])
                   if before[OPENCODE].get(i) != after[OPENCODE].get(i)}
        assert changed and changed <= page_ids | new_ids
        assert written == len(changed)
        recs = Publisher(qdrant_store.client_for({"path": str(qpath)})).records()
        assert recs[OPENCODE]["version"] == recs[CLAUDE]["version"] == 1  # updated in place
        # the other set keeps the mean length it was built with; BM25 is rescored exactly
        store = qdrant_store.for_search(conn)
        assert store is not None and recs[CLAUDE]["avgdl"] != store.avgdl
        qa = analyze("keybinds zebrakey model")
        want = SqliteBackend(conn).bm25(qa.stems, [CLAUDE, OPENCODE], 20)
        got = store.bm25(qa.stems, [CLAUDE, OPENCODE], 20)
        assert got.keys() == want.keys() and got == pytest.approx(want, rel=1e-6)
        assert _search(docs, ["zebra keys"]) == _search(docs, ["zebra keys"], auto_index=False)
    finally:
        qdrant_store.close_all()


def test_rebuild_switches_the_alias_and_a_vanished_set_is_dropped(tmp_path, monkeypatch):
    docs = make_upstream(tmp_path / "docs")
    qpath = tmp_path / "qdrant"
    monkeypatch.setenv("DOC4LLM_QDRANT_PATH", str(qpath))
    try:
        conn, _ = build.sync(docs, full=True)
        qdrant_store.mirror(conn, docs)
        client = qdrant_store.client_for({"path": str(qpath)})
        alias = qdrant_store.alias_of(CLAUDE)
        assert {a.alias_name: a.collection_name for a in client.get_aliases().aliases}[alias] == f"{alias}_v1"
        want = _search(docs, QUERIES[:3])
        qdrant_store.mirror(conn, docs, rebuild=True)
        assert {a.alias_name: a.collection_name for a in client.get_aliases().aliases}[alias] == f"{alias}_v2"
        assert client.collection_exists(f"{alias}_v1")  # kept for queries in flight
        qdrant_store.mirror(conn, docs, rebuild=True)
        assert not client.collection_exists(f"{alias}_v1") and client.collection_exists(f"{alias}_v2")
        assert _search(tmp_path / "reader", QUERIES[:3]) == want
        shutil.rmtree(docs / OPENCODE)
        conn, _ = build.sync(docs, conn=conn)
        qdrant_store.mirror(conn, docs)
        assert sorted(Publisher(client).records()) == [CLAUDE]
        gone = qdrant_store.alias_of(OPENCODE)
        assert gone not in {a.alias_name for a in client.get_aliases().aliases}
        assert not any(c.name.startswith(gone) for c in client.get_collections().collections)
        assert _search(tmp_path / "reader", ["keybinds"])[0]["sets"] == [CLAUDE]
    finally:
        qdrant_store.close_all()


def test_search_falls_back_to_sqlite_until_published(tmp_path, monkeypatch):
    from doc4llm.search.engine import Searcher

    docs = make_upstream(tmp_path / "docs")
    s = Searcher(docs, embedder="none", quiet=True)
    try:
        want = _json(s.search("model configuration"))
        monkeypatch.setenv("DOC4LLM_QDRANT_PATH", str(tmp_path / "qdrant"))
        assert qdrant_store.for_search(s._conn) is None  # configured, not published yet
        assert qdrant_store.mirror(s._conn, docs) > 0
        calls = []
        real = QdrantBackend.bm25
        monkeypatch.setattr(QdrantBackend, "bm25", lambda self, *a, **k: calls.append(a) or real(self, *a, **k))
        assert _json(s.search("model configuration")) == want and calls
        s._conn.execute("DELETE FROM sections WHERE id = (SELECT max(id) FROM sections)")
        assert qdrant_store.for_search(s._conn) is None  # the index changed: SQLite answers
    finally:
        s.close()
        qdrant_store.close_all()


def test_the_default_path_never_imports_qdrant(tmp_path):
    docs = make_upstream(tmp_path / "docs")
    code = ("import sys; from doc4llm.search.engine import search; "
            f"r = search('model configuration', docs_dir={str(docs)!r}, embedder='none'); "
            "assert r['results']; print('qdrant_client' in sys.modules)")
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("DOC4LLM_QDRANT")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


def test_search_takes_vectors_from_qdrant(tmp_path, monkeypatch):
    import threading

    from test_index_vectors import _FakeEmbeddings

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

        def scores(where) -> list[list[float]]:
            s = Searcher(where, embedder="openai:model-a", quiet=True, auto_index=False)
            try:
                out = [[round(r["score"], 4) for r in s.search(q, strategy="vector", k=4)["results"]] for q in queries]
                assert all(v["tier"] == "full" for v in s.vector_state.values())
                return out
            finally:
                s.close()

        want = scores(docs)
        monkeypatch.setenv("DOC4LLM_QDRANT_PATH", str(tmp_path / "qdrant"))
        assert build_index(docs, embedder="openai:model-a")["qdrant"] > 0
        calls = []
        real = QdrantBackend.vector_search
        monkeypatch.setattr(QdrantBackend, "vector_search", lambda self, *a, **k: calls.append(a) or real(self, *a, **k))
        assert scores(docs) == want and all(want) and calls
        calls.clear()
        assert scores(tmp_path / "reader") == want and calls  # stateless: vectors from Qdrant only
    finally:
        qdrant_store.close_all()
        server.shutdown()
        server.server_close()


def test_api_key_comes_from_the_environment_and_is_never_recorded(monkeypatch):
    monkeypatch.delenv("DOC4LLM_QDRANT_PATH", raising=False)
    monkeypatch.setenv("DOC4LLM_QDRANT_URL", "http://qdrant.invalid:6333")
    monkeypatch.setenv("DOC4LLM_QDRANT_API_KEY", "qk-test-not-a-real-key")
    where = qdrant_store.configured()
    assert where == {"url": "http://qdrant.invalid:6333"} and "qk-test" not in json.dumps(where)
