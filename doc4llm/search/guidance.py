"""Honest "not found": what was understood, what is missing, where to search next.

Project names and site hints come from the doc sets themselves (set name, source URL in
the set metadata or page sources), never from a hard-coded table.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from doc4llm.search.analyze import QueryAnalysis


def project_name(set_name: str) -> str:
    """`Claude_Code_Docs@latest` -> `Claude Code`."""
    base = set_name.split("@")[0]
    words = [w for w in re.split(r"[_\-\s]+", base) if w and w.lower() not in {"docs", "doc", "documentation"}]
    return " ".join(words) or base


def site_of(searcher, set_name: str) -> str | None:
    """The documentation host of a set: its scrape root URL, else a page source URL."""
    from doc4llm.index.backend import backend_of

    index = backend_of(searcher.conn)
    summary = index.set_summaries([set_name]).get(set_name) or {}
    for origin in (summary.get("origins") or {}).values():
        if isinstance(origin, dict) and origin.get("root_url"):
            return urlsplit(origin["root_url"]).netloc or None
    source = index.web_source(set_name)
    if source:
        return urlsplit(source).netloc or None
    return None


def build_guidance(searcher, qa: QueryAnalysis, verdict, results: list[dict], sets: list[str]) -> dict:
    focus_sets = qa.domain_sets or ([results[0]["doc_set"]] if results else sets[:1])
    projects = [project_name(s) for s in focus_sets]
    project = projects[0] if projects else ""
    site = site_of(searcher, focus_sets[0]) if focus_sets else None
    missing = verdict.coverage.get("missing") or []
    topic = " ".join(qa.terms[:2]) or " ".join(qa.keywords[:5])
    quoted = " ".join(f'"{t}"' for t in qa.terms[:2])

    searches: list[dict] = []
    if site:
        searches.append({"query": f"site:{site} {topic}".strip(), "engine": "docs",
                         "rationale": f"the official {project} docs site may have newer pages than this local copy"})
    base = f"{project} {quoted or topic}".strip()
    if qa.query_type == "error":
        searches.append({"query": f"{base} error fix", "engine": "stackoverflow",
                         "rationale": "error reports and fixes are usually discussed in Q&A threads"})
        searches.append({"query": f"{project} {topic} issue".strip(), "engine": "github",
                         "rationale": "the project's issue tracker may have this exact error"})
    elif qa.query_type in ("code_lookup", "api_reference"):
        searches.append({"query": f"{base}".strip(), "engine": "github",
                         "rationale": "code search finds where the identifier is defined or used"})
        searches.append({"query": f"{base} documentation".strip(), "engine": "general",
                         "rationale": "the identifier may belong to another tool or a newer version"})
    else:
        named = project and project.casefold() in qa.raw.casefold()  # "... pino log files ..."
        searches.append({"query": qa.raw.strip() if named else f"{project} {qa.raw}".strip(), "engine": "general",
                         "rationale": "the question as asked, scoped to the project"})
        if missing:
            searches.append({"query": f"{project} {' '.join(missing[:3])}".strip(), "engine": "general",
                             "rationale": f"the part the local docs do not cover: {', '.join(missing[:3])}"})
    seen, unique = set(), []
    for s in searches:
        key = s["query"].lower()
        if key not in seen:
            seen.add(key)
            unique.append(s)

    tips = []
    if missing:
        absent = missing[:3]
        verb, pronoun = ("appears", "it belongs") if len(absent) == 1 else ("appear", "they belong")
        tips.append(f"{', '.join(absent)} {verb} nowhere in the local docs; "
                    f"check the spelling or whether {pronoun} to another tool or version")
    if len(sets) > 1 and not qa.domain_sets:
        tips.append("name the product in the query (or pass --set) to search one doc set")
    tips.append("re-scrape or import newer docs if the feature is recent: doc4llm scrape URL --set NAME@VER")
    return {
        "understood": {
            "doc_sets": focus_sets,
            "project": project or None,
            "intent": qa.intent,
            "query_type": qa.query_type,
            "technical_terms": qa.terms,
            "covered": verdict.coverage.get("covered", []),
            "uncovered": verdict.coverage.get("uncovered", []),
        },
        "missing": missing,
        "suggested_searches": unique[:4],
        "tips": tips,
    }
