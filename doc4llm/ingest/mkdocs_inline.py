"""Material for MkDocs inline markup -> what the built site shows, on import.

Landing and guide pages of Material sites (griffe, hatch, pydantic) are full of icon
shortcodes and inline attribute lists:

    - :material-cube-scan:{ .lg .middle } **Loading**
      [:octicons-arrow-right-24: Learn how to load data](loading.md)
      [Get started](start.md){ .md-button .md-button--primary }   press ++ctrl+enter++

The site draws an icon, a styled button and key caps; as text they put "material cube
scan lg middle octicons arrow right 24" into a section's words, its embedding and its
snippet. So on import an icon shortcode is dropped (with the attribute list styling it),
an inline attribute list is dropped, and `++ctrl+enter++` becomes `Ctrl+Enter`.

A heading line stays as written (`## :simple-slack: Slack { #slack }`): the section
scanner reads its anchor from the attribute list, and a heading is what labels, links
and agents quote. Code spans and fenced code are never touched (they
show the syntax as an example), and each line stays one line, so line ranges still
point at the same text. Every pattern is bounded, so the pass is linear in the input.
"""

from __future__ import annotations

import re

from doc4llm.ingest.code_spans import map_outside_code, map_outside_fences

_ICON_SETS = r"(?:material|octicons|fontawesome|simple|twemoji)"
_ATTR_ITEM = (
    r"(?:[.#][A-Za-z_\-][\w:.\-]{0,80}"
    r"|(?:target|rel|title|loading|width|height|align|style|data-[\w\-]{1,40})"
    r"=(?:\"[^\"\n]{0,200}\"|'[^'\n]{0,200}'|[^\s}\"']{1,200}))"
)
# `{ .class }`, `{: #id .class }`, `{ target=_blank }`: at most 20 items
_ATTR_LIST = r"\{:?[ \t]{0,8}" + _ATTR_ITEM + r"(?:[ \t]{1,8}" + _ATTR_ITEM + r"){0,19}[ \t]{0,8}\}"
_ICON = re.compile(r":" + _ICON_SETS + r"(?:-[a-z0-9]{1,40}){1,12}:(?:" + _ATTR_LIST + r")?[ \t]?")
_INLINE_ATTRS = re.compile(_ATTR_LIST)
_KEYS = re.compile(r"\+\+([A-Za-z0-9][\w\-]{0,30}(?:\+[\w\-]{1,30}){0,6})\+\+")
_ATX = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_MAY_HOLD = re.compile(r":" + _ICON_SETS + r"-|\{:?[ \t]*[.#\w]|\+\+\w")


def rewrite_mkdocs_inline(text: str) -> str:
    """Icons, inline attribute lists and key caps as the site shows them (module doc)."""
    if not _MAY_HOLD.search(text):
        return text
    return map_outside_fences(text, _rewrite_line)


def _rewrite_line(line: str) -> str:
    if _ATX.match(line):  # a heading stays as written: labels and links quote it
        return line
    return map_outside_code(line, _rewrite_prose)


def _key_caps(m: re.Match[str]) -> str:
    return "+".join(k[:1].upper() + k[1:] for k in m.group(1).split("+"))


def _rewrite_prose(part: str) -> str:
    if ":" in part:
        part = _ICON.sub("", part)
    if "{" in part:
        part = _INLINE_ATTRS.sub("", part)
    if "++" in part:
        part = _KEYS.sub(_key_caps, part)
    return part
