"""What kind of page a docs file is, when it is not the library's narrative docs:
release notes (one release: pytest's `announce/release-8.2.0.rst`, Django's
`releases/5.0.txt`), a changelog (many releases on one page), a contributor list
(`contributors.rst`, fastapi's `fastapi-people.md`). These pages are kept, marked in the
set's metadata (`extra: {kind: ...}`), converted last when time is short, and ranked
below the docs (search/features.py's `changes` feature) unless a query asks about
versions or changes.
"""

from __future__ import annotations

import re

RELEASE_NOTES, CHANGELOG_KIND, CONTRIBUTORS, TRANSLATION = "release-notes", "changelog", "contributors", "translation"
LOW_KINDS = (RELEASE_NOTES, CHANGELOG_KIND, CONTRIBUTORS)  # ranked below the docs

_RELEASE_DIR = re.compile(r"^(announce(ments?)?|releases?|release[-_]?notes|whats[-_]?new|news|changelogs?|"
                          r"changes|history)$", re.I)
_CHANGELOG_NAME = re.compile(r"^(change[-_]?log|changes|history|news|release[-_]?notes|whats[-_]?new)"
                             r"([-_.]?v?[\d.x]+)?$", re.I)
_VERSIONED_NAME = re.compile(r"(^|[-_ ])v?\d+(\.\d+)+([-_.]?(notes|rc\d*|post\d*|\w{0,8}))*$|^release[-_]v?\d", re.I)
_CONTRIB_NAME = re.compile(r"^(contributors|authors|credits|thanks|acknowledge?ments|maintainers)$|"
                           r"[-_]people$", re.I)
_RELEASE_TITLE = re.compile(r"\brelease notes?\b|\bwhat'?s new in\b|^\S+[- ]v?\d+\.\d+(\.\d+)*\s*$|"
                            r"\bv?\d+\.\d+(\.\d+)*\s+(release|changes)\b|^(version|release)\s+v?\d+\.\d", re.I)
_CHANGELOG_TITLE = re.compile(r"^\s*(change\s?log|changes|history|news|release history)(\s+(for|of)\b.*)?\s*$", re.I)
_CONTRIB_TITLE = re.compile(r"^\s*(contributors|authors|credits|acknowledge?ments|thanks)\b", re.I)


def page_kind(rel_path: str, title: str = "") -> str | None:
    """The kind of a docs page from its path inside its docs root and its title."""
    parts = [p for p in rel_path.replace("\\", "/").split("/") if p]
    if not parts:
        return None
    stem = parts[-1].rsplit(".", 1)[0]
    title = title.strip()
    if _CONTRIB_NAME.search(stem) or _CONTRIB_TITLE.match(title):
        return CONTRIBUTORS
    if _CHANGELOG_NAME.match(stem) or _CHANGELOG_TITLE.match(title):
        return CHANGELOG_KIND
    in_release_dir = any(_RELEASE_DIR.match(p) for p in parts[:-1])
    if in_release_dir or _VERSIONED_NAME.search(stem) or (title and _RELEASE_TITLE.search(title)):
        return RELEASE_NOTES
    return None
