"""MkDocs block syntax -> plain markdown, on import, keeping every line where it was.

Material for MkDocs writes admonitions and content tabs as a marker line followed by a
body indented 4 spaces:

    !!! note "Title"              ??? api "API Documentation"         === "pip"
        body text                     [`Strict`][pydantic.types.Strict]       ```bash ...

Any other markdown reader takes such a body for an indented code block: the prose of a
note becomes "code" (and loses its place in search), a fenced block inside a tab becomes
code showing its own backticks. So on import an admonition becomes a quote, `> **Title**`
then `> body`, the way scraped admonitions are written, and a tab becomes a `**Label**`
line followed by its body, dedented. One line in, one line out: line numbers and section
ranges keep pointing at the same text. Fenced code is never rewritten.
"""

from __future__ import annotations

import re

from doc4llm.corpus.fences import keep_code

_ADMONITION = re.compile(r"^( *)(?:!!!|\?\?\?\+?)[ \t]+([\w-]+)(?:[ \t]+[\w-]+)*(?:[ \t]+\"([^\"]*)\")?[ \t]*$")
_TAB = re.compile(r"^( *)===\+?[ \t]+\"([^\"]*)\"[ \t]*$")
_MAY_HOLD = re.compile(r"^ *(?:!!!|\?\?\?|===)", re.MULTILINE)


def rewrite_mkdocs_blocks(text: str) -> str:
    """Admonitions to quotes, content tabs to labelled blocks (see the module doc)."""
    if not _MAY_HOLD.search(text):
        return text
    return "\n".join(_rewrite(text.split("\n")))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _body_end(lines: list[str], start: int, indent: int) -> int:
    """First line after the block body that starts at `start` (body: indented >= `indent`;
    blank lines inside it belong to it, trailing ones do not)."""
    end = start
    i = start
    while i < len(lines):
        line = lines[i]
        if line.strip():
            if _indent(line) < indent:
                break
            end = i + 1
        i += 1
    return end


def _rewrite(lines: list[str]) -> list[str]:
    out: list[str] = []
    fence = ""  # the open fence's marker
    i = 0
    while i < len(lines):
        fence, code = keep_code(lines[i], fence, out)
        if code:
            i += 1
            continue
        line = lines[i]
        box = _ADMONITION.match(line)
        tab = None if box else _TAB.match(line)
        if not (box or tab):
            out.append(line)
            i += 1
            continue
        pad = (box or tab).group(1)
        end = _body_end(lines, i + 1, len(pad) + 4)
        body = _rewrite([ln[len(pad) + 4:] if ln.strip() else "" for ln in lines[i + 1:end]])
        if box:
            title = box.group(3) if box.group(3) else box.group(2).replace("-", " ").capitalize()
            out.append(f"{pad}> **{title}**" if title else f"{pad}>")
            out.extend(f"{pad}> {ln}" if ln.strip() else f"{pad}>" for ln in body)
        else:
            out.append(f"{pad}**{tab.group(2)}**")
            out.extend(f"{pad}{ln}" if ln.strip() else "" for ln in body)
        i = end
    return out
