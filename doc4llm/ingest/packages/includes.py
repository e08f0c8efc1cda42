"""Includes resolved from the extracted archive, never from outside it, with bounded
expansion: Sphinx `.. include::` / `.. literalinclude::`, MkDocs `--8<-- "file"`
(pymdownx.snippets) and `{! file !}` (markdown-include / mdx_include).

An include bomb (a file that includes itself 120 times, or a chain that fans out) used to
expand N^depth times. Now each file is read and expanded at most once per page (a file
that includes itself, directly or through others, is left out; a file included again
reuses its expansion: fastapi shows the same example file three times on a page), and a
page stops growing at `MAX_EXPANDED_BYTES` after includes: further includes are left out
and the build warns once. Work is bounded by the files read plus the capped output.
Literal includes (code shown verbatim) expand nothing and count toward the same cap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from doc4llm.ingest.packages.sphinx_rst import literal_mask

MAX_INCLUDE_BYTES = 2 * 1024 * 1024  # one included file
MAX_EXPANDED_BYTES = 2 * 1024 * 1024  # a page with everything it includes
MAX_DEPTH = 8
_RST_INCLUDE = re.compile(r"^([ \t]*)\.\. (include|literalinclude)::[ \t]*(\S[^\n]*?)[ \t]*$")
_OPTION = re.compile(r"^[ \t]+:([\w-]+):[ \t]*(.*)$")
_SNIPPET_LINE = re.compile(r"""^(\s*)-{1,}8<-{1,}\s+["']([^"'\n]{1,300})["']\s*$""")
_SNIPPET_BLOCK = re.compile(r"^(\s*)-{1,}8<-{1,}\s*$")
_MD_INCLUDE = re.compile(r"\{!\s*([^!}\n]{1,300}?)\s*!(?:[^}\n]{0,100})?\}")
# mkdocs-include-markdown-plugin: `{% include-markdown "../README.md" start="<!--a-->" end="<!--b-->" %}`,
# often over several lines; its options are key="value" pairs
_INCLUDE_MARKDOWN = re.compile(r"""\{%[ \t\r\n]*include-markdown[ \t\r\n]+(["'])([^"'\n]{1,300})\1([^%]{0,2000})%\}""")
_IM_OPTION = re.compile(r"""([\w-]+)[ \t]*=[ \t]*(?:"([^"]*)"|'([^']*)'|(\S+))""")


@dataclass
class PageIncludes:
    """What one page has included so far."""
    root: Path  # the archive: nothing outside it is read
    page: Path
    budget: int = MAX_EXPANDED_BYTES  # bytes the page may still grow by
    dropped: int = 0  # includes left out (a cycle, over the cap, too large)
    every: set[Path] | None = None  # every file any page included (the changelog test)
    active: set[Path] = field(default_factory=set)  # files being expanded (a cycle ends here)
    expanded: dict[tuple, str] = field(default_factory=dict)  # (file, options) -> its expansion

    def __post_init__(self) -> None:
        self.root = self.root.resolve()
        self.active.add(self.page.resolve())

    def target(self, path: Path) -> Path | None:
        """The resolved file when it may be included here (inside the archive, not being
        expanded already, not too large); None (counted as dropped when it exists) otherwise."""
        try:
            path = path.resolve()
            if not path.is_relative_to(self.root) or not path.is_file():
                return None
            too_big = path.stat().st_size > MAX_INCLUDE_BYTES
        except (OSError, ValueError, RuntimeError):
            return None
        if too_big or path in self.active:
            self.dropped += 1
            return None
        return path

    def read(self, path: Path) -> str | None:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        if self.every is not None:
            self.every.add(path)
        return text

    def take(self, text: str) -> bool:
        """Room for `text` on the page (then it is counted); False: left out."""
        size = len(text)
        if size > self.budget:
            self.dropped += 1
            return False
        self.budget -= size
        return True

    def expand(self, path: Path, key: tuple, expand_fn) -> str | None:
        """The expansion of `path` (computed once per page and key), if it fits."""
        if key not in self.expanded:
            raw = self.read(path)
            if raw is None:
                return None
            self.active.add(path)
            try:
                self.expanded[key] = expand_fn(raw)
            finally:
                self.active.discard(path)
        text = self.expanded[key]
        return text if self.take(text) else None


def rst_includes(text: str, here: Path, inc: PageIncludes, depth: int = 0) -> str:
    """Inline `.. include:: path` (relative to the file; absolute paths from the archive
    root, as Sphinx reads them from its source folder) and `.. literalinclude::` (as a code
    block), honouring `start-after`, `end-before`, `start-line`, `end-line`, `lines`,
    `literal`, `code` and `language`."""
    if ("include::" not in text) or depth > MAX_DEPTH:
        return text
    lines = text.split("\n")
    in_literal = literal_mask(lines)
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _RST_INCLUDE.match(line) if "include::" in line and not in_literal[i] else None
        if not m:
            out.append(line)
            i += 1
            continue
        indent, kind, target = m.group(1), m.group(2), m.group(3)
        options: dict[str, str] = {}
        i += 1
        while i < len(lines) and (om := _OPTION.match(lines[i])) and len(lines[i]) - len(lines[i].lstrip()) > len(indent):
            options[om.group(1).lower()] = om.group(2).strip()
            i += 1
        if target.startswith("<"):  # a docutils standard include (<isonum.txt>): no content
            continue
        base = inc.root if target.startswith("/") else here.parent
        path = inc.target(base / target.lstrip("/"))
        if path is None:
            continue
        literal = kind == "literalinclude" or "literal" in options or "code" in options
        key = (path, kind, tuple(sorted(options.items())))
        if literal:
            body = inc.expand(path, key, lambda raw, o=options: _select(raw, o))
            if body is None:
                continue
            lang = options.get("language") or options.get("code") or ""
            out.append(f"{indent}.. code-block:: {lang}".rstrip())
            out.append("")
            out.extend(f"{indent}   {x}" if x.strip() else "" for x in body.split("\n"))
            out.append("")
            continue
        body = inc.expand(path, key, lambda raw, p=path, o=options: rst_includes(_select(raw, o), p, inc, depth + 1))
        if body is not None:
            out.extend(f"{indent}{x}" if x.strip() else "" for x in body.split("\n"))
    return "\n".join(out)


def _select(body: str, options: dict[str, str]) -> str:
    if options.get("start-after"):
        k = body.find(options["start-after"])
        if k >= 0:
            body = body[k + len(options["start-after"]):].split("\n", 1)[-1]
    if options.get("end-before"):
        k = body.find(options["end-before"])
        if k >= 0:
            body = body[:k]
    lines = body.split("\n")
    try:
        if options.get("start-line") or options.get("end-line"):
            lines = lines[int(options.get("start-line") or 0):int(options["end-line"]) if options.get("end-line") else None]
        if options.get("lines"):
            keep: list[str] = []
            for part in options["lines"].split(",")[:50]:
                a, dash, b = part.strip().partition("-")
                lo = int(a) if a else 1
                hi = int(b) if b else (len(lines) if dash else lo)
                keep.extend(lines[max(lo - 1, 0):hi])
            lines = keep
    except ValueError:
        pass
    return "\n".join(lines)


_MYST_FENCE = re.compile(r"^([ \t]*)(`{3,}|:{3,})\{(include|literalinclude)\}[ \t]+(\S[^\n]*?)[ \t]*$")


def myst_includes(text: str, here: Path, inc: PageIncludes, bases: list[Path], depth: int = 0) -> str:
    """MyST's ```` ```{include} path ```` (markdown, with `start-after`, `end-before`,
    `start-line`, `end-line`) and `{literalinclude}` (a code fence, with `language` and
    `lines`), relative to the file as MyST reads them (black's docs include
    `../CHANGES.md` and `../AUTHORS.md` this way)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _MYST_FENCE.match(lines[i]) if "{" in lines[i] else None
        if not m:
            out.append(lines[i])
            i += 1
            continue
        indent, fence, kind, target = m.groups()
        j = i + 1
        options: dict[str, str] = {}
        while j < len(lines) and not lines[j].strip().startswith(fence[0] * len(fence)):
            om = re.match(r"^[ \t]*:([\w-]+):[ \t]*(.*)$", lines[j])
            if om:
                options[om.group(1).lower()] = om.group(2).strip()
            j += 1
        i = j + 1  # past the closing fence
        path = inc.target(here.parent / target)
        if path is None:
            continue
        key = (path, kind, tuple(sorted(options.items())))
        if kind == "literalinclude":
            body = inc.expand(path, key, lambda raw, o=options: _select(raw, o))
            if body is not None:
                out += [f"{indent}```{options.get('language', '')}", *body.rstrip("\n").split("\n"), f"{indent}```"]
            continue
        body = inc.expand(path, key, lambda raw, p=path, o=options: markdown_includes(
            _select(raw, o), p, inc, bases, depth + 1))
        if body is not None:
            out.extend(body.split("\n"))
    return "\n".join(out)


def markdown_includes(text: str, here: Path, inc: PageIncludes, bases: list[Path], depth: int = 0) -> str:
    """Every include form a markdown page may use: MyST, then MkDocs."""
    if depth <= MAX_DEPTH and ("{include}" in text or "{literalinclude}" in text):
        text = myst_includes(text, here, inc, bases, depth)
    return mkdocs_includes(text, here, inc, bases, depth)


def mkdocs_includes(text: str, here: Path, inc: PageIncludes, bases: list[Path], depth: int = 0) -> str:
    """`--8<-- "path"` (also `path:3:10` line ranges and the block form between two `--8<--`
    lines) and `{! path !}`, looked up next to the file, then in the MkDocs base paths,
    then from the archive root."""
    if depth <= MAX_DEPTH and "include-markdown" in text:
        text = _include_markdown(text, here, inc, bases, depth)
    if depth > MAX_DEPTH or ("8<" not in text and "{!" not in text):
        return text

    def load(target: str) -> str | None:
        target = target.strip()
        start = end = None
        m = re.match(r"^(.*?):(\d+)(?::(\d+))?$", target)
        if m and not (here.parent / target).exists():
            target, start, end = m.group(1), int(m.group(2)), int(m.group(3)) if m.group(3) else None
        for base in (here.parent, *bases, inc.root):
            if (base / target).is_file():
                path = inc.target(base / target)
                if path is None:
                    return None
                return inc.expand(path, (path, start, end), lambda raw, p=path: markdown_includes(
                    "\n".join(raw.split("\n")[start - 1:end]) if start is not None else raw, p, inc, bases, depth + 1))
        return None

    out: list[str] = []
    block = False
    lines = text.split("\n")
    markers = [i for i, line in enumerate(lines) if "8<" in line and _SNIPPET_BLOCK.match(line)]
    paired = set(markers[:len(markers) - len(markers) % 2])  # an unclosed block marker is text
    for i, line in enumerate(lines):
        if "8<" in line:
            m = _SNIPPET_LINE.match(line)
            if m:
                body = load(m.group(2))
                out.append(body if body is not None else "")
                continue
            if i in paired:
                block = not block
                continue
        if block:
            if line.strip() and not line.strip().startswith(";"):
                body = load(line.strip())
                if body is not None:
                    out.append(body)
            continue
        if "{!" in line:
            line = _MD_INCLUDE.sub(lambda mm: load(mm.group(1)) or "", line)
        out.append(line)
    return "\n".join(out)


def _include_markdown(text: str, here: Path, inc: PageIncludes, bases: list[Path], depth: int) -> str:
    """`{% include-markdown "path" %}` (mkdocs-include-markdown-plugin) with its `start`,
    `end` and `heading-offset` options, relative to the including file: humanize's docs
    index was the raw tag where the README's usage section belongs."""
    def load(m: re.Match) -> str:
        options = {o.group(1): next(v for v in o.group(2, 3, 4) if v is not None)
                   for o in _IM_OPTION.finditer(m.group(3))}
        path = inc.target(here.parent / m.group(2).strip())
        if path is None:
            return ""
        key = (path, "include-markdown", tuple(sorted(options.items())))
        whole_before = inc.every is not None and path in inc.every

        def expand(raw: str, p: Path = path) -> str:
            start, end = options.get("start"), options.get("end")
            if start and start in raw:
                raw = raw[raw.index(start) + len(start):]
            if end and end in raw:
                raw = raw[:raw.index(end)]
            offset = options.get("heading-offset", "")
            if offset.lstrip("-").isdigit() and int(offset):
                raw = _shift_headings(raw, int(offset))
            return markdown_includes(raw.strip("\n"), p, inc, bases, depth + 1)

        body = inc.expand(path, key, expand)
        if (options.get("start") or options.get("end")) and inc.every is not None and not whole_before:
            inc.every.discard(path)  # a part of the README: it still is a page of its own
        return body if body is not None else ""

    return _INCLUDE_MARKDOWN.sub(load, text)


def _shift_headings(md: str, offset: int) -> str:
    out = []
    fence = False
    for line in md.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        elif not fence and line.startswith("#"):
            hashes = len(line) - len(line.lstrip("#"))
            if hashes <= 6 and line[hashes:hashes + 1] in (" ", ""):
                line = "#" * min(max(hashes + offset, 1), 6) + line[hashes:]
        out.append(line)
    return "\n".join(out)
