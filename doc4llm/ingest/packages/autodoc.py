"""Sphinx autodoc directives filled from the API reference built from the same archive.

`.. autofunction:: pytest.raises` is a Sphinx instruction to import pytest and print the
docstring; doc4llm imports nothing, but api_python.py has already read that docstring
statically. Its pages follow one convention: a DocPage titled `<module> (API)`, a section
`## Name` per public name and `### Class.method` per method, and a `Names exported here`
list (`- \\`name\\`: defined in \\`module\\``) for re-exports. `ApiLookup` maps qualified names
to those sections; `fill_autodoc` replaces the placeholders rst_filter.lua left where the
directives stood with the section, its headings shifted under the heading around it
(or without its own heading when the page already names the object there).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from doc4llm.corpus.fences import keep_code
from doc4llm.ingest.packages.pages import API, DocPage

MAX_INLINE_BYTES = 200_000  # one directive's inlined text
MAX_PAGE_INLINE_BYTES = 1_000_000  # all directives of one page
_HEADING = re.compile(r"^(#{1,6}) +(.+?)\s*#*\s*$")
_NAME = re.compile(r"[\w.]+")
_REEXPORT = re.compile(r"^- `([\w.]+)`: defined in `([\w.]+)`")
_ATTRIBUTE = re.compile(r"^- `(\w+)[`:]")
_PLACEHOLDER = re.compile(r"^(?P<prefix>[ >]*)(?P<fence>`{3,})\s*doclm-(?P<what>autodoc|autosummary)\s*$")


@dataclass
class Entry:
    lines: list[str]  # the page's body lines
    start: int  # heading line (or 0 for a module: the whole page)
    end: int
    level: int  # heading level (1 for a module, 0 for a line of a class's `Attributes:`)
    own_end: int  # end of the text before the first sub-section


def _fence_aware_headings(lines: list[str]):
    """(index, level, text) of each markdown heading outside code fences."""
    fence = ""
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            marker = stripped[:3]
            if not fence:
                fence = marker
            elif stripped.startswith(fence) and not stripped[3:].strip():
                fence = ""
            continue
        if fence:
            continue
        m = _HEADING.match(line)
        if m:
            yield i, len(m.group(1)), m.group(2)


class ApiLookup:
    """Qualified name -> the API section documenting it."""

    def __init__(self, pages: list[DocPage]):
        self.entries: dict[str, Entry] = {}
        self.aliases: dict[str, str] = {}
        self.by_last: dict[str, list[str]] = {}
        for page in pages:
            if page.origin != API or not page.title.endswith(" (API)"):
                continue
            module = page.title[:-len(" (API)")].strip()
            if not _NAME.fullmatch(module):
                continue
            self._add_page(module, page.body.split("\n"))

    def _add_page(self, module: str, lines: list[str]) -> None:
        heads = list(_fence_aware_headings(lines))
        first = heads[0][0] if heads else len(lines)
        self._put(module, Entry(lines, 0, len(lines), 1, first))
        for k, (i, level, text) in enumerate(heads):
            end = next((j for j, lv, _ in heads[k + 1:] if lv <= level), len(lines))
            own_end = heads[k + 1][0] if k + 1 < len(heads) and heads[k + 1][0] < end else end
            m = _NAME.match(text.strip("`* "))
            if not m or level < 2:
                continue
            self._put(f"{module}.{m.group(0)}", Entry(lines, i, end, level, own_end))
        for line in lines:
            if line.startswith("- `") and "defined in" in line:
                m = _REEXPORT.match(line)
                if m:
                    self.aliases.setdefault(f"{module}.{m.group(1)}", f"{m.group(2)}.{m.group(1)}")
        # a class's attributes are one line each in its `Attributes:` list: an
        # `autoattribute:: Collection.full_name` is that line
        starts = {i: text for i, level, text in heads if level >= 2}
        owner, listing = "", False
        for i, line in enumerate(lines):
            if i in starts:
                m = _NAME.match(starts[i].strip("`* "))
                owner, listing = (m.group(0) if m else ""), False
            elif line == "Attributes:":
                listing = bool(owner)
            elif listing and line.startswith("- `"):
                m = _ATTRIBUTE.match(line)
                if m:
                    self._put(f"{module}.{owner}.{m.group(1)}", Entry(lines, i, i + 1, 0, i + 1))
            elif line.strip():
                listing = False

    def _put(self, qname: str, entry: Entry) -> None:
        if qname in self.entries:
            return
        self.entries[qname] = entry
        self.by_last.setdefault(qname.rsplit(".", 1)[-1], []).append(qname)

    def find(self, name: str, module: str = "") -> tuple[str, Entry] | None:
        name = name.strip().lstrip("~").rstrip("()")
        if not name:
            return None
        tries = [name] + ([f"{module}.{name}"] if module and not name.startswith(module + ".") else [])
        for q in tries:
            for _ in range(4):  # follow re-exports (`flask.Flask` -> `flask.app.Flask`)
                if q in self.entries:
                    return q, self.entries[q]
                if q not in self.aliases:
                    break
                q = self.aliases[q]
        # the same object under a shorter or longer path (`pytest.Pytester` documented on
        # `pytest (API)` as `Pytester`; `_pytest.python_api.raises` as `pytest.raises`)
        parts = name.split(".")
        cands = [q for q in self.by_last.get(parts[-1], []) if q.endswith("." + ".".join(parts[-2:]))] \
            if len(parts) >= 2 else []
        if len(parts) >= 2 and not cands:
            cands = [q for q in self.by_last.get(parts[-1], []) if self.entries[q].level == 2]
        if len(cands) == 1 or (cands and len({id(self.entries[c].lines) for c in cands}) == 1):
            return cands[0], self.entries[cands[0]]
        return None


def _relevel(lines: list[str], shift: int) -> list[str]:
    """Headings moved by `shift` levels (past 6: bold lines), code fences untouched."""
    out = list(lines)
    for i, level, text in _fence_aware_headings(lines):
        new = level + shift
        out[i] = "#" * new + " " + text if 1 <= new <= 6 else f"**{text}**"
    return out


def _section(entry: Entry, members: str) -> list[str]:
    """The lines to inline: a module's intro (all of it with :members:), a class with or
    without its member sections."""
    lines = entry.lines
    if entry.start == 0 and entry.level == 1:  # a module page
        return lines[:entry.own_end] if not members else lines
    if not members:
        return lines[entry.start:entry.own_end]
    body = lines[entry.start:entry.end]
    if members == "*":
        return body
    wanted = {m.strip() for m in members.split(",") if m.strip()}
    out = lines[entry.start:entry.own_end]
    sub = [(i, t) for i, _, t in _fence_aware_headings(body)][1:]
    for k, (i, text) in enumerate(sub):
        name = text.strip("`* ").rsplit(".", 1)[-1].split("(")[0]
        if name in wanted:
            end = sub[k + 1][0] if k + 1 < len(sub) else len(body)
            out.extend(body[i:end])
    return out


def fill_autodoc(md: str, lookup: ApiLookup | None) -> str:
    """Replace every autodoc / autosummary placeholder in converted markdown."""
    if "doclm-auto" not in md:
        return md
    lines = md.split("\n")
    out: list[str] = []
    spent = 0
    i = 0
    while i < len(lines):
        m = _PLACEHOLDER.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        prefix, fence = m.group("prefix"), m.group("fence")
        fields: dict[str, str] = {}
        i += 1
        while i < len(lines) and lines[i].strip(" >") != fence:
            key, _, value = lines[i][len(prefix):].partition("=")
            fields[key.strip()] = value.strip()
            i += 1
        i += 1  # the closing fence
        text = _autosummary(fields, lookup) if m.group("what") == "autosummary" else \
            _autodoc(fields, lookup, MAX_PAGE_INLINE_BYTES - spent)
        spent += sum(len(x) + 1 for x in text)
        out.extend((prefix + x) if x else prefix.rstrip() for x in text)
    return "\n".join(out)


def _autodoc(fields: dict[str, str], lookup: ApiLookup | None, room: int) -> list[str]:
    name, module = fields.get("name", ""), fields.get("module", "")
    try:
        level = int(fields.get("level") or 0)
    except ValueError:
        level = 0
    enclosing = fields.get("enclosing", "").strip().rstrip("()").strip("`")
    # the heading above already names the object (pytest's "pytest.raises" section)
    same = bool(enclosing) and (enclosing == name or name.endswith("." + enclosing)
                                or enclosing.endswith("." + name.rsplit(".", 1)[-1]) or enclosing == name.rsplit(".", 1)[-1])
    found = lookup.find(name, module) if lookup is not None and name else None
    if found is None:
        out = [] if same else [_heading(level, name)]
        sig = fields.get("sig") or ""
        return [x for x in out if x] + (["", "```python", sig, "```", ""] if sig else [""])
    _, entry = found
    if entry.level == 0:  # one line of a class's `Attributes:` list
        return [_heading(level, ".".join(name.split(".")[-2:])), "", entry.lines[entry.start].removeprefix("- "), ""]
    body = _section(entry, fields.get("members", ""))
    if entry.level == 1:  # a module's page: its `##` sections go one level under where it stands
        base = (level if level else 7) - (1 if same else 0)
        body = ([] if same else [_heading(level, name), ""]) + _relevel(body, base - 1)
    else:
        target = level if level else 7
        if same:
            body = body[1:]
            target -= 1
        body = _relevel(body, target - entry.level)
    text = "\n".join(body).strip("\n")
    if len(text) > min(MAX_INLINE_BYTES, max(room, 0)):
        text = text[:max(0, min(MAX_INLINE_BYTES, room))].rsplit("\n", 1)[0] + "\n\n*(cut: see the API pages)*"
    return text.split("\n") + [""]


def _heading(level: int, name: str) -> str:
    if not name:
        return ""
    return f"{'#' * level} {name}" if 1 <= level <= 6 else f"**{name}**"


def _autosummary(fields: dict[str, str], lookup: ApiLookup | None) -> list[str]:
    """A list of the names with the first sentence of each docstring."""
    out = []
    for name in fields.get("names", "").split():
        found = lookup.find(name, fields.get("module", "")) if lookup is not None else None
        summary = _first_sentence(found[1]) if found else ""
        out.append(f"- `{name}`" + (f": {summary}" if summary else ""))
    return out + [""] if out else [""]


def _first_sentence(entry: Entry) -> str:
    if entry.level == 0:  # an attribute's line: `name: type`: summary
        return entry.lines[entry.start].partition("`: ")[2][:200]
    fence = False
    for line in entry.lines[entry.start + (0 if entry.level == 1 else 1):entry.own_end]:
        s = line.strip()
        if s.startswith("```"):
            fence = not fence
            continue
        if fence or not s or s.startswith("#"):
            continue
        return s.split(". ")[0].rstrip(".")[:200] + "."
    return ""


# mkdocstrings: `::: humanize.filesize` (or `## ::: pkg.Class`) on a line of its own, its
# options as an indented YAML block under it. Only dotted names or names the API knows:
# `::: note` / `::: details` are Docusaurus and VitePress boxes (myst_blocks.py).
_MKDOCSTRINGS = re.compile(r"^(?P<pad>[ \t]*)(?P<hashes>#{1,6} *)?::: ?(?P<name>[A-Za-z_][\w.]{0,200}?)[ \t]*$")
_OPT = re.compile(r"^[ \t]+(heading_level|members)[ \t]*:[ \t]*(.*?)[ \t]*$")
_OPT_ITEM = re.compile(r"^[ \t]+-[ \t]+([\w.]+)[ \t]*$")


def fill_mkdocstrings(md: str, lookup: ApiLookup | None) -> str:
    """mkdocstrings `::: name` lines replaced by the API section they stand for, nested under
    the heading around them (their `heading_level` and `members` options applied), the way
    `fill_autodoc` fills Sphinx's directives: without it a page of MkDocs API docs (humanize's
    `Filesize`, `Number`...) held only `::: humanize.filesize`."""
    if ":::" not in md or lookup is None:
        return md
    lines = md.split("\n")
    out: list[str] = []
    fence = ""
    enclosing, enclosing_level = "", 1
    spent = 0
    i = 0
    while i < len(lines):
        fence, code = keep_code(lines[i], fence, out)
        if code:
            i += 1
            continue
        line = lines[i]
        m = _MKDOCSTRINGS.match(line) if ":::" in line else None
        name = m.group("name") if m else ""
        if not m or not ("." in name or lookup.find(name)):
            h = _HEADING.match(line)
            if h:
                enclosing, enclosing_level = h.group(2), len(h.group(1))
            out.append(line)
            i += 1
            continue
        pad = m.group("pad")
        fields = {"name": name, "members": "*", "enclosing": enclosing,
                  "level": str(len(m.group("hashes").strip()) if m.group("hashes") else min(enclosing_level + 1, 6))}
        i += 1
        wanted: list[str] = []
        listing = False
        while i < len(lines) and lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) > len(pad):
            opt = _OPT.match(lines[i])
            item = None if opt else _OPT_ITEM.match(lines[i])
            if opt:
                listing = opt.group(1) == "members" and not opt.group(2)
                if opt.group(1) == "heading_level" and opt.group(2).isdigit():
                    fields["level"] = opt.group(2)
                elif opt.group(1) == "members" and opt.group(2):
                    value = opt.group(2).strip("[]")
                    fields["members"] = "" if value.lower() in ("false", "no", "off") else \
                        "*" if value.lower() in ("true", "yes", "on") else ",".join(v.strip(" '\"") for v in value.split(","))
            elif item and listing:
                wanted.append(item.group(1))
            else:
                listing = False
            i += 1
        if wanted:
            fields["members"] = ",".join(wanted)
        text = _autodoc(fields, lookup, MAX_PAGE_INLINE_BYTES - spent)
        spent += sum(len(x) + 1 for x in text)
        out.extend((pad + x) if x else "" for x in text)
    return "\n".join(out)
