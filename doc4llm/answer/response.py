"""The structured `ask` response (seed 001) and its compact text rendering.

JSON: {answer, metadata: {confidence, answerStatus, verified, citationCheck,
retrievalQuality, sourcesUsed, queryType, suggestions, relatedQueries, warnings,
processingTimeMs, searchGuidance, evaluationTrace?}, sources}.

`verified` (docs/ask.md defines it once): every claim of the answer cites a section whose
text holds it, checked by doc4llm without a model (doc4llm.grounding). answerStatus:
answered (verified, and no usable evaluator verdict says it misses part of the question),
incomplete (verified, but it does not answer all of it: the evaluator said so, or the
question names something no section mentions), unverified (cites sections, but some
claims are not found in the sections they cite), uncited (cites no section: flagged,
confidence capped), not_covered (the docs found do not answer it: retrieval abstained, the
model said so, or no section holds any claim of its answer; no answer is returned),
no_model, failed (the model could not answer in time or at all).
"""

from __future__ import annotations

import shlex

from doc4llm.answer.loop import AskOutcome
from doc4llm.reader import read_command, scope_args


def build_response(out: AskOutcome, *, processing_ms: float, include_trace: bool,
                   docs_arg: str | None = None, sets: list[str] | None = None) -> dict:
    """`docs_arg` / `sets`: the --docs-dir and --set the command was given, repeated in the
    suggested commands so that they run as printed."""
    cited = set(out.answer.cited) if out.answer else set()
    sources = []
    for entry in out.book.to_dicts():
        entry["cited"] = entry["ref"].strip("[]") in cited
        sources.append(entry)
    warnings = list(out.warnings)
    if out.answer:  # the checks of the answer returned (not of earlier drafts)
        warnings += [w for w in out.answer.warnings if w not in warnings]
    checked = out.answer or out.rejected
    metadata = {
        "confidence": out.confidence,
        "answerStatus": answer_status(out),
        "verified": out.verified,
        "citationCheck": checked.grounding.summary() if checked else None,
        "retrievalQuality": retrieval_quality(out.search, len(out.book.docs)),
        "sourcesUsed": len(cited) if out.answer else len(sources),
        "queryType": out.query_type,
        "suggestions": suggestions(out, docs_arg=docs_arg, sets=sets),
        "relatedQueries": related_queries(out),
        "warnings": warnings,
        "processingTimeMs": round(processing_ms, 1),
        "searchGuidance": search_guidance(out),
    }
    if include_trace:
        metadata["evaluationTrace"] = out.trace.to_dict()
    return {"answer": out.answer.text if out.answer else None, "metadata": metadata,
            "sources": sources}


def answer_status(out: AskOutcome) -> str:
    if out.answer is None:
        action = out.trace.final_action
        if action == "no_model":
            return "no_model"
        return "not_covered" if action in ("not_covered", "no_sources") else "failed"
    if out.answer.not_covered:
        return "not_covered"
    if not out.answer.cited:
        return "uncited"
    if not out.verified:
        return "unverified"
    judged = out.judgement
    if judged is not None and (not judged.answers_question or judged.completeness != "complete"):
        return "incomplete"
    if out.answer.grounding.missing_names or out.answer.grounding.absences:
        return "incomplete"  # the question names what no section mentions, or the answer says a part is missing
    return "answered"


def retrieval_quality(search: dict, found: int) -> str:
    if not found:
        return "none"
    confidence = int(search.get("confidence") or 0)
    if search.get("abstained") or confidence < 40:
        return "low"
    return "high" if confidence >= 70 else "medium"


def search_guidance(out: AskOutcome) -> dict | None:
    """The honest "I don't know" part: the search's own guidance when it was unsure, plus
    what the evaluator found missing and the web searches it wanted but could not run."""
    ev = out.judgement
    base = out.search.get("guidance") or {}
    names = out.answer.grounding.missing_names if out.answer else []
    unsure = (bool(base) or out.search.get("abstained") or not (out.book.docs or out.book.web)
              or (ev is not None and (not ev.answers_question or ev.completeness != "complete"))
              or bool(out.wanted_web_queries) or out.rejected is not None
              or (out.answer is not None and not out.verified) or bool(names))
    if not unsure:
        return None
    missing = list(base.get("missing") or [])
    missing += [n for n in names if n not in missing]
    searches = list(base.get("suggested_searches") or [])
    if ev is not None:
        missing += [m for m in ev.still_needed + ev.gaps if m not in missing]
    known = {_query_of(q) for q in searches}
    searches += [{"query": q, "engine": "general", "rationale": "the answer evaluation found the "
                  "local docs insufficient"} for q in out.wanted_web_queries if q not in known]
    if not searches:
        searches = [{"query": out.question, "engine": "general",
                     "rationale": "nothing in the local docs matched"}]
    return {"understood": base.get("understood") or {"question": out.question,
                                                     "query_type": out.query_type},
            "missing": missing, "suggested_searches": searches}


def _query_of(search: dict | str) -> str:
    """The search guidance contract gives dicts with "query"; accept plain strings too."""
    return search.get("query", "") if isinstance(search, dict) else str(search)


def suggestions(out: AskOutcome, *, docs_arg: str | None = None,
                sets: list[str] | None = None) -> list[dict]:
    """Next commands an agent can run as they are (with the command's --docs-dir / --set)."""
    result = []
    if out.book.docs:
        top = out.book.docs[0]
        cmd = read_command(top.page, top.doc_set, top.lines[0], top.lines[1], docs_arg)
        result.append({"action": "read", "reason": "read the top section in full",
                       "command": cmd})
    if out.answer is None or out.confidence < 60:
        result.append({"action": "search", "reason": "see every candidate section with line "
                       "ranges", "command": f"doc4llm search {shlex.quote(out.question)} -k 10"
                                            f"{scope_args(sets, docs_arg)}"})
    return result


def related_queries(out: AskOutcome) -> list[str]:
    """What the evaluator said is still needed, then the sections found but not cited."""
    related: list[str] = []
    if out.judgement is not None:
        related += out.judgement.still_needed
    cited = set(out.answer.cited) if out.answer else {"1"}  # no answer: [1] is the lead
    for doc in out.book.docs:
        if doc.ref not in cited and doc.heading_path:
            related.append(doc.heading_path[-1])
    seen: list[str] = []
    for q in related:
        if q.casefold() != out.question.casefold() and q not in seen:
            seen.append(q)
    return seen[:5]


def render_text(response: dict, *, show_trace: bool) -> str:
    """Answer, its sources (local and web apart), a short footer; the trace when asked."""
    meta = response["metadata"]
    if response["answer"]:
        head = response["answer"]
    elif meta.get("answerStatus") == "not_covered" and meta.get("citationCheck"):
        head = ("Not covered: no answer is given, because the model's answer was not found in "
                "the sections found (see the warning)."
                + (" The closest sections are listed below; they are not an answer."
                   if response["sources"] else ""))
    elif meta.get("answerStatus") == "not_covered":
        head = ("Not covered: the local docs do not answer this question."
                + (" The closest sections are listed below; they are not an answer."
                   if response["sources"] else ""))
    elif response["sources"]:
        head = "(no answer text; the sections found are listed below)"
    else:
        head = "I don't know: nothing in the local docs matches this question."
    lines = [head, ""]
    docs = [s for s in response["sources"] if s["type"] == "doc"]
    web = [s for s in response["sources"] if s["type"] == "web"]
    if docs:
        lines.append("Sources (local docs):")
        for s in docs:
            path = " > ".join(s["heading_path"]) or s["page"]
            lines.append(f"  {s['ref']} {s['doc_set']} / {s['page']} / {path}  "
                         f"lines {s['lines'][0]}-{s['lines'][1]}" + (f"  {s['url']}" if s["url"] else ""))
            if s.get("content_path"):
                lines.append(f"      {s['content_path']}")
    if web:
        lines.append("Web sources (not from your docs):")
        lines += [f"  {s['ref']} {s['title']}  {s['url']}" for s in web]
    guidance = meta["searchGuidance"]
    if guidance:
        lines.append("Not fully answered by the docs. Try:")
        lines += [f"  - {_query_of(q)}" for q in guidance["suggested_searches"]]
        lines += [f"  missing: {m}" for m in guidance["missing"][:5]]
    footer = (f"-- {meta.get('answerStatus', 'answered')}"
              f"{' (verified)' if meta.get('verified') else ''} | confidence {meta['confidence']} | "
              f"retrieval {meta['retrievalQuality']} | "
              f"type {meta['queryType']} | {meta['processingTimeMs']:.0f} ms")
    trace = meta.get("evaluationTrace")
    if trace:
        t = trace["totals"]
        footer += f" | {t['llm_calls']} LLM calls, {t['total_tokens']} tokens"
    lines += ["", footer]
    if show_trace and trace:
        for step in trace["steps"]:
            extra = f" {step['decision']}: {step.get('reason', '')}" if "decision" in step else ""
            lines.append(f"   {step['step']}. {step['kind']}{extra} ({step['duration_ms']} ms, "
                         f"{step['llm_calls']} LLM calls, {step['tokens']} tokens)")
    return "\n".join(lines)
