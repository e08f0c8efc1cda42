"""The incremental index: unchanged / edited / deleted pages and sets, `index --json`,
`sets` state, a crash mid-index, and searches running while an index is built."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap

import pytest
from conftest import run_cli
from test_search_helpers import MDMEM_SET, NO_EMBED, make_mdmem, make_upstream, search_json

from doc4llm.index import build
from doc4llm.index.store import open_store
from doc4llm.search.engine import Searcher


def index_json(docs, *args: str) -> dict:
    proc = run_cli("index", "--docs-dir", docs, "--json", "--embedder", "none", *args, env=NO_EMBED)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def sets_json(docs) -> dict:
    proc = run_cli("sets", "--docs-dir", docs, "--json", env=NO_EMBED)
    assert proc.returncode == 0, proc.stderr
    return {s["name"]: s for s in json.loads(proc.stdout)["sets"]}


def count(docs, sql: str, *params) -> int:
    conn = sqlite3.connect(docs / ".doc4llm" / "index.sqlite")
    try:
        return conn.execute(sql, params).fetchone()[0]
    finally:
        conn.close()


def test_incremental_index_touches_only_what_changed(tmp_path):
    docs = make_mdmem(tmp_path / "docs")
    assert sets_json(docs)[MDMEM_SET]["index"] == "not indexed"
    first = index_json(docs)["lexical"]
    assert first["pages_added"] == 7 and first["sections"] > 30 and first["sets"] == [MDMEM_SET]
    n_sections = first["sections"]
    assert sets_json(docs)[MDMEM_SET]["index"].startswith(f"{n_sections} sections")

    second = index_json(docs)["lexical"]
    assert second["pages_unchanged"] == 7
    assert second["pages_added"] == second["pages_updated"] == second["pages_removed"] == second["sections"] == 0

    page = docs / MDMEM_SET / "Troubleshooting" / "docContent.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n## Quasar Flux\n\nThe zorblax capacitor overheats.\n",
                    encoding="utf-8")
    third = index_json(docs)["lexical"]
    assert (third["pages_updated"], third["pages_unchanged"], third["pages_added"]) == (1, 6, 0)
    res = search_json(docs, "zorblax capacitor")
    assert res["results"][0]["heading_path"] == ["Troubleshooting", "Quasar Flux"]

    shutil.rmtree(docs / MDMEM_SET / "Orbit Gateway")
    fourth = index_json(docs)["lexical"]
    assert (fourth["pages_removed"], fourth["pages_unchanged"]) == (1, 6)
    assert count(docs, "SELECT count(*) FROM sections WHERE page='Orbit Gateway'") == 0
    res = search_json(docs, "--drain-seconds")
    assert all(r["page"] != "Orbit Gateway" for r in res["results"])


def test_a_deleted_set_is_purged(tmp_path):
    docs = make_mdmem(tmp_path / "docs")
    make_mdmem(docs, "other@1")
    index_json(docs)
    assert count(docs, "SELECT count(DISTINCT set_name) FROM sections") == 2
    shutil.rmtree(docs / "other@1")
    out = index_json(docs)["lexical"]
    assert out["pages_removed"] == 7
    assert count(docs, "SELECT count(*) FROM sections WHERE set_name='other@1'") == 0
    assert count(docs, "SELECT count(*) FROM pages WHERE set_name='other@1'") == 0
    assert count(docs, "SELECT count(*) FROM sec_fts") == count(docs, "SELECT count(*) FROM sections")
    assert set(sets_json(docs)) == {MDMEM_SET}


def test_index_of_one_set_and_text_output(tmp_path):
    docs = make_mdmem(tmp_path / "docs")
    make_mdmem(docs, "other@1")
    out = index_json(docs, "--set", "other@*")
    assert out["lexical"]["sets"] == ["other@1"]
    state = sets_json(docs)
    assert state["other@1"]["index"].endswith("vectors 0/" + state["other@1"]["index"].split()[0])
    assert state[MDMEM_SET]["index"] == "not indexed"
    proc = run_cli("index", "--docs-dir", docs, "--no-vectors", env=NO_EMBED)
    assert proc.returncode == 0 and "lexical: +7 ~0 -0 pages, 7 unchanged" in proc.stdout
    bad = run_cli("index", "--docs-dir", docs, "--set", "nope@1", env=NO_EMBED)
    assert bad.returncode == 1 and MDMEM_SET in bad.stderr and "Traceback" not in bad.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    none = run_cli("index", "--docs-dir", empty, env=NO_EMBED)
    assert none.returncode == 1 and "no doc sets" in none.stderr


def test_a_crash_mid_index_leaves_the_old_index_usable(tmp_path, monkeypatch):
    docs = make_mdmem(tmp_path / "docs")
    s = Searcher(docs, embedder="none", quiet=True)
    before = s.search("ENOSPC", k=3)
    s.close()
    n_before = count(docs, "SELECT count(*) FROM sections")
    for name in ("Troubleshooting", "Deployment Guide"):
        p = docs / MDMEM_SET / name / "docContent.md"
        p.write_text(p.read_text(encoding="utf-8").replace("ENOSPC", "ENOSPACE") + "\nzorblax\n", encoding="utf-8")
    p = docs / MDMEM_SET / "Ingest Pipeline Architecture" / "docContent.md"
    p.write_text(p.read_text(encoding="utf-8") + "\nzorblax\n", encoding="utf-8")

    real = build._write_page
    calls = []

    def crashing(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("disk on fire")
        return real(*args, **kwargs)

    monkeypatch.setattr(build, "_write_page", crashing)
    with pytest.raises(RuntimeError):
        build.sync(docs)
    conn = open_store(docs, create=False)
    assert conn is not None
    assert conn.execute("SELECT count(*) FROM sections").fetchone()[0] == n_before
    assert conn.execute("SELECT count(*) FROM sec_fts WHERE sec_fts MATCH 'zorblax'").fetchone()[0] == 0
    conn.close()
    monkeypatch.setattr(build, "_write_page", real)
    # a reader that does not re-index (another process, an MCP server) still answers
    s = Searcher(docs, embedder="none", quiet=True, auto_index=False)
    s._conn = open_store(docs)
    again = s.search("ENOSPC", k=3)
    assert [r["heading_path"] for r in again["results"]] == [r["heading_path"] for r in before["results"]]
    s.close()
    # the next normal run finishes the job
    res = search_json(docs, "zorblax", "-k", "5")
    assert len({r["page"] for r in res["results"]}) == 3


def test_a_killed_indexer_leaves_the_old_index_usable(tmp_path):
    docs = make_mdmem(tmp_path / "docs")
    index_json(docs)
    n_before = count(docs, "SELECT count(*) FROM sections")
    for page in (docs / MDMEM_SET).iterdir():
        if page.is_dir():
            c = page / "docContent.md"
            c.write_text(c.read_text(encoding="utf-8") + "\nzorblax\n", encoding="utf-8")
    script = textwrap.dedent(f"""
        import os
        from doc4llm.index import build
        real, n = build._write_page, []
        def die(*a, **k):
            n.append(1)
            if len(n) == 3:
                os._exit(9)  # killed mid-transaction: no rollback, no cleanup
            return real(*a, **k)
        build._write_page = die
        build.sync({str(docs)!r})
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 9, proc.stderr
    assert count(docs, "SELECT count(*) FROM sections") == n_before
    assert count(docs, "SELECT count(*) FROM sec_fts WHERE sec_fts MATCH 'zorblax'") == 0
    res = search_json(docs, "zorblax", "-k", "10")
    # the next search re-indexes every edited page (7 pages now carry the word)
    assert res["results"] and "zorblax" in res["results"][0]["snippet"]
    assert count(docs, "SELECT count(DISTINCT s.page) FROM sec_fts JOIN sections s ON s.id = sec_fts.rowid"
                       " WHERE sec_fts MATCH 'zorblax'") == 7


def test_concurrent_searches_while_indexing(tmp_path):
    docs = make_mdmem(tmp_path / "docs")
    make_upstream(docs)
    cmd = [sys.executable, "-m", "doc4llm"]
    full_env = {k: v for k, v in os.environ.items() if k != "DOC4LLM_DOCS_DIR"} | NO_EMBED
    procs = [subprocess.Popen([*cmd, "index", "--docs-dir", str(docs), "--json"], env=full_env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)]
    queries = ["ENOSPC", "opencode keybinds", "HELIOS_WAL_SEGMENT_MB", "claude troubleshooting", "graceful shutdown"]
    procs += [subprocess.Popen([*cmd, "search", "--docs-dir", str(docs), "--json", "-k", "2", q], env=full_env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for q in queries]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert "Traceback" not in err
        json.loads(out)
    for q, (out, _) in zip(queries, outs[1:], strict=True):
        assert json.loads(out)["results"], q
    assert count(docs, "SELECT count(*) FROM pages") == 7 + 7
    again = index_json(docs)["lexical"]
    assert again["pages_unchanged"] == 14 and not again["pages_added"]


def test_a_search_does_not_block_behind_a_long_index_run(tmp_path):
    """`doc4llm index` holds the index lock while it embeds (minutes); a search meanwhile
    answers from the current index instead of waiting for it."""
    from filelock import FileLock

    docs = make_mdmem(tmp_path / "docs")
    index_json(docs)
    page = docs / MDMEM_SET / "Troubleshooting" / "docContent.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nzorblax\n", encoding="utf-8")
    from doc4llm.index.build import BUSY_READER_WAIT_S

    assert BUSY_READER_WAIT_S <= 5  # how long a search gives a busy writer, then reads as is
    with FileLock(str(docs / ".doc4llm" / "index.lock")):  # held until the search returns:
        # a search that waited for it would never finish (run_cli's timeout fails the test)
        proc = run_cli("search", "--docs-dir", docs, "--json", "ENOSPC", env=NO_EMBED, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "another process is updating the index" in proc.stderr
    assert json.loads(proc.stdout)["results"][0]["heading_path"][-1] == "Failure Modes"
    res = search_json(docs, "zorblax")  # lock free again: the edit is picked up
    assert res["results"][0]["page"] == "Troubleshooting"
