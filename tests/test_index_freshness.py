"""Cheap freshness (index/freshness.py): a search skips the page-by-page scan of a set
whose folder signal and index state match its last clean scan, yet sees added, removed
and renamed pages and doc4llm's own rewrites at once, and in-place edits within the
window. Time is moved with a fake clock, never waited for."""

from __future__ import annotations

import json
import shutil
import time

import pytest
from conftest import run_cli
from test_search_helpers import NO_EMBED

from doc4llm.corpus.writer import SetWriter
from doc4llm.index import build, freshness
from doc4llm.search.engine import Searcher

SET = "Big_Docs@1.0"


def body(n: int, extra: str = "") -> str:
    return f"Intro of page {n}.\n\n## Setting {n}\n\nThe option number {n} does things.{extra}\n"


@pytest.fixture
def docs(tmp_path, monkeypatch):
    """A set written by doc4llm's writer, treated as big (no always-scan), clock fixed ahead
    of every folder mtime so no signal counts as racy."""
    monkeypatch.setattr(freshness, "ALWAYS_SCAN_PAGES", 0)
    monkeypatch.delenv("DOC4LLM_FRESH_SECONDS", raising=False)
    clock = [time.time() + 30]
    monkeypatch.setattr(freshness, "now", lambda: clock[0])
    w = SetWriter(tmp_path, SET, origin="test")
    for n in range(4):
        w.write_page(f"Page {n}", body(n), source=f"https://example.com/p{n}", key=f"p{n}")
    w.finish()
    scans: list[str] = []
    real_scan = build._scan_pages
    monkeypatch.setattr(build, "_scan_pages", lambda p: scans.append(p.name) or real_scan(p))
    return tmp_path, clock, scans


def sync(docs_dir, full: bool = False) -> build.SyncReport:
    conn, report = build.sync(docs_dir, full=full)
    conn.close()
    return report


def test_an_unchanged_big_set_is_not_rescanned_within_the_window(docs):
    d, clock, scans = docs
    assert sync(d).pages_added == 4
    scans.clear()
    again = sync(d)
    assert scans == [] and not again.changed and again.pages_unchanged == 4
    clock[0] += freshness.FRESH_SECONDS
    sync(d)
    assert scans == [SET]  # the window ran out: one full scan
    sync(d, full=True)
    assert scans == [SET, SET]  # `doc4llm index` always scans


def test_added_removed_and_renamed_pages_are_seen_at_once(docs):
    d, clock, scans = docs
    sync(d)
    shutil.copytree(d / SET / "Page 1", d / SET / "Page 9")
    assert sync(d).pages_added == 1
    shutil.rmtree(d / SET / "Page 2")
    assert sync(d).pages_removed == 1
    (d / SET / "Page 3").rename(d / SET / "Page Three")
    r = sync(d)
    assert (r.pages_added, r.pages_removed) == (1, 1)
    scans.clear()
    assert not sync(d).changed and scans == []  # and then quiet again


def test_a_rewrite_by_doc4llm_is_seen_at_once(docs):
    d, clock, scans = docs
    sync(d)
    w = SetWriter(d, SET, origin="test")
    assert w.write_page("Page 1", body(1, " Zorblax flux."), source="https://example.com/p1", key="p1").status == "updated"
    assert sync(d).pages_updated == 1


def test_an_edit_in_place_is_seen_when_the_window_ends(docs):
    d, clock, scans = docs
    sync(d)
    page = d / SET / "Page 0" / "docContent.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n## Quasar\n\nZorblax capacitor.\n", encoding="utf-8")
    assert not sync(d).changed  # the documented lag: no folder changed
    clock[0] += freshness.FRESH_SECONDS
    assert sync(d).pages_updated == 1
    s = Searcher(d, embedder="none", quiet=True)
    try:
        assert s.search("zorblax capacitor")["results"][0]["heading_path"][-1] == "Quasar"
    finally:
        s.close()


def test_window_zero_scans_every_time_and_a_reset_index_is_rescanned(docs, monkeypatch):
    d, clock, scans = docs
    sync(d)
    scans.clear()
    monkeypatch.setenv("DOC4LLM_FRESH_SECONDS", "0")
    sync(d)
    assert scans == [SET]
    monkeypatch.delenv("DOC4LLM_FRESH_SECONDS")
    sync(d)
    assert scans == [SET]
    conn, _ = build.sync(d)
    conn.execute("DELETE FROM pages WHERE page='Page 1'")  # the index lost a page
    conn.close()
    assert sync(d).pages_added == 1


def test_a_recent_signal_is_not_trusted(docs):
    d, clock, scans = docs
    clock[0] = time.time()  # the folder changed within the same moment as the scan
    sync(d)
    scans.clear()
    sync(d)
    assert scans == [SET]
    memo = json.loads((d / ".doc4llm" / freshness.MEMO_FILE).read_text())
    assert memo[SET]["state"][0] == 4


def test_small_sets_are_always_scanned_and_cli_search_sees_edits(tmp_path):
    w = SetWriter(tmp_path, "Small@1", origin="test")
    w.write_page("Alpha", body(1), source="https://example.com/a", key="a")
    w.finish()
    assert run_cli("index", "--docs-dir", tmp_path, "--embedder", "none", env=NO_EMBED).returncode == 0
    page = tmp_path / "Small@1" / "Alpha" / "docContent.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n## Quasar\n\nZorblax capacitor.\n", encoding="utf-8")
    proc = run_cli("search", "--docs-dir", tmp_path, "--json", "zorblax capacitor", env=NO_EMBED)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["results"][0]["heading_path"][-1] == "Quasar"
