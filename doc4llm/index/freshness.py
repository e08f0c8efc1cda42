"""Which doc sets a search must re-scan page by page before answering.

A full scan stats every page (two stats each, ~18 µs a page in Python): 90 ms a query
at 5,000 pages. A search instead compares, per set, a directory-level signal with what
the set's last full scan recorded, and scans again only when something says so.

The rule (README, "Freshness"):

- The signal is the set folder's mtime. It changes when a page folder is added,
  removed or renamed, and when the set's metadata file is replaced; doc4llm's writers
  (import, scrape) also touch the set folder after rewriting a page, so their edits count
  as a signal too.
- A set is scanned in full when its signal or its row count in the index differs from
  the memo of its last clean scan, when that memo is older than `FRESH_SECONDS` (5 s;
  `DOC4LLM_FRESH_SECONDS`, 0 = scan every time), when the signal was too recent to trust
  (a change in the same timestamp tick as the scan), and always for sets of at most
  `ALWAYS_SCAN_PAGES` pages, where the scan costs a millisecond or two.
- So an edit made in place to a docContent.md of a big set (an editor saving over the
  file, `>>`), which changes no folder, is seen by the next full scan: within 5 s.
  `doc4llm index` always scans in full.

Memos live in `.doc4llm/fresh.json` (written atomically, never in the SQLite file, so
recording one never waits for a writer's lock); a lost or stale memo only costs a scan.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

from doc4llm.index.store import index_dir

FRESH_SECONDS = 5.0
ALWAYS_SCAN_PAGES = 300
RACY_SECONDS = 2.0  # a signal this close to the scan may hide a change made in the same tick
MEMO_FILE = "fresh.json"


def now() -> float:
    """Wall clock (a function so tests can move time)."""
    return time.time()


def window() -> float:
    raw = os.environ.get("DOC4LLM_FRESH_SECONDS")
    try:
        return max(0.0, float(raw)) if raw not in (None, "") else FRESH_SECONDS
    except ValueError:
        return FRESH_SECONDS


def signal(set_path: Path) -> int | None:
    """The set folder's mtime in ns (None when it cannot be read)."""
    try:
        return os.stat(set_path).st_mtime_ns
    except OSError:
        return None


def indexed_state(conn: sqlite3.Connection, set_name: str) -> list[int]:
    """[pages, max page id] of a set in the index: a rebuilt or rolled-back index differs."""
    row = conn.execute("SELECT count(*), coalesce(max(id), 0) FROM pages WHERE set_name=?",
                       (set_name,)).fetchone()
    return [int(row[0]), int(row[1])]


class Memos:
    """The memos of the last clean full scan per set, read once per sync."""

    def __init__(self, docs_dir: Path):
        self.path = index_dir(docs_dir) / MEMO_FILE
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        self.data: dict[str, dict] = data if isinstance(data, dict) else {}
        self.dirty = False

    def needs_scan(self, conn: sqlite3.Connection, set_name: str, set_path: Path) -> bool:
        memo = self.data.get(set_name)
        if not isinstance(memo, dict):
            return True
        state = indexed_state(conn, set_name)
        at = memo.get("at", 0.0)
        sig = signal(set_path)
        return (state[0] <= ALWAYS_SCAN_PAGES or sig is None or memo.get("signal") != sig
                or memo.get("state") != state or now() - at >= window()
                or sig / 1e9 >= at - RACY_SECONDS)

    def unchanged_pages(self, set_name: str) -> int:
        memo = self.data.get(set_name) or {}
        return int((memo.get("state") or [0])[0])

    def record(self, conn: sqlite3.Connection, set_name: str, set_path: Path, sig: int | None,
               started: float) -> None:
        """A full scan that began at `started` with signal `sig` found the set in sync."""
        if sig is None:
            self.data.pop(set_name, None)
        else:
            self.data[set_name] = {"signal": sig, "state": indexed_state(conn, set_name), "at": started}
        self.dirty = True

    def forget(self, names: list[str]) -> None:
        for name in names:
            if self.data.pop(name, None) is not None:
                self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        from doc4llm.corpus.atomic import atomic_write_text

        try:
            atomic_write_text(self.path, json.dumps(self.data, sort_keys=True))
        except OSError:  # a read-only cache: every search scans, as before
            pass
        self.dirty = False

