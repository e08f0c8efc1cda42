"""Deprecated and legacy API entries step behind what replaces them (a fixed rule after
the learned ranker).

API pages mark a deprecated member on the line right under its heading
(`**Deprecated:** The `dict` method is deprecated; use `model_dump` instead.`, written by
ingest/packages/api_python.py and api_typescript.py, and the same form appears in hand-
written docs), and a legacy namespace (pydantic 2's `pydantic.v1`) in its page's opening
(`> **Legacy API:** ...`). Such an entry shares the words of its replacement, and often
more of them (pydantic's `BaseModel.dict` is named for what "convert a model to a dict"
asks; `model_dump` is not), so the ranker puts it first. The rule:

- when the deprecation names its replacement (a code span in the marker other than the
  member's own name), the replacement takes the place just above the deprecated entry;
  when retrieval did not find it (lexical search: `model_dump`'s text never says "dict"),
  it is looked up by its heading in the same set, same page first;
- otherwise a deprecated or legacy entry loses DEMOTION (2.0, the size of the named-entry
  and page-name rules): it stays above current entries that score far below it and falls
  behind those that rank close.

It does nothing when the question is about deprecations, versions or migrations
(features.asks_about_changes), names a legacy namespace (`v1`, "legacy"), or quotes the
deprecated entry's own name (`BaseModel.dict`: the agent asks about that member, and the
marker tells it the member is deprecated). The dev corpora hold no such markers, so the
fitted weights could not learn this; it is a fixed rule like the changelog one.
"""

from __future__ import annotations

import re

from doc4llm.search.analyze import QueryAnalysis
from doc4llm.search.features import asks_about_changes
from doc4llm.search.fusion import Candidate

MAX_LOOKUPS = 3  # replacements looked up in the index per search, when retrieval missed them
DEMOTION = 2.0  # as much as the named-entry rule gives: a current entry within it goes first
LEGACY_MARK = "> **Legacy API:**"
_MARKER = re.compile(r"\A(?:#{1,6}[ \t][^\n]*\n)?\s*\*\*Deprecated(?:[:.]\*\*|\*\*[:.]?)[ \t]*([^\n]*)")
# the names a deprecation points to: code spans, and calls written as prose (Django's
# "assertQuerysetEqual() is deprecated in favor of assertQuerySetEqual()")
_CODE = re.compile(r"`([A-Za-z_][\w.]{0,80})(?:\(\))?`|(?<![\w.`])([A-Za-z_][\w.]{0,80})\(\)")
_ASKS_LEGACY = re.compile(r"\b(?:v\d{1,3}|legacy|old(?:er)?|compat\w*|previous)\b", re.I)


def deprecation_note(text: str) -> str | None:
    """The deprecation a section opens with (`**Deprecated:** <this>`, "" when it says no
    more), else None: for other rules that weigh a deprecated result (confidence)."""
    m = _MARKER.match(text or "")
    return m.group(1).strip() if m else None


def step_behind_replacements(qa: QueryAnalysis, head: list[Candidate], rows: dict[int, dict], conn=None) -> None:
    """Adjust the scores of `head` in place (the caller sorts)."""
    if not head or asks_about_changes(qa.raw, qa.set_versions) or _ASKS_LEGACY.search(qa.raw):
        return
    legacy_pages = _legacy_pages(conn, head, rows) if conn is not None else set()
    by_page: dict[int, list[Candidate]] = {}
    superseded: dict[int, list[str]] = {}  # sid -> names the deprecation points to
    for c in head:
        row = rows.get(c.sid)
        if row is None:
            continue
        by_page.setdefault(row["page_id"], []).append(c)
        note = deprecation_note(row.get("text") or "")
        if note is not None:
            own = _last(row.get("title") or "")
            names = [a or b for a, b in _CODE.findall(note)]
            superseded[c.sid] = [n for n in dict.fromkeys(names) if _last(n) != own]
        elif row["page_id"] in legacy_pages:
            superseded[c.sid] = []
    if not superseded:
        return
    lookups = 0
    for c in sorted((c for c in head if c.sid in superseded), key=lambda c: -c.score):
        row = rows[c.sid]
        if _quoted(qa, row.get("title") or ""):
            continue
        replacement = _replacement(superseded[c.sid], c, by_page.get(row["page_id"], []) + head, rows, superseded)
        if replacement is None and superseded[c.sid] and conn is not None and lookups < MAX_LOOKUPS:
            lookups += 1  # retrieval missed it (pydantic's `model_dump` never says "dict"): join it
            replacement = _look_up(conn, superseded[c.sid], row, rows, superseded)
            if replacement is not None:
                replacement.score = c.score - 1.0  # below c until the rule lifts it just above
                replacement.found_by.append("replaces")
                head.append(replacement)
        if replacement is not None and replacement.score <= c.score:
            replacement.score = c.score + 0.01
            replacement.parts["rerank.replaces"] = 1.0
            c.parts["rerank.superseded"] = 1.0
        elif replacement is None:
            c.score -= DEMOTION
            c.parts["rerank.superseded"] = -DEMOTION


def _last(title: str) -> str:
    """The entry's own name as written (`BaseModel.dict` -> `dict`): names are case-
    sensitive (`assertQuerysetEqual` is replaced by `assertQuerySetEqual`)."""
    return title.strip().strip("`").removesuffix("()").rsplit(".", 1)[-1]


def _quoted(qa: QueryAnalysis, title: str) -> bool:
    """The query names this entry as code (`BaseModel.dict`, `dict()`, `` `json` ``, or a
    query that is only the name); a word such as "JSON" in a sentence does not."""
    own = _last(title).casefold()
    if not own:
        return False
    for term in qa.terms:
        if _last(term).casefold() == own and (qa.identifier_only or re.search(r"[._`]|\(\)", term)):
            return True
    return False


def _replacement(names: list[str], c: Candidate, pool: list[Candidate], rows: dict[int, dict],
                 superseded: dict[int, list[str]]) -> Candidate | None:
    """The current entry a deprecation names (`model_dump`), same page first."""
    wanted = [_last(n) for n in names if _last(n)]
    for name in wanted:
        for other in pool:
            if other.sid == c.sid or other.sid in superseded:
                continue
            row = rows.get(other.sid)
            if row is not None and _last(row.get("title") or "") == name:
                return other
    return None


def _look_up(conn, names: list[str], row: dict, rows: dict[int, dict], superseded: dict) -> Candidate | None:
    """The section a deprecation names, found by its heading in the same set (same page
    first), when it is not among the candidates."""
    from doc4llm.index.backend import backend_of
    from doc4llm.index.tokenize import tokens

    backend = backend_of(conn)
    for name in names:
        want = _last(name)
        toks = tokens(want)
        if not want or not toks:
            continue
        # a heading's tokens hold the whole dotted name and its parts (`basemodel_model_dump
        # base model model dump`), not `model_dump` alone: ask for every part
        ids = [sid for sid in backend.title_candidates(toks, [], [row["set_name"]]) if sid not in superseded]
        found = backend.section_rows(ids[:200])
        matches = [r for r in found.values() if _last(r.get("title") or "") == want]
        matches.sort(key=lambda r: (r["page_id"] != row["page_id"], r["id"]))
        if matches:
            rows[matches[0]["id"]] = matches[0]
            return Candidate(matches[0]["id"])
    return None


def _legacy_pages(conn, head: list[Candidate], rows: dict[int, dict]) -> set[int]:
    """Pages (among API pages of the candidates) whose opening says `Legacy API`."""
    from doc4llm.index.backend import backend_of

    page_ids = sorted({rows[c.sid]["page_id"] for c in head if c.sid in rows
                       and str(rows[c.sid].get("page_title") or "").endswith("(API)")})
    if not page_ids:
        return set()
    backend = backend_of(conn)
    entries = backend.page_entries(page_ids)
    intro_rows = backend.section_rows([sid for sid in entries.values() if sid not in rows])
    out = set()
    for pid, sid in entries.items():
        row = rows.get(sid) or intro_rows.get(sid)
        if row is not None and LEGACY_MARK in (row.get("text") or "")[:1500]:
            out.add(pid)
    return out
