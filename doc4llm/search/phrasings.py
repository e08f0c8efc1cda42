"""Several phrasings of one question, searched together and fused (`search --or`).

An agent that does not know the docs' words guesses them ("air-gapped" / "offline" /
`UV_PYTHON_DOWNLOADS`); each guess used to cost a call and its output. Here every
phrasing runs through the same warm searcher and the rankings are fused: a section's score
is the sum over phrasings of its reciprocal rank, weighted by that phrasing's confidence,
so a phrasing that found a confident answer leads, and a section several phrasings agree
on rises. The answer's confidence is that of the best phrasing whose first result is the
fused first result; the search abstains only when every phrasing does.
"""

from __future__ import annotations

MAX_PHRASINGS = 6
RANK_OFFSET = 1.0  # 1 / (rank + offset): rank 1 weighs 0.5, rank 2 0.33, rank 3 0.25
DEPTH = 8  # results taken from each phrasing before fusing


OFF_DOMAIN_FACTOR = 0.5  # as pipeline.OFF_DOMAIN_FACTOR: another product's section counts half
# confidence of a fused first result that no phrasing which did not abstain ranks first: below
# render's READ_HINT_BELOW, so results 2-3 keep their lines and the read command is printed
AGREED_CAP = 59
ASKED_ABSENT_CAP = 30  # confidence when the question names something the docs never mention


def _absent_names(run: dict) -> list[str]:
    cov = run.get("coverage") or {}
    return [*(cov.get("strong_absent") or []), *(cov.get("absent_names") or [])]


def _in_every_phrasing(missing: list[str], queries: list[str]) -> list[str]:
    """The plain words no section contains that every phrasing uses: the agent kept them in
    each rewording, so they are what the question is about ("full-text search"), and no
    section holds it. Code names are left out: `fail_fast` is absent as written while its
    parts (`FailFast`) are documented."""
    from doc4llm.index.tokenize import tokens

    if len(queries) < 2:
        return []
    said = [set(tokens(q)) for q in queries]
    return [w for w in missing if w.isalpha() and w == w.lower()
            and all(any(t in s for t in tokens(w)) for s in said)]


def check_phrasings(query: str, phrasings: list[str]) -> None:
    """Empty or too many phrasings are a usage error (exit 2), not a silent no-op."""
    from doc4llm.errors import InputError

    if any(not p or not p.strip() for p in phrasings):
        raise InputError("--or needs a non-empty phrasing", hint='doc4llm search "offline builds" --or "air-gapped"')
    if len(phrasings) + 1 > MAX_PHRASINGS:
        raise InputError(f"at most {MAX_PHRASINGS} phrasings in one search (the query and {MAX_PHRASINGS - 1} --or)")


def _key(r: dict) -> tuple:
    return (r["doc_set"], r["page"], r["lines"][0], r["lines"][1])


def _fused_twins(searcher, asked: dict, results: list[dict]) -> dict | None:
    """The near-twins line (search/twins.py) over the fused first three results, for the
    question as asked; none when result 1 quotes the pasted question or a row is unknown."""
    shown = getattr(searcher, "shown_rows", None)
    if not shown or len(results) < 2 or asked.get("abstained") or results[0].get("quotes_query"):
        return None
    rows = [shown.get(_key(r)) for r in results[:3]]
    if any(row is None for row in rows):
        return None
    from doc4llm.search.twins import canonical_choice

    return canonical_choice(asked.get("query_type") or "general", results[:3], rows,
                            (asked.get("analysis") or {}).get("terms") or [])


def _names_more(mine: dict, other: dict, named: list[str]) -> bool:
    """`mine`'s best lines hold a name the question asks about that `other`'s lack."""
    if not named or mine is other:
        return False
    from doc4llm.search.features import term_pattern

    def held(r: dict) -> set[str]:
        text = "\n".join(b.get("text", "") for b in r.get("best_lines") or [])
        return {t for t in named if term_pattern(t).search(text)}

    return bool(held(mine) - held(other))


def search_phrasings(searcher, queries: list[str], *, sets: list[str] | None, k: int, **kwargs) -> dict:
    """One result in the search contract for all phrasings (duplicates dropped)."""
    queries = list(dict.fromkeys(" ".join(q.split()) for q in queries))
    # a version one phrasing names ("pydantic 1.10") holds for the whole question
    runs = [searcher.search(q, sets=sets, k=max(k, DEPTH), versions_in=" --- ".join(queries), **kwargs)
            for q in queries]
    score: dict[tuple, float] = {}
    best: dict[tuple, tuple[int, dict]] = {}  # key -> (rank, result) where it ranked best
    found_in: dict[tuple, list[int]] = {}
    for i, run in enumerate(runs):
        weight = 0.5 + run["confidence"] / 100.0
        for r in run["results"]:
            key = _key(r)
            score[key] = score.get(key, 0.0) + weight / (r["rank"] + RANK_OFFSET)
            found_in.setdefault(key, []).append(i)
            if key not in best or r["rank"] < best[key][0]:
                best[key] = (r["rank"], r)
    domain = set((runs[0].get("analysis") or {}).get("domain_sets") or [])
    if domain:  # the question names a product: its rewordings are about that product too
        for key in score:
            if key[0] not in domain:
                score[key] *= OFF_DOMAIN_FACTOR
    order = sorted(score, key=lambda key: (-score[key], best[key][0]))[:k]
    # a phrasing that is pasted text (an error message) and whose first result quotes it
    # verbatim decides result 1: agreement among guessed rewordings does not outvote the quote
    quoting = [_key(run["results"][0]) for run in runs if run["results"] and run["results"][0].get("quotes_query")
               and not run["abstained"]]
    if quoting and quoting[0] in order[:3] and quoting[0] != order[0]:
        order.insert(0, order.pop(order.index(quoting[0])))
    as_asked = {_key(r): r for r in runs[0]["results"]}
    named = [t for t in ((runs[0].get("analysis") or {}).get("terms") or []) if len(t) > 2]
    results = []
    for rank, key in enumerate(order, 1):
        r = dict(best[key][1])
        mine = as_asked.get(key)
        if mine is not None and _names_more(mine, r, named):
            # the lines that hold the name the question asks about (`--drop-rate`), not the
            # ones another phrasing's guessed words picked ("dev server": an example above it)
            for field in ("best_lines", "top_line", "entry"):
                r.pop(field, None)
                if mine.get(field) is not None:
                    r[field] = mine[field]
        r["rank"] = rank
        r["phrasings"] = found_in[key]
        r.pop("nearby", None)
        results.append(r)
    if results and not all(run["abstained"] for run in runs):
        from doc4llm.search.pipeline import nearby_sections

        results[0]["nearby"] = nearby_sections(searcher.docs_dir, results[0])
    # the phrasings that vouch for the fused first result: it is their own first, and they
    # did not abstain (an abstained phrasing's "the docs never mention X" is about its own
    # words, a guess the agent added, not about the question or this result)
    tops = [i for i, run in enumerate(runs) if run["results"] and order and _key(run["results"][0]) == order[0]
            and not run["abstained"]]
    live = [i for i in range(len(runs)) if not runs[i]["abstained"]] or list(range(len(runs)))
    lead = max(tops, key=lambda i: runs[i]["confidence"]) if tops else \
        max(live, key=lambda i: runs[i]["confidence"])
    out = dict(runs[lead])
    out["query"] = queries[0]
    out["phrasings"] = queries
    out["results"] = results
    out["abstained"] = all(run["abstained"] for run in runs)
    # near-twins judged on the fused list, for the question as asked (the lead phrasing's
    # line named its own ranks and its own question type)
    out["twins"] = _fused_twins(searcher, runs[0], results)
    if tops:
        out["confidence"] = max(runs[i]["confidence"] for i in tops)
    elif not out["abstained"]:
        # the fused first result is no confident phrasing's first: the phrasings agree on it,
        # but no phrasing's calibrated confidence is about it; "plausible, check its lines"
        out["confidence"] = min(out["confidence"], AGREED_CAP)
        out["confidence_explanation"] = "no phrasing ranks result 1 first; the phrasings agree on it: check its lines"
    # names the docs never mention, from every phrasing: the question's own (run 0) say the
    # docs do not cover what it asks about, whatever another phrasing found; a guessed name
    # that is absent tells the agent not to look for it again
    asked = _absent_names(runs[0]) or (((runs[0].get("guidance") or {}).get("missing") or [])
                                       if runs[0]["abstained"] else [])
    # the topic words no section holds come from the question as asked; from the other
    # phrasings only the names (an agent's guessed synonyms, "horizontal", "cluster", read as
    # noise in the agent study)
    missing = list(dict.fromkeys([*asked, *(w for run in runs for w in _absent_names(run)),
                                  *((runs[0].get("coverage") or {}).get("missing") or [])]))
    if runs[0]["abstained"] and not out["abstained"] and out["confidence"] > ASKED_ABSENT_CAP:
        # the question as asked found nothing: another phrasing's find is a lead, not a verdict
        out["confidence"] = ASKED_ABSENT_CAP
        out["confidence_explanation"] = (
            f"the question names {', '.join(asked[:3])}, which these docs never mention; the results "
            "match its other words" if asked else
            "the question as asked matches no section well; these results come from the other phrasings")
    every = _in_every_phrasing(missing, queries)
    if every and not out["abstained"] and out["confidence"] > ASKED_ABSENT_CAP:
        # the question's subject is absent: what the results match is the rest of it
        out["confidence"] = ASKED_ABSENT_CAP
        out["confidence_explanation"] = (f"every phrasing asks about {', '.join(every[:3])}, which no section "
                                         "contains; the results match the other words")
    if out["abstained"]:
        for r in results:
            r["relevance"] = "low"
            r["weak_neighbour"] = True
    out["coverage"] = dict(out.get("coverage") or {}, missing=missing)
    if not out["abstained"]:  # the fused list's guide, at the fused confidence
        from doc4llm.search.outline import attach_outline

        attach_outline(searcher.docs_dir, results, out["confidence"])
    else:
        for r in results:
            r.pop("outline", None)
    if out["abstained"] or out["confidence"] < 60:
        out["guidance"] = dict(out.get("guidance") or runs[0].get("guidance") or {}, missing=missing)
    else:
        out["guidance"] = None
    out["timing_ms"] = {"total": round(sum(run.get("timing_ms", {}).get("total", 0.0) for run in runs), 1)}
    return out
