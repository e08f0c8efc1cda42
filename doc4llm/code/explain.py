"""`doc4llm explain-error TEXT`: the docs' sections about an error, and with an LLM an
explanation and fix.

The pasted text is reduced to its signature (the error line, its type, codes such as
ECONNREFUSED or E0502) so tracebacks and paths do not drown the query. Retrieval uses
the `error` query type; troubleshooting sections and sections that name the error type
are ranked first. Without an LLM the answer is those sections plus what to read next.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from doc4llm.code.llm_answer import ask_verified, check_citations, model_failure, rejection
from doc4llm.code.prompts import EXPLAIN_INSTRUCTIONS, explain_messages
from doc4llm.code.retrieval import read_command
from doc4llm.errors import ExternalError

SEARCH_K = 10
MAX_QUERY_CHARS = 200
LLM_SECTION_CHARS = 4000

_ERROR_LINE = re.compile(
    r"((?<![\w.])[A-Za-z_][\w.]*(Error|Exception|Warning)\b|\berror(\[\w+\])?:|fatal error|panic:|\bE[A-Z]{4,}\b|"
    r"\bfailed\b|\bcannot\b|\bnot found\b|\bdenied\b|\btimed? ?out\b)",
    re.IGNORECASE,
)
_ERROR_TYPE = re.compile(r"\b([A-Z][A-Za-z0-9_]*(?:Error|Exception|Warning))\b")
_CODES = re.compile(
    r"\b(E[A-Z]{4,}|E\d{3,5}|error\[E\d{4}\]|HTTP \d{3}|exit (?:code|status) \d+|errno \d+|"
    r"UND_ERR_[A-Z_]+)",
)
_TRACE_NOISE = re.compile(r"^\s*(File \"|at |Traceback|\^+|~+|\d+ \|)")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:/[\w.@-]+){2,}")
_TROUBLE_HEADING = re.compile(
    r"\b(troubleshoot\w*|errors?|issues?|problems?|faq|debug\w*|fails?|failed|failing|not working|"
    r"common mistakes)\b"
)


@dataclass
class ErrorSignature:
    line: str  # the line that names the error
    error_type: str | None
    codes: list[str] = field(default_factory=list)
    query: str = ""


def parse_error(text: str) -> ErrorSignature:
    """The error line of pasted output: the last line naming an error type (a traceback's
    last line), else the last line that reads like an error; codes come from all lines."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not _TRACE_NOISE.match(ln)]
    if not lines:
        return ErrorSignature("", None)
    typed = [ln for ln in lines if _ERROR_TYPE.search(ln)]
    candidates = typed or [ln for ln in lines if _ERROR_LINE.search(ln)]
    line = candidates[-1] if candidates else lines[0]
    types = _ERROR_TYPE.findall(line) or _ERROR_TYPE.findall(text)
    codes = list(dict.fromkeys(m for m in _CODES.findall(text)))
    cleaned = " ".join(_PATH.sub(" ", line).split())[:MAX_QUERY_CHARS]
    extra = [c for c in codes if c not in cleaned]
    query = " ".join([cleaned, *extra])[: MAX_QUERY_CHARS + 60].strip()
    return ErrorSignature(line, types[0] if types else None, codes, query or text.strip()[:MAX_QUERY_CHARS])


def explain_error(text: str, *, docs_dir: Path, sets: list[str] | None = None, k: int = 5,
                  llm: Any = None, searcher: Any = None, docs_arg: str | None = None) -> dict:
    """Ranked sections (and an LLM explanation when `llm` is given) as a JSON-ready dict.
    `docs_arg`: the --docs-dir given, repeated in the suggested read commands."""
    sig = parse_error(text)
    if searcher is None:
        from doc4llm.search.engine import Searcher

        searcher = Searcher(docs_dir)
    found = searcher.search(sig.query, sets=sets, k=max(k, SEARCH_K), query_type="error")
    ranked = _rank(found["results"], sig, docs_arg)[:k]
    out: dict = {
        "error": asdict(sig), "query": sig.query, "mode": "sections",
        "confidence": found["confidence"], "abstained": found["abstained"],
        "explanation": None, "results": ranked, "warnings": [],
        "guidance": _guidance(sig, ranked, found),
    }
    if llm is not None and ranked:
        sources = [(f"{r['doc_set']} / {' > '.join(r['heading_path'])}", _section_text(docs_dir, r))
                   for r in ranked[:3]]
        try:
            answer, warnings, calls = ask_verified(llm, explain_messages(text.strip()[:2000], sources))
        except ExternalError as exc:  # the sections stay; the caller exits 3 (issue 29.5)
            out.update(model_failure(exc))
            return out
        found, cite_warnings = check_citations(answer, sources, question=sig.query,
                                               instructions=EXPLAIN_INSTRUCTIONS)
        out.update(llm_calls=calls, verified=found.verified, citation_check=found.summary())
        refused = rejection(found)
        if refused:
            out["warnings"] = [refused, *cite_warnings]
            return out
        out.update(mode="llm", explanation=answer, warnings=warnings + cite_warnings)
    return out


def _rank(results: list[dict], sig: ErrorSignature, docs_arg: str | None = None) -> list[dict]:
    """Troubleshooting sections and sections naming the error first; search order otherwise."""
    needles = [n.lower() for n in ([sig.error_type] if sig.error_type else []) + sig.codes]
    scored = []
    for r in results:
        heading = " > ".join(r["heading_path"]).lower()
        snippet = (r.get("snippet") or "").lower()
        why = []
        if _TROUBLE_HEADING.search(heading):
            why.append("troubleshooting section")
        if needles and any(n in heading for n in needles):
            why.append("heading names the error")
        elif needles and any(n in snippet for n in needles):
            why.append("text names the error")
        boost = 2 * ("heading names the error" in why) + len(why)
        scored.append((-boost, r["rank"], r, why))
    scored.sort(key=lambda item: item[:2])
    out = []
    for i, (_, _, r, why) in enumerate(scored, 1):
        lo, hi = r["lines"]
        out.append({
            "rank": i, "doc_set": r["doc_set"], "page": r["page"], "heading_path": r["heading_path"],
            "lines": r["lines"], "content_path": r.get("content_path"), "score": r.get("score"),
            "relevance": r.get("relevance"), "why": why or ["search match"],
            "snippet": r.get("snippet"), "read": read_command(r["page"], r["doc_set"], lo, hi, docs_arg),
        })
    return out


def _guidance(sig: ErrorSignature, ranked: list[dict], found: dict) -> dict:
    """What to read next, local searches to try, and the search engine's web suggestions."""
    searches = [s for s in [sig.error_type, *sig.codes] if s]
    web = (found.get("guidance") or {}).get("suggested_searches") or []
    if not ranked:
        steps = ["No local section matches this error.",
                 f'Search the web for the exact line: "{sig.line[:120]}"']
    else:
        steps = [f"Read {' > '.join(r['heading_path'])}: {r['read']}" for r in ranked[:2]]
        named = any("names the error" in " ".join(r["why"]) for r in ranked)
        if (sig.error_type or sig.codes) and not named:
            steps.append("No section names this error; the matches are about the same topic.")
    return {"next_steps": steps, "suggested_searches": searches[:5], "web_searches": web}


def _section_text(docs_dir: Path, result: dict) -> str:
    from doc4llm.code.retrieval import content_path

    lines = content_path(docs_dir, result["doc_set"], result["page"]).read_text(encoding="utf-8").splitlines()
    lo, hi = result["lines"]
    return "\n".join(lines[lo - 1 : hi])[:LLM_SECTION_CHARS]
