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

from doc4llm.index.backend import backend_of
from doc4llm.index.tokenize import fold_identifier, tokens
from doc4llm.search.analyze import QueryAnalysis


def bm25(conn, qa: QueryAnalysis, sets: list[str], limit: int = 80,
         query_tokens: list[str] | None = None) -> dict[int, float]:
    return backend_of(conn).bm25(query_tokens if query_tokens is not None else qa.stems, sets, limit)


def _keyword_stems(qa: QueryAnalysis) -> list[str]:
    stems = [t for t in qa.stems if t not in {tokens(w)[0] for w in qa.domain_words if tokens(w)}]
    return list(dict.fromkeys(stems)) or list(dict.fromkeys(qa.stems))


def toc_grep(conn, qa: QueryAnalysis, sets: list[str], limit: int = 200) -> dict[int, float]:
    """L2: share of the query's keyword stems present in the section's title + heading path."""
    kw = _keyword_stems(qa)
    rows = backend_of(conn).toc_rows(kw, sets, limit * 4)
    out: dict[int, float] = {}
    for sid, path_toks, title_toks in rows:
        have_title = set(title_toks.split())
        have = set(path_toks.split()) | have_title
        hit = [t for t in kw if t in have]
        # headings that carry the words themselves rank above ones that inherit them
        out[sid] = (len(hit) + 0.5 * sum(1 for t in kw if t in have_title)) / (1.5 * len(kw))
    return dict(sorted(out.items(), key=lambda x: -x[1])[:limit])


PREFIX_CHARS = 4  # "configur" also proposes "config", "configuration" (fuzzy near-misses)


def _title_terms(query: str) -> tuple[list[str], list[str]]:
    """(tokens, 4-character prefixes) proposing every heading that shares a token (stems,
    identifiers whole and split) or a stem prefix with the query: rapidfuzz's
    token_set_ratio only reaches its 0.55 cutoff on such titles in practice."""
    toks = list(dict.fromkeys(t for t in tokens(query) if t))
    if not toks:
        toks = list(dict.fromkeys(t for t in tokens(query, keep_stopwords=True) if t))
    prefixes = [t[:PREFIX_CHARS] for t in toks if len(t) > PREFIX_CHARS and t[:PREFIX_CHARS].isalnum()]
    return toks, list(dict.fromkeys(prefixes))


def title_candidates(conn, query: str, sets: list[str]) -> dict[int, str]:
    """{id: lower-cased title} of the headings worth a fuzzy comparison, from the title
    index (at most TITLE_CANDIDATES_MAX): sublinear in the corpus, where scanning every
    title cost ~100 ms at 100k."""
    toks, prefixes = _title_terms(query)
    return backend_of(conn).title_candidates(toks, prefixes, sets)


def title_match(conn, qa: QueryAnalysis, sets: list[str], limit: int = 40) -> dict[int, float]:
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


def content_grep(conn, qa: QueryAnalysis, sets: list[str], limit: int = 100) -> dict[int, float]:
    """L3.2: keyword coverage of a section's own text (case-insensitive, escaped; exact
    identifiers at word boundaries count double), traced back to that section."""
    kw = _keyword_stems(qa)
    rows = backend_of(conn).body_rows(kw + [fold_identifier(t) for t in qa.terms], sets, limit * 3)
    patterns = [re.compile(r"(?<![\w\-])" + re.escape(t) + r"(?![\w\-])", re.I) for t in qa.terms]
    out = {}
    for sid, body_toks, text in rows:
        padded = f" {body_toks or ''} "  # index tokens joined by single spaces (both backends)
        cov = sum(1 for t in kw if f" {t} " in padded) / max(len(kw), 1)
        exact = sum(1 for p in patterns if p.search(text)) / max(len(patterns), 1) if patterns else 0.0
        out[sid] = (cov + 2 * exact) / 3 if patterns else cov
    return dict(sorted(out.items(), key=lambda x: -x[1])[:limit])


def name_holders(conn, qa: QueryAnalysis, sets: list[str], max_sections: int = 5) -> list[int]:
    """The few sections whose text holds one of the query's names (`Python.h`,
    `ValidationError`), for a name that few sections hold. In a long query (an error
    pasted whole) the other words decide BM25 and the vectors, and the one section that
    names the header can miss the pool the reranker sees."""
    if not qa.terms or not qa.keywords:
        return []
    backend = backend_of(conn)
    out: list[int] = []
    for t in qa.terms:
        rows = backend.body_rows([fold_identifier(t)], sets, max_sections + 1)
        if 0 < len(rows) <= max_sections:
            out += [sid for sid, _, _ in rows if sid not in out]
    return out


def symbol_match(conn, qa: QueryAnalysis, sets: list[str]) -> dict[int, tuple[float, int, int]]:
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
    rows = backend_of(conn).symbol_rows(names, sets)
    out: dict[int, tuple[float, int, int]] = {}
    for sid, a, b, _kind in rows:
        if sid not in out or (b - a) < (out[sid][2] - out[sid][1]):
            out[sid] = (1.0, a, b)
    return out
