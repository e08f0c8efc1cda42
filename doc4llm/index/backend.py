"""The index primitives a search reads, behind one small interface.

The ranking code (search/levels.py, rerank, confidence, guidance) asks an index for
rows and counts, never for SQL: which sections hold these tokens in their title or
heading path (L2), in their body best-first (L3.2), which headings deserve a fuzzy title
comparison (L1), BM25, code symbols, section rows for features and snippets, page facts,
line spans, document frequencies and section counts. Two implementations:

- `SqliteBackend` (default): the embedded index, SQLite FTS5 (this module; the SQL that
  used to live in the levels);
- `QdrantBackend` (index/qdrant_store.py, experimental): the same rows from Qdrant
  payloads, so a reader needs no local index.

Callers hold either a `sqlite3.Connection` (today's code paths) or a backend;
`backend_of` wraps a connection on the fly (a tiny object: no cost on the default path).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Protocol

from doc4llm.index import lexstats
from doc4llm.index.topk import fts_or, stored_tokens, top_bm25

BM25_WEIGHTS = (6.0, 2.5, 1.0)  # title, heading path, body

ENTRY_MIN_WORDS = 3  # a page's entry section says something: not an empty intro

TITLE_CANDIDATES_MAX = 1500  # titles scored per query at most (best FTS title matches first)


class IndexBackend(Protocol):
    """What a search needs from an index. Section and page ids are the indexer's ids."""

    def indexed_sets(self) -> frozenset[str]: ...

    def section_count(self, sets: list[str]) -> int: ...

    def doc_freq(self, token: str, sets: list[str]) -> int: ...

    def bm25(self, toks: list[str], sets: list[str], limit: int) -> dict[int, float]:
        """{section id: FTS5 BM25 (weights 6 / 2.5 / 1)} of sections holding any token."""

    def title_candidates(self, toks: list[str], prefixes: list[str], sets: list[str]) -> dict[int, str]:
        """{id: lower-cased title} of headings (level > 0) whose title holds a token or
        starts with a prefix, at most TITLE_CANDIDATES_MAX."""

    def toc_rows(self, toks: list[str], sets: list[str], limit: int) -> list[tuple[int, str, str]]:
        """(id, path tokens, title tokens) of sections whose title or path holds a token, in id order."""

    def body_rows(self, toks: list[str], sets: list[str], limit: int) -> list[tuple[int, str, str]]:
        """(id, body tokens, text) of sections whose body holds a token, by body-only BM25."""

    def symbol_rows(self, names: list[str], sets: list[str]) -> list[tuple[int, int, int, str]]:
        """(section id, start, end, kind) of code symbols with these lower-cased names."""

    def section_rows(self, ids: list[int]) -> dict[int, dict]: ...

    def pages(self, page_ids: list[int]) -> list[dict]:
        """{id, title, page, source, sig, kind} per page."""

    def page_headings(self, page_ids: list[int]) -> dict[int, list[str]]:
        """Titles of the headings below the page title (level > 1), per page."""

    def line_span(self, page_id: int, lo_idx: int, hi_idx: int) -> tuple[int | None, int | None]:
        """(min start, max end) of the headed sections with index in [lo_idx, hi_idx]."""

    def page_entries(self, page_ids: list[int]) -> dict[int, int]:
        """{page id: id of its first section with text of its own} (the page's intro, or
        the first section when the intro is empty)."""

    def set_summaries(self, names: list[str]) -> dict[str, dict]: ...

    def web_source(self, set_name: str) -> str | None:
        """One http(s) page source of a set (for the docs-site hint), or None."""


def backend_of(conn) -> IndexBackend:
    """The backend behind what a caller holds: a SQLite connection or a backend."""
    return SqliteBackend(conn) if isinstance(conn, sqlite3.Connection) else conn


class SqliteBackend:
    """The embedded index: SQLite FTS5 (`sec_fts`: tokenised title, path, body)."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def _scope(self, sets: list[str]) -> tuple[str, str, list[str]]:
        """(join, filter, params) restricting an FTS query to `sets`; nothing at all when
        they are the whole index: joining every match to its `sections` row only to read
        set_name was most of a query at 100k sections (index/lexstats.py). With MATCH,
        `+` keeps SQLite from driving the query by the set index (23 ms -> 0.2 ms)."""
        if lexstats.whole_index(self.conn, sets):
            return "", "", []
        return (" JOIN sections s ON s.id = sec_fts.rowid",
                f" AND +s.set_name IN ({','.join('?' * len(sets))})", list(sets))

    def indexed_sets(self) -> frozenset[str]:
        return lexstats.indexed_sets(self.conn)

    def section_count(self, sets: list[str]) -> int:
        return lexstats.section_count(self.conn, sets)

    def doc_freq(self, token: str, sets: list[str]) -> int:
        return lexstats.doc_freq(self.conn, token, sets)

    def bm25(self, toks: list[str], sets: list[str], limit: int) -> dict[int, float]:
        """FTS5's BM25; past WORK_ROWS matches, common words only re-score (index/topk.py)."""
        if not fts_or(toks) or not sets:
            return {}
        join, where, params = self._scope(sets)
        return {sid: -r for sid, r in top_bm25(self.conn, toks, BM25_WEIGHTS, limit, None, join, where, params)}

    def title_candidates(self, toks: list[str], prefixes: list[str], sets: list[str]) -> dict[int, str]:
        parts = ['"' + t.replace('"', "") + '"' for t in toks] + [f'"{p}" *' for p in prefixes]
        if not parts or not sets:
            return {}
        expr = f"{{title}} : ({' OR '.join(dict.fromkeys(parts))})"
        join, where, params = self._scope(sets)
        rows = self.conn.execute(
            f"SELECT x.id, x.title FROM (SELECT sec_fts.rowid AS id, bm25(sec_fts, 1.0, 0.0, 0.0) AS r"
            f" FROM sec_fts{join} WHERE sec_fts MATCH ?{where} ORDER BY r LIMIT ?) f"
            f" JOIN sections x ON x.id = f.id WHERE x.level > 0",
            [expr, *params, TITLE_CANDIDATES_MAX]).fetchall()
        return {r[0]: (r[1] or "").lower() for r in rows}

    def toc_rows(self, toks: list[str], sets: list[str], limit: int) -> list[tuple[int, str, str]]:
        expr = fts_or(toks, "title path")
        if not expr or not sets:
            return []
        join, where, params = self._scope(sets)
        return [tuple(r) for r in self.conn.execute(
            f"SELECT sec_fts.rowid, sec_fts.path, sec_fts.title FROM sec_fts{join}"
            f" WHERE sec_fts MATCH ?{where} LIMIT ?", [expr, *params, limit]).fetchall()]

    def body_rows(self, toks: list[str], sets: list[str], limit: int) -> list[tuple[int, str, str]]:
        if not fts_or(toks, "body") or not sets:
            return []
        join, where, params = self._scope(sets)
        ranked = [sid for sid, _ in top_bm25(self.conn, toks, (0.0, 0.0, 1.0), limit, "body", join, where, params)]
        if not ranked:
            return []
        bodies = stored_tokens(self.conn, ranked, "body")
        texts = dict(self.conn.execute(
            f"SELECT id, text FROM sections WHERE id IN ({','.join('?' * len(ranked))})", ranked).fetchall())
        # best BM25 first, as before
        return [(sid, bodies[sid], texts[sid] or "") for sid in ranked if sid in bodies and sid in texts]

    def symbol_rows(self, names: list[str], sets: list[str]) -> list[tuple[int, int, int, str]]:
        if not names or not sets:
            return []
        return [tuple(r) for r in self.conn.execute(
            f"SELECT y.section_id, y.start, y.end, y.kind FROM symbols y JOIN sections s ON s.id = y.section_id"
            f" WHERE y.lname IN ({','.join('?' * len(names))}) AND +s.set_name IN ({','.join('?' * len(sets))})",
            [*names, *sets]).fetchall()]

    def section_rows(self, ids: list[int]) -> dict[int, dict]:
        if not ids:
            return {}
        rows = self.conn.execute(
            "SELECT s.*, p.title AS page_title, p.source AS page_source, p.kind AS page_kind,"
            " p.untitled AS page_untitled, f.title AS tok_title, f.path AS tok_path, f.body AS tok_body FROM sections s"
            " JOIN pages p ON p.id = s.page_id JOIN sec_fts f ON f.rowid = s.id"
            f" WHERE s.id IN ({','.join('?' * len(ids))})", ids).fetchall()
        out = {}
        for r in rows:
            d = dict(r)
            d["heading_path"] = json.loads(d["heading_path"])
            out[d["id"]] = d
        return out

    def pages(self, page_ids: list[int]) -> list[dict]:
        if not page_ids:
            return []
        return [dict(zip(("id", "title", "page", "source", "sig", "kind"), r, strict=True)) for r in self.conn.execute(
            f"SELECT id, title, page, source, sig, kind FROM pages WHERE id IN ({','.join('?' * len(page_ids))})",
            page_ids)]

    def page_headings(self, page_ids: list[int]) -> dict[int, list[str]]:
        heads: dict[int, list[str]] = {}
        if page_ids:
            for pid, title in self.conn.execute(
                    f"SELECT page_id, title FROM sections WHERE page_id IN ({','.join('?' * len(page_ids))})"
                    " AND level > 1", page_ids):
                heads.setdefault(pid, []).append(title or "")
        return heads

    def line_span(self, page_id: int, lo_idx: int, hi_idx: int) -> tuple[int | None, int | None]:
        row = self.conn.execute(
            "SELECT min(start), max(end) FROM sections WHERE page_id=? AND idx BETWEEN ? AND ? AND level > 0",
            (page_id, lo_idx, hi_idx)).fetchone()
        return row[0], row[1]

    def page_entries(self, page_ids: list[int]) -> dict[int, int]:
        if not page_ids:
            return {}
        rows = self.conn.execute(
            f"SELECT page_id, id, min(idx) FROM sections WHERE page_id IN ({','.join('?' * len(page_ids))})"
            f" AND words >= {ENTRY_MIN_WORDS} GROUP BY page_id", page_ids)
        return {pid: sid for pid, sid, _ in rows}

    def set_summaries(self, names: list[str]) -> dict[str, dict]:
        out = {}
        for name in names:
            row = self.conn.execute("SELECT value FROM meta WHERE key=?", (f"set_summary:{name}",)).fetchone()
            out[name] = json.loads(row[0]) if row else {}
        return out

    def web_source(self, set_name: str) -> str | None:
        row = self.conn.execute(
            "SELECT source FROM pages WHERE set_name=? AND source LIKE 'http%' LIMIT 1", (set_name,)).fetchone()
        return row[0] if row else None
