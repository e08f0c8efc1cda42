"""Corpus statistics the ranking code asks for per query: does a query need a set
filter, how many sections the chosen sets hold, a token's document frequency.

At 100k sections the set filter was most of the query time: it joins every FTS match
to its `sections` row (a large row: it carries the section text) to read `set_name`,
~3-7 µs a match, and common words match 20k sections. When the chosen sets are every
set in the index the filter is a no-op, so it is skipped (a document frequency is then
one FTS5 doclist count, 0.05-0.5 ms instead of 20-60 ms). Counts are cached per index
state (SQLite's data_version plus this connection's own changes).
"""

from __future__ import annotations

import sqlite3

_CACHE: dict[int, tuple] = {}  # id(conn) -> (conn, state, memo); holding conn keeps ids unique
_CACHE_CONNS = 8


def _memo(conn: sqlite3.Connection) -> dict:
    state = (conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes)
    entry = _CACHE.get(id(conn))
    if entry is None or entry[0] is not conn or entry[1] != state:
        if entry is None and len(_CACHE) >= _CACHE_CONNS:
            del _CACHE[next(iter(_CACHE))]
        entry = _CACHE[id(conn)] = (conn, state, {})
    return entry[2]


def indexed_sets(conn: sqlite3.Connection) -> frozenset[str]:
    if not isinstance(conn, sqlite3.Connection):  # another backend (index/backend.py)
        return conn.indexed_sets()
    memo = _memo(conn)
    if "sets" not in memo:
        memo["sets"] = frozenset(r[0] for r in conn.execute("SELECT DISTINCT set_name FROM pages"))
    return memo["sets"]


def whole_index(conn: sqlite3.Connection, sets: list[str]) -> bool:
    """True when `sets` cover every indexed section: a set filter would keep every row."""
    return bool(sets) and indexed_sets(conn) <= set(sets)


def section_count(conn: sqlite3.Connection, sets: list[str]) -> int:
    """Sections in the chosen sets (0 when none)."""
    if not sets:
        return 0
    if not isinstance(conn, sqlite3.Connection):  # another backend (index/backend.py)
        return conn.section_count(sets)
    memo = _memo(conn)
    key = ("n", tuple(sorted(set(sets))))
    if key not in memo:
        if whole_index(conn, sets):
            row = conn.execute("SELECT count(*) FROM sections").fetchone()
        else:
            marks = ",".join("?" * len(set(sets)))
            row = conn.execute(f"SELECT count(*) FROM sections WHERE set_name IN ({marks})",
                               sorted(set(sets))).fetchone()
        memo[key] = int(row[0]) if row else 0
    return memo[key]


def doc_freq(conn: sqlite3.Connection, token: str, sets: list[str]) -> int:
    """Sections of the chosen sets whose title, path or body holds `token` (an FTS token)."""
    if not token or not sets:
        return 0
    if not isinstance(conn, sqlite3.Connection):  # another backend (index/backend.py)
        return conn.doc_freq(token, sets)
    memo = _memo(conn)
    key = ("df", token, tuple(sorted(set(sets))))
    if key not in memo:
        phrase = '"' + token.replace('"', "") + '"'
        if whole_index(conn, sets):
            row = conn.execute("SELECT count(*) FROM sec_fts WHERE sec_fts MATCH ?", [phrase]).fetchone()
        else:
            marks = ",".join("?" * len(set(sets)))
            row = conn.execute(
                f"SELECT count(*) FROM sec_fts JOIN sections s ON s.id = sec_fts.rowid"
                f" WHERE sec_fts MATCH ? AND +s.set_name IN ({marks})", [phrase, *sorted(set(sets))]).fetchone()
        memo[key] = int(row[0]) if row else 0
    return memo[key]
