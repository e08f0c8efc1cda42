"""MyST inline roles -> what Sphinx shows, on import.

Sphinx sites written in MyST (attrs, black, pip, structlog) cross-reference with roles:
``{func}`structlog.configure` ``, ``{class}`~attrs.Attribute` ``, ``{doc}`the API
<api>` ``, ``{pep}`8` ``. Kept as written, every page carries the words `func`,
`class`, `doc` and `ref` hundreds of times (BM25 and the embedder read them as
content) and snippets show markup the built site never does. So a role becomes what
the site renders: a code span for API and command roles (with the full dotted name:
Sphinx would shorten `~a.b.c` to `c`, but the full name is what identifier queries
quote), the plain title for references (`{doc}`the API <api>`` -> the
API), `PEP 8` / `RFC 7231` for those two. Unknown roles show their text.

Only the line's text outside code spans changes (a role inside ```` `` {func}`x` `` ````
is an example of the syntax), and fenced code is never touched. Each line stays one
line, so section line ranges still point at the same text. Linear in the input
(code_spans.py pairs a line's backtick runs in one pass).
"""

from __future__ import annotations

import re

from doc4llm.ingest.code_spans import code_spans, map_outside_fences

_ROLE = re.compile(r"\{([A-Za-z][\w:.+-]{0,40})\}")
_RUN = re.compile(r"`+")
# `title <target>`: greedy to the last `<` (a lazy title before `\s*` rescanned every space)
_EXPLICIT = re.compile(r"^(.*)<([^<>]*)>$", re.DOTALL)
_CODE_ROLES = {
    "func", "meth", "class", "mod", "attr", "data", "const", "exc", "obj", "any", "envvar",
    "option", "program", "command", "file", "samp", "kbd", "code", "literal", "type",
    "function", "method", "member", "macro", "var", "struct", "enum", "property",
}
_PREFIXED = {"pep": "PEP ", "rfc": "RFC "}
_MAY_HOLD = re.compile(r"\{[A-Za-z][\w:.+-]{0,40}\}`")


def rewrite_myst_roles(text: str) -> str:
    """Every role outside code written as the built site shows it (see the module doc)."""
    if not _MAY_HOLD.search(text):
        return text
    return map_outside_fences(text, lambda line: _rewrite_line(line) if "}`" in line else line)


def render_role(name: str, content: str) -> str:
    """What Sphinx shows for `{name}`content``."""
    role = name.casefold().rsplit(":", 1)[-1]  # `py:func`, `std:ref`
    content = content.strip()
    explicit = _EXPLICIT.match(content)
    if explicit and explicit.group(1).rstrip():
        title = explicit.group(1).rstrip()
    else:
        title = explicit.group(2) if explicit else content
    title = title.lstrip("~!").strip() or content
    if role in _PREFIXED:
        return _PREFIXED[role] + title
    if role in _CODE_ROLES:
        return _code_span(title)
    return title


def _code_span(text: str) -> str:
    longest = max((len(r) for r in _RUN.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _rewrite_line(line: str) -> str:
    """A code span right after `{role}` is that role's content."""
    parts: list[str] = []
    pos = 0  # line[pos:] not yet copied
    span_end = 0  # where the last code span ended: a role starts after it
    for s, e, cs, ce in code_spans(line):
        brace = line.rfind("{", max(span_end, s - 43), s)
        role = _ROLE.fullmatch(line, brace, s) if brace >= 0 else None
        if role is not None:
            parts.append(line[pos:brace])
            parts.append(render_role(role.group(1), line[e:cs]))
            pos = ce
        span_end = ce
    parts.append(line[pos:])
    return "".join(parts)
