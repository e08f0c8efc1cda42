"""The retrieval signals: the progressive-fallback levels, BM25, vectors, symbols.

Each function returns {section id: score} for the chosen sets, best scores highest,
and can run alone (`--strategy`). Scores keep their own natural scale here; fusion.py
puts them on one scale.

- L1     title/heading match: rapidfuzz over page titles and heading paths, plus
         embedding similarity of the query to heading-path vectors when vectors exist.
- L2     TOC grep: the share of query keywords found in a section's heading path.
- L3.1   cross-set TOC grep: L2 over the sets the query names by domain word.
- L3.2   content grep: keywords (and exact identifiers) in the section's own text,
         traced back to that section.
- bm25   SQLite FTS5 BM25 over title, heading path and body (weights 6 / 2.5 / 1).
- vector embedding similarity of the query to section vectors.
- symbol exact code-symbol names (functions, classes, methods) from code blocks.
"""

from __future__ import annotations

import re
import sqlite3

from doc4llm.index.lexstats import whole_index
from doc4llm.index.tokenize import fold_identifier, tokens
from doc4llm.search.analyze import QueryAnalysis


def _set_clause(sets: list[str], fts: bool = True) -> tuple[str, list[str]]:
    """With an FTS MATCH, `+` keeps SQLite from driving the query by the set index (which
    evaluated MATCH row by row: 23 ms -> 0.2 ms on one set, 2 s -> 30 ms at 20k sections)."""
    col = "+s.set_name" if fts else "s.set_name"
    return f"{col} IN ({','.join('?' * len(sets))})", list(sets)


def _scope(conn: sqlite3.Connection, sets: list[str]) -> tuple[str, str, list[str]]:
    """(join, filter, params) restricting an FTS query to `sets`; nothing at all when they
    are the whole index: joining every match to its `sections` row only to read set_name
    was most of a query at 100k sections (index/lexstats.py)."""
    if whole_index(conn, sets):
        return "", "", []
    where, params = _set_clause(sets)
    return " JOIN sections s ON s.id = sec_fts.rowid", f" AND {where}", params


def _qdrant_selected() -> bool:
    """Cheap check before importing the Qdrant module (environment, then doc4llm.yaml)."""
    import os

    if os.environ.get("DOC4LLM_QDRANT_URL") or os.environ.get("DOC4LLM_QDRANT_PATH"):
        return True
    from doc4llm.config import setting

    return setting("index", "backend") == "qdrant"


def _fts_or(query_tokens: list[str], column: str | None = None) -> str:
    uniq = list(dict.fromkeys(t for t in query_tokens if t))
    body = " OR ".join('"' + t.replace('"', "") + '"' for t in uniq)
    if not body:
        return ""
    return f"{{{column}}} : ({body})" if column else body


def bm25(conn: sqlite3.Connection, qa: QueryAnalysis, sets: list[str], limit: int = 80,
         query_tokens: list[str] | None = None) -> dict[int, float]:
    expr = _fts_or(query_tokens if query_tokens is not None else qa.stems)
    if not expr or not sets:
        return {}
    if _qdrant_selected():  # experimental backend: the same BM25 scores, served by Qdrant
        from doc4llm.index.qdrant_store import for_search

        store = for_search(conn)
        if store is not None:
            return store.bm25(query_tokens if query_tokens is not None else qa.stems, sets, limit)
    join, where, params = _scope(conn, sets)
    rows = conn.execute(
        f"SELECT sec_fts.rowid, -bm25(sec_fts, 6.0, 2.5, 1.0) AS score FROM sec_fts{join}"
        f" WHERE sec_fts MATCH ?{where} ORDER BY bm25(sec_fts, 6.0, 2.5, 1.0) LIMIT ?",
        [expr, *params, limit]).fetchall()
    return {r[0]: float(r[1]) for r in rows}


def _keyword_stems(qa: QueryAnalysis) -> list[str]:
    stems = [t for t in qa.stems if t not in {tokens(w)[0] for w in qa.domain_words if tokens(w)}]
    return list(dict.fromkeys(stems)) or list(dict.fromkeys(qa.stems))


def toc_grep(conn: sqlite3.Connection, qa: QueryAnalysis, sets: list[str], limit: int = 200) -> dict[int, float]:
    """L2: share of the query's keyword stems present in the section's title + heading path."""
    kw = _keyword_stems(qa)
    expr = _fts_or(kw, "title path")
    if not expr or not sets:
        return {}
    join, where, params = _scope(conn, sets)
    rows = conn.execute(
        f"SELECT sec_fts.rowid, sec_fts.path, sec_fts.title FROM sec_fts{join}"
        f" WHERE sec_fts MATCH ?{where} LIMIT ?", [expr, *params, limit * 4]).fetchall()
    out: dict[int, float] = {}
    for sid, path_toks, title_toks in rows:
        have_title = set(title_toks.split())
        have = set(path_toks.split()) | have_title
        hit = [t for t in kw if t in have]
        # headings that carry the words themselves rank above ones that inherit them
        out[sid] = (len(hit) + 0.5 * sum(1 for t in kw if t in have_title)) / (1.5 * len(kw))
    return dict(sorted(out.items(), key=lambda x: -x[1])[:limit])


TITLE_CANDIDATES_MAX = 1500  # titles scored per query at most (best FTS title matches first)
PREFIX_CHARS = 4  # "configur" also proposes "config", "configuration" (fuzzy near-misses)


def _title_expr(query: str) -> str:
    """FTS5 expression over the title column proposing every heading that shares a token
    (stems, identifiers whole and split) or a 4-character stem prefix with the query:
    rapidfuzz's token_set_ratio only reaches its 0.55 cutoff on such titles in practice."""
    toks = list(dict.fromkeys(t for t in tokens(query) if t))
    if not toks:
        toks = list(dict.fromkeys(t for t in tokens(query, keep_stopwords=True) if t))
    parts = ['"' + t.replace('"', "") + '"' for t in toks]
    parts += [f'"{t[:PREFIX_CHARS]}" *' for t in dict.fromkeys(toks)
              if len(t) > PREFIX_CHARS and t[:PREFIX_CHARS].isalnum()]
    return f"{{title}} : ({' OR '.join(dict.fromkeys(parts))})" if parts else ""


def title_candidates(conn: sqlite3.Connection, query: str, sets: list[str]) -> dict[int, str]:
    """{id: lower-cased title} of the headings worth a fuzzy comparison, from the FTS
    index: sublinear in the corpus, where scanning every title cost ~100 ms at 100k."""
    expr = _title_expr(query)
    if not expr or not sets:
        return {}
    join, where, params = _scope(conn, sets)
    rows = conn.execute(
        f"SELECT x.id, x.title FROM (SELECT sec_fts.rowid AS id, bm25(sec_fts, 1.0, 0.0, 0.0) AS r"
        f" FROM sec_fts{join} WHERE sec_fts MATCH ?{where} ORDER BY r LIMIT ?) f"
        f" JOIN sections x ON x.id = f.id WHERE x.level > 0",
        [expr, *params, TITLE_CANDIDATES_MAX]).fetchall()
    return {r[0]: (r[1] or "").lower() for r in rows}


def title_match(conn: sqlite3.Connection, qa: QueryAnalysis, sets: list[str], limit: int = 40) -> dict[int, float]:
    """L1 (lexical half): fuzzy match of the query to heading titles, 0..1, over the
    headings the title index proposes (never every heading)."""
    from rapidfuzz import fuzz, process

    if not sets:
        return {}
    query = (" ".join(qa.keywords) or qa.raw).lower()
    choices = title_candidates(conn, query, sets)
    if not choices:
        return {}
    hits = process.extract(query, choices, scorer=fuzz.token_set_ratio, limit=limit,
                           processor=None, score_cutoff=55)
    return {key: score / 100.0 for _, score, key in hits}


def content_grep(conn: sqlite3.Connection, qa: QueryAnalysis, sets: list[str], limit: int = 100) -> dict[int, float]:
    """L3.2: keyword coverage of a section's own text (case-insensitive, escaped; exact
    identifiers at word boundaries count double), traced back to that section."""
    kw = _keyword_stems(qa)
    expr = _fts_or(kw + [fold_identifier(t) for t in qa.terms], "body")
    if not expr or not sets:
        return {}
    join, where, params = _scope(conn, sets)
    rows = conn.execute(
        f"SELECT x.id, g.body, x.text FROM (SELECT sec_fts.rowid AS id, bm25(sec_fts, 0.0, 0.0, 1.0) AS r"
        f" FROM sec_fts{join} WHERE sec_fts MATCH ?{where} ORDER BY r LIMIT ?) f"
        f" JOIN sections x ON x.id = f.id JOIN sec_fts g ON g.rowid = f.id ORDER BY f.r",
        [expr, *params, limit * 3]).fetchall()
    patterns = [re.compile(r"(?<![\w\-])" + re.escape(t) + r"(?![\w\-])", re.I) for t in qa.terms]
    out = {}
    for sid, body_toks, text in rows:
        have = set(body_toks.split())
        cov = sum(1 for t in kw if t in have) / max(len(kw), 1)
        exact = sum(1 for p in patterns if p.search(text)) / max(len(patterns), 1) if patterns else 0.0
        out[sid] = (cov + 2 * exact) / 3 if patterns else cov
    return dict(sorted(out.items(), key=lambda x: -x[1])[:limit])


def symbol_match(conn: sqlite3.Connection, qa: QueryAnalysis, sets: list[str]) -> dict[int, tuple[float, int, int]]:
    """Exact code symbols: {section id: (1.0, chunk start, chunk end)}."""
    names = []
    for t in qa.terms:
        t = t.rstrip("()").lower()
        names.append(t)  # "HttpClient.request" is stored whole as well as "request"
        if "." in t and "/" not in t:
            names.append(t.split(".")[-1])
    names += [k.lower() for k in qa.keywords if "_" in k]
    names = [n for n in dict.fromkeys(names) if len(n) > 2]
    if not names or not sets:
        return {}
    where, params = _set_clause(sets)
    rows = conn.execute(
        f"SELECT y.section_id, y.start, y.end, y.kind FROM symbols y JOIN sections s ON s.id = y.section_id"
        f" WHERE y.lname IN ({','.join('?' * len(names))}) AND {where}", [*names, *params]).fetchall()
    out: dict[int, tuple[float, int, int]] = {}
    for sid, a, b, _kind in rows:
        if sid not in out or (b - a) < (out[sid][2] - out[sid][1]):
            out[sid] = (1.0, a, b)
    return out
