"""Is a Python function, class or module deprecated? Read statically from its source.

A deprecated member reads like any other in an API reference, and pydantic 2's
`BaseModel.dict` ranked above `model_dump` for "convert a model to a dict". What says
"deprecated", in the order tried (the first message found is shown):

- a decorator named `deprecated` / `deprecate` (PEP 702's `warnings.deprecated`,
  `typing_extensions.deprecated`, the `deprecated` and `Deprecated` packages), its first
  string argument as the message;
- a `warnings.warn(...)` (or `warn(...)`, or a helper whose name says deprecat:
  SQLAlchemy's `warn_deprecated`) among the **top-level** statements of the body (for a
  class, of `__init__`/`__new__`) whose category names a deprecation (`DeprecationWarning`,
  `PendingDeprecationWarning`, `PydanticDeprecatedSince20`, Django's `RemovedInDjango60Warning`):
  a warning under an `if` is about one argument or one use, not the member;
- for a module, such a warning among the module's top-level statements;
- the docstring: `.. deprecated::` or a "Deprecated:" section (see docstring_md), or a
  summary that opens with "Deprecated" / "This ... is deprecated".

Source text is parsed with `ast` (nothing runs), only when it mentions a deprecation.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

from doc4llm.ingest.packages.api_docfrom import DictItems

MAX_SOURCE_CHARS = 200_000  # a function longer than this is not read for warnings
_NAMES_DEPRECATION = re.compile(r"deprecat|removedin\w*warning", re.I)
_VERSION = re.compile(r"^v?\d+(?:\.\d+){0,3}$")
_DECORATOR = re.compile(r"^(?:[\w.]+\.)?_?(?:deprecated?|Deprecated)$")
_SUMMARY = re.compile(r"^\s*(?:\*\*)?deprecated\b|^\s*(?:this|the)\s+(?:[\w`.()]+\s+){0,5}(?:is|are|has been|have been)"
                      r"\s+deprecated\b", re.I)


class SourceCache:
    """The text of the module files being documented, read once each."""

    def __init__(self) -> None:
        self._files: dict[str, list[str] | None] = {}
        self.dict_items = DictItems()  # `NAME["key"] = "..."` per module, for decorator docstrings

    def lines(self, path) -> list[str] | None:
        key = str(path)
        if key not in self._files:
            try:
                self._files[key] = Path(key).read_text(encoding="utf-8-sig", errors="replace").split("\n")
            except (OSError, ValueError):
                self._files[key] = None
            if len(self._files) > 64:  # pages are written module by module: keep a few
                self._files.pop(next(iter(self._files)))
        return self._files[key]


def decorator_deprecation(obj) -> str | None:
    """The message of a `@deprecated(...)` decorator ("" when it has none), else None."""
    for dec in getattr(obj, "decorators", None) or ():
        text = str(getattr(dec, "value", "") or "")
        callee = text.split("(", 1)[0].strip()
        if not _DECORATOR.match(callee):
            continue
        return _first_string(text) or ""
    return None


def body_deprecation(obj, sources: SourceCache) -> str | None:
    """The message of a deprecation warning raised by the body's top-level statements
    (for a class: by its `__init__`/`__new__`), else None."""
    if getattr(obj, "is_class", False) or getattr(getattr(obj, "kind", None), "value", "") == "class":
        for name in ("__init__", "__new__"):
            member = obj.members.get(name) if hasattr(obj, "members") else None
            if member is not None and not getattr(member, "is_alias", False):
                found = body_deprecation(member, sources)
                if found is not None:
                    return found
        return None
    lines = sources.lines(getattr(obj, "filepath", "") or "")
    start, end = getattr(obj, "lineno", None), getattr(obj, "endlineno", None)
    if not lines or not start or not end or end < start:
        return None
    snippet = "\n".join(lines[start - 1:end])
    if len(snippet) > MAX_SOURCE_CHARS or not _NAMES_DEPRECATION.search(snippet):
        return None
    tree = _parse(textwrap.dedent(snippet))
    if tree is None:
        return None
    func = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    return _warning_in(func.body) if func is not None else None


def module_deprecation(module, sources: SourceCache) -> str | None:
    """The message of a deprecation warning among a module's top-level statements."""
    lines = sources.lines(getattr(module, "filepath", "") or "")
    if not lines:
        return None
    text = "\n".join(lines)
    if len(text) > 4 * MAX_SOURCE_CHARS or not _NAMES_DEPRECATION.search(text):
        return None
    tree = _parse(text)
    return _warning_in(tree.body) if tree is not None else None


def docstring_says_deprecated(text: str) -> bool:
    """The summary opens with "Deprecated ..." or says "This X is deprecated"."""
    first = text.strip().split("\n\n", 1)[0]
    return bool(_SUMMARY.search(first))


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _warning_in(statements: list[ast.stmt]) -> str | None:
    for stmt in statements:
        call = stmt.value if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None
        if call is None:
            continue
        callee = _dotted(call.func)
        last = callee.rsplit(".", 1)[-1]
        if last == "warn":
            category = call.args[1] if len(call.args) > 1 else next(
                (k.value for k in call.keywords if k.arg == "category"), None)
            if category is not None and _NAMES_DEPRECATION.search(_dotted(category)):
                return _message(call)
            first = call.args[0] if call.args else None  # warn(FooDeprecationWarning("..."))
            if category is None and isinstance(first, ast.Call) and _NAMES_DEPRECATION.search(_dotted(first.func)):
                return _message(first)
        elif _NAMES_DEPRECATION.search(last) and "warn" in last.lower():
            return _message(call)
    return None


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    return ""


def _message(call: ast.Call) -> str:
    arg = call.args[0] if call.args else next(
        (k.value for k in call.keywords if k.arg in ("message", "msg", "reason")), None)
    return _literal_text(arg) if arg is not None else ""


def _literal_text(node: ast.AST) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return " ".join(node.value.split())[:300]
    if isinstance(node, ast.JoinedStr):  # an f-string: its literal parts, `{...}` for the rest
        parts = [v.value if isinstance(v, ast.Constant) else "{...}" for v in node.values]
        return " ".join("".join(str(p) for p in parts).split())[:300]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return _literal_text(node.left)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _literal_text(node.func.value)
    return ""


def _first_string(text: str) -> str:
    if len(text) > 4000:
        return ""
    tree = _parse(text)
    if tree is None or not tree.body or not isinstance(tree.body[0], ast.Expr):
        return ""
    call = tree.body[0].value
    if not isinstance(call, ast.Call):
        return ""
    strings = [_literal_text(a) for a in call.args[:3]]
    if len(strings) > 1 and _VERSION.match(strings[0]) and strings[1]:  # SQLAlchemy: ("1.4", "message")
        return f"since {strings[0]}: {strings[1]}"
    version = next((_literal_text(k.value) for k in call.keywords if k.arg in ("version", "since")), "")
    message = _message(call)
    if _VERSION.match(message) and not version:
        return f"since {message}"
    return f"since {version}: {message}" if version and message else message
