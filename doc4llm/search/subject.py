"""Does result 1 name the question's subject? Two signs that it names another (issue 34):

- **a sibling on another subject**: result 1's heading path shares some of the question's
  words, and a close result's heading path holds all of those and more, words that name
  something and that result 1's own text never uses (a code name counts even when result
  1 mentions it: a reference to another API) ("Message Sending Retry > Retry
  Policy" for a question about task retries, when "Tasks > Retrying" ranks third): result
  1 is about retries of something else. A subsection of result 1 is its subject, narrower;
  "The lockfile", whose text says "checked into version control", is not on another
  subject than "Lockfile versioning" for "lockfile version control";
- **a legacy or deprecated API**: result 1 is marked deprecated or legacy (the marker
  line API pages carry under a deprecated member's heading, `**Deprecated:** ...`, or a
  legacy namespace's `> **Legacy API:** ...`, or "deprecated"/"legacy" in its heading path)
  and a close result is not, for a question that does not ask about old versions
  (`declarative_base` for a SQLAlchemy 2.0 question whose answer is `DeclarativeBase`).

Either caps the confidence at SUBJECT_CAP: a plausible answer to check, not a strong one;
never an abstention (the section may still be the answer, and the text names the other).
"""

from __future__ import annotations

import math
import re

from doc4llm.index.tokenize import tokens
from doc4llm.search.analyze import QueryAnalysis
from doc4llm.search.features import asks_about_changes

BODY_CHARS = 20_000  # of result 1's text, read for the words it talks about
SUBJECT_CAP = 45  # "plausible; check its lines" (confidence.py's bands), never an abstention
CLOSE = 0.5  # a result "ranks close" when its score is within log(1/CLOSE) of result 1's
_DEPRECATED = re.compile(r"\A(?:#{1,6}[ \t][^\n]*\n)?\s*(?:>\s*)?\*\*(?:Deprecated|Legacy API)\b", re.I)
_OLD_WORDS = re.compile(r"\b(?:deprecated|legacy)\b", re.I)
# words the tokenizer keeps that name no subject: a heading that adds only these is no other subject
_FUNCTION = frozenset({"per", "via", "each", "every", "using", "use", "how", "new", "one", "two", "all", "any"})
_ASKS_OLD = re.compile(r"\b(?:v\d{1,3}|legacy|old(?:er)?|deprecat\w*|compat\w*|previous)\b", re.I)


def _heading_words(row: dict, skip: set[str]) -> set[str]:
    return {t for h in row.get("heading_path") or [] for t in tokens(h)} - skip


def is_legacy(row: dict) -> bool:
    """Marked deprecated or legacy: the marker line under its heading, or its heading path."""
    return bool(_DEPRECATED.match(row.get("text") or "")) or any(
        _OLD_WORDS.search(h) for h in row.get("heading_path") or [])


def other_subject(qa: QueryAnalysis, ranked: list, rows: dict[int, dict]) -> tuple[int, str] | None:
    """(rank of the close result that names the subject, why) when result 1 names another
    subject; None otherwise."""
    if len(ranked) < 2 or ranked[0].sid not in rows:
        return None
    top = rows[ranked[0].sid]
    close = [(i, c) for i, c in enumerate(ranked[1:3], 2)
             if c.sid in rows and math.exp(min(0.0, c.score - ranked[0].score)) >= CLOSE]
    if not close:
        return None
    if is_legacy(top) and not asks_about_changes(qa.raw, qa.set_versions) and not _ASKS_OLD.search(qa.raw):
        for i, c in close:
            if not is_legacy(rows[c.sid]):
                return i, f"result 1 is marked legacy or deprecated; result {i} is current"
    domain = {t for w in qa.domain_words for t in tokens(w)}
    own = {t for v in qa.values for t in tokens(v)}
    asked = set(qa.stems) - domain - own
    if not asked:
        return None
    first = _heading_words(top, domain) & asked
    if not first:
        return None
    path = list(top.get("heading_path") or [])
    said = set(tokens((top.get("text") or "")[:BODY_CHARS]))  # what result 1's own text talks about
    for i, c in close:
        if _within(rows[c.sid], top, path):  # a subsection of result 1: its subject, narrower
            continue
        words = _heading_words(rows[c.sid], domain) & asked
        # a word result 1's text uses is its subject too ("checked into version control");
        # a code name it mentions is a reference to another API (`http.get` says "accepts
        # the same options as `http.request()`")
        extra = [w for w in _new_words(words - first, first) if "_" in w or w not in said]
        if words > first and extra:  # every question word result 1's heading names, and more
            return i, (f"result 1's heading names another subject; result {i}'s names more of the "
                       f"question ({', '.join(extra[:3])})")
    return None


def _within(row: dict, top: dict, path: list[str]) -> bool:
    """A section under result 1 on its page (result 1's heading path is its prefix)."""
    sub = list(row.get("heading_path") or [])
    same_page = (row.get("set_name"), row.get("page")) == (top.get("set_name"), top.get("page"))
    return same_page and len(sub) > len(path) and sub[:len(path)] == path


def _new_words(extra: set[str], first: set[str]) -> list[str]:
    """The extra heading words that name something: not a function word ("Per-tenant limits"
    against "Multi-tenant projects" adds only "per"), not a compound of words already
    matched (`per_tenant` when `tenant` is)."""
    out = []
    for w in sorted(extra):
        parts = [p for p in w.split("_") if p] or [w]
        if any(p not in first and p not in _FUNCTION and len(p) > 2 for p in parts):
            out.append(w)
    return out
