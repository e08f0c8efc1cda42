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

import posixpath
import re

TWIN_JACCARD = 0.2
# a result 1 this short that links to another shown result is a summary pointing to it (an
# FAQ's "Yes, atomic skeins ... See [Skeins](concepts/data-model.md#skeins)")
POINTER_MAX_TOKENS = 120
_LINK_TARGET = re.compile(r"\]\(([^()\s#]*)#([^()\s]+)\)")
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
QUESTION = {"howto": "a how-to", "error": "an error", "api_reference": "an API", "code_lookup": "a code lookup",
            "concept": "a concept"}
WANTED = {"howto": "how-to", "error": "troubleshooting", "api_reference": "reference",
          "code_lookup": "reference", "concept": "concept"}


def page_kind(result: dict) -> str | None:
    """The kind of the result's page: an error catalogue, troubleshooting page or FAQ by its
    name (`reference/errors.md` is where error entries live), else from the folders of its
    source path (a page under `concepts/` is a concept page whatever its name says:
    `concepts/schema-evolution.md` is not reference for holding "schema"), then its file
    name, page name and title."""
    source = str(result.get("source") or "")
    folders = source.rsplit("/", 1)[0].replace("/", " / ").replace("_", " ") if "/" in source else ""
    where = " ".join([source.rsplit("/", 1)[-1], str(result.get("page") or ""),
                      *(result.get("heading_path") or [])[:1]]).replace("_", " ")
    if KINDS[0][1].search(where):  # an error catalogue or FAQ is that, in whatever folder
        return KINDS[0][0]
    for text in (folders, where):
        for kind, pattern in KINDS:
            if text and pattern.search(text):
                return kind
    return None


def _words(row: dict) -> set[str]:
    return set((row.get("tok_body") or "").split())


def canonical_choice(qtype: str, results: list[dict], rows: list[dict],
                     terms: list[str] | None = None) -> dict | None:
    """{"ranks": [...], "kinds": [...], "read": rank, "why": ...} when two or three of the
    first three results are twins on different kinds of page; None otherwise. A twin whose
    own heading is a name the question asks about (`terms`: "what is the default for
    sync.tombstone_ttl" -> the entry headed `sync.tombstone_ttl`) is the one named,
    whatever the question's type says ("what is" reads as a concept question)."""
    terms = terms or []
    wanted = WANTED.get(qtype)
    if len(results) < 2:
        return None
    pointed = _pointed_to(results, rows)
    if pointed is not None:
        return {"ranks": [1, pointed + 1], "kinds": [page_kind(results[0]), page_kind(results[pointed])],
                "read": pointed + 1, "why": "result 1 links to it for the details", "pointer": True}
    if not wanted:
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
    named = {i: name for i in group if (name := _term_named(results[i], terms))}
    if named:  # the entry headed by the name the question asks about is its answer, whatever the type
        first = min(named)
        return {"ranks": [i + 1 for i in group], "kinds": kinds, "read": first + 1,
                "why": f"its heading names {named[first]}"}
    pick = next((i for i, k in zip(group, kinds, strict=True) if k == wanted), None)
    if pick is None:
        return None
    return {"ranks": [i + 1 for i in group], "kinds": kinds, "read": pick + 1,
            "why": f"for {QUESTION[qtype]} question, the {wanted} page"}


def _pointed_to(results: list[dict], rows: list[dict]) -> int | None:
    """The index of result 2 or 3 when result 1 is a short entry that links to that very
    section (its source file and heading anchor): the entry defers to it."""
    top = rows[0]
    if (top.get("tokens") or 0) > POINTER_MAX_TOKENS or "](" not in (top.get("text") or ""):
        return None
    src = str(results[0].get("source") or "")
    if not src or "://" in src:
        return None
    here = posixpath.dirname(src)
    targets = set()
    for path, anchor in _LINK_TARGET.findall(top.get("text") or ""):
        if "://" in path or path.startswith("/"):
            continue
        full = posixpath.normpath(posixpath.join(here, path)) if path else src
        targets.add((full, anchor.casefold()))
    for i in range(1, min(3, len(results))):
        anchor = (rows[i].get("anchor") or "").casefold()
        if anchor and (str(results[i].get("source") or ""), anchor) in targets:
            return i
    return None


def _term_named(result: dict, terms: list[str]) -> str:
    """The question's named term whose entry this result's own heading is (features.py's
    rule for named entries: `sync.tombstone_ttl`, `with_config(config)`; not "with_config is
    used on a BaseModel subclass"), or a dotted term whose owner the heading drops."""
    from doc4llm.search.features import names_entry

    own = (result.get("heading_path") or [""])[-1].replace("`", "").strip()
    for t in terms:
        if len(t) > 2 and (names_entry(t, own) or t.casefold().endswith("." + own.casefold()) and len(own) > 2):
            return t
    return ""
