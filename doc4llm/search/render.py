"""Compact text output for agents: paths, line ranges, one snippet each, within a budget."""

from __future__ import annotations

from doc4llm.corpus.sections import estimate_tokens
from doc4llm.reader import read_command


def _result_block(r: dict, snippet_chars: int, docs_dir: str | None = None) -> str:
    path = " > ".join(r["heading_path"])
    a, b = r["lines"]
    head = f"{r['rank']}. [{r['relevance']}] {r['doc_set']} / {path}  L{a}-{b} ~{r['tokens']}t  ({','.join(r['found_by'])})"
    read = f"   read: {read_command(r['page'], r['doc_set'], a, b, docs_dir)}"
    snip = r["snippet"].replace("\n", " ")
    if len(snip) > snippet_chars:
        snip = snip[:snippet_chars].rsplit(" ", 1)[0] + " …"
    lines = [head, read]
    if snip:
        lines.append(f"   > {snip}")
    if r.get("url"):
        lines.append(f"   url: {r['url']}")
    also = r.get("also_in") or []
    if also:
        pages = list(dict.fromkeys(a["page"] for a in also))
        more = f" (+{len(pages) - 3})" if len(pages) > 3 else ""
        lines.append(f"   same text also in: {', '.join(pages[:3])}{more}")
    return "\n".join(lines)


def _fit(lines: list[str], budget: int) -> list[str]:
    """The leading lines that fit the budget (the first one always)."""
    kept: list[str] = []
    used = 0
    for line in lines:
        used += estimate_tokens("\n" + line)
        if kept and used > budget:
            break
        kept.append(line)
    return kept


def render_text(result: dict, *, max_tokens: int = 600, explain: bool = False, docs_dir: str | None = None) -> str:
    """`docs_dir`: the --docs-dir the user passed, repeated in each read command so that it
    runs as printed."""
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
    tail = [f"warning: {w}" for w in result.get("warnings", [])]
    more = "(+{n} more; raise --max-tokens or use --json)"
    # every line counts, separators included, and room stays for the tail and the "more" note
    budget = max_tokens - sum(estimate_tokens("\n" + t) for t in tail) \
        - estimate_tokens("\n" + more.format(n=len(result["results"])))
    out = _fit(out, budget)  # guidance lines come in priority order: drop from the end
    budget -= estimate_tokens("\n".join(out))
    snippet_chars = 220
    for r in result["results"]:
        block = _result_block(r, snippet_chars, docs_dir)
        if explain and r.get("explain"):
            block += "\n   score: " + " ".join(f"{k}={v}" for k, v in r["explain"].items())
        cost = estimate_tokens("\n" + block)
        if cost > budget:
            block = _result_block(r, 60, docs_dir)
            cost = estimate_tokens("\n" + block)
            if cost > budget:
                out.append(more.format(n=len(result["results"]) - r["rank"] + 1))
                break
        out.append(block)
        budget -= cost
    return "\n".join(out + tail)
