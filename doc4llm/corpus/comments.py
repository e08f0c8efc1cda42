"""HTML comment blocks in markdown are invisible to readers: keep them out of what is
searched, embedded and quoted.

Real docs carry a lot of them: Node.js writes each API entry's version history as a
`<!-- YAML ... -->` block, linters and site generators leave `<!-- markdownlint-disable
-->`, `<!-- truncate -->`. Indexed as text, a block of version history outweighs the
entry's one-line description. A comment block (CommonMark's HTML block type 2: a line
starting with `<!--`, up to its closing `-->`) is blanked line for line, so line numbers
stay; text after the closing `-->` stays. Fenced code is never touched (an HTML example
may show a comment), nor is an inline comment inside a paragraph line, nor an opening
that is never closed.
"""

from __future__ import annotations

import re

from doc4llm.corpus.fences import fence_after

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def blank_html_comments(text: str) -> str:
    """The text with every HTML comment block replaced by empty lines (linear time)."""
    if "<!--" not in text:
        return text
    lines = text.split("\n")
    last_close = max((i for i, ln in enumerate(lines) if "-->" in ln), default=-1)
    fence: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            i += 1
            continue
        if m:
            fence = m.group(1)
            i += 1
            continue
        stripped = line.lstrip(" ")
        if len(line) - len(stripped) <= 3 and stripped.startswith("<!--"):
            close = stripped.find("-->", 4)
            if close >= 0:  # closes on its own line
                lines[i] = stripped[close + 3:].strip()
                i += 1
                continue
            if i < last_close:
                j = i + 1
                while "-->" not in lines[j]:
                    j += 1
                for k in range(i, j):
                    lines[k] = ""
                lines[j] = lines[j][lines[j].find("-->") + 3:].strip()
                i = j + 1
                continue
        i += 1
    return "\n".join(lines)


# `<a id="opt-mixin"></a>` on a line of its own: an anchor for a link target, invisible
# in the rendered page. pino writes one before each option's heading, so it ends the
# previous section, where its words ("opt mixin") would make that section match. MyST's
# target label, `(wheel-caching)=`, is the same thing.
_ANCHOR_LINE = re.compile(
    r"^\s*+(?:<(a|span)\s[^<>\n]{0,300}>\s*+</(?:a|span)>\s*+|<a\s[^<>\n]{0,300}/>\s*+)+$", re.IGNORECASE)
_MYST_TARGET = re.compile(r"^ {0,3}\([^()\n]{1,200}\)=\s*$")


def is_anchor_line(line: str) -> bool:
    """The line holds only empty HTML anchors (`<a id=...></a>`, `<a name=.../>`) or is a
    MyST target label (`(name)=`)."""
    return ("<" in line and bool(_ANCHOR_LINE.match(line))) or (")=" in line and bool(_MYST_TARGET.match(line)))


def without_fenced_code(text: str) -> str:
    """The text's lines outside fenced code blocks (a fence closes on the same character,
    at least as long, as above): what a section says in prose, not what its examples print."""
    out: list[str] = []
    fence = ""
    for line in text.split("\n"):
        fence, code = fence_after(line, fence)
        if not code:
            out.append(line)
    return "\n".join(out)
