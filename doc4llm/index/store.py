"""The index database: SQLite (stdlib, no import cost) with FTS5 for BM25.

One file, `md_docs/.doc4llm/index.sqlite`, in WAL mode: a search reads a consistent
snapshot while an indexer writes; every update is one transaction, so a crash leaves
the previous index usable. A file that is corrupt or written by another format version
is moved aside and rebuilt, never a traceback.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import sys
from pathlib import Path

from doc4llm.corpus.paths import INDEX_DIRNAME

MMAP_BYTES = 1 << 30  # address space, not memory: pages are mapped as they are read
FORMAT_VERSION = "15"
# 5: plain heading titles, attribute-list anchors, MkDocs blocks rewritten; 6: HTML comment
# blocks left out of the indexed text; 7-10: in-page tables of contents, a section's
# trailing anchors and MyST targets left out; 11-12: heading attribute lists after
# closing hashes or with bare words; 13: an acronym run into a word (`CORSMiddleware`,
# `SQLite`) is an identifier, indexed whole as well as in parts; 14: a page's kind from the
# set's metadata (release notes, changelog, contributors: ranked below the docs); 15: a page
# without a title of its own (named by its file) is marked, its opening has no heading

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS pages (
  id INTEGER PRIMARY KEY, set_name TEXT NOT NULL, page TEXT NOT NULL, title TEXT,
  source TEXT, sig TEXT, kind TEXT, untitled INTEGER DEFAULT 0, UNIQUE(set_name, page));
CREATE TABLE IF NOT EXISTS sections (
  id INTEGER PRIMARY KEY, page_id INTEGER NOT NULL, set_name TEXT NOT NULL, page TEXT NOT NULL,
  idx INTEGER, title TEXT, level INTEGER, heading_path TEXT, start INTEGER, end INTEGER,
  subtree_end INTEGER, tokens INTEGER, words INTEGER, anchor TEXT, url TEXT, content_type TEXT, text TEXT,
  parent_id INTEGER);
CREATE INDEX IF NOT EXISTS sections_page ON sections(page_id);
CREATE INDEX IF NOT EXISTS sections_set ON sections(set_name);
CREATE VIRTUAL TABLE IF NOT EXISTS sec_fts USING fts5(
  title, path, body, tokenize = "unicode61 tokenchars '_'");
CREATE TABLE IF NOT EXISTS symbols (
  name TEXT NOT NULL, lname TEXT NOT NULL, section_id INTEGER NOT NULL, start INTEGER,
  end INTEGER, kind TEXT, lang TEXT);
CREATE INDEX IF NOT EXISTS symbols_lname ON symbols(lname);
CREATE INDEX IF NOT EXISTS symbols_section ON symbols(section_id);
CREATE TABLE IF NOT EXISTS vec_sets (
  set_name TEXT PRIMARY KEY, embedder TEXT, dim INTEGER, generation INTEGER DEFAULT 0);
CREATE TABLE IF NOT EXISTS vec_done (section_id INTEGER PRIMARY KEY, set_name TEXT);
"""


def index_dir(docs_dir: Path) -> Path:
    """`<docs>/.doc4llm`, or a per-user cache folder when the docs dir is read-only."""
    d = Path(docs_dir) / INDEX_DIRNAME
    if d.is_dir() and os.access(d, os.W_OK):
        return d
    if not d.exists() and os.access(docs_dir, os.W_OK):
        return d
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "doc4llm"
    digest = hashlib.sha256(str(Path(docs_dir).resolve()).encode()).hexdigest()[:16]
    return base / digest


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=30, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    # read pages through a memory map instead of a read() per page: at 100k sections the
    # index (~260 MB) is far bigger than SQLite's 2 MB page cache, and a warm query's
    # random row and doclist reads were ~3 ms of system calls (the OS cache holds the pages
    # either way; this only maps them)
    conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
    return conn


def _valid(conn: sqlite3.Connection) -> bool:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key='format_version'").fetchone()
        return row is not None and row[0] == FORMAT_VERSION
    except sqlite3.DatabaseError:
        return False


def make_index_dir(d: Path) -> None:
    """Create the index folder, or say what was tried and how to choose another place (a
    read-only docs dir with an unwritable HOME once said only "Permission denied: /nonexistent")."""
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        from doc4llm.errors import ExternalError

        raise ExternalError(
            f"cannot create the index folder {d}: {exc.strerror or exc} (the docs dir is not "
            "writable, so the index goes to the per-user cache, which is not writable either)",
            hint="set XDG_CACHE_HOME to a writable folder (the index is kept there), or make "
                 "the docs dir writable (the index is kept in <docs>/.doc4llm)") from None


def _creation_lock(d: Path):
    from filelock import FileLock

    make_index_dir(d)
    return FileLock(str(d / "create.lock"), timeout=120)


def open_store(docs_dir: Path, *, create: bool = True) -> sqlite3.Connection | None:
    """Open (creating or rebuilding if needed) the index database.

    Creation and rebuilds happen under a lock and re-check the file once they hold it,
    so concurrent first searches never rebuild each other's fresh index."""
    d = index_dir(docs_dir)
    path = d / "index.sqlite"
    conn = _open_valid(path)
    if conn is not None or not create:
        return conn
    with _creation_lock(d):
        conn = _open_valid(path)  # another process may have just made it
        if conn is not None:
            return conn
        if path.exists():
            reason = _why_invalid(path)
            print(f"doc4llm: index {path} is {reason}; rebuilding it", file=sys.stderr)
            for suffix in ("", "-wal", "-shm"):
                p = Path(str(path) + suffix)
                if p.exists():
                    os.replace(p, Path(str(p) + ".broken"))
            vec_dir = d / "vectors"
            if vec_dir.is_dir():
                for f in vec_dir.iterdir():
                    f.unlink()
        return _create(path)


def _open_valid(path: Path) -> sqlite3.Connection | None:
    if not path.exists():
        return None
    try:
        conn = _connect(path)
    except sqlite3.DatabaseError:
        return None
    if _valid(conn):
        return conn
    conn.close()
    return None


def _why_invalid(path: Path) -> str:
    try:
        conn = sqlite3.connect(str(path))
        try:
            conn.execute("SELECT value FROM meta WHERE key='format_version'").fetchone()
        finally:
            conn.close()
        return "written by another doc4llm version"
    except sqlite3.DatabaseError:
        return "unreadable (corrupt)"


def _create(path: Path) -> sqlite3.Connection:
    """Schema and version row in one transaction: nobody sees a half-made index."""
    conn = _connect(path)
    conn.executescript(
        "BEGIN;\n" + SCHEMA +
        f"\nINSERT OR REPLACE INTO meta VALUES ('format_version', '{FORMAT_VERSION}');\nCOMMIT;")
    return conn
