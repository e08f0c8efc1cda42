"""A question that names a library's version searches that version's set.

"our project is on pydantic 1.10", "SQLAlchemy 2.0", "click 7", "Django 4.2 and 5.0",
"pydantic==1.10.13", "pydantic v1 to v2": a library name of a searched set followed by a
version. The rule is general: the names are the searched sets' own names (the part before
'@'), nothing is known about any library.

- A mention matches the sets whose version starts with it (`1.10` -> `1.10.13`, `2` ->
  `2.7.4`); when none does, the sets of the same major version (`1.9` -> `1.10.13`).
- The library's other versions are then left out of this search (the named one answers
  first, the others cannot outrank it with their own twin of the section).
- A mention no set matches narrows nothing and is said ("no pydantic 1.9 set"), since an
  answer from another version may be wrong for the asker.
- The named versions' sets are searched first (`focus`: they and the sets of any other
  library the question names): "our project is on pydantic 1.10: how do I validate two
  fields together" is answered from pydantic 1.10's docs, not from a look-alike section of
  another library. The caller widens to every set when that search finds nothing.

The query is read as tokens in one pass (no regex backtracking over user text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = re.compile(r"[\w@/.*'=~^+-]+")
_VERSION = re.compile(r"v?(\d{1,6}(?:\.\d{1,6}){0,3})(?:\.[x*])?")
_SET_VERSION = re.compile(r"v?(\d{1,9}(?:\.\d{1,9})*)")
_LINKS = frozenset({"to", "and", "or", "vs", "versus", "->", "→", "/", ","})
_FILLERS = frozenset({"version", "versions", "ver", "release", "v", "=="})
_NAME_SPLIT = re.compile(r"==|~=|@(?=v?\d)")


def _norm_name(text: str) -> str:
    text = text.casefold()
    if text.startswith("@") and "/" in text:  # npm scope: set names write it scope__name
        text = text[1:].replace("/", "__", 1)
    return re.sub(r"[-_.]+", "-", text.replace("__", "\0")).replace("\0", "__")


def _parts(version: str) -> tuple[int, ...] | None:
    m = _VERSION.fullmatch(version)
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


def _set_parts(set_name: str) -> tuple[int, ...]:
    m = _SET_VERSION.match(set_name.split("@", 1)[1] if "@" in set_name else "")
    return tuple(int(x) for x in m.group(1).split(".")) if m else ()


@dataclass
class Mention:
    library: str  # as the set names write it (before '@', case folded)
    said: str  # "pydantic 1.10"
    versions: list[tuple[int, ...]] = field(default_factory=list)
    written: list[str] = field(default_factory=list)  # the version tokens as the query has them


def _tokens(query: str) -> list[str]:
    out = []
    for m in _TOKEN.finditer(query):
        tok = m.group(0).strip(".,;:!?'\"")
        if tok.casefold().endswith("'s"):
            tok = tok[:-2]
        for piece in _NAME_SPLIT.split(tok, maxsplit=1) if not tok.startswith("@") else [tok]:
            if piece:
                out.append(piece)
        if tok.startswith("@") and "@" in tok[1:]:  # @scope/name@1.2
            name, _, ver = tok[1:].rpartition("@")
            out[-1:] = ["@" + name, ver]
    return out


def mentions(query: str, libraries: set[str]) -> list[Mention]:
    """Library-version mentions of the query, for libraries among `libraries` (normalized
    set base names)."""
    by_norm = {_norm_name(lib): lib for lib in libraries}
    toks = _tokens(query)
    found: dict[str, Mention] = {}
    i = 0
    while i < len(toks):
        lib = by_norm.get(_norm_name(toks[i]))
        if lib is None:
            i += 1
            continue
        j = i + 1
        while j < len(toks) and toks[j].casefold() in _FILLERS:
            j += 1
        ver = _parts(toks[j].casefold()) if j < len(toks) else None
        if ver is None:
            i += 1
            continue
        m = found.setdefault(lib, Mention(lib, f"{toks[i]} {toks[j]}"))
        m.versions.append(ver)
        m.written.append(toks[j].lstrip("vV"))
        j += 1
        while j + 1 < len(toks) and toks[j].casefold() in _LINKS and (more := _parts(toks[j + 1].casefold())):
            m.versions.append(more)
            m.written.append(toks[j + 1].lstrip("vV"))
            j += 2
        i = j
    return list(found.values())


@dataclass
class VersionScope:
    sets: list[str]  # what to search
    chosen: dict[str, list[str]] = field(default_factory=dict)  # "pydantic 1.10" -> its sets
    missing: list[str] = field(default_factory=list)  # mentions no set matches
    focus: list[str] = field(default_factory=list)  # searched first: the named versions' sets
    named: list[str] = field(default_factory=list)  # the mentions behind `focus` ("pydantic 1.10")
    versions: list[str] = field(default_factory=list)  # their version tokens as written ("1.10")

    def note(self, focused: bool = False) -> str | None:
        """What was left out; `focused`: only the `focus` sets answered."""
        if focused:
            parts = [f"{', '.join(self.focus)} for {', '.join(repr(n) for n in self.named)} (--set to choose)"]
        else:
            parts = [f"{', '.join(names)} for {said!r}" for said, names in self.chosen.items()]
        parts += [f"no {said} set" for said in self.missing]
        return "; ".join(parts) or None


def narrow(query: str, sets: list[str]) -> VersionScope:
    """The searched sets once the versions the query names are taken into account."""
    from doc4llm.corpus.projects import library

    by_lib: dict[str, list[str]] = {}
    for name in sets:
        if "@" in name:
            by_lib.setdefault(library(name), []).append(name)
    out = VersionScope(list(sets))
    focus: set[str] = set()
    for m in mentions(query, set(by_lib)):
        have = by_lib[m.library]
        hits = [s for s in have if any(_set_parts(s)[:len(v)] == v for v in m.versions)]
        if not hits:  # 1.9 asked, 1.10.13 here: the same major line is the nearest answer
            hits = [s for s in have if any(v[0] > 0 and len(v) > 1 and _set_parts(s)[:1] == v[:1]
                                           for v in m.versions)]
        if not hits:
            out.missing.append(m.said)
            continue
        focus.update(hits)
        out.named.append(m.said)
        out.versions.extend(m.written)
        if len(hits) < len(have):
            out.chosen[m.said] = hits
            out.sets = [s for s in out.sets if library(s) != m.library or s in hits]
    if focus:
        named = {_norm_name(t) for t in _tokens(query)}
        focus.update(s for s in out.sets if _norm_name(library(s)) in named)
        if len(focus) < len(out.sets):
            out.focus = [s for s in out.sets if s in focus]
    return out
