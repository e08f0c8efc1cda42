"""Confidence 0-100, relevance bands, coverage, and the decision to abstain.

Confidence is a calibrated probability that the top result answers the query: a
logistic model over a few cheap features, fitted on the dev query files by
`benchmarks/calibrate.py` (coefficients in calibration.py). The features, grouped as
the three factors reported to users:

- retrieval: the best fused score, the vector similarity of the best section to the
  query, BM25 strength;
- coverage: the IDF-weighted share of the query's concepts present in the top results,
  and the share of the query that the docs never mention at all (a word such as "okta"
  in an SSO question weighs the most);
- consistency: how many independent signals found the top result, and its margin over
  the second.

One rule sits on top of the model: a code-shaped term (HELIOS_REPLICATION_FACTOR,
--enable-tls, maxItemErrors) that appears nowhere in the chosen doc sets caps
confidence below the abstention threshold, because the docs cannot document what they never name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from doc4llm.index.tokenize import fold_identifier, is_strong_identifier, stem
from doc4llm.search.analyze import QueryAnalysis
from doc4llm.search.calibration import ABSTAIN_BELOW, BIAS, COEFFICIENTS
from doc4llm.search.fusion import Candidate
from doc4llm.search.rerank import term_pattern

HIGH_AT, MEDIUM_AT = 0.8, 0.5
ABSENT_TERM_CAP = 10


@dataclass
class Verdict:
    confidence: int
    factors: dict
    explanation: str
    abstain: bool
    coverage: dict = field(default_factory=dict)
    top_score: float = 0.0
    features: dict = field(default_factory=dict)

    def relevance_of(self, cand: Candidate, rank: int) -> str:
        """Band on a calibrated 0..1 scale: the confidence, scaled by the result's score
        relative to the best one (high >= 0.8, medium >= 0.5, else low)."""
        if self.top_score <= 0:
            return "low"
        rel = (self.confidence / 100.0) * min(1.0, cand.score / self.top_score) ** 2
        return "high" if rel >= HIGH_AT else "medium" if rel >= MEDIUM_AT else "low"


def _df(conn, token: str, sets: list[str]) -> int:
    if not token:
        return 0
    marks = ",".join("?" * len(sets))
    row = conn.execute(
        f"SELECT count(*) FROM sec_fts JOIN sections s ON s.id = sec_fts.rowid"
        f" WHERE sec_fts MATCH ? AND +s.set_name IN ({marks})",
        ['"' + token.replace('"', "") + '"', *sets]).fetchone()
    return int(row[0]) if row else 0


def _n_sections(conn, sets: list[str]) -> int:
    marks = ",".join("?" * len(sets))
    row = conn.execute(f"SELECT count(*) FROM sections WHERE set_name IN ({marks})", sets).fetchone()
    return max(1, int(row[0]) if row else 1)


def _text_of(row: dict) -> str:
    return (row["text"] or "") + " " + " ".join(row["heading_path"]) + " " + (row.get("page_title") or "")


def _stored_tokens(rows: list[dict]) -> set[str]:
    out: set[str] = set()
    for r in rows:
        out.update(f"{r.get('tok_title') or ''} {r.get('tok_path') or ''} {r.get('tok_body') or ''}".split())
    return out


def compute_features(searcher, qa: QueryAnalysis, ranked: list[Candidate], rows: dict[int, dict],
                     sets: list[str]) -> tuple[dict, dict]:
    """(features, coverage report) for the current ranking."""
    conn = searcher.conn
    n = _n_sections(conn, sets)
    top = ranked[0]
    top_rows = [rows[c.sid] for c in ranked[:3] if c.sid in rows]
    first = _text_of(top_rows[0]) if top_rows else ""
    top3 = "\n".join(_text_of(r) for r in top_rows)
    first_toks = _stored_tokens(top_rows[:1]) if top_rows else set()
    top3_toks = _stored_tokens(top_rows)

    covered, uncovered, nowhere = [], [], []
    w_all = w_first = w_top3 = w_absent = 0.0
    symbol_hit = "symbol" in top.parts  # the term names a function/class in the top code
    exact_first = 0
    for term in qa.terms:
        w = math.log(1 + n)  # a named term weighs like a rare word
        w_all += w
        if symbol_hit or term_pattern(term).search(first):
            w_first += w
            w_top3 += w
            exact_first += 1
            covered.append(term)
        elif term_pattern(term).search(top3):
            w_top3 += w
            covered.append(term)
        else:
            uncovered.append(term)
            if _df(conn, fold_identifier(term), sets) == 0 and _df(conn, stem(term.lower().strip("-")), sets) == 0:
                nowhere.append(term)
                w_absent += w
    term_words = " ".join(qa.terms).lower()
    for kw in qa.keywords:
        if kw in term_words:
            continue
        s = stem(kw)
        df = _df(conn, s, sets)
        w = math.log(1 + n / (1 + df))
        if df == 0:
            w = math.log(1 + n)
        w_all += w
        if s in first_toks:
            w_first += w
        if s in top3_toks:
            w_top3 += w
            covered.append(kw)
        else:
            uncovered.append(kw)
            if df == 0:
                nowhere.append(kw)
                w_absent += w
    second = ranked[1].score if len(ranked) > 1 else 0.0
    feats = {
        "top_score": top.score,
        "vector": top.raw.get("vector", 0.0),
        "has_vector": 1.0 if "vector" in top.raw else 0.0,
        "bm25": math.log1p(max(0.0, top.raw.get("bm25", 0.0))),
        "margin": (top.score - second) / max(top.score, 1e-6),
        "coverage_top1": w_first / w_all if w_all else 0.5,
        "coverage_top3": w_top3 / w_all if w_all else 0.5,
        "absent": w_absent / w_all if w_all else 0.0,
        "exact_top1": exact_first / len(qa.terms) if qa.terms else 0.0,
        "has_terms": 1.0 if qa.terms else 0.0,
        "agree": float(len({f for f in top.found_by if f != "exact"})),
    }
    report = {"covered": covered, "uncovered": uncovered, "absent_from_docs": nowhere,
              "strong_absent": [t for t in nowhere if t in qa.terms and is_strong_identifier(t)]}
    return feats, report


def probability(feats: dict) -> float:
    z = BIAS + sum(COEFFICIENTS.get(k, 0.0) * v for k, v in feats.items())
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def assess(searcher, qa: QueryAnalysis, ranked: list[Candidate], rows: dict[int, dict],
           sets: list[str]) -> Verdict:
    if not ranked:
        return Verdict(0, {"retrieval": 0.0, "coverage": 0.0, "consistency": 0.0},
                       "nothing in the docs matched the query", True,
                       {"covered": [], "uncovered": qa.concepts, "absent_from_docs": []})
    feats, report = compute_features(searcher, qa, ranked, rows, sets)
    conf = 100.0 * probability(feats)
    if report["strong_absent"]:  # always below the abstention threshold
        conf = min(conf, ABSENT_TERM_CAP, ABSTAIN_BELOW - 1)
    conf_i = int(round(max(0.0, min(100.0, conf))))
    abstain = conf_i < ABSTAIN_BELOW
    factors = {
        "retrieval": round(min(1.0, feats["top_score"]), 3),
        "coverage": round(feats["coverage_top3"] * (1 - feats["absent"]), 3),
        "consistency": round(min(1.0, 0.25 * feats["agree"] + 0.5 * feats["margin"]), 3),
    }
    if report["strong_absent"]:
        why = f"the docs never mention {', '.join(report['strong_absent'][:3])}"
    elif abstain and report["absent_from_docs"]:
        why = f"weak match; the docs never use: {', '.join(report['absent_from_docs'][:3])}"
    elif abstain:
        why = "the best matches are weak and miss part of the question"
    elif conf_i >= 75:
        why = "strong match covering the question's terms"
    else:
        why = "plausible match; check the snippet"
    return Verdict(conf_i, factors, why, abstain, report, top_score=ranked[0].score,
                   features={k: round(v, 4) for k, v in feats.items()})
