"""Incremental index build: pages -> section rows, FTS5 tokens, symbols; then vectors.

A page is re-parsed only when its docContent.md/docTOC.md size or mtime changed, and
its rows are replaced in one transaction. Pages or sets that vanished are purged. A
file lock serialises writers; readers never wait (SQLite WAL snapshots).
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from doc4llm.corpus.model import DocSet, Page, list_sets
from doc4llm.index.sectiontext import own_text
from doc4llm.index.store import index_dir, make_index_dir, open_store
from doc4llm.index.tokenize import tokens
from doc4llm.secrets import redact, secret_values

Progress = Callable[[str], None]


@dataclass
class SyncReport:
    pages_added: int = 0
    pages_updated: int = 0
    pages_removed: int = 0
    pages_unchanged: int = 0
    sections: int = 0
    seconds: float = 0.0
    sets: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.pages_added or self.pages_updated or self.pages_removed)

    def to_dict(self) -> dict:
        return {
            k: getattr(self, k)
            for k in (
                "pages_added",
                "pages_updated",
                "pages_removed",
                "pages_unchanged",
                "sections",
                "seconds",
                "sets",
            )
        }


WRITER_WAIT_S = 600.0
BUSY_READER_WAIT_S = 3.0  # a search behind a long `doc4llm index` uses the current index


def _lock(docs_dir: Path, timeout: float = WRITER_WAIT_S):
    from filelock import FileLock

    d = index_dir(docs_dir)
    make_index_dir(d)
    return FileLock(str(d / "index.lock"), timeout=timeout)


def _section_rows(page: Page) -> list[tuple]:
    """(section, fts title, fts path, fts body, content_type, symbols) per section."""
    try:
        from doc4llm.code import chunks_for_section, content_type
    except ImportError:  # the code layer is optional for indexing
        chunks_for_section = content_type = None
    lines = page.lines()
    out = []
    for sec in page.sections():
        text = "\n".join(lines[sec.start - 1 : sec.end])
        ctype = content_type(text) if content_type else None
        syms = []
        if chunks_for_section is not None and ("```" in text or "\n    " in text):
            try:
                syms = (
                    [
                        (s, c.start, c.end, c.kind, c.lang)
                        for c in chunks_for_section(text, sec.start)
                        for s in c.symbols
                    ]
                    if chunks_for_section
                    else []
                )
            except Exception as exc:  # a grammar failure must not break indexing
                print(
                    f"doc4llm: warning: code chunking failed in {page.name}: {exc}", file=sys.stderr
                )
        path_text = " ".join(sec.heading_path)
        out.append(
            (
                sec,
                " ".join(tokens(sec.title)),
                " ".join(tokens(page.title + " " + path_text)),
                " ".join(tokens(own_text(text))),
                ctype,
                syms,
            )
        )
    return out


def _write_page(
    conn: sqlite3.Connection, ds: DocSet, page: Page, sig: str, page_id: int | None
) -> int:
    if page_id is not None:
        _delete_page(conn, page_id)
    secrets = secret_values()

    def execute(sql: str, params: tuple) -> sqlite3.Cursor:
        """No configured API key is written to the index, whoever put it in a page."""
        if secrets:
            params = tuple(redact(v) if isinstance(v, str) else v for v in params)
        return conn.execute(sql, params)

    cur = execute(
        "INSERT INTO pages(set_name, page, title, source, sig, kind, untitled) VALUES (?,?,?,?,?,?,?)",
        (ds.name, page.name, page.title, page.source, sig, ds.page_kinds.get(page.name), int(page.untitled)),
    )
    pid = cur.lastrowid
    id_by_index: dict[int, int] = {}
    lines = page.lines()
    # open headings as (level, row id), levels strictly rising: a section's parent is the
    # nearest earlier heading of a lower level, found in amortised O(1) (a backwards scan
    # per section made 50k headings take 87 s)
    open_headings: list[tuple[int, int | None]] = []
    for sec, t_title, t_path, t_body, ctype, syms in _section_rows(page):
        parent = None
        if sec.level:
            while open_headings and open_headings[-1][0] >= sec.level:
                open_headings.pop()
            if open_headings and len(sec.heading_path) > 1:
                parent = open_headings[-1][1]
        text = "\n".join(lines[sec.start - 1 : sec.end])
        cur = execute(
            "INSERT INTO sections(page_id, set_name, page, idx, title, level, heading_path, start, end,"
            " subtree_end, tokens, words, anchor, url, content_type, text, parent_id)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                pid,
                ds.name,
                page.name,
                sec.index,
                sec.title,
                sec.level,
                json.dumps(sec.heading_path, ensure_ascii=False),
                sec.start,
                sec.end,
                sec.subtree_end,
                sec.tokens,
                len(own_text(text).split()),
                sec.anchor,
                page.url_for(sec),
                ctype,
                text,
                parent,
            ),
        )
        sid = cur.lastrowid
        id_by_index[sec.index] = sid
        if sec.level:
            open_headings.append((sec.level, sid))
        execute(
            "INSERT INTO sec_fts(rowid, title, path, body) VALUES (?,?,?,?)",
            (sid, t_title, t_path, t_body),
        )
        for name, a, b, kind, lang in syms:
            conn.execute(
                "INSERT INTO symbols VALUES (?,?,?,?,?,?,?)",
                (name, name.lower(), sid, a, b, kind, lang),
            )
    return len(id_by_index)


def _delete_page(conn: sqlite3.Connection, page_id: int) -> None:
    ids = [r[0] for r in conn.execute("SELECT id FROM sections WHERE page_id=?", (page_id,))]
    for sid in ids:
        conn.execute("DELETE FROM sec_fts WHERE rowid=?", (sid,))
    if ids:
        marks = ",".join("?" * len(ids))
        conn.execute(f"DELETE FROM symbols WHERE section_id IN ({marks})", ids)
        conn.execute(f"DELETE FROM vec_done WHERE section_id IN ({marks})", ids)
    conn.execute("DELETE FROM sections WHERE page_id=?", (page_id,))
    conn.execute("DELETE FROM pages WHERE id=?", (page_id,))


def _scan_pages(set_path: Path) -> dict[str, str]:
    """{page folder: signature} with two stat calls per page (os.scandir, no pathlib):
    every search runs this freshness check, so it must stay cheap at thousands of pages.
    Same rule as DocSet.pages: real folders with a real docContent.md, no symlinks."""
    import stat as st_mod

    out: dict[str, str] = {}
    try:
        entries = list(os.scandir(set_path))
    except OSError:
        return out
    for entry in entries:
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
            content = os.lstat(os.path.join(entry.path, "docContent.md"))
        except OSError:
            continue
        if not st_mod.S_ISREG(content.st_mode):
            continue
        try:
            toc = os.stat(os.path.join(entry.path, "docTOC.md"))
            toc_sig = f"{toc.st_size}:{toc.st_mtime_ns}"
        except OSError:
            toc_sig = "-"
        out[entry.name] = f"{content.st_size}:{content.st_mtime_ns}|{toc_sig}"
    return out


def _content_digest(page_dir: Path) -> str | None:
    """sha256 (16 hex) of a page's docContent.md and docTOC.md bytes; None if unreadable."""
    import hashlib

    h = hashlib.sha256()
    for name in ("docContent.md", "docTOC.md"):
        try:
            with open(page_dir / name, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
        except FileNotFoundError:
            h.update(b"\0missing")
        except OSError:
            return None
        h.update(b"\0")
    return h.hexdigest()[:16]


def _plan(conn: sqlite3.Connection, sets: list[DocSet]) -> tuple[list, list[int], int, list]:
    """(pages to (re)write, page ids to delete, unchanged count, pages whose files were
    only touched) — reads only.

    A page's signature is its files' sizes and times plus a digest of their bytes
    (`size:mtime|toc#digest`). When the times differ the bytes are hashed: equal bytes
    (a `cp -r` copy, a checkout, `touch`) keep the page, its section ids and so its
    vectors; only the signature is refreshed (`retouch`)."""
    todo, gone, same, retouch = [], [], 0, []
    for ds in sets:
        known = {
            r["page"]: (r["id"], r["sig"])
            for r in conn.execute("SELECT id, page, sig FROM pages WHERE set_name=?", (ds.name,))
        }
        for name, stat_sig in sorted(_scan_pages(ds.path).items()):
            old = known.pop(name, None)
            old_stat, _, old_digest = (old[1] or "").partition("#") if old else ("", "", "")
            if old and old_stat == stat_sig:
                same += 1
                continue
            digest = _content_digest(ds.path / name)
            sig = f"{stat_sig}#{digest}" if digest else stat_sig
            if old and digest and old_digest == digest:
                same += 1
                retouch.append((old[0], sig))
                continue
            page = ds.page(name)
            if page is None:
                continue
            todo.append((ds, page, sig, old[0] if old else None))
        gone.extend(pid for pid, _ in known.values())
    return todo, gone, same, retouch


def _sync_set_summaries(conn: sqlite3.Connection, sets: list[DocSet]) -> None:
    """Keep each set's metadata summary (source URLs) in the index, re-read only when its
    YAML changes: parsing a big set YAML on every search cost 100-600 ms."""
    from doc4llm.corpus.paths import SET_META_FILE

    for ds in sets:
        try:
            st = (ds.path / SET_META_FILE).stat()
            stamp = f"{st.st_size}:{st.st_mtime_ns}"
        except OSError:
            stamp = "-"
        key = f"set_summary:{ds.name}"
        row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        if row and json.loads(row[0]).get("stamp") == stamp:
            continue
        origins = {}
        for name, origin in ((ds.metadata.get("origins") or {}) if stamp != "-" else {}).items():
            if isinstance(origin, dict):
                origins[name] = {k: origin[k] for k in ("root_url", "root") if k in origin}
        try:
            conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                         (key, json.dumps({"stamp": stamp, "origins": origins})))
        except sqlite3.OperationalError:  # a busy or read-only index: it is only a cache
            pass


def set_summaries(conn: sqlite3.Connection, names: list[str]) -> dict[str, dict]:
    """{set name: {"origins": {...}}} as recorded by the last sync."""
    if not isinstance(conn, sqlite3.Connection):  # another backend (index/backend.py)
        return conn.set_summaries(names)
    out = {}
    for name in names:
        row = conn.execute("SELECT value FROM meta WHERE key=?", (f"set_summary:{name}",)).fetchone()
        out[name] = json.loads(row[0]) if row else {}
    return out


def sync(
    docs_dir: Path,
    sets: list[DocSet] | None = None,
    progress: Progress | None = None,
    conn: sqlite3.Connection | None = None,
    wait: float | None = None,
    full: bool = False,
) -> tuple[sqlite3.Connection, SyncReport]:
    """Bring the lexical index up to date for `sets` (default: all); purge vanished sets.

    `wait` is how long to wait for another writer (e.g. `doc4llm index` embedding for
    minutes). Default: a few seconds when an index exists — the caller then keeps the
    current index rather than block — and the full writer wait when nothing is indexed.
    `full` scans every page of every set; otherwise sets whose freshness signal says
    nothing changed are skipped (index/freshness.py has the rule)."""
    from doc4llm.index import freshness

    t0 = time.perf_counter()
    docs_dir = Path(docs_dir)
    conn = conn or open_store(docs_dir)
    all_sets = list_sets(docs_dir)
    sets = all_sets if sets is None else sets
    report = SyncReport(sets=[s.name for s in sets])
    _sync_set_summaries(conn, sets)
    memos = freshness.Memos(docs_dir)
    scan = [s for s in sets if full or memos.needs_scan(conn, s.name, s.path)]
    skipped = sum(memos.unchanged_pages(s.name) for s in sets if s not in scan)
    started, signals = freshness.now(), {s.name: freshness.signal(s.path) for s in scan}
    todo, gone, same, retouch = _plan(conn, scan)
    live = {s.name for s in all_sets}
    stale_sets = [
        r[0] for r in conn.execute("SELECT DISTINCT set_name FROM pages") if r[0] not in live
    ]
    report.pages_unchanged = same + skipped

    def remember() -> None:  # every scanned set is now in sync with its pages
        for s in scan:
            memos.record(conn, s.name, s.path, signals[s.name], started)
        memos.forget(stale_sets)
        memos.save()

    if not (todo or gone or stale_sets or retouch):
        remember()
        report.seconds = round(time.perf_counter() - t0, 3)
        return conn, report
    if wait is None:
        indexed = conn.execute("SELECT 1 FROM pages LIMIT 1").fetchone() is not None
        wait = BUSY_READER_WAIT_S if indexed else WRITER_WAIT_S
    from filelock import Timeout

    lock = _lock(docs_dir, wait)
    try:
        lock.acquire()
    except Timeout:
        if progress:
            progress("another process is updating the index; using the current index")
        report.seconds = round(time.perf_counter() - t0, 3)
        return conn, report
    try:
        todo, gone, same, retouch = _plan(conn, scan)  # re-plan under the lock
        report.pages_unchanged = same + skipped
        for name in stale_sets:
            gone.extend(
                r[0] for r in conn.execute("SELECT id FROM pages WHERE set_name=?", (name,))
            )
            conn.execute("DELETE FROM vec_sets WHERE set_name=?", (name,))
        conn.execute("BEGIN IMMEDIATE")
        try:
            for pid in gone:
                _delete_page(conn, pid)
            conn.executemany("UPDATE pages SET sig=? WHERE id=?", [(sig, pid) for pid, sig in retouch])
            for i, (ds, page, sig, pid) in enumerate(todo, 1):
                report.sections += _write_page(conn, ds, page, sig, pid)
                if pid is None:
                    report.pages_added += 1
                else:
                    report.pages_updated += 1
                if progress and (i % 25 == 0 or i == len(todo)):
                    progress(f"indexed {i}/{len(todo)} pages")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        report.pages_removed = len(gone)
        if stale_sets:
            from doc4llm.index.vectors import drop_vector_files  # build -> vectors, never back

            for name in stale_sets:
                drop_vector_files(docs_dir, name)
        remember()
    finally:
        lock.release()
    report.seconds = round(time.perf_counter() - t0, 3)
    return conn, report
