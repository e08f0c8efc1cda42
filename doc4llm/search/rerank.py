"""Local second-stage reranking over the fused candidates (no model, microseconds each).

Features, each 0..1, added to the fused score with small weights:
- exact: the query's technical terms found verbatim at word boundaries in the section
  (an identifier query is answered by the section that *contains* the identifier);
- heading: share of query keywords in the section's own heading;
- coverage: share of query keywords in the section's text or heading path;
- prefer: the section's content type matches what the query type prefers.
"""

from __future__ import annotations

import re

from doc4llm.index.tokenize import stem, tokens
from doc4llm.search.analyze import QueryAnalysis
from doc4llm.search.fusion import Candidate

RERANK_WEIGHTS = {"exact": 0.20, "heading": 0.06, "coverage": 0.05}
MIN_WORDS = 5
EMPTY_FACTOR = 0.6
INTRO_FACTOR = 0.9


def term_pattern(term: str) -> re.Pattern:
    t = term.strip("`")
    if t.endswith("()"):
        t = t[:-2]
    return re.compile(r"(?<![\w\-])" + re.escape(t) + r"(?![\w\-])", re.I)


def keyword_stems(qa: QueryAnalysis) -> list[str]:
    out = []
    for k in qa.keywords:
        s = stem(k)
        if s not in out:
            out.append(s)
    return out


def features(qa: QueryAnalysis, row: dict) -> dict[str, float]:
    text = row["text"] or ""
    feats: dict[str, float] = {}
    if qa.terms:
        feats["exact"] = sum(1 for t in qa.terms if term_pattern(t).search(text)) / len(qa.terms)
    kws = keyword_stems(qa)
    if kws:  # the index stored these token streams: no re-tokenising on the query path
        head_toks = set((row.get("tok_title") or "").split()) or set(tokens(row["title"] or ""))
        path_toks = set((row.get("tok_path") or "").split())
        body_toks = set((row.get("tok_body") or "").split())
        feats["heading"] = sum(1 for k in kws if k in head_toks) / len(kws)
        feats["coverage"] = sum(1 for k in kws if k in body_toks or k in path_toks) / len(kws)
    return feats


def rerank(qa: QueryAnalysis, cands: list[Candidate], rows: dict[int, dict], depth: int,
           prefer: str | None, prefer_bonus: float) -> list[Candidate]:
    head, tail = cands[:depth], cands[depth:]
    for c in head:
        row = rows.get(c.sid)
        if row is None:
            continue
        f = features(qa, row)
        bonus = sum(RERANK_WEIGHTS[k] * v for k, v in f.items())
        if prefer and row.get("content_type") == prefer:
            bonus += prefer_bonus
            f["prefer"] = 1.0
        if (row.get("words") or 0) < MIN_WORDS:  # a container heading with no text of its own
            c.score *= EMPTY_FACTOR
            f["empty"] = 1.0
        elif row.get("level") and len(row["heading_path"]) == 1:
            # a page's intro matches every query about the page (its title is every
            # section's path); the section that answers should win
            c.score *= INTRO_FACTOR
            f["intro"] = 1.0
        for k, v in f.items():
            c.parts[f"rerank.{k}"] = round(v, 3)
        if f.get("exact", 0) >= 1.0 and "exact" not in c.found_by:
            c.found_by.append("exact")
        c.score += bonus
    head.sort(key=lambda c: -c.score)
    return head + tail
