"""Confidence 0-100, relevance bands, coverage, and the decision to abstain.

Three factors, each 0..1:
- retrieval: how strong the best fused score is (and its vector similarity, if any);
- coverage: IDF-weighted share of the query's concepts present in the top results
  (a word the docs never use, like "okta" in an SSO question, weighs the most; a
  technical term such as HELIOS_REPLICATION_FACTOR that appears nowhere is decisive);
- consistency: how many independent signals agree on the top result, and its margin.

confidence = 100 * (W_RETRIEVAL*retrieval + W_COVERAGE*coverage + W_CONSISTENCY*consistency),
and the search abstains below ABSTAIN_BELOW. The weights and the threshold were chosen
on the mdmem dev split and the upstream query file (README, "Confidence").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from doc4llm.index.tokenize import fold_identifier, is_strong_identifier, stem
from doc4llm.search.analyze import QueryAnalysis
from doc4llm.search.fusion import Candidate
from doc4llm.search.rerank import term_pattern

W_RETRIEVAL, W_COVERAGE, W_CONSISTENCY = 0.40, 0.45, 0.15
ABSTAIN_BELOW = 40
HIGH_AT, MEDIUM_AT = 0.8, 0.5


@dataclass
class Verdict:
    confidence: int
    factors: dict
    explanation: str
    abstain: bool
    coverage: dict = field(default_factory=dict)
    top_score: float = 0.0

    def relevance_of(self, cand: Candidate, rank: int) -> str:
        """Band on a calibrated 0..1 scale: the confidence, scaled by the result's score
        relative to the best one."""
        if self.top_score <= 0:
            return "low"
        rel = (self.confidence / 100.0) * min(1.0, cand.score / self.top_score) ** 1.5
        if rank == 1:
            rel = self.confidence / 100.0
        return "high" if rel >= HIGH_AT else "medium" if rel >= MEDIUM_AT else "low"


def _df(conn, token: str, sets: list[str]) -> int:
    if not token:
        return 0
    marks = ",".join("?" * len(sets))
    row = conn.execute(
        f"SELECT count(*) FROM sec_fts JOIN sections s ON s.id = sec_fts.rowid"
        f" WHERE sec_fts MATCH ? AND s.set_name IN ({marks})",
        ['"' + token.replace('"', "") + '"', *sets]).fetchone()
    return int(row[0]) if row else 0


def _n_sections(conn, sets: list[str]) -> int:
    marks = ",".join("?" * len(sets))
    row = conn.execute(f"SELECT count(*) FROM sections WHERE set_name IN ({marks})", sets).fetchone()
    return max(1, int(row[0]) if row else 1)


def assess(searcher, qa: QueryAnalysis, ranked: list[Candidate], rows: dict[int, dict],
           sets: list[str]) -> Verdict:
    conn = searcher.conn
    if not ranked:
        return Verdict(0, {"retrieval": 0.0, "coverage": 0.0, "consistency": 0.0},
                       "nothing in the docs matched the query", True,
                       {"covered": [], "uncovered": qa.concepts})
    n = _n_sections(conn, sets)
    top = ranked[0]
    top_rows = [rows[c.sid] for c in ranked[:3] if c.sid in rows]
    top_text = "\n".join((r["text"] or "") + " " + " ".join(r["heading_path"]) for r in top_rows)
    first_text = top_rows[0]["text"] + " " + " ".join(top_rows[0]["heading_path"]) if top_rows else ""

    # coverage: technical terms by exact match, keywords by stem, IDF-weighted
    covered, uncovered, nowhere = [], [], []
    weights, got = 0.0, 0.0
    symbol_hit = "symbol" in top.parts  # the term names a function/class in the top code
    for term in qa.terms:
        w = 3.0
        weights += w
        if symbol_hit or term_pattern(term).search(first_text):
            got += w
            covered.append(term)
        elif term_pattern(term).search(top_text):
            got += 0.6 * w
            covered.append(term)
        else:
            uncovered.append(term)
            if _df(conn, fold_identifier(term), sets) == 0 and _df(conn, stem(term.lower().strip("-")), sets) == 0:
                nowhere.append(term)
    from doc4llm.index.tokenize import tokens

    top_toks = set()
    for r in top_rows:
        top_toks |= set(tokens((r["text"] or "") + " " + " ".join(r["heading_path"]) + " " + (r.get("page_title") or "")))
    term_words = " ".join(qa.terms).lower()
    for kw in qa.keywords:
        if kw in term_words:
            continue
        s = stem(kw)
        df = _df(conn, s, sets)
        w = math.log(1 + n / (1 + df)) if df else math.log(1 + n) * 1.3
        weights += w
        if s in top_toks:
            got += w
            covered.append(kw)
        else:
            uncovered.append(kw)
            if df == 0:
                nowhere.append(kw)
    coverage = got / weights if weights else 0.5

    retrieval = min(1.0, max(0.0, (top.score - 0.15) / 0.55))
    vec = top.raw.get("vector")
    if vec is not None:
        retrieval = 0.6 * retrieval + 0.4 * min(1.0, max(0.0, (vec - 0.78) / 0.1))
    second = ranked[1].score if len(ranked) > 1 else 0.0
    margin = min(1.0, max(0.0, (top.score - second) / max(top.score, 1e-6) * 3))
    agree = len({f for f in top.found_by if f not in ("exact",)})
    consistency = min(1.0, 0.25 * agree + 0.5 * margin)

    conf = 100 * (W_RETRIEVAL * retrieval + W_COVERAGE * coverage + W_CONSISTENCY * consistency)
    if any(t in nowhere and is_strong_identifier(t) for t in qa.terms):
        conf = min(conf, 15.0)  # a named identifier the docs never mention
    elif qa.terms and not symbol_hit and not any(term_pattern(t).search(top_text) for t in qa.terms) \
            and qa.identifier_only:
        conf = min(conf, 30.0)
    conf_i = int(round(max(0.0, min(100.0, conf))))
    abstain = conf_i < ABSTAIN_BELOW
    if nowhere:
        why = f"the docs never mention {', '.join(nowhere[:3])}"
    elif abstain:
        why = "the best matches are weak and miss part of the question"
    elif conf_i >= 75:
        why = "strong match covering the question's terms"
    else:
        why = "plausible match; check the snippet"
    return Verdict(
        conf_i,
        {"retrieval": round(retrieval, 3), "coverage": round(coverage, 3), "consistency": round(consistency, 3)},
        why,
        abstain,
        {"covered": covered, "uncovered": uncovered, "absent_from_docs": nowhere},
        top_score=top.score,
    )
