"""The Python-visible API of a Cython module (`.pyx`), as a Python stub griffe can read.

pyarrow's `Table`, `array`, `Schema` live in `pyarrow/lib.pyx` (and the `.pxi` files it
includes), lxml's `Element`, `parse`, `XPath` in `lxml/etree.pyx`: griffe reads Python
only, so those sets had no entry for the library's main API. Cython is read as text,
never compiled or run, in one pass over the lines:

- `include "x.pxi"` is inlined (each file once, inside the archive, within a size cap);
- module-level `def`, `async def`, `cpdef` functions and `class` / `cdef class` classes
  (with `public`/`final`... modifiers and `[type ..., object ...]` clauses) are kept with
  their docstrings; inside a class, its `def`/`cpdef` methods and `property name:` blocks;
  `cdef` functions, `cdef extern` blocks, `ctypedef`s and C declarations are not visible
  from Python and are skipped with their bodies;
- C types in signatures are dropped or mapped (`int x` -> `x: int`, `_Element el not None`
  -> `el: _Element`); a signature that still does not parse becomes `(*args, **kwargs)`;
- `__all__` and one-line constant assignments at module level are kept.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

MAX_SOURCE_BYTES = 16 * 1024 * 1024  # a module and everything it includes
MAX_INCLUDE_DEPTH = 5
MAX_HEADER_LINES = 60
STUB_MARK = "# doc4llm: the Python-visible API of a Cython module, read as text (api_cython.py)"

_INCLUDE = re.compile(r"""^([ \t]*)include[ \t]+["']([^"'\n]{1,200})["'][ \t]*(?:#.*)?$""")
_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)[ \t]*\(")
_CPDEF = re.compile(r"^cpdef[ \t]")
_CLASS = re.compile(r"^(?:cdef[ \t]+|cpdef[ \t]+)?(?:(?:public|api|final|readonly|inline)[ \t]+)*class[ \t]+"
                    r"([A-Za-z_]\w*)[ \t]*(\([^)]*\))?")
_PROPERTY = re.compile(r"^property[ \t]+([A-Za-z_]\w*)[ \t]*:")
_DECORATOR = re.compile(r"^@[ \t]*(property|staticmethod|classmethod|[\w.]+\.setter|[\w.]+\.deleter)\b")
_ASSIGN = re.compile(r"^([A-Z_][A-Za-z0-9_]*)[ \t]*=[^=]")
_STRING_START = re.compile(r"""^[rRuUbB]{0,2}("{3}|'{3}|"|')""")
_C_TYPES = {"int": "int", "long": "int", "short": "int", "size_t": "int", "Py_ssize_t": "int", "ssize_t": "int",
            "unsigned": "int", "double": "float", "float": "float", "bint": "bool", "char": "", "void": "",
            "const": "", "object": "object", "str": "str", "bytes": "bytes", "unicode": "str",
            "list": "list", "dict": "dict", "tuple": "tuple"}


def cython_stub(pyx: Path, root: Path) -> str | None:
    """Python source declaring what `pyx` exposes to Python, with its docstrings; None
    when it exposes nothing."""
    lines = _inlined(pyx, root.resolve())
    out: list[str] = [STUB_MARK]
    doc = _module_docstring(lines)
    if doc is not None:
        out.append(_literal(doc))
    emitted = _walk(lines, out)
    return "\n".join(out) + "\n" if emitted else None


def is_cython_stub(path: Path) -> bool:
    """The file is a stub `cython_stub` wrote (its page names the `.pyx` as its source)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.readline().rstrip("\n") == STUB_MARK
    except (OSError, TypeError):
        return False


def _inlined(pyx: Path, root: Path) -> list[str]:
    """The module's lines with every `include` replaced by the included file's lines."""
    out: list[str] = []
    seen: set[Path] = set()
    budget = [MAX_SOURCE_BYTES]
    stack = [(iter(_read(pyx, budget)), pyx.parent, "", 0)]
    seen.add(pyx.resolve())
    while stack:
        it, folder, pad, depth = stack[-1]
        line = next(it, None)
        if line is None:
            stack.pop()
            continue
        m = _INCLUDE.match(line)
        if m and depth < MAX_INCLUDE_DEPTH:
            target = (folder / m.group(2)).resolve()
            if target not in seen and target.is_file() and target.is_relative_to(root):
                seen.add(target)
                stack.append((iter(_read(target, budget)), target.parent, pad + m.group(1), depth + 1))
            continue
        out.append(pad + line if pad and line.strip() else line)
    return out


def _read(path: Path, budget: list[int]) -> list[str]:
    try:
        size = path.stat().st_size
        if size > budget[0]:
            return []
        budget[0] -= size
        return path.read_text(encoding="utf-8", errors="replace").expandtabs(8).split("\n")
    except OSError:
        return []


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _module_docstring(lines: list[str]) -> str | None:
    for i, line in enumerate(lines):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if _STRING_START.match(s):
            doc, _ = _string_at(lines, i)
            return doc
        return None
    return None


def _walk(lines: list[str], out: list[str]) -> int:
    """Module-level and class-level declarations into `out`; how many were emitted."""
    emitted = 0

    def declaration(i: int, s: str, header: str, end: int, decorators: list[str]) -> int:
        nonlocal emitted
        klass = _CLASS.match(header)
        if klass and _uncommented(header).rstrip().endswith(":"):
            body, end = _block(lines, end, 0)
            emitted += _class(klass.group(1), klass.group(2), body, out)
        elif _DEF.match(header) or _CPDEF.match(header):
            sig = _signature(header)
            body, end = _block(lines, end, 0)
            if sig:
                out.extend(_function(sig, body, "", decorators))
                emitted += 1
        elif s.startswith("__all__") or _ASSIGN.match(s):
            stmt = _statement(lines, i)
            if stmt is not None:
                out.append(stmt)
            end = i + 1
        else:
            _, end = _block(lines, end, 0)
        return end

    _each_statement(lines, 0, declaration)
    return emitted


def _each_statement(lines: list[str], indent: int, handle) -> None:
    """`handle(i, stripped, header, end, decorators)` for each statement at `indent`, with the
    decorators above it; it returns the index after the statement (one pass: linear)."""
    i = 0
    decorators: list[str] = []
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if not s or s.startswith("#") or _indent(line) != indent:
            i += 1
            continue
        if s.startswith("@"):
            d = _DECORATOR.match(s)
            if d:
                decorators.append(d.group(1))
            i += 1
            continue
        header, end = _header(lines, i)
        end = handle(i, s, header, end, decorators)
        decorators = []
        i = max(end, i + 1)


def _header(lines: list[str], i: int) -> tuple[str, int]:
    """The logical line starting at `i` (brackets balanced) and the index after it."""
    parts: list[str] = []
    depth = 0
    j = i
    while j < len(lines) and j - i < MAX_HEADER_LINES:
        text = _uncommented(lines[j])
        parts.append(text.strip())
        depth += sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")
        j += 1
        if depth <= 0:
            break
    return "\n".join(parts), j


def _uncommented(line: str) -> str:
    """The line without a trailing `# comment` (a `#` inside a string stays)."""
    if "#" not in line:
        return line
    quote = ""
    for k, c in enumerate(line):
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "#":
            return line[:k]
    return line


def _block(lines: list[str], start: int, indent: int) -> tuple[list[str], int]:
    """The lines indented deeper than `indent` from `start` (blank lines included)."""
    j = start
    while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > indent):
        j += 1
    return lines[start:j], j


def _string_at(lines: list[str], i: int) -> tuple[str | None, int]:
    """The string literal starting at line `i` (a docstring) and the index after it."""
    s = lines[i].strip()
    m = _STRING_START.match(s)
    if not m:
        return None, i
    quote = m.group(1)
    rest = s[m.end():]
    if len(quote) == 1:
        end = rest.find(quote)
        return (rest[:end] if end >= 0 else rest), i + 1
    if quote in rest:
        return rest[:rest.index(quote)], i + 1
    body = [rest]
    j = i + 1
    while j < len(lines):
        line = lines[j]
        if quote in line:
            body.append(line[:line.index(quote)])
            return "\n".join(body), j + 1
        body.append(line)
        j += 1
    return "\n".join(body), j


def _docstring(body: list[str]) -> str | None:
    for k, line in enumerate(body):
        if line.strip():
            if line.strip().startswith("#"):
                continue
            doc, _ = _string_at(body, k)
            return doc
    return None


def _literal(doc: str) -> str:
    import inspect

    return repr(inspect.cleandoc(doc))


def _class(name: str, bases: str | None, body: list[str], out: list[str]) -> int:
    base_list = [b.strip() for b in (bases or "").strip("()").split(",") if b.strip()]
    base_list = [b for b in base_list if re.fullmatch(r"[A-Za-z_][\w.]*", b)]
    out.append(f"class {name}({', '.join(base_list)}):" if base_list else f"class {name}:")
    inner: list[str] = []
    doc = _docstring(body)
    if doc is not None:
        inner.append("    " + _literal(doc))
    levels = [_indent(ln) for ln in body if ln.strip() and not ln.strip().startswith("#")]
    member = min(levels) if levels else 4

    def method(k: int, s: str, header: str, end: int, decorators: list[str]) -> int:
        prop = _PROPERTY.match(header)
        if prop:
            block, end = _block(body, end, member)
            inner.extend(_function(f"def {prop.group(1)}(self)", block, "    ", ["property"]))
        elif _DEF.match(header) or _CPDEF.match(header):
            sig = _signature(header)
            block, end = _block(body, end, member)
            if sig:
                inner.extend(_function(sig, block, "    ", decorators))
        else:
            _, end = _block(body, end, member)
        return end

    _each_statement(body, member, method)
    out.extend(inner or ["    pass"])
    out.append("")
    return 1


def _function(sig: str, body: list[str], pad: str, decorators: list[str]) -> list[str]:
    lines = [f"{pad}@{d}" for d in decorators]
    lines.append(f"{pad}{sig}:")
    doc = _docstring(body)
    lines.append(f"{pad}    {_literal(doc) if doc is not None else '...'}")
    lines.append("")
    return lines


def _signature(header: str) -> str | None:
    """`def name(args) -> ret` in Python from a `def` / `cpdef` header, C types dropped."""
    text = header.strip()
    prefix = "async def" if text.startswith("async") else "def"
    open_at = text.find("(")
    if open_at < 0:
        return None
    names = re.findall(r"[A-Za-z_]\w*", text[:open_at])
    if not names:
        return None
    name = names[-1]
    depth, close_at = 0, -1
    for k in range(open_at, len(text)):
        c = text[k]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                close_at = k
                break
    if close_at < 0:
        return None
    params = ", ".join(p for p in (_param(a) for a in _split_args(text[open_at + 1:close_at])) if p)
    ret = ""
    m = re.match(r"[ \t]*->[ \t]*([^:]+):", text[close_at + 1:])
    if m and _parses(f"x: {m.group(1).strip()}"):
        ret = f" -> {m.group(1).strip()}"
    sig = f"{prefix} {name}({params}){ret}"
    if _parses(sig + ": pass"):
        return sig
    return f"{prefix} {name}(*args, **kwargs)"


def _split_args(text: str) -> list[str]:
    out, depth, cur = [], 0, []
    for c in text:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    out.append("".join(cur))
    return [a.strip() for a in out if a.strip()]


def _param(arg: str) -> str:
    left, eq, default = arg.partition("=")
    left = left.strip()
    for suffix in (" not None", " or None"):  # `_Element el not None`: a C-level check
        if " ".join(left.split()).endswith(suffix):
            left = " ".join(left.split())[: -len(suffix)]
    tokens = left.replace("*", " * ").split() if " " in left.strip() else [left.strip()]
    if len(tokens) == 1 or left.startswith("*") and " " not in left.lstrip("*").strip():
        param = left.strip()
        annotation = ""
    else:
        words = [t for t in tokens if t != "*"]
        if not words:
            return ""
        param, ctype = words[-1], " ".join(words[:-1])
        mapped = _C_TYPES.get(ctype.split()[-1] if ctype else "", None) if ctype else ""
        if "*" in tokens[:-1] or mapped == "":
            annotation = ""
        elif mapped is not None:
            annotation = mapped
        else:
            annotation = ctype if re.fullmatch(r"[A-Za-z_][\w.]*", ctype) else ""
    if annotation:
        param = f"{param}: {annotation}"
    if eq:
        default = default.strip()
        param += (" = " if annotation else "=") + (default if _parses(f"x = {default}") else "...")
    return param


def _statement(lines: list[str], i: int) -> str | None:
    stmt, _ = _header(lines, i)
    return stmt if _parses(stmt) and len(stmt) <= 20000 else None


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True
