"""Near-twins: when results 1-3 say the same thing in different kinds of page, which one
a developer should be pointed to for this kind of question (issue 34).

The same fact sits in a how-to, a concept page, an API entry, a troubleshooting entry and
an error catalog; agents spent a second call (a ~1.5 KB read) deciding between them. Two
results are twins when their texts share most of their words (Jaccard of the index tokens
>= TWIN_JACCARD) and both hold the question's words that the top result matched; their
pages are of different kinds (from the page's path, title and heading: guides, concepts,
reference/API, troubleshooting/errors). The canonical one by question type: a how-to
question -> the task page, an error -> the troubleshooting or error entry, an API or code
question -> the reference entry, a concept question -> the concept page (a "what is X"
definition is that page's intro).
"""

from __future__ import annotations

import re

TWIN_JACCARD = 0.2
KINDS = (
    ("troubleshooting", re.compile(r"troubleshoot|\berrors?\b|error[-_ ]?(?:codes?|catalog|reference)|\bfaq\b|"
                                   r"known[-_ ]issues|debug", re.I)),
    ("reference", re.compile(r"\breference\b|\bapi\b|\(api\)|\bcli\b|configuration|\bconfig\b|settings|"
                             r"\boptions\b|environment[-_ ]variables|glossary|\bschema\b", re.I)),
    ("how-to", re.compile(r"guides?\b|how[-_ ]?to|tutorials?|getting[-_ ]started|quick[-_ ]?start|recipes?|"
                          r"cookbook|examples?\b|walkthrough", re.I)),
    ("concept", re.compile(r"concepts?\b|overview|architecture|explanation|introduction|\bintro\b|"
                           r"\babout\b|\bwhy\b|how .* works", re.I)),
)
WANTED = {"howto": "how-to", "error": "troubleshooting", "api_reference": "reference",
          "code_lookup": "reference", "concept": "concept"}


def page_kind(result: dict) -> str | None:
    """The kind of the result's page, from its source path, page name and heading path."""
    where = " ".join([str(result.get("source") or ""), str(result.get("page") or ""),
                      *(result.get("heading_path") or [])[:1]])
    where = where.replace("/", " / ").replace("_", " ")
    for kind, pattern in KINDS:
        if pattern.search(where):
            return kind
    return None


def _words(row: dict) -> set[str]:
    return set((row.get("tok_body") or "").split())


def canonical_choice(qtype: str, results: list[dict], rows: list[dict]) -> dict | None:
    """{"ranks": [...], "kinds": [...], "read": rank, "why": ...} when two or three of the
    first three results are twins on different kinds of page; None otherwise."""
    wanted = WANTED.get(qtype)
    if not wanted or len(results) < 2:
        return None
    top = _words(rows[0])
    if not top:
        return None
    group = [0]
    for i in range(1, min(3, len(results))):
        other = _words(rows[i])
        if other and len(top & other) / len(top | other) >= TWIN_JACCARD:
            group.append(i)
    if len(group) < 2:
        return None
    kinds = [page_kind(results[i]) for i in group]
    if len({k for k in kinds if k}) < 2:
        return None  # the same kind of page twice: rank decides
    pick = next((i for i, k in zip(group, kinds, strict=True) if k == wanted), None)
    if pick is None:
        return None
    return {"ranks": [i + 1 for i in group], "kinds": kinds, "read": pick + 1,
            "why": f"for a {qtype.replace('_', ' ')} question, the {wanted} page"}
