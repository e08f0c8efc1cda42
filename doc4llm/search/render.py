"""Compact text output for agents: paths, line ranges, one snippet each, within a budget."""

from __future__ import annotations

import shlex

from doc4llm.corpus.sections import estimate_tokens


def _result_block(r: dict, snippet_chars: int) -> str:
    path = " > ".join(r["heading_path"])
    a, b = r["lines"]
    head = f"{r['rank']}. [{r['relevance']}] {r['doc_set']} / {path}  L{a}-{b} ~{r['tokens']}t  ({','.join(r['found_by'])})"
    read = f"   read: doc4llm read {shlex.quote(r['page'])} --set {shlex.quote(r['doc_set'])} --lines {a}:{b}"
    snip = r["snippet"].replace("\n", " ")
    if len(snip) > snippet_chars:
        snip = snip[:snippet_chars].rsplit(" ", 1)[0] + " …"
    lines = [head, read]
    if snip:
        lines.append(f"   > {snip}")
    if r.get("url"):
        lines.append(f"   url: {r['url']}")
    return "\n".join(lines)


def render_text(result: dict, *, max_tokens: int = 600, explain: bool = False) -> str:
    out: list[str] = []
    conf = result["confidence"]
    if result["abstained"]:
        out.append(f"NOT FOUND in the local docs (confidence {conf}/100): {result.get('confidence_explanation', '')}")
    else:
        out.append(f"confidence {conf}/100 · {result['query_type']} · {result.get('confidence_explanation', '')}")
    if result.get("query_enriched"):
        out.append(f"follow-up: searched {result['query_enriched']!r}")
    g = result.get("guidance")
    if g and result["abstained"]:
        u = g["understood"]
        bits = [f"intent: {u['intent']}"]
        if u.get("project"):
            bits.insert(0, f"project: {u['project']}")
        if u.get("technical_terms"):
            bits.append("terms: " + ", ".join(u["technical_terms"]))
        out.append("understood: " + "; ".join(bits))
        if g.get("missing"):
            out.append("missing: " + ", ".join(g["missing"]))
        for s in g.get("suggested_searches", []):
            out.append(f"web search [{s['engine']}]: {s['query']}  — {s['rationale']}")
        for tip in g.get("tips", [])[:2]:
            out.append(f"tip: {tip}")
        if result["results"]:
            out.append("weak neighbours (not answers):")
    if not result["results"] and not result["abstained"]:
        out.append("no results")
    budget = max_tokens - estimate_tokens("\n".join(out))
    snippet_chars = 220
    for r in result["results"]:
        block = _result_block(r, snippet_chars)
        if explain and r.get("explain"):
            block += "\n   score: " + " ".join(f"{k}={v}" for k, v in r["explain"].items())
        cost = estimate_tokens(block)
        if cost > budget:
            block = _result_block(r, 60)
            cost = estimate_tokens(block)
            if cost > budget:
                out.append(f"(+{len(result['results']) - r['rank'] + 1} more; raise --max-tokens or use --json)")
                break
        out.append(block)
        budget -= cost
    if result.get("retried"):
        used = [x for x in result["retried"] if x.get("used")]
        if used:
            out.append(f"retried as: {used[0]['query']!r} ({used[0]['kind']})")
    for w in result.get("warnings", []):
        out.append(f"warning: {w}")
    return "\n".join(out)
