"""Confidence 0-100, relevance bands, coverage, and the decision to abstain.

Confidence is a calibrated probability that the top result answers the query: a
logistic model over a few cheap features, fitted on the dev query files by
`benchmarks/search/calibrate.py` (coefficients in calibration.py). The features, grouped as
the three factors reported to users:

- retrieval: the best fused score, the vector similarity of the best section to the
  query, BM25 strength;
- coverage: the IDF-weighted share of the query's concepts present in the top results,
  and the share of the query that the docs never mention at all (a word such as "okta"
  in an SSO question weighs the most);
- consistency: how many independent signals found the top result, and its margin over
  the second.

Rules sit on top of the model, each capping confidence below the abstention threshold,
because the docs cannot document what they never name: a code-shaped term
(HELIOS_REPLICATION_FACTOR, --enable-tls, maxItemErrors) in a short query that appears
nowhere in the chosen doc sets; the query's most specific word written as a name
(PyInstaller, Okta, environment.yml), or written in lower case but no English word
(protobuf, zstd), that appears nowhere and is not in the top section
(not for error messages, which quote text docs need not repeat); and, in large sets, an
absent key word when the top section shares only one word with the question.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from doc4llm.index.tokenize import fold_identifier, is_strong_identifier, stem, tokens
from doc4llm.search.absence import (
    documented_variant,
    is_own_value,
    possessed_word,
    verbatim_present,
)
from doc4llm.search.analyze import QueryAnalysis
from doc4llm.search.calibration import ABSTAIN_BELOW, BIAS, COEFFICIENTS
from doc4llm.search.features import term_pattern
from doc4llm.search.fusion import Candidate
from doc4llm.search.subject import SUBJECT_CAP, other_subject

STRONG = "strong match covering the question's terms"  # the top band's words (render leaves them out)

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
        rel = (self.confidence / 100.0) * math.exp(min(0.0, cand.score - self.top_score))
        return "high" if rel >= HIGH_AT else "medium" if rel >= MEDIUM_AT else "low"


def _df(conn, token: str, sets: list[str]) -> int:
    from doc4llm.index.lexstats import doc_freq  # cached; no set join over the whole index

    return doc_freq(conn, token, sets)


def _n_sections(conn, sets: list[str]) -> int:
    from doc4llm.index.lexstats import section_count

    return max(1, section_count(conn, sets))


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
    matched_first = 0
    products = {w.casefold() for w in qa.domain_words}
    own: list[str] = []  # the user's own values the docs cannot hold: not counted at all
    variants: dict[str, str] = {}  # absent word -> the documented spelling used instead
    for term in qa.terms:
        w = math.log(1 + n)  # a named term weighs like a rare word
        if symbol_hit or term_pattern(term).search(first):
            w_all += w
            w_first += w
            w_top3 += w
            exact_first += 1
            covered.append(term)
        elif term_pattern(term).search(top3):
            w_all += w
            w_top3 += w
            covered.append(term)
        elif _term_absent(conn, term, sets, products):
            if not qa.identifier_only and is_own_value(conn, term, qa.values, sets, products):
                own.append(term)
                continue
            w_all += w
            uncovered.append(term)
            if (form := documented_variant(conn, term, sets)) is not None:
                variants[term] = form  # `try/except`, `lower-case`: written otherwise
                continue
            nowhere.append(term)
            w_absent += w
        else:
            w_all += w
            uncovered.append(term)
    n_words = len([t for t in qa.terms if t not in own])
    term_words = " ".join(qa.terms).lower()
    for kw in qa.keywords:
        if kw in term_words:
            continue
        s = _index_form(kw, qa.raw)
        df = _df(conn, s, sets)
        if df == 0 and (is_own_value(conn, kw, qa.values, sets, products) or possessed_word(kw, qa.raw)):
            own.append(kw)
            continue
        if df == 0 and (form := documented_variant(conn, kw, sets)) is not None:
            variants[kw] = form  # behaviour / behavior, customise / customize; usd / "$49"
            s, df = form, max(1, _df(conn, form, sets))  # a symbol is no index token, but documented
        w = math.log(1 + n / (1 + df))
        if df == 0:
            w = math.log(1 + n)
        w_all += w
        n_words += 1
        if _holds(first_toks, s):
            w_first += w
            matched_first += 1
        if _holds(top3_toks, s):
            w_top3 += w
            covered.append(kw)
        else:
            uncovered.append(kw)
            if df == 0:
                nowhere.append(kw)
                # an everyday word the docs phrase otherwise is no sign they lack the topic
                w_absent += 0.0 if _everyday(kw, qa) else w
    second = ranked[1].score if len(ranked) > 1 else top.score - 5.0
    pool = [c.score for c in ranked if c.feats] or [top.score]
    peak = max(pool)
    p_top = math.exp(top.score - peak) / sum(math.exp(x - peak) for x in pool)
    skip = set(own)
    key_missing = _key_term_missing(qa, first_toks, first, conn, sets, n, skip, variants)
    feats = {
        "top_score": top.raw.get("fused", top.score),
        "p_top": p_top,
        "key_missing": key_missing,
        "vector": top.raw.get("vector", 0.0),
        "has_vector": 1.0 if "vector" in top.raw else 0.0,
        "bm25": math.log1p(max(0.0, top.raw.get("bm25", 0.0))),
        "margin": min(5.0, max(0.0, top.score - second)) / 5.0,
        "coverage_top1": w_first / w_all if w_all else 0.5,
        "coverage_top3": w_top3 / w_all if w_all else 0.5,
        "absent": w_absent / w_all if w_all else 0.0,
        "exact_top1": exact_first / len(qa.terms) if qa.terms else 0.0,
        "has_terms": 1.0 if qa.terms else 0.0,
        # rule inputs, not model features (the model ignores names starting with "_")
        "_words": float(n_words),
        "_matched_top1": float(matched_first + exact_first),
        "agree": float(len({f for f in top.found_by if f != "exact"})),
    }
    specific = _most_specific(qa, conn, sets, n, skip, variants) if key_missing else []
    key_absent = any(k in nowhere and not _everyday(k, qa) for k in specific)
    single_anchor = (n >= ANCHOR_MIN_SECTIONS and n_words >= 3 and matched_first + exact_first <= 1
                     and key_absent)
    absent_names = [w for w in nowhere if w in specific and names_something(w, qa)
                    and _letters_absent(w, conn, sets)] if qa.query_type != "error" else []
    report = {"covered": covered, "uncovered": uncovered, "absent_from_docs": nowhere,
              "top_holds_key_terms": _holds_key_terms(qa, first, first_toks, skip, variants),
              "own_values": own, "variants": sorted(variants),
              "single_anchor": single_anchor, "absent_names": absent_names,
              "strong_absent": [t for t in nowhere if t in qa.terms and is_strong_identifier(t)
                                and not _PATHLIKE.match(t)] if _names_only(qa) else []}
    return feats, report


def key_terms(qa: QueryAnalysis, skip: set[str] = frozenset()) -> list[str]:
    """What a section must hold to be about the question: its named terms and its content
    words outside everyday English and outside the doc sets' own names (and never the
    user's own values, `skip`: no section can hold them)."""
    from doc4llm.search.english import is_common_word

    domain = {w.casefold() for w in qa.domain_words}
    named = " ".join(qa.terms).lower()
    return [t for t in qa.terms if t not in skip] + [
        k for k in qa.keywords
        if k not in named and k.casefold() not in domain and not is_common_word(k) and k not in skip]


def _holds_key_terms(qa: QueryAnalysis, first: str, first_toks: set[str], skip: set[str] = frozenset(),
                     forms: dict[str, str] | None = None) -> bool:
    """The top section's heading path or text holds every key term of the question. An
    agent reading it then sees the evidence itself: calling it "not found" contradicted
    right first results (issue 26)."""
    keys = key_terms(qa, skip)
    if not keys:
        return False
    forms = forms or {}
    for k in keys:
        if k in forms:
            if not _holds(first_toks, forms[k]):
                return False
        elif k in qa.terms:
            if not term_pattern(k).search(first):
                return False
        elif not _holds(first_toks, _index_form(k, qa.raw)):
            return False
    return True


def _off_domain(qa: QueryAnalysis, top_row: dict | None, sets: list[str]) -> str:
    """The set of the top result when the query names other sets (and not it): "does
    pydantic support free-threaded Python?" answered by uv's *Free-threaded Python*. Other
    sets' results already count half (pipeline.OFF_DOMAIN_FACTOR), so one that still wins
    says the named docs do not cover the question."""
    if not qa.domain_sets or top_row is None or len(sets) < 2:
        return ""
    top_set = top_row.get("set_name") or ""
    return top_set if top_set and top_set not in qa.domain_sets else ""


def _index_form(kw: str, raw: str) -> str:
    """A keyword as the index holds it: its stem, or, for a word the query writes in mixed
    case that the tokenizer splits (`CORSMiddleware` -> `cor middlewar`), its parts as a
    phrase. The lower-cased keyword's stem (`corsmiddlewar`) is in no section, so the
    class the top result is headed by counted as "never mentioned" and the search abstained."""
    for tok in raw.split():
        bare = tok.strip(_EDGE_PUNCT)
        if bare != kw and bare.casefold() == kw:
            parts = tokens(bare)
            if len(parts) > 1:
                return " ".join(parts)
    return stem(kw)


def _holds(toks: set[str], form: str) -> bool:
    return all(part in toks for part in form.split())


def _letters_absent(word: str, conn, sets: list[str]) -> bool:
    """SOCKS5 is absent only if SOCKS is too: docs write HTTP2 as "HTTP/2"."""
    letters = word.rstrip("0123456789")
    if letters == word or not letters:
        return True
    return _df(conn, stem(letters.casefold()), sets) == 0


NAMED_PAGE_CONFIDENCE = 80  # floor when result 1 opens the page the query names
_PATHLIKE = re.compile(r"^(\.{0,2}/|~/)")
# "the docs never mention X" says something only about docs with a vocabulary: a handful
# of pages never mention most words of any question
ANCHOR_MIN_SECTIONS = 200
CAP_MAX_WORDS = 6  # a question this short that names an absent identifier is about it


_FILE_NAME = re.compile(r"[A-Za-z0-9][\w\-]*\.[a-z]{2,5}")
_EDGE_PUNCT = "\"'`()[]{},;:!?"


_VERSIONED_ACRONYM = re.compile(r"[A-Z]{2,6}\d{1,2}")


def written_as_name(word: str, raw: str) -> bool:
    """The query writes `word` as the name of a product, tool, protocol, language or file:
    capitalised inside the sentence (Okta, Django, Chinese), with inner capitals
    (PyInstaller, DevOps), an acronym of 3-6 letters (LDAP, QUIC), a file name
    (environment.yml) or an extension (.proto). Docs that never mention such a name cannot
    document it. Lower-case identifiers (camelCase), environment variables and other
    code-shaped capitals (the absent-identifier rule), paths and `key=value` text are not
    names here."""
    want = word.casefold()
    for i, tok in enumerate(raw.split()):
        tok = tok.strip(_EDGE_PUNCT).rstrip(".")
        bare = tok.lstrip(".")
        if want not in (tok.casefold(), bare.casefold()) or any(ch in tok for ch in "/=\\"):
            continue
        if tok.startswith(".") and bare.isalnum() and len(bare) >= 2:
            return True  # an extension
        if _FILE_NAME.fullmatch(tok) and "." in tok:
            return True
        if tok.isupper() and tok.isalpha() and 3 <= len(tok) <= 6:
            return True  # an acronym: LDAP, QUIC, SAML
        if _VERSIONED_ACRONYM.fullmatch(tok):
            return True  # SOCKS5, EC2 (the caller checks the letters too: HTTP2 is HTTP/2)
        if not tok[:1].isupper() or tok.isupper():
            continue
        if i > 0 or any(a.islower() and b.isupper() for a, b in zip(tok, tok[1:], strict=False)):
            return True
    return False


def names_something(word: str, qa: QueryAnalysis) -> bool:
    """Written as a name (Okta, LDAP), or a word no English dictionary holds in any
    inflection, which is a name written in lower case (protobuf, zstd, loguru)."""
    from doc4llm.search.english import is_english

    return written_as_name(word, qa.raw) or not is_english(word)


def _everyday(word: str, qa: QueryAnalysis) -> bool:
    """A common English word ("launched"), not a name: docs may simply phrase it otherwise."""
    from doc4llm.search.english import is_common_word

    return word not in qa.terms and is_common_word(word) and not written_as_name(word, qa.raw)


def _names_only(qa: QueryAnalysis) -> bool:
    """The query is (mostly) the names it asks about: `UV_HTTP_TIMEOUT`, `uv sync --offline`.
    A long question that mentions an invented name (`./mytool`) in passing is not."""
    return qa.identifier_only or len(qa.raw.split()) <= CAP_MAX_WORDS


def _term_absent(conn, term: str, sets: list[str], products: set[str] = frozenset()) -> bool:
    """No section has the term (whole, or the last part of a dotted name such as
    `ValidationError.errors()`; not when that part is a doc set's own name: the docs
    mention `griffe` everywhere and `[tool.griffe]` nowhere)."""
    t = term.strip("`").removesuffix("()")
    # a dotted or spaced term is no one word: its stem would be matched as a phrase
    # ("tool.griff" in "the tool. Griffe ...")
    word = stem(t.lower().strip("-")) if re.fullmatch(r"[\w-]+", t) else ""
    if _df(conn, fold_identifier(t), sets) or (word and _df(conn, word, sets)):
        # a flag is indexed as its bare word: `--outdated` is not the prose "outdated"
        return t.startswith("-") and not verbatim_present(conn, t, sets)
    last = t.rsplit(".", 1)[-1] if "." in t and "/" not in t else ""
    if last.casefold() in products:
        return True
    return not (len(last) >= 4 and _df(conn, fold_identifier(last), sets))


def _most_specific(qa: QueryAnalysis, conn, sets: list[str], n: int, skip: set[str] = frozenset(),
                   forms: dict[str, str] | None = None) -> list[str]:
    """The query's most specific words (highest IDF over the chosen sets; ties all kept),
    as written (keywords) or as named (terms); never the user's own values (`skip`), and a
    word spelt otherwise in the docs counts in their spelling (`forms`)."""
    forms = forms or {}
    scored: list[tuple[float, str, str]] = []
    for kw in qa.keywords:
        if kw in skip:
            continue
        form = forms.get(kw) or _index_form(kw, qa.raw)
        scored.append((math.log(1 + n / (1 + _df(conn, form, sets))), "kw", kw))
    for term in qa.terms:
        if term in skip:
            continue
        if term in forms:
            scored.append((math.log(1 + n / (1 + _df(conn, forms[term], sets))), "term", term))
            continue
        df = min(_df(conn, fold_identifier(term), sets), _df(conn, stem(term.lower().strip("-")), sets) or 10**9)
        scored.append((math.log(1 + n / (1 + df)), "term", term))
    if not scored:
        return []
    top = max(x[0] for x in scored)
    return [w for idf, _, w in scored if idf >= top - 1e-9]


def _key_term_missing(qa: QueryAnalysis, first_toks: set[str], first: str, conn, sets: list[str],
                      n: int, skip: set[str] = frozenset(), forms: dict[str, str] | None = None) -> float:
    """1.0 when the query's most specific word (highest IDF over the chosen sets) is not in
    the top section: a question about `autovacuum` is not answered by a section that only
    shares `postgresql` with it."""
    forms = forms or {}
    words = _most_specific(qa, conn, sets, n, skip, forms)
    if not words:
        return 0.0
    for w in words:
        if w in forms and _holds(first_toks, forms[w]):
            return 0.0
        if w in qa.terms and term_pattern(w).search(first):
            return 0.0
        if w not in qa.terms and _holds(first_toks, _index_form(w, qa.raw)):
            return 0.0
    return 1.0


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
    report["off_domain"] = _off_domain(qa, rows.get(ranked[0].sid), sets)
    conf = 100.0 * probability(feats)
    if report["strong_absent"] or report["single_anchor"] or report["absent_names"] \
            or report["off_domain"]:  # always abstain
        conf = min(conf, ABSENT_TERM_CAP, ABSTAIN_BELOW - 1)
    named_page = bool(ranked[0].parts.get("rerank.page_entry"))
    if named_page and not (report["strong_absent"] or report["absent_names"] or report["off_domain"]):
        # the query is the name of a page (`npm ci` -> page `npm-ci`) and result 1 opens it:
        # the model's features (coverage, BM25 margin) say little about a two-word name
        conf = max(conf, NAMED_PAGE_CONFIDENCE)
    sibling = other_subject(qa, ranked, rows) if not named_page else None
    if sibling:  # result 1 names another subject than a close result does (subject.py)
        conf = min(conf, SUBJECT_CAP)
        report["other_subject"] = {"rank": sibling[0], "why": sibling[1]}
    conf_i = int(round(max(0.0, min(100.0, conf))))
    hard = report["strong_absent"] or report["absent_names"] or report["off_domain"] or report["single_anchor"]
    evidence = conf_i < ABSTAIN_BELOW and not hard and report["top_holds_key_terms"]
    if evidence:  # no verdict over a section that holds what was asked about
        conf_i = ABSTAIN_BELOW
    abstain = conf_i < ABSTAIN_BELOW
    factors = {
        "retrieval": round(min(1.0, feats["top_score"]), 3),
        "coverage": round(feats["coverage_top3"] * (1 - feats["absent"]), 3),
        "consistency": round(min(1.0, 0.25 * feats["agree"] + 0.5 * feats["margin"]), 3),
    }
    if report["strong_absent"]:
        why = f"the docs never mention {', '.join(report['strong_absent'][:3])}"
    elif report["absent_names"]:
        why = f"the docs never mention {', '.join(report['absent_names'][:3])}"
    elif report["off_domain"]:
        why = (f"the query names {', '.join(qa.domain_sets)}, whose docs match it less than half as "
               f"well as another set's; the best match is in {report['off_domain']}")
    elif report["single_anchor"]:
        why = (f"the docs never mention {', '.join(report['absent_from_docs'][:2])}; the best match "
               "shares only one word with the question")
    elif abstain and (named := [w for w in report["absent_from_docs"] if w in qa.terms or names_something(w, qa)]):
        why = f"weak match; the docs never use: {', '.join(named[:3])}"
    elif abstain:
        why = "the best matches are weak and miss part of the question"
    elif evidence:
        why = "weak match, but the best section holds every key term of the question; check its lines"
    elif sibling and conf_i <= SUBJECT_CAP:
        why = sibling[1]
    elif named_page:
        why = "the query is the name of this page"
    elif conf_i >= 75:
        why = STRONG
    elif conf_i >= 35:
        why = "plausible match; check its lines"
    else:
        why = "weak match; the lines may not answer: check them, or search other words"
    return Verdict(conf_i, factors, why, abstain, report, top_score=ranked[0].score,
                   features={k: round(v, 4) for k, v in feats.items()})
