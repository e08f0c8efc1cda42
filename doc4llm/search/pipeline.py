"""The search pipeline behind `Searcher.search`: signals -> fusion -> rerank -> dedupe
-> confidence -> abstention/guidance.

There is no corrective retry: rerunning a weak query reworded (its terms only, its first
three keywords) and keeping the better-scored pass lost as many right answers as it found
on 24 eval runs and turned abstentions on unanswerable questions into confident wrong
answers (README, "Confidence and abstention")."""

from __future__ import annotations

import time

from doc4llm.search import levels
from doc4llm.search.analyze import QueryAnalysis
from doc4llm.search.confidence import assess
from doc4llm.search.fusion import Candidate, band_of, fuse, normalize, vec_scale
from doc4llm.search.options import options_for
from doc4llm.search.rerank import rerank
from doc4llm.search.results import collapse_repeats, to_result

OFF_DOMAIN_FACTOR = 0.5
UNPINNED_FACTOR = 0.5  # another version of a library than the pinned one
KEEP_LOW_UNTIL = 3  # low-relevance results are dropped after this many results
L1_THRESHOLD = 0.55  # the seed's 0.7 on our fused 0..1 L1 scale (fuzzy*0.5 + vector*0.5)
L1_FUZZY_THRESHOLD = 0.85  # without vectors L1 is rapidfuzz alone: ask for a near-literal title


def _ms(t: float) -> float:
    return round((time.perf_counter() - t) * 1000, 1)


def _vector_signals(searcher, qa: QueryAnalysis, sets: list[str], n: int, timing: dict) -> dict[str, dict[int, float]]:
    from doc4llm.index.vectors import search_vectors

    loaded = {s: searcher._vectors[s] for s in sets if s in searcher._vectors}
    if not loaded:
        return {}
    t = time.perf_counter()
    qv = searcher.query_vector(qa.raw)
    timing["embed_query"] = _ms(t)
    if qv is None:
        return {}
    t = time.perf_counter()
    out: dict[str, dict[int, float]] = {"vector": {}, "head": {}}
    for idx in loaded.values():
        for name, kind in (("vector", "body"), ("head", "head")):
            for sid, sim in search_vectors(idx, kind, qv, n):
                out[name][sid] = sim
    timing["vector_search"] = _ms(t)
    return out


def gather(searcher, qa: QueryAnalysis, sets: list[str], strategy: str, n: int, timing: dict,
           trace: list[dict]) -> dict[str, dict[int, float]]:
    """Run the signals a strategy needs."""
    conn = searcher.conn
    sig: dict[str, dict[int, float]] = {}
    t = time.perf_counter()
    l1_has_vectors = False
    domain = [s for s in qa.domain_sets if s in sets]
    if strategy in ("auto", "bm25"):
        sig["bm25"] = levels.bm25(conn, qa, sets, limit=n)
    if strategy in ("auto", "L2", "cascade"):
        sig["L2"] = levels.toc_grep(conn, qa, sets, limit=n)
    if strategy in ("L3.1", "cascade") or (strategy == "auto" and domain):
        sig["L3.1"] = levels.toc_grep(conn, qa, domain, limit=n) if domain else {}
    if strategy in ("auto", "L3.2", "cascade"):
        sig["L3.2"] = levels.content_grep(conn, qa, sets, limit=n)
    if strategy in ("auto", "L1", "cascade"):
        sig["L1"] = levels.title_match(conn, qa, sets, limit=max(20, n // 2))
    timing["lexical"] = _ms(t)
    if strategy in ("auto", "vector", "L1", "cascade"):
        vec = _vector_signals(searcher, qa, sets, n, timing)
        if strategy in ("auto", "vector"):
            sig.update({k: v for k, v in vec.items() if k == "vector" or strategy == "auto"})
        if strategy in ("L1", "cascade", "auto") and vec.get("head"):
            fuzzy = sig.get("L1", {})
            band = band_of(searcher.embedder)
            sig["L1"] = {sid: 0.5 * fuzzy.get(sid, 0.0) + 0.5 * vec_scale(vec["head"].get(sid, 0.0), band)
                         for sid in set(fuzzy) | set(vec["head"])}
            l1_has_vectors = True
    if l1_has_vectors:
        sig["_l1_has_vectors"] = {}
    for name, scores in sig.items():
        if name.startswith("_"):
            continue
        trace.append({"level": name, "hits": len(scores),
                      "max": round(max(scores.values()), 4) if scores else 0.0})
    return sig


def _cascade(sig: dict[str, dict[int, float]], trace: list[dict],
             l1_has_vectors: bool) -> tuple[str, dict[str, dict[int, float]]]:
    """The seed's progressive fallback: L1 if good enough, else L2, else L3.1, else L3.2."""
    l1 = sig.get("L1", {})
    threshold = L1_THRESHOLD if l1_has_vectors else L1_FUZZY_THRESHOLD
    if l1 and max(l1.values()) >= threshold:
        chosen = "L1"
    elif sig.get("L2"):
        chosen = "L2"
    elif sig.get("L3.1"):
        chosen = "L3.1"
    else:
        chosen = "L3.2"
    for step in trace:
        step["chosen"] = step["level"] == chosen
    return chosen, {chosen: sig.get(chosen, {})}


def rank_once(searcher, qa: QueryAnalysis, sets: list[str], strategy: str, timing: dict,
              trace: list[dict], step_back: set[str] | frozenset = frozenset()
              ) -> tuple[list[Candidate], dict[int, dict], dict]:
    opts = options_for(qa.query_type)
    sig = gather(searcher, qa, sets, strategy, opts.candidates, timing, trace)
    symbols = levels.symbol_match(searcher.conn, qa, sets) if strategy in ("auto", "L3.2") else {}
    l1_has_vectors = sig.pop("_l1_has_vectors", None) is not None
    if strategy == "cascade":
        _, sig = _cascade(sig, trace, l1_has_vectors)
    elif strategy not in ("auto",):
        sig = {strategy if strategy in sig else next(iter(sig), strategy): sig.get(strategy, {})}
    domain_boost = sig.pop("L3.1", {}) if strategy == "auto" else {}
    t = time.perf_counter()
    cands = normalize(sig, band_of(searcher.embedder) if sig.get("vector") or sig.get("head") else
                      (0.0, 1.0))
    if strategy == "auto":
        ranked = fuse(cands)
    else:
        ranked = fuse(cands, {k: 1.0 for k in sig})
    for c in ranked:
        if c.sid in domain_boost:
            c.parts["L3.1"] = domain_boost[c.sid]
            c.found_by.append("L3.1") if domain_boost[c.sid] >= 0.5 else None
    for sid in symbols:
        c = next((x for x in ranked if x.sid == sid), None)
        if c is None:
            c = Candidate(sid)
            ranked.append(c)
        c.parts["symbol"] = 1.0
        c.score += 0.25
        c.found_by.append("symbol")
    off_domain = qa.domain_sets and strategy == "auto" and set(qa.domain_sets) != set(sets)
    if off_domain or step_back:
        # L3.1's domain filter, soft: the query names a product, other sets step back; so
        # do the versions of a library other than the pinned one (corpus/projects.py)
        rows_sets = searcher.section_rows([c.sid for c in ranked[: opts.rerank_depth * 2]])
        for c in ranked:
            r = rows_sets.get(c.sid)
            if r and off_domain and r["set_name"] not in qa.domain_sets:
                c.score *= OFF_DOMAIN_FACTOR
            if r and r["set_name"] in step_back:
                c.score *= UNPINNED_FACTOR
    ranked.sort(key=lambda c: -c.score)
    if strategy == "auto":
        _into_pool(ranked, levels.name_holders(searcher.conn, qa, sets), opts.rerank_depth)
    rows = searcher.section_rows([c.sid for c in ranked[: max(opts.rerank_depth, 10)]])
    if strategy == "auto":
        mode = "vec" if sig.get("vector") else "lex"
        ranked = rerank(qa, ranked, rows, opts.rerank_depth, opts.prefer, searcher.conn, mode, sets)
    timing["fuse_rerank"] = _ms(t)
    return ranked, rows, {sid: (a, b) for sid, (_, a, b) in symbols.items()}


def _into_pool(ranked: list[Candidate], sids: list[int], depth: int) -> None:
    """Put these sections into the first `depth` (the reranker's pool) in place of its
    weakest other members: the reranker's features, not the fused score, then decide
    where they rank."""
    wanted = set(sids)
    pool, rest = ranked[:depth], ranked[depth:]
    inside = {c.sid for c in pool}
    by_sid = {c.sid: c for c in rest}
    moved = [by_sid.get(sid) or Candidate(sid) for sid in dict.fromkeys(sids) if sid not in inside]
    room = depth - len(pool)  # a short list has room for them
    out = [c for c in reversed(pool) if c.sid not in wanted][:max(0, len(moved) - room)]
    moved = moved[:room + len(out)]
    if not moved:
        return
    gone = {c.sid for c in out} | {c.sid for c in moved}
    ranked[:] = ([c for c in pool if c.sid not in gone] + moved + out[::-1]
                 + [c for c in rest if c.sid not in gone])


def context_lines(conn, row: dict, window: int) -> list[int]:
    """Line range covering the section and `window` neighbouring sections on each side
    (type-aware expansion: concept questions get more surrounding prose)."""
    from doc4llm.index.backend import backend_of

    lo, hi = backend_of(conn).line_span(row["page_id"], row["idx"] - window, row["idx"] + window)
    return [min(lo or row["start"], row["start"]), max(hi or row["end"], row["end"])]


SHOWN_ROWS_MAX = 256  # rows kept on the searcher for a fused search's near-twins check
NEARBY = 3  # neighbouring headings listed under result 1
# an introduction's subsections: its steps, which an agent picks from by heading (the skill
# says so); with three shown, agents ran `toc` for the rest (agent study, round 6: 6 of 40)
NEARBY_CHILDREN = 6
# a listed subsection's own subsections, by name (at most this many in all): agents ran
# `toc` to see what filled the gap between "Unit tests 9-35" and the next one at 65
# (round 12: a count of them did not stop that; they wanted the names)
NEARBY_GRANDCHILDREN = 6


def nearby_sections(docs_dir, result: dict) -> list[dict]:
    """The headings next to result 1 on its page (its subsections, else its siblings, the
    nearest first), so an agent choosing between a page's intro, a step and its neighbour
    sees them without a `toc` call. Read from the page file; none when it is absent."""
    from doc4llm.corpus.model import DocSet

    doc_set = DocSet(docs_dir / result["doc_set"])
    page = doc_set.page(result["page"]) if doc_set.path.is_dir() else None
    if page is None:
        return []
    secs = [x for x in page.sections() if x.level > 0]
    me = next((x for x in secs if x.start == result["lines"][0]), None)
    if me is None:
        return []
    kids = [x for x in secs if x.heading_path[:-1] == me.heading_path and x.level > me.level]
    if kids:
        chosen = kids[:NEARBY_CHILDREN]
    else:
        sibs = [x for x in secs if x is not me and x.heading_path[:-1] == me.heading_path[:-1]
                and x.level == me.level]
        chosen = sorted(sorted(sibs, key=lambda x: abs(x.index - me.index))[:NEARBY], key=lambda x: x.start)
    out = [{"heading": x.title, "lines": [x.start, x.end], "tokens": x.tokens, "child": bool(kids)}
           for x in chosen]
    if kids:
        left = NEARBY_GRANDCHILDREN
        by_path = {tuple(x.heading_path): i for i, x in enumerate(chosen)}
        for x in secs:  # page order: each listed subsection's own subsections, in one pass
            i = by_path.get(tuple(x.heading_path[:-1]))
            if i is not None and left > 0:
                out[i].setdefault("children", []).append({"heading": x.title, "lines": [x.start, x.end]})
                left -= 1
    return out


def run_search(searcher, qa: QueryAnalysis, sets: list[str], *, k: int, strategy: str, explain: bool,
               timing: dict, context: str | None = None, step_back: set[str] | frozenset = frozenset()) -> dict:
    trace: list[dict] = []
    ranked, rows, chunks = rank_once(searcher, qa, sets, strategy, timing, trace, step_back)
    verdict = assess(searcher, qa, ranked, rows, sets)

    missing = [c.sid for c in ranked[: k * 3] if c.sid not in rows]
    rows.update(searcher.section_rows(missing))
    ordered = [(c, rows[c.sid]) for c in ranked[: k * 4] if c.sid in rows]
    # a section and its ancestor are both kept: a result is its own text (lines up to its
    # first child), so the two never overlap, and the parent's intro is often the answer
    ordered = collapse_repeats(ordered, rows)[:k]

    from doc4llm.search.features import keyword_idf

    weights = keyword_idf(searcher.conn, list(dict.fromkeys(qa.stems)), sets)
    results = []
    for (c, row), also in ordered:
        rel = verdict.relevance_of(c, len(results) + 1)
        if rel == "low" and len(results) >= KEEP_LOW_UNTIL and not verdict.abstain:
            continue  # intent filter: past the first few, low-relevance hits are noise
        res = to_result(len(results) + 1, c, row, searcher.docs_dir, qa.stems, qa.terms, rel,
                        explain, chunk=chunks.get(c.sid), weights=weights)
        if also:
            res["also_in"] = also
        shown = getattr(searcher, "shown_rows", None)
        if shown is not None:
            if len(shown) > SHOWN_ROWS_MAX:  # a long-lived MCP searcher: bounded
                shown.clear()
            shown[(row["set_name"], row["page"], res["lines"][0], res["lines"][1])] = row
        if c.parts.get("rerank.quotes_query"):
            res["quotes_query"] = True  # holds the pasted question verbatim (search/quoted.py)
        window = options_for(qa.query_type).expand
        if window and c.sid not in chunks:
            res["context_lines"] = context_lines(searcher.conn, row, window)
        results.append(res)
    twins = None
    if results and not verdict.abstain:
        results[0]["nearby"] = nearby_sections(searcher.docs_dir, results[0])
        from doc4llm.search.outline import attach_outline
        from doc4llm.search.twins import canonical_choice

        attach_outline(searcher.docs_dir, results, verdict.confidence)

        kept = {(r["doc_set"], r["page"], r["lines"][0]) for r in results[:3]}
        twin_rows = [row for (_, row), _ in ordered if (row["set_name"], row["page"], row["start"]) in kept]
        # a result 1 that quotes the pasted question is the canonical one: no near-twins line
        if len(twin_rows) == len(results[:3]) and not results[0].get("quotes_query"):
            twins = canonical_choice(qa.query_type, results[:3], twin_rows, qa.terms)
    abstained = verdict.abstain
    guidance = None
    from doc4llm.search.gaps import absent_topics
    from doc4llm.search.guidance import build_guidance

    # what no section contains is reported whatever the confidence: an agent told
    # "no section contains: flutter" needs no grep to confirm it (agent study, round 3);
    # never the user's own values (issue 34)
    verdict.coverage["missing"] = absent_topics(searcher.conn, qa, verdict.coverage, sets, verdict.confidence,
                                                verdict.abstain, bool(results),
                                                [rows[c.sid] for c in ranked[:3] if c.sid in rows])
    if abstained or verdict.confidence < 60:
        guidance = build_guidance(searcher, qa, verdict, results, sets)
    if abstained:
        for r in results:
            r["relevance"] = "low"
            r["weak_neighbour"] = True
    out = {
        "query": qa.raw,
        "query_type": qa.query_type,
        "strategy": strategy,
        "confidence": verdict.confidence,
        "confidence_factors": verdict.factors,
        "confidence_explanation": verdict.explanation,
        "abstained": abstained,
        "results": results,
        "guidance": guidance,
        "analysis": {"terms": qa.terms, "keywords": qa.keywords, "domain_sets": qa.domain_sets,
                     "intent": qa.intent},
        "coverage": verdict.coverage,
        "twins": twins,
        "sets": sets,
        "trace": trace,
    }
    if explain:
        out["confidence_features"] = verdict.features
    if context:
        out["context_used"] = context
    return out
