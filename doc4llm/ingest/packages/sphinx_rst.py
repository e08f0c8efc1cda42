"""Sphinx directives pandoc does not know, rewritten before pandoc reads the text.

Pandoc's RST reader drops a directive whose name has a `:` (`.. py:data:: SECRET_KEY`
vanished with its name, its body left as a quote) and reads `.. class::` as docutils'
class directive; the name of every documented object was lost. A line pass turns:

- object descriptions (`function`, `class`, `method`, `attribute`, `data`, `exception`,
  `decorator`, `property`, `confval`, `option`, `envvar`, `describe`... bare or with a
  domain: `py:`, `js:`, `c:`, `cpp:`, `rst:`, `std:`) into `.. doclm-object::` with the
  kind and signatures as options, which rst_filter.lua renders as a heading (a
  definition line where a heading cannot go) named for the object, its signature in a
  code block and its `:type:`/`:default:` as a line;
- autodoc directives (`autofunction`, `autoclass`, `automodule`, `autodata`, ...) into
  `.. doclm-autodoc::` with the qualified name (`currentmodule` applied), which the filter
  turns into a placeholder that autodoc.py fills with the docstring from the API
  reference built from the same archive;
- `autosummary` into a placeholder listing its names;
- directives whose body is code (`click:example`, `testcode`, `doctest`, `ipython`...)
  into code blocks.

Linear: one pass over the lines, each line looked at a bounded number of times.
"""

from __future__ import annotations

import re

OBJECT_KINDS = {"function", "class", "method", "attribute", "data", "exception", "decorator", "decoratormethod",
                "classmethod", "staticmethod", "property", "type", "envvar", "option", "cmdoption", "confval",
                "describe", "object", "macro", "member", "var", "struct", "union", "enum", "enumerator",
                "concept", "directive", "role", "setting", "event"}
DOMAINS = {"py", "js", "c", "cpp", "rst", "std", "http", "rb", "php", "mongodb", "sql"}
# bare names that mean something else without a domain (`.. setting::` in Django is a target)
BARE_ONLY_WITH_DOMAIN = {"macro", "member", "var", "struct", "union", "enum", "enumerator", "concept",
                         "directive", "role", "setting", "type"}
AUTODOC_KINDS = {"function", "class", "module", "data", "method", "attribute", "exception", "decorator",
                 "property", "classmethod", "staticmethod", "newtypedata", "typevar"}
STD_KINDS = {"envvar", "option", "cmdoption", "confval", "describe", "object", "setting", "event"}
KEPT_OPTIONS = {"type": "Type", "default": "Default", "value": "Value", "annotation": "Annotation"}
CODE_DIRECTIVES = {"click:example", "click:run", "testcode", "testoutput", "doctest", "ipython",
                   "jupyter-execute", "code-cell", "runblock", "sourcecode", "tab-code", "exec_code"}
# directives whose body Sphinx never shows: SQLAlchemy's and Alembic's `changelog_imports`
# include every earlier changelog (megabytes) only to resolve references
HIDDEN_DIRECTIVES = {"changelog_imports"}
MODULE_DIRECTIVES = {"module", "currentmodule", "py:module", "py:currentmodule", "automodule"}
_DIRECTIVE = re.compile(r"^([ \t]*)\.\. ([\w][\w:.-]*)::(?:[ \t]+(.*?))?[ \t]*$")
_OPTION = re.compile(r"^[ \t]+:([\w-]+):(?:[ \t]+(.*?))?[ \t]*$")
_METADATA = re.compile(r"^:[\w-]+:(?:[ \t].*)?$")
SEP = "\u241e"  # between signatures in one option value


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


_LITERAL_DIRECTIVE = re.compile(r"^[ \t]*\.\. (code-block|code|sourcecode|parsed-literal|highlight-block|"
                                r"literalinclude|productionlist)::", re.I)


def literal_mask(lines: list[str]) -> list[bool]:
    """True for the lines of literal blocks (after a paragraph ending in `::`, in a
    `code-block`/`sourcecode`/... body): text shown as written, where a directive is an
    example of one (Sphinx's own docs), never to be rewritten or resolved."""
    mask = [False] * len(lines)
    base = -1  # indent of the line that opened the literal block; -1: none open
    for i, line in enumerate(lines):
        stripped = line.strip()
        if base >= 0:
            if not stripped or _indent(line) > base:
                mask[i] = True
                continue
            base = -1
        name = stripped[3:].split("::", 1)[0].strip().lower() if stripped.startswith(".. ") and "::" in stripped else ""
        if stripped.endswith("::") and not name or _LITERAL_DIRECTIVE.match(line) or \
                name in CODE_DIRECTIVES or name in HIDDEN_DIRECTIVES:
            base = _indent(line)
    return mask


def prepare(text: str) -> str:
    """The RST text with Sphinx object, autodoc and code directives rewritten."""
    if ".. " not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    module = ""
    i, n = 0, len(lines)
    while i < n and (not lines[i].strip() or _METADATA.match(lines[i])):
        i += 1  # file-wide metadata (`:tocdepth: 3`, `:orphan:`): not text
    literal = literal_mask(lines)
    while i < n:
        line = lines[i]
        m = _DIRECTIVE.match(line) if "::" in line and ".. " in line and not literal[i] else None
        if not m:
            out.append(line)
            i += 1
            continue
        indent, name, arg = m.group(1), m.group(2), (m.group(3) or "").strip()
        lname = name.lower()
        if lname in HIDDEN_DIRECTIVES:
            i += 1
            while i < n and literal[i]:
                i += 1
            continue
        domain, _, bare = lname.rpartition(":")
        if lname in CODE_DIRECTIVES:
            lang = arg if lname in ("sourcecode", "code-cell") and arg else \
                "text" if lname == "testoutput" else "python"
            out.append(f"{indent}.. code-block:: {lang}")
            i += 1
            continue
        if lname in MODULE_DIRECTIVES and arg and not indent:
            module = "" if arg == "None" else arg.split()[0]
        is_object = bare in OBJECT_KINDS and (domain in DOMAINS if domain else bare not in BARE_ONLY_WITH_DOMAIN)
        is_autodoc = bare.startswith("auto") and (bare[4:] in AUTODOC_KINDS or bare.startswith("autopydantic")) \
            and (not domain or domain == "py")
        if not (is_object or is_autodoc or bare == "autosummary") or (is_object and not arg):
            if arg and _names_next_title(lines, i + 1, len(indent), arg):
                i += 1  # a cross-reference target (Django's `.. setting:: X` over a ``X`` title): no text
                continue
            out.append(line)
            i += 1
            continue
        # the directive's further signature lines, then its options
        sigs = [arg] if arg else []
        j = i + 1
        while j < n and lines[j].strip() and _indent(lines[j]) > len(indent) and not _OPTION.match(lines[j]):
            if bare == "autosummary":
                break
            sigs.append(lines[j].strip().rstrip("\\").strip())
            j += 1
        options: dict[str, str] = {}
        while j < n and (om := _OPTION.match(lines[j])) and _indent(lines[j]) > len(indent):
            options[om.group(1).lower()] = om.group(2) or ""
            j += 1
        body_start = j
        k = j
        while k < n and not lines[k].strip():
            k += 1
        body_indent = lines[k][:_indent(lines[k])] if k < n and _indent(lines[k]) > len(indent) else indent + "   "
        head = [f"{indent}.. doclm-{'object' if is_object else 'autosummary' if bare == 'autosummary' else 'autodoc'}::"]
        if is_object:
            head += [f"{body_indent}:kind: {bare}", f"{body_indent}:domain: {domain or _default_domain(bare)}",
                     f"{body_indent}:sig: {SEP.join(_clean(s) for s in sigs)}"]
            meta = [f"*{label}:* {options[key]}" for key, label in KEPT_OPTIONS.items() if options.get(key)]
            if meta:
                head += ["", body_indent + " · ".join(meta)]
        elif bare == "autosummary":
            names, j = _autosummary_names(lines, body_start, len(indent))
            head += [f"{body_indent}:names: {' '.join(names)}", f"{body_indent}:module: {module}"]
            out.extend(head)
            out.append("")
            i = j
            continue
        else:
            target, _, sig = (sigs[0] if sigs else "").partition("(")
            head += [f"{body_indent}:kind: {bare[4:]}", f"{body_indent}:target: {target.strip()}",
                     f"{body_indent}:module: {module}"]
            if sig:
                head.append(f"{body_indent}:sig: {_clean(target.strip() + '(' + sig)}")
            if "members" in options:
                head.append(f"{body_indent}:members: {options['members'] or '*'}")
            if bare == "automodule" and target.strip():
                module = target.strip()
        out.extend(head)
        out.append("")
        i = body_start
    return "\n".join(out)


def _default_domain(kind: str) -> str:
    """Sphinx's default domain is Python; options, settings and the like are `std`."""
    return "std" if kind in STD_KINDS else "py"


def _names_next_title(lines: list[str], j: int, indent: int, arg: str) -> bool:
    """The directive has no body and the next line is a section title naming `arg`."""
    while j < len(lines) and not lines[j].strip():
        j += 1
    if j + 1 >= len(lines) or _indent(lines[j]) > indent:
        return False
    under = lines[j + 1].strip()
    return len(under) >= 3 and len(set(under)) == 1 and not under[0].isalnum() and \
        lines[j].strip().strip("`").strip() == arg.strip("`").strip()


def _clean(sig: str) -> str:
    return " ".join(sig.replace(SEP, " ").split())[:500]


def _autosummary_names(lines: list[str], start: int, indent: int) -> tuple[list[str], int]:
    """The names listed in an autosummary body, and the line after it."""
    names: list[str] = []
    j = start
    while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > indent):
        item = lines[j].strip()
        if item and not item.startswith((":", "..")) and re.fullmatch(r"~?[\w.]+(\(.*\))?", item):
            names.append(item.lstrip("~").split("(")[0])
        j += 1
    return names[:500], j
