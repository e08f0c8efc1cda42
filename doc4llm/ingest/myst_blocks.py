"""MyST directives -> plain markdown, on import, keeping every line where it was.

Sphinx sites written in MyST markdown (pip, Jupyter Book, black) put their notes,
version notes and tabs in fenced directives (and Docusaurus and VitePress sites their
admonitions in bare colon containers, `:::tip[Title]` ... `:::`, rewritten the same way):

    ```{note}                     ```{versionchanged} 20.3        :::{tip}
    Prose of the note.            Prose.                          Prose.
    ```                           ```                             :::

Any other markdown reader takes a backtick directive for a code block: the prose of a
note becomes "code" (the section's content type, its snippet and its words all suffer).
So, on import, a directive that holds prose becomes a quote, `> **Note**` then `> body`
(`> **Changed in 20.3**` for version notes, `> **Title**` for `{admonition} Title` and
`{tab} Title`), the way MkDocs admonitions are rewritten; its option lines (`:class:
tip`) go. `{code-block} python` and `{code} python` become an ordinary ```` ```python ````
fence, `{doctest}` a ```` ```pycon ```` one, `{testcode}` / `{testoutput}` python /
text ones; `{testsetup}` and `{testcleanup}` (set-up the built page hides) become blank
lines. Directives of other kinds (`{toctree}`,
`{literalinclude}`, a site's own such as `{pip-cli}`) stay as written. One line in, one line out: line numbers and section ranges
keep pointing at the same text. Target labels (`(wheel-caching)=`) stay in the page; the
index treats them as anchors (corpus/comments.py).
"""

from __future__ import annotations

import bisect
import re

_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,}|:{3,})[ \t]*\{([A-Za-z][\w:.-]{0,40})\}[ \t]*(.*)$")
# Docusaurus and VitePress write admonitions as bare colon containers: `:::tip`,
# `:::note[Title]`, `::: details Click me`, closed by `:::`
_OPEN_BARE = re.compile(r"^( {0,3})(:{3,})[ \t]*([A-Za-z][\w-]{0,40})(?=[ \t\[]|$)(?:\[([^\]\n]{0,200})\])?[ \t]*(.*)$")
_CLOSER = re.compile(r"^ {0,3}:{3,}[ \t]*$")
# only their admonition kinds: `::: mkdocstrings` is an autodoc stub, not a box
_BARE_PROSE = {"note", "tip", "info", "warning", "danger", "caution", "important", "details", "success",
               "question", "example", "abstract", "quote", "bug", "failure", "secondary"}
_BARE_CONTAINERS = {"code-group", "v-pre", "raw"}  # VitePress: no box, only what is inside
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_OPTION = re.compile(r"^[ \t]*:[\w-]{1,40}:")
_PROSE = {
    "note", "warning", "tip", "caution", "important", "attention", "danger", "error", "hint",
    "seealso", "admonition", "versionadded", "versionchanged", "deprecated", "versionremoved",
    "tab", "tab-item", "dropdown", "card", "topic", "sidebar", "margin", "todo", "div",
    "rubric", "glossary",
}
_CODE = {"code-block", "code", "sourcecode", "code-cell"}
_CODE_LANG = {"doctest": "pycon", "jupyter-execute": "python", "testcode": "python",
              "testoutput": "text"}  # code directives without a language
_HIDDEN = {"testsetup", "testcleanup"}  # doctest set-up the built page never shows
_CONTAINERS = {"tab-set", "grid", "grid-item", "grid-item-card", "card-carousel", "container", "only"}
_VERSION_TITLE = {"versionadded": "New in", "versionchanged": "Changed in", "deprecated": "Deprecated since",
                  "versionremoved": "Removed in"}
MAX_DEPTH = 6  # nesting deeper than real pages use stays as written: output stays linear
_MAY_HOLD = re.compile(r"^ {0,3}(?:(?:`{3,}|~{3,}|:{3,})[ \t]*\{|:{3,}[ \t]*[A-Za-z])", re.MULTILINE)


def rewrite_myst_blocks(text: str) -> str:
    """Prose directives to quotes, code directives to fences (see the module doc)."""
    if not _MAY_HOLD.search(text):
        return text
    lines = text.split("\n")
    closers = [i for i, ln in enumerate(lines) if ln.startswith((":", " ")) and _CLOSER.match(ln)]
    return "\n".join(_rewrite(lines, closers))


def _closes(line: str, marker: str) -> bool:
    s = line.strip()
    return len(s) >= len(marker) and s[0] == marker[0] and not s.strip(marker[0])


def _title(name: str, arg: str) -> str:
    if name in _VERSION_TITLE:
        return f"{_VERSION_TITLE[name]} {arg}".strip()
    if arg and name in {"admonition", "tab", "tab-item", "dropdown", "card", "topic", "sidebar", "rubric"}:
        return arg
    return name.replace("-", " ").capitalize()


def _rewrite(lines: list[str], closers: list[int]) -> list[str]:
    """One pass with a stack of open directives. Inside a prose directive or a container
    the text is rewritten as at the top level (a plain code fence there stays code,
    quoted); nothing inside code, or inside a directive kept as written, is touched."""
    out: list[str] = []
    stack: list[tuple[str, str]] = []  # (opening marker, "prose" | "container" | "code" | "keep")
    code_fence: str | None = None  # a plain fence open at the current level
    at_options = False  # just after a directive's opening line: `:class: tip` lines go

    def emit(s: str) -> None:  # quoted once per prose directive open around it
        depth = sum(1 for _, kind in stack if kind == "prose")
        out.append(("> " * depth + s).rstrip() if depth else s)

    for i, line in enumerate(lines):
        if at_options and _OPTION.match(line):
            emit("")
            continue
        at_options = False
        if code_fence is not None:
            if _closes(line, code_fence):
                code_fence = None
            emit(line)
            continue
        if stack and stack[-1][1] in ("code", "keep", "hidden"):
            kind = stack[-1][1]
            if _closes(line, stack[-1][0]):
                stack.pop()
            emit("" if kind == "hidden" else line)
            continue
        if stack and _closes(line, stack[-1][0]):
            stack.pop()
            emit("")
            continue
        opened = _OPEN.match(line) if len(stack) < MAX_DEPTH else None
        if opened:
            pad, marker, name, arg = opened.groups()
            name, arg = name.casefold(), arg.strip()
            if name in _PROSE:
                title = _title(name, arg)
                rest = arg if arg and arg not in title else ""  # `{note} Text`: text, not a title
                emit(f"{pad}> **{title}**" + (f" {rest}" if rest else ""))
                stack.append((marker, "prose"))
            elif (name in _CODE or name in _CODE_LANG) and marker[0] != ":":
                lang = arg.split()[0] if arg and name in _CODE else _CODE_LANG.get(name, "")
                emit(f"{pad}{marker}{lang}")
                stack.append((marker, "code"))
            elif name in _HIDDEN and marker[0] != ":":
                emit("")
                stack.append((marker, "hidden"))
            elif name in _CONTAINERS or marker[0] == ":":
                emit("")  # `{tab-set}`, `{grid}`: only the directives inside them show
                stack.append((marker, "container"))
            else:
                emit(line)
                stack.append((marker, "keep"))
            at_options = True
            continue
        bare = _OPEN_BARE.match(line) if len(stack) < MAX_DEPTH and line.lstrip(" ")[:1] == ":" else None
        kind = bare.group(3).casefold() if bare else ""
        if bare and (kind in _BARE_PROSE or kind in _BARE_CONTAINERS) \
                and bisect.bisect_right(closers, i) < len(closers):  # an unclosed box is text
            pad, marker, name, bracket, rest = bare.groups()
            if kind in _BARE_CONTAINERS:
                emit("")
                stack.append((marker, "container"))
            else:
                title = (bracket or rest).strip() or name.replace("-", " ").capitalize()
                emit(f"{pad}> **{title}**")
                stack.append((marker, "prose"))
            continue
        fence = _FENCE.match(line)
        if fence:
            code_fence = fence.group(1)
        emit(line)
    return out
