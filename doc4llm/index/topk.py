"""FTS5 BM25 top-k with an impact cutoff: common words score candidates, they do not find them.

Why: FTS5 scores every row that holds any phrase of an OR query and has no top-k pruning
(WAND, block-max). At 100k sections a word like "return" or "secure" is in 10-25% of them,
so one query scored 15-25k rows, ~1 µs each, in each of the two signals that rank by BM25
(`bm25` and L3.2): most of a query's time, growing linearly with the corpus.

What this does instead, when the phrases' rows add up to more than `WORK_ROWS`:

1. Phrases in more than `COMMON_SHARE` of the rows and in more than `GAP` times the rows
   of the query's rarest phrase are *common*. FTS5 ranks the rows that hold the other
   (rarer) phrases, with the same BM25 weights, and keeps the best `depth(limit)` of
   them as candidates.
2. Each candidate gets its exact full-query score, computed here from its stored token
   columns with FTS5's own formula and statistics (row count, average row length from
   the index's averages record, per-phrase document counts), so a candidate's score is
   bit-for-bit what `bm25()` returns for it in the full query.
3. The best `limit` candidates are returned, best first, ties by rowid as SQLite orders them.

A row missing from the candidates holds no rare phrase (or ranks low on them) and can
score at most `bound` = the rare score of the last candidate plus the sum over the
common phrases of idf * (k1 + 1). When the `limit`-th candidate beats that bound the
result equals the full query's (the classic MaxScore condition); otherwise it is an
approximation that can only miss rows carrying common words alone. Smaller result sets,
queries without a rare phrase, phrases FTS5 would tokenise differently from this module
(non-ASCII) and an unreadable averages record all run the plain full query.
`DOC4LLM_BM25_CUTOFF=0` turns the cutoff off (the exact query always); `always` applies it
to every query with a common phrase, which is how its quality is judged on the small dev
corpora, where it would never trigger by itself.
"""

from __future__ import annotations

import math
import os
import re
import sqlite3

from doc4llm.index.lexstats import _memo

K1, B = 1.2, 0.75  # FTS5's bm25() constants
WORK_ROWS = 6000  # below this many phrase rows FTS5 scores them all in a few ms: exact query
COMMON_SHARE = 0.04  # a phrase in more than this share of the rows is common...
GAP = 3.0  # ...and in GAP times the rows of the query's rarest phrase
MIN_DEPTH = 300  # candidates re-scored at least
_TOKEN = re.compile(r"[a-z0-9_]+")
_PLAIN = re.compile(r"[a-z0-9_ ]*")
Weights = tuple[float, float, float]


def mode() -> str:
    """DOC4LLM_BM25_CUTOFF: 0 = off (exact FTS5 query), 1 = on above WORK_ROWS (default),
    always = on for any query with a common phrase (to judge its quality on small corpora)."""
    raw = os.environ.get("DOC4LLM_BM25_CUTOFF", "1").strip().lower()
    return "off" if raw in ("0", "off", "no", "false") else "always" if raw == "always" else "on"


def fts_or(phrases: list[str], column: str | None = None) -> str:
    """An FTS5 OR of quoted phrases, optionally restricted to a column (or columns)."""
    uniq = list(dict.fromkeys(t for t in phrases if t))
    body = " OR ".join('"' + t.replace('"', "") + '"' for t in uniq)
    if not body:
        return ""
    return f"{{{column}}} : ({body})" if column else body


def _varints(buf: bytes) -> list[int]:
    """SQLite varints (big-endian 7-bit groups, a 9th byte of 8 bits), as FTS5 stores them."""
    out, i = [], 0
    while i < len(buf):
        v = 0
        for j in range(9):
            c = buf[i]
            i += 1
            if j == 8:
                v = (v << 8) | c
                break
            v = (v << 7) | (c & 0x7F)
            if not c & 0x80:
                break
        out.append(v)
    return out


def corpus_stats(conn: sqlite3.Connection) -> tuple[int, float] | None:
    """(rows, average tokens per row) as FTS5's bm25() sees them, from the averages record
    (`sec_fts_data` id 1: the row count, then each column's token total); None when absent."""
    memo = _memo(conn)
    if "fts_stats" not in memo:
        stats = None
        try:
            row = conn.execute("SELECT block FROM sec_fts_data WHERE id=1").fetchone()
            nums = _varints(bytes(row[0])) if row and row[0] else []
            if len(nums) == 4 and nums[0] > 0:
                stats = (nums[0], sum(nums[1:]) / nums[0])
        except (sqlite3.DatabaseError, IndexError, TypeError):
            stats = None
        memo["fts_stats"] = stats
    return memo["fts_stats"]


def phrase_rows(conn: sqlite3.Connection, phrase: str, column: str | None) -> int:
    """Rows whose (filtered) columns hold the phrase: FTS5's document count for its idf."""
    memo = _memo(conn)
    key = ("fts_df", phrase, column)
    if key not in memo:
        memo[key] = int(conn.execute("SELECT count(*) FROM sec_fts WHERE sec_fts MATCH ?",
                                     [fts_or([phrase], column)]).fetchone()[0])
    return memo[key]


def _idf(rows: int, hits: int) -> float:
    idf = math.log((rows - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0.0 else 1e-6


def _length(text: str | None) -> int:
    """Tokens FTS5 counts in a stored column: the indexer writes [a-z0-9_] tokens joined
    by single spaces (a redacted '***' or other text takes the regex path)."""
    if not text:
        return 0
    if "*" not in text and _PLAIN.fullmatch(text):
        return text.count(" ") + 1
    return len(_TOKEN.findall(text.lower()))


def _freq(text: str | None, phrase: tuple[str, ...]) -> int:
    """How often the phrase occurs in a stored column, as FTS5 counts instances."""
    if not text or phrase[0] not in text:
        return 0
    if len(phrase) == 1 and "*" not in text and _PLAIN.fullmatch(text):
        padded, tok = f" {text} ", f" {phrase[0]} "
        n = padded.count(tok)  # non-overlapping: "x x" shares a space, counted below
        return n if not n or f" {phrase[0]} {phrase[0]} " not in padded else text.split().count(phrase[0])
    toks, k = _TOKEN.findall(text.lower()), len(phrase)
    return sum(1 for i in range(len(toks) - k + 1) if tuple(toks[i : i + k]) == phrase)


def depth(limit: int) -> int:
    """Candidates re-scored for a result of `limit`: more make the exact case likelier."""
    return max(MIN_DEPTH, 2 * limit)


def top_bm25(conn: sqlite3.Connection, phrases: list[str], weights: Weights, limit: int,
             column: str | None = None, join: str = "", where: str = "",
             params: list | None = None) -> list[tuple[int, float]]:
    """[(rowid, bm25)] best first: `SELECT rowid, bm25(sec_fts, *weights) ... MATCH
    fts_or(phrases, column) ORDER BY bm25 LIMIT limit` (join/where/params scope it to
    sets), with the impact cutoff of the module docstring for large result sets."""
    return top_bm25_checked(conn, phrases, weights, limit, column, join, where, params)[0]


def top_bm25_checked(conn: sqlite3.Connection, phrases: list[str], weights: Weights, limit: int,
                     column: str | None = None, join: str = "", where: str = "",
                     params: list | None = None) -> tuple[list[tuple[int, float]], bool]:
    """top_bm25 and whether its result is provably the full query's (always, without the cutoff)."""
    params = params or []
    phrases = list(dict.fromkeys(t for t in phrases if t))
    expr = fts_or(phrases, column)
    if not expr:
        return [], True
    w = ", ".join(str(float(x)) for x in weights)

    def ranked(e: str, n: int) -> list[tuple[int, float]]:
        rows = conn.execute(
            f"SELECT sec_fts.rowid, bm25(sec_fts, {w}) AS r FROM sec_fts{join}"
            f" WHERE sec_fts MATCH ?{where} ORDER BY r LIMIT ?", [e, *params, n]).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    plan = _plan(conn, phrases, column)
    if plan is None:
        return ranked(expr, limit), True
    stats, toks, hits = plan
    rows_n, avgdl = stats
    idf = [_idf(rows_n, h) for h in hits]
    common = _common(hits, rows_n)
    n = depth(limit)
    cands = ranked(fts_or([p for i, p in enumerate(phrases) if i not in common], column), n)
    scored = _score(conn, [sid for sid, _ in cands], toks, idf, weights, column, avgdl) if cands else None
    if scored is None:
        return ranked(expr, limit), True
    scored.sort(key=lambda x: (x[1], x[0]))  # SQLite: bm25 ascending, ties in rowid order
    # MaxScore: a row outside the candidates scores below its rare part's (at most the last
    # candidate's) plus every common phrase's most, idf * (k1 + 1)
    bound = sum(idf[i] * (K1 + 1.0) for i in common) - (cands[-1][1] if len(cands) == n else 0.0)
    exact = len(scored) >= limit and -scored[limit - 1][1] > bound * (1 + 1e-9)
    return scored[:limit], exact


def _plan(conn: sqlite3.Connection, phrases: list[str], column: str | None):
    """(stats, phrase tokens, phrase document counts) when the cutoff applies, else None."""
    how = mode()
    if how == "off" or len(phrases) < 2 or not all(p.isascii() for p in phrases):
        return None
    toks = [tuple(_TOKEN.findall(p.lower())) for p in phrases]
    if not all(toks):
        return None
    stats = corpus_stats(conn)
    if stats is None:
        return None
    hits = [phrase_rows(conn, p, column) for p in phrases]
    if how == "on" and sum(hits) <= WORK_ROWS:
        return None
    if not _common(hits, stats[0]):
        return None
    return stats, toks, hits


def _common(hits: list[int], rows: int) -> set[int]:
    """Indexes of the common phrases: in more than COMMON_SHARE of the rows and in GAP
    times the rows of the rarest phrase (whose idf is so much higher that a row with the
    common words alone rarely outranks one with a rare word)."""
    floor = max(COMMON_SHARE * rows, GAP * min(hits))
    return {i for i, h in enumerate(hits) if h > floor}


_COLS = {"title": (0,), "path": (1,), "body": (2,), "title path": (0, 1)}


def stored_tokens(conn: sqlite3.Connection, sids: list[int], column: str) -> dict[int, str]:
    """{rowid: the column's stored tokens} in one read of FTS5's content table (a lookup
    per row through the virtual table costs ~20x more)."""
    if not sids:
        return {}
    col = f"c{_COLS[column][0]}"
    marks = ",".join("?" * len(sids))
    try:
        rows = conn.execute(f"SELECT id, {col} FROM sec_fts_content WHERE id IN ({marks})", sids)
    except sqlite3.DatabaseError:
        rows = conn.execute(f"SELECT rowid, {column} FROM sec_fts WHERE rowid IN ({marks})", sids)
    return {int(r[0]): r[1] or "" for r in rows}


def _score(conn: sqlite3.Connection, sids: list[int], toks: list[tuple[str, ...]], idf: list[float],
           weights: Weights, column: str | None, avgdl: float) -> list[tuple[int, float]] | None:
    """FTS5's bm25() of the full query for these rows, from their stored token columns."""
    cols = _COLS.get(column or "", (0, 1, 2))
    if column and column not in _COLS:
        return None
    marks = ",".join("?" * len(sids))
    try:
        rows = conn.execute(f"SELECT id, c0, c1, c2 FROM sec_fts_content WHERE id IN ({marks})", sids).fetchall()
    except sqlite3.DatabaseError:
        return None
    out = []
    k1p1 = K1 + 1.0
    single = all(len(p) == 1 for p in toks)
    for sid, *texts in rows:
        texts = [t or "" for t in texts]
        if not all(t.isascii() for t in texts):
            return None
        plain = [("*" not in t and _PLAIN.fullmatch(t) is not None) for t in texts]
        d = float(sum((t.count(" ") + 1 if t else 0) if ok else _length(t) for t, ok in zip(texts, plain, strict=True)))
        norm = K1 * (1 - B + B * d / avgdl)
        score = 0.0
        for i, phrase in enumerate(toks):
            freq = 0.0
            for c in cols:
                text = texts[c]
                if phrase[0] not in text:  # most phrases are absent from most columns
                    continue
                if single and plain[c]:
                    padded, tok = f" {text} ", f" {phrase[0]} "
                    f = padded.count(tok)
                    if f and f" {phrase[0]} {phrase[0]} " in padded:  # "x x" shares a space
                        f = text.split().count(phrase[0])
                else:
                    f = _freq(text, phrase)
                if f:
                    freq += weights[c] * f
            score += idf[i] * ((freq * k1p1) / (freq + norm))
        out.append((int(sid), -1.0 * score))
    return out
