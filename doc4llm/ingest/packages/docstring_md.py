"""A Python docstring as markdown an agent can read, without Sphinx.

Docstrings are written for Sphinx: reStructuredText roles (`:meth:`x.y``), literal blocks
introduced by `::`, doctest blocks, directives (`.. note::`, `.. versionadded::`), and
numpydoc / Google / Sphinx-field sections. Kept raw, an agent reads markup and a markdown
reader turns every indented block into "code". Here:

- sections come from griffe's own parsers (google, numpy, sphinx; the style inferred per
  docstring) and become lists: `**Parameters:**` then `` - `name` (`type`): text ``;
- roles become code spans as Sphinx shows them (`:class:`~a.B`` -> `` `B` ``,
  `:func:`a.b`` -> `` `a.b` ``), cross-reference titles win (`` `RAISE <x.RAISE>` `` ->
  `` `RAISE` ``), `:ref:`/`:doc:`/`:term:` become their text, `:pep:`/`:rfc:` "PEP 8";
- `::` literal blocks, `.. code-block::` and doctest (`>>>`) blocks become fenced code;
- `.. note::`/`.. warning::`/`.. seealso::` (and MkDocs `!!! note`) become quotes,
  `.. versionadded:: 1.2` the sentence *New in version 1.2* (version questions find it);
- definition lists become list items and other indentation is dropped, so nothing that
  is prose turns into an indented code block; underlined titles become bold lines.

One pass over the lines; a directive's body is converted once more inside it, to a fixed
depth, so the time is linear in the docstring. `deprecations` collects what `..
deprecated::` and a Google "Deprecated:" section said, for the caller's marker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from doc4llm.ingest.mkdocs_blocks import rewrite_mkdocs_blocks

MAX_DEPTH = 6  # nested directive bodies converted; deeper ones are kept as plain lines
MAX_CHARS = 60_000  # a docstring longer than this is cut (generated docstrings can be huge)

_DIRECTIVE = re.compile(r"^\.\.[ \t]+([A-Za-z][\w:.-]{0,40})::(?:[ \t]+(.*))?$")
_COMMENT = re.compile(r"^\.\.(?:[ \t]|$)")
_FOOTNOTE = re.compile(r"^\.\.[ \t]+(\[[^\]\s]{1,20}\])[ \t]+(.*)$")
_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.])\1{2,}[ \t]*$")
_FENCE = re.compile(r"^(`{3,}|~{3,})")
_BULLET = re.compile(r"^(?:[-*+]|\d{1,3}[.)]|#\.|[a-zA-Z][.)])[ \t]+")
_FIELD = re.compile(r"^:([A-Za-z][\w-]{0,30})(?:[ \t]+([^:]{1,120}))?:(?:[ \t]+(.*))?$")
_GRID_BORDER = re.compile(r"^\+[-=+]{3,}\+?$")
_SIMPLE_BORDER = re.compile(r"^=+(?:[ \t]+=+)+$")
_INLINE = re.compile(
    r"``(?P<lit>[^`\n]+?)``"
    r"|:(?P<role>(?:[A-Za-z][\w-]{0,15}:)?[A-Za-z][\w+.-]{0,30}):`(?P<rbody>[^`\n]*)`"
    r"|`(?P<link>[^`\n]+?)`(?P<us>__?)(?![\w])"
    r"|(?<![\w`])`(?P<dflt>[^`\n]+)`(?!`)"
)
# `title <target>`: greedy to the last `<` (a lazy title before `[ \t]*` rescans every space)
_SPLIT_ROLE = re.compile(r"(:(?:[A-Za-z][\w-]{0,15}:)?[A-Za-z][\w+.-]{0,30}:`)([^`\n]{0,200})\n[ \t]*([^`\n]{0,200}`)")
_NAME_LIST = re.compile(r"^[\w.~`:<>()]+(?:,[ \t]*[\w.~`:<>()]+)*,?$")
_TITLED = re.compile(r"^(.*)<([^<>]*)>$", re.DOTALL)
_CODE_LANGS = {"code-block", "code", "sourcecode", "highlight", "testcode", "testsetup", "testcleanup",
               "doctest", "ipython", "jupyter-execute", "plot", "prompt", "console"}
_QUOTES = {"note": "Note", "warning": "Warning", "tip": "Tip", "hint": "Hint", "important": "Important",
           "caution": "Caution", "danger": "Danger", "attention": "Attention", "error": "Error",
           "seealso": "See also", "todo": "To do"}
_VERSIONED = {"versionadded": "New in version", "versionchanged": "Changed in version",
              "deprecated": "Deprecated since version", "versionremoved": "Removed in version"}
_DROPPED = {"toctree", "autosummary", "currentmodule", "module", "index", "include", "literalinclude", "image",
            "figure", "only", "raw", "testoutput", "meta", "contents", "highlight", "tabularcolumns",
            "automodule", "autoclass", "autofunction", "automethod", "autodata", "autoattribute"}
_PROSE_ROLES = {"ref", "doc", "term", "numref", "download", "abbr", "dfn", "guilabel", "menuselection",
                "emphasis", "strong", "title-reference", "title", "sub", "sup", "subscript", "superscript"}
_SECTION_TITLES = {"parameters": "Parameters", "other parameters": "Other parameters",
                   "attributes": "Attributes", "returns": "Returns", "yields": "Yields",
                   "receives": "Receives", "raises": "Raises", "warns": "Warns",
                   "classes": "Classes", "functions": "Functions", "modules": "Modules",
                   "type parameters": "Type parameters", "type aliases": "Type aliases"}


@dataclass
class Converted:
    markdown: str
    deprecations: list[str] = field(default_factory=list)  # messages of deprecation notes


def docstring_markdown(text: str) -> Converted:
    """A docstring (already dedented, as griffe gives it) as markdown, its sections as lists."""
    text = text.expandtabs(4).strip("\n")
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS] + "\n\n(docstring cut)"
    if "`" in text:  # a role whose text wraps onto the next line: one line, so it converts
        text = _SPLIT_ROLE.sub(lambda m: f"{m.group(1)}{m.group(2)} {m.group(3)}", text)
    out = Converted("")
    parts: list[str] = []
    for kind, title, value in _sections(text):
        if kind == "text":
            parts.append(_rst(value, out.deprecations))
        elif kind == "params":
            items = [_item(name, ann, desc, default, out.deprecations) for name, ann, desc, default in value]
            parts.append(f"**{title}:**\n\n" + "\n".join(items))
        elif kind == "examples":
            chunks = []
            for sub_kind, sub in value:
                chunks.append(_fence(sub, "python") if sub_kind == "code" else _rst(sub, out.deprecations))
            parts.append("**Examples:**\n\n" + "\n\n".join(c for c in chunks if c))
        elif kind == "admonition":
            parts.append(_admonition(title, value, out.deprecations))
    out.markdown = "\n\n".join(p for p in parts if p.strip()).strip()
    return out


def _sections(text: str):
    """(kind, title, value) of each docstring section, from griffe's parsers; the whole
    text as one "text" section when no style is recognised or griffe fails."""
    try:
        import griffe

        doc = griffe.Docstring(text)
        style, _ = griffe.infer_docstring_style(doc)
        if style is None:
            return [("text", "", text)]
        sections = doc.parse(style)
    except Exception:  # noqa: BLE001 - a docstring griffe cannot parse is shown as text
        return [("text", "", text)]
    out = []
    for sec in sections:
        kind = sec.kind.value
        value = sec.value
        if kind == "text":
            out.append(("text", "", str(value)))
        elif kind == "admonition":
            out.append(("admonition", sec.title or str(getattr(value, "annotation", "") or "Note"),
                        (str(getattr(value, "annotation", "") or ""), str(getattr(value, "description", "") or ""))))
        elif kind == "examples":
            out.append(("examples", "Examples", [("code" if k.value == "examples" else "text", str(v))
                                                 for k, v in value]))
        elif kind == "deprecated":
            version = str(getattr(value, "version", "") or "")
            desc = str(getattr(value, "description", "") or "")
            out.append(("admonition", "Deprecated", ("deprecated", f"{version}: {desc}" if version else desc)))
        elif isinstance(value, list):
            title = _SECTION_TITLES.get(kind.replace("-", " "), kind.replace("-", " ").capitalize())
            rows = []
            for v in value:
                name = str(getattr(v, "name", "") or "")
                ann = getattr(v, "annotation", None)
                default = getattr(v, "value", None) if kind in ("parameters", "other parameters") else None
                rows.append((name, str(ann) if ann is not None else "", str(getattr(v, "description", "") or ""),
                             str(default) if default is not None else ""))
            if rows:
                out.append(("params", title, rows))
        else:
            out.append(("text", "", str(value)))
    return out


def _item(name: str, ann: str, desc: str, default: str, deprecations: list[str]) -> str:
    head = f"`{name}`" if name else ""
    if ann:
        ann = _SUBSTITUTION.sub(lambda m: m.group(1) if len(m.group(1)) > 1 else m.group(0),
                                " ".join(ann.split()))  # `|str|` as a type: str
        ann = inline_markdown(ann) if "`" in ann else _code(ann)  # `:class:`~a.B`` as a type
        head = f"{head} ({ann})" if head else ann
    if default:
        head += f", default `{' '.join(default.split())[:80]}`"
    body = _rst(_hanging(desc), deprecations) if desc.strip() else ""
    lines = body.split("\n") if body else []
    first = lines[0] if lines else ""
    line = f"- {head}: {first}" if head and first else f"- {head or first}"
    rest = ["  " + ln if ln.strip() else "" for ln in lines[1:]]
    return "\n".join([line.rstrip()] + rest)


def _admonition(title: str, value: tuple[str, str], deprecations: list[str]) -> str:
    kind, desc = value
    desc = _hanging(desc)
    body = _rst(desc, deprecations)
    low = kind.lower().replace("-", "").replace(" ", "")
    if low == "deprecated":
        deprecations.append(" ".join(desc.split())[:300])
        return _quote(f"**Deprecated:** {body}") if body else "**Deprecated.**"
    if low in ("seealso", "see also") or title.lower() == "see also":
        return f"**See also:**\n\n{_see_also(desc)}"
    if low in _QUOTES:
        return _quote(f"**{_QUOTES[low]}:** {body}")
    return f"**{title.strip() or kind.capitalize()}:**\n\n{body}"


def _see_also(desc: str) -> str:
    """numpydoc's `name : what it does` lines as a list."""
    items = []
    for line in desc.split("\n"):
        if not line.strip():
            continue
        if line[:1].isspace() and items:
            items[-1] += " " + inline_markdown(line.strip())
            continue
        name, sep, what = line.partition(" : ")
        if not sep and not _NAME_LIST.match(line.strip()):
            items.append(f"- {inline_markdown(line.strip())}")
            continue
        if "`" in name:  # roles or code spans already: `:ref:`arrays.scalars``
            names = inline_markdown(name.strip())
        else:
            names = ", ".join(_code(_role_target(n.strip())) for n in name.split(",") if n.strip())
        items.append(f"- {names}: {inline_markdown(what.strip())}" if sep else f"- {names}")
    return "\n".join(items)


def _hanging(desc: str) -> str:
    """A parser's description whose first line was cut from its field (`x: text` then
    indented lines): the continuation lines dedented on their own."""
    first, nl, rest = desc.partition("\n")
    if not nl or first[:1].isspace():
        return desc
    lines = rest.split("\n")
    k = next((_indent(ln) for ln in lines if ln.strip()), 0)
    return first + "\n" + "\n".join(ln[k:] if ln[:k].isspace() else ln.lstrip(" ") if not ln.strip() else ln
                                    for ln in lines)


def _quote(text: str) -> str:
    return "\n".join(f"> {ln}" if ln.strip() else ">" for ln in text.split("\n"))


def _fence(code: str, lang: str = "") -> str:
    code = _dedent(code.strip("\n"))
    longest = max((len(m.group(0)) for m in re.finditer(r"`{3,}", code)), default=2)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{code}\n{ticks}"


def _dedent(text: str) -> str:
    lines = text.split("\n")
    ind = min((len(ln) - len(ln.lstrip(" ")) for ln in lines if ln.strip()), default=0)
    return "\n".join(ln[ind:] for ln in lines)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block_end(lines: list[str], start: int, indent: int) -> int:
    """First line after the block that starts at `start`: its lines are blank or indented
    deeper than `indent`; trailing blank lines are not part of it."""
    j = start
    last = start
    while j < len(lines):
        ln = lines[j]
        if ln.strip():
            if _indent(ln) <= indent:
                break
            last = j + 1
        j += 1
    return last


def _rst(text: str, deprecations: list[str], depth: int = 0) -> str:
    """reStructuredText (or markdown: fences and lists pass through) to markdown."""
    if "!!!" in text or "???" in text:
        text = rewrite_mkdocs_blocks(text)
    lines = _dedent(text).split("\n")
    out: list[str] = []
    lists: list[int] = []  # source indents of the open list items
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        s = line.strip()
        ind = _indent(line)
        if not s:
            out.append("")
            i += 1
            continue
        while lists and ind <= lists[-1] and not (ind == lists[-1] and _BULLET.match(s)):
            lists.pop()
        if ind == (lists[-1] if lists else -1) and _BULLET.match(s):
            lists.pop()
        pad = "  " * len(lists)
        fence = _FENCE.match(s)
        if fence:  # markdown fenced code: copied as is up to its closing fence
            j = i + 1
            while j < n and not (lines[j].strip().startswith(fence.group(1)) and not lines[j].strip().strip(fence.group(1)[0])):
                j += 1
            block = "\n".join(ln[ind:] if ln[:ind].isspace() else ln.lstrip() for ln in lines[i:j + 1])
            out.append(_pad(block, pad))
            i = j + 1
            continue
        directive = _DIRECTIVE.match(s)
        if directive:
            end = _block_end(lines, i + 1, ind)
            out.append(_pad(_directive(directive.group(1), (directive.group(2) or "").strip(), lines[i + 1:end],
                                       deprecations, depth), pad))
            i = end
            continue
        footnote = _FOOTNOTE.match(s)
        if footnote:
            end = _block_end(lines, i + 1, ind)
            body = " ".join(ln.strip() for ln in lines[i + 1:end] if ln.strip())
            out.append(pad + inline_markdown(f"{footnote.group(1)} {footnote.group(2)} {body}".strip()))
            i = end
            continue
        if _COMMENT.match(s):  # a comment or a link target (`.. _label:`): not shown
            i = _block_end(lines, i + 1, ind)
            continue
        if s.startswith(">>>"):  # a doctest block runs to the next blank line
            j = i
            while j < n and lines[j].strip():
                j += 1
            out.append(_pad(_fence("\n".join(lines[i:j]), "python"), pad))
            i = j
            continue
        if _GRID_BORDER.match(s) or (_SIMPLE_BORDER.match(s) and i + 1 < n and lines[i + 1].strip()):
            j = i
            while j < n and lines[j].strip():
                j += 1
            if _SIMPLE_BORDER.match(s):  # a simple table may hold blank-free rows up to its last border
                while j + 1 < n and not lines[j].strip() and lines[j + 1].strip() and _table_continues(lines, j + 1):
                    j += 1
                    while j < n and lines[j].strip():
                        j += 1
            out.append(_pad(_fence("\n".join(_table_line(ln) for ln in lines[i:j])), pad))
            i = j
            continue
        nxt = lines[i + 1] if i + 1 < n else ""
        if _UNDERLINE.match(nxt.strip()) and len(nxt.strip()) >= min(len(s), 3) and not _UNDERLINE.match(s) \
                and _indent(nxt) == ind:
            if s.lower() == "see also":  # numpydoc's `name : text` lines, not parsed as a section
                j = i + 2
                while j < n and lines[j].strip():
                    j += 1
                out.append(f"{pad}**See also:**\n\n" + _pad(_see_also("\n".join(lines[i + 2:j])), pad))
                i = j
                continue
            out.append(f"{pad}**{inline_markdown(s)}**")
            i += 2
            continue
        if _UNDERLINE.match(s) and i + 2 < n and _UNDERLINE.match(lines[i + 2].strip()) and lines[i + 1].strip():
            out.append(f"{pad}**{inline_markdown(lines[i + 1].strip())}**")  # an overlined title
            i += 3
            continue
        if _UNDERLINE.match(s) and len(s) >= 4:  # a transition
            out.append(pad + "---")
            i += 1
            continue
        field_m = _FIELD.match(s)
        if field_m:
            end = _block_end(lines, i + 1, ind)
            rest = " ".join(ln.strip() for ln in lines[i + 1:end] if ln.strip())
            item = _field(field_m.group(1), (field_m.group(2) or "").strip(),
                          f"{field_m.group(3) or ''} {rest}".strip())
            if item:
                out.append(pad + item)
            i = end
            continue
        bullet = _BULLET.match(s)
        if bullet:
            lists.append(ind)
            marker = bullet.group(0).strip()
            marker = "1." if marker == "#." else ("-" if marker in "*+" else marker)
            item = s[bullet.end():]
            literal = item.endswith("::")
            out.append(f"{pad}{marker} {_text_line(_literal_intro(item) if literal else item)}")
            i += 1
            if literal:  # the block is indented past the item's text, not just past its marker
                i = _take_literal(lines, i, ind + len(bullet.group(0)), out, pad + "  ")
            continue
        # a line directly followed by a deeper one is a definition list's term (reST)
        prev_blank = i == 0 or not lines[i - 1].strip()
        if prev_blank and nxt.strip() and _indent(nxt) > ind and not s.endswith("::"):
            out.append(f"{pad}- **{inline_markdown(s)}**")
            lists.append(ind)
            i += 1
            continue
        literal = s.endswith("::")
        if literal:
            s = _literal_intro(s)
        if s:
            out.append(pad + _text_line(s))
        i += 1
        if literal:
            i = _take_literal(lines, i, ind, out, pad)
    return _squeeze("\n".join(out))


def _literal_intro(s: str) -> str:
    """`Example::` -> `Example:`; `Example ::` and `::` -> the text without it."""
    body = s[:-2]
    return body + ":" if body and not body.endswith((" ", "\t")) else body.rstrip()


def _take_literal(lines: list[str], i: int, ind: int, out: list[str], pad: str) -> int:
    """The indented block after a `::` line, as fenced code; the next line to read."""
    j = i
    while j < len(lines) and not lines[j].strip():
        j += 1
    if j < len(lines) and _indent(lines[j]) > ind:
        end = _block_end(lines, j, ind)
        out.append("")
        out.append(_pad(_fence("\n".join(lines[j:end])), pad))
        return end
    return i


def _table_line(line: str) -> str:
    """A table row with its roles as plain names, padded to their width: the columns
    stay aligned (the table is shown as written, in a fence)."""
    if "`" not in line:
        return line

    def plain(m: re.Match) -> str:
        text = _role_target(m.group("rbody")) if m.group("role") is not None else (
            m.group("lit") or m.group("dflt") or m.group("link") or "")
        return text.ljust(len(m.group(0)))

    return _INLINE.sub(plain, line).rstrip()


def _table_continues(lines: list[str], j: int) -> bool:
    """After a blank line inside a simple table: is the next line still a table row?"""
    return bool(_SIMPLE_BORDER.match(lines[j].strip()))


def _pad(block: str, pad: str) -> str:
    return "\n".join(pad + ln if ln.strip() else ln for ln in block.split("\n")) if pad else block


def _squeeze(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


def _text_line(s: str) -> str:
    s = inline_markdown(s)
    if s.startswith("#"):  # never a heading inside a section
        s = "\\" + s
    return s


def _directive(name: str, arg: str, body: list[str], deprecations: list[str], depth: int) -> str:
    name = name.lower().rsplit(":", 1)[-1]
    content = [ln for ln in body]
    while content and content[0].strip().startswith(":") and _FIELD.match(content[0].strip()):
        content.pop(0)  # directive options (`:linenos:`, `:caption: x`)
    text = _dedent("\n".join(content)).strip("\n")
    inner = _rst(text, deprecations, depth + 1) if depth < MAX_DEPTH else inline_markdown(" ".join(text.split()))
    if name in _VERSIONED:
        version, _, rest = arg.partition(" ")
        sentence = f"*{_VERSIONED[name]} {version}*".replace(" *", "*") if version else f"*{_VERSIONED[name]}*"
        tail = " ".join(x for x in (inline_markdown(rest.strip()), inner) if x)
        if name == "deprecated":
            said = " ".join(f"{rest} {text}".split())
            deprecations.append((f"since {version}: {said}" if said else f"since {version}")[:300] if version
                                else said[:300])
        return f"{sentence} {tail}".rstrip() if tail else sentence
    if name in _CODE_LANGS:
        lang = arg.split()[0] if arg and name not in ("doctest", "testcode", "ipython", "jupyter-execute", "plot") \
            else "python"
        if name == "highlight":
            return ""
        return _fence(text, lang if re.fullmatch(r"[\w+#.-]{1,20}", lang) else "") if text.strip() else ""
    if name == "math":
        return _fence(arg + ("\n" if arg and text else "") + text, "math")
    if name in _QUOTES:
        lead = inline_markdown(arg)
        return _quote(f"**{_QUOTES[name]}:** " + " ".join(x for x in (lead, inner) if x))
    if name == "admonition":
        return _quote(f"**{inline_markdown(arg) or 'Note'}:** {inner}")
    if name == "rubric":
        return f"**{inline_markdown(arg)}**"
    if name in _DROPPED:
        return inner if name == "only" else ""
    # an unknown directive: its argument and its text, without the markup
    return "\n\n".join(x for x in (inline_markdown(arg), inner) if x)


def _field(name: str, arg: str, text: str) -> str:
    """A Sphinx field the parsers left in the text (`:param x: ...`) as a list item."""
    low = name.lower()
    text = inline_markdown(text)
    if low in ("param", "parameter", "arg", "argument", "key", "keyword", "kwarg", "kwparam", "ivar", "var",
               "cvar"):
        # `:kwparam str | None match:` (pytest): the last word is the name, the rest its type,
        # written as the parsers write a typed parameter
        name_part, _, typ = arg.rpartition(" ")[::-1] if " " in arg.strip() else (arg.strip(), "", "")
        typed = f" (`{typ.strip()}`)" if typ.strip() else ""
        return f"- `{name_part}`{typed}: {text}".rstrip() if name_part else f"- {text}"
    if low in ("type", "vartype", "meta"):
        return ""
    if low in ("returns", "return"):
        return f"- Returns: {text}".rstrip()
    if low == "rtype":
        return f"- Return type: `{text}`" if text else ""
    if low in ("raises", "raise", "except", "exception"):
        return f"- Raises `{arg}`: {text}".rstrip() if arg else f"- Raises: {text}"
    label = f"{name} {arg}".strip()
    return f"- **{label}**: {text}".rstrip()


def inline_markdown(text: str) -> str:
    """reST inline markup to markdown (roles, interpreted text, links, literals,
    substitution references)."""
    if "|" in text:
        text = _SUBSTITUTION.sub(_substitution, text)
    if "`" not in text:
        return text
    return _INLINE.sub(_inline_one, text)


# `|Logger|`, `|file-like object|_`: a substitution whose definition lives elsewhere (another
# docstring, conf.py's rst_epilog) reads as its name, code when it is one (loguru's
# docstrings are full of them); table cells (`| a |`) have spaces inside the bars
_SUBSTITUTION = re.compile(r"(?<![\w|`])\|([^\s|`](?:[^|`\n]{0,58}[^\s|`])?)\|(?:__?)?(?![\w|])")


def _substitution(m: re.Match) -> str:
    name = m.group(1)
    link = m.group(0).endswith("_")
    if not link and (len(name) < 2 or not re.fullmatch(r"[A-Za-z_][\w.-]*(?:\(\))?", name)):
        return m.group(0)  # `|x|`, `|G|`, `|a - b|`: an absolute value, not a substitution
    return _code(name) if re.fullmatch(r"[A-Za-z_][\w.]*(?:\(\))?", name) else name


def _inline_one(m: re.Match) -> str:
    if m.group("lit") is not None:
        return _code(m.group("lit"))
    if m.group("role") is not None:
        return _role(m.group("role"), m.group("rbody"))
    if m.group("link") is not None:
        body = m.group("link")
        titled = _TITLED.match(body)
        if titled and titled.group(1).strip():
            target, title = titled.group(2), titled.group(1).strip()
            return f"[{title}]({target})" if re.match(r"^[a-z][\w+.-]*://", target) else title
        if titled:  # `<https://x>`_
            return f"<{titled.group(2)}>"
        return body
    return _code(_role_target(m.group("dflt")))


def _role(role: str, body: str) -> str:
    name = role.lower().rsplit(":", 1)[-1]
    if name in ("pep", "rfc"):
        return f"{name.upper()} {_role_title(body)}"
    if name == "math":
        return f"${body}$"
    if name in _PROSE_ROLES:
        return _role_title(body)
    return _code(_role_target(body))


def _role_title(body: str) -> str:
    titled = _TITLED.match(body)
    return (titled.group(1).strip() or titled.group(2)) if titled else body.lstrip("~!")


def _role_target(body: str) -> str:
    """What Sphinx shows for a cross-reference: the title when there is one, the last
    component after `~`, the name without `!`."""
    body = body.strip()
    titled = _TITLED.match(body)
    if titled and titled.group(1).strip():
        return titled.group(1).strip()
    if titled:
        body = titled.group(2)
    if body.startswith("~"):
        body = body[1:]
        head, _, tail = body.rstrip("()").rpartition(".")
        body = (tail + ("()" if body.endswith("()") else "")) if head else body
    return body.lstrip("!")


def _code(text: str) -> str:
    if not text:
        return "``"
    if "`" in text:
        return f"`` {text} ``"
    return f"`{text}`"
