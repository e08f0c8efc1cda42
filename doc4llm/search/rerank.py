"""Second stage: a learned linear ranker over the fused candidates (no model files,
microseconds per candidate).

The first stage (fusion.py) gathers candidates from every signal; here each of the top
`depth` candidates gets the features of features.py and is scored by a linear model
whose weights (ranking_model.py) were fitted by `benchmarks/search/fit_ranker.py` on all dev
corpora with leave-one-corpus-out validation. There are two weight sets: one for when
the chosen sets have vectors and one for lexical-only search, because the signals a
candidate can carry differ. The first-stage score is itself a feature, so a candidate
the ranker knows nothing special about keeps its fused order.
"""

from __future__ import annotations

import re

from doc4llm.search.analyze import QueryAnalysis
from doc4llm.search.features import (
    EMPTY_WORDS,
    asks_about_changes,
    candidate_features,
    keyword_idf,
    keyword_stems,
    page_facts,
    query_key,
)
from doc4llm.search.fusion import Candidate
from doc4llm.search.quoted import quoted_first
from doc4llm.search.ranking_model import WEIGHTS
from doc4llm.search.superseded import step_behind_replacements


def model_score(feats: dict[str, float], mode: str) -> float:
    w = WEIGHTS[mode]
    return sum(w.get(k, 0.0) * v for k, v in feats.items())


RANKED_SIGNALS = ("bm25", "vector", "head", "L3.2")


def signal_ranks(cands: list[Candidate]) -> dict[int, dict[str, int]]:
    """{sid: {signal: 0-based rank of the candidate in that signal's own ordering}}: rank
    features transfer across corpora and embedders better than raw scores do."""
    out: dict[int, dict[str, int]] = {}
    for name in RANKED_SIGNALS:
        have = sorted((c for c in cands if name in c.raw), key=lambda c: -c.raw[name])
        for i, c in enumerate(have):
            out.setdefault(c.sid, {})[name] = i
    return out


def rerank(qa: QueryAnalysis, cands: list[Candidate], rows: dict[int, dict], depth: int,
           prefer: str | None, conn=None, mode: str = "lex", sets: list[str] | None = None) -> list[Candidate]:
    head, tail = cands[:depth], cands[depth:]
    head = [c for c in head if c.sid in rows] + [c for c in head if c.sid not in rows]
    pages = page_facts(conn, [rows[c.sid]["page_id"] for c in head if c.sid in rows]) if conn else {}
    changes = asks_about_changes(qa.raw, qa.set_versions)
    key = query_key(qa)
    entries = _named_page_entries(conn, key, pages, head, rows) if conn is not None and key else set()
    idf = keyword_idf(conn, keyword_stems(qa), sets or []) if conn is not None else {}
    floor = min((c.score for c in head), default=0.0)
    ranks = signal_ranks(cands)
    page_best: dict[int, float] = {}
    page_hits: dict[int, int] = {}
    top_fused = max((c.score for c in head), default=0.0) or 1.0
    for c in head:
        row = rows.get(c.sid)
        if row is not None:
            pid = row["page_id"]
            page_best[pid] = max(page_best.get(pid, 0.0), c.score)
            page_hits[pid] = page_hits.get(pid, 0) + 1
    for c in head:
        row = rows.get(c.sid)
        if row is None:
            c.score = floor - 1.0
            continue
        f = candidate_features(qa, c, row, pages.get(row["page_id"]), prefer, changes, key, idf)
        for name, rank in ranks.get(c.sid, {}).items():
            f[f"rr_{name}"] = 1.0 / (1.0 + rank)
        pid = row["page_id"]
        f["page_best"] = page_best.get(pid, 0.0) / top_fused
        f["page_hits"] = min(1.0, (page_hits.get(pid, 1) - 1) / 5.0)
        c.feats = f
        c.raw["fused"] = f["fused"]
        c.score = model_score(f, mode)
        for k in ("exact", "heading", "coverage", "page_match", "slug", "prefer", "intro", "empty",
                  "changes", "named_entry", "own_head", "err_catalog", "version_match"):
            if f.get(k):
                c.parts[f"rerank.{k}"] = round(f[k], 3)
        if f["exact"] >= 1.0 and "exact" not in c.found_by:
            c.found_by.append("exact")
        if f["slug"] and "name" not in c.found_by:
            c.found_by.append("name")
    if entries:  # the query is a page's name: the page's opening answers it, as a whole
        top = max(c.score for c in head)
        for c in head:
            if c.sid in entries:
                c.score = top + 0.01
                c.parts["rerank.page_entry"] = 1.0
    step_behind_replacements(qa, head, rows, conn)  # deprecated / legacy API entries
    head.sort(key=lambda c: -c.score)
    parent_over_example(head, rows)
    quoted_first(qa.raw, head, rows)  # pasted text (an error message): the section quoting it
    low = head[-1].score if head else 0.0
    for c in tail:  # below every reranked candidate, in fused order
        c.raw.setdefault("fused", c.score)
        c.score = low - 1.0 + 0.5 * max(0.0, min(1.0, c.score))
    return head + tail


# "Examples", "Example:", "Usage examples": a heading that names no subject of its own
_EXAMPLE_HEAD = re.compile(r"(?:usage )?examples?(?: usage)?[ \t]*:?", re.IGNORECASE)
EXAMPLE_RULE_DEPTH = 3  # the rule looks at the first three results, the ones agents read


def parent_over_example(head: list[Candidate], rows: dict[int, dict]) -> None:
    """An "Examples" section illustrates its parent's subject; the parent defines it. When
    one ranks in the first three above its parent, the two trade places (cibuildwheel's
    `CIBW_ARCHS`: *archs > Examples* wins on the name its examples repeat, while *archs*
    is the option's entry; structlog's *Performance > Example*). Trading, not lifting the
    parent in, keeps the other results where they were. A parent with no text of its own
    stays where it is."""
    by_sid = {c.sid: c for c in head}
    changed = False
    for c in head[:EXAMPLE_RULE_DEPTH]:
        row = rows.get(c.sid)
        if not row or not _EXAMPLE_HEAD.fullmatch((row.get("title") or "").strip()):
            continue
        parent = by_sid.get(row.get("parent_id"))
        prow = rows.get(parent.sid) if parent is not None else None
        # a parent with no text of its own (a heading over its sub-sections) answers nothing
        if prow is not None and (prow.get("words") or 0) >= EMPTY_WORDS and parent.score < c.score:
            parent.score, c.score = c.score, parent.score
            parent.parts["rerank.example_parent"] = 1.0
            changed = True
    if changed:
        head.sort(key=lambda c: -c.score)


def _named_page_entries(conn, key: str, pages: dict[int, dict], head: list[Candidate],
                        rows: dict[int, dict]) -> set[int]:
    """Sections that open a page the query names (`npm ci` -> page `npm-ci`): the page's
    intro, or its first section when the intro is empty. They join the candidates when
    retrieval missed them, because the name's words are in the page title, not in them."""
    from doc4llm.index.backend import backend_of

    named = [pid for pid, facts in pages.items() if key in facts.get("names", ())]
    if not named:
        return set()
    entries = backend_of(conn).page_entries(named)
    missing = [sid for sid in entries.values() if sid not in rows]
    if missing:
        rows.update(backend_of(conn).section_rows(missing))
    have = {c.sid for c in head}
    floor = min((c.score for c in head), default=0.0)
    for sid in entries.values():
        if sid not in have and sid in rows:
            c = Candidate(sid, score=floor)
            c.found_by.append("name")
            head.append(c)
    return set(entries.values())
