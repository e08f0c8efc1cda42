"""Docstrings a decorator supplies, read statically (no code of the package runs).

pandas documents most of its API through decorators: `@Appender(_merge_doc)` appends a
module-level string to the function's (empty) docstring, `@Appender(_shared_docs["pivot"])`
a string stored in a dict by another module, `@doc(NDFrame.fillna, klass="Series")`
copies another function's docstring and fills `{klass}`, `@Substitution(klass=...)`
fills `%(klass)s`. griffe reads none of it, so `DataFrame.merge`, `groupby` and `pivot`
had a signature and no text. Other libraries do the same (`add_start_docstrings("...")`,
`functools.wraps(f)`).

Rule: for a function or class without a docstring, the decorators are applied bottom-up;
each call's first positional argument that resolves to text adds that text (a string
literal; a name bound to a string literal; a documented function or class, only for a
decorator named for copying docs (`doc`, `copy_docstring`, `wraps`): SQLAlchemy's
`@_inspects(LambdaElement)` registers a function for a class, it does not document it; a
`dict["key"]` whose module assigns it a string literal; `dedent(...)`, `x % kwargs`),
and literal keyword arguments fill `{name}` and `%(name)s` placeholders. Texts shorter
than MIN_CHARS or MIN_WORDS (`@app.route("/x")`) are not documentation. Every literal is read with
`ast.literal_eval` after a size check; resolution is at most MAX_DEPTH steps deep.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

MIN_CHARS = 40
MIN_WORDS = 5  # a long route or pattern (`@app.route("/api/v1/users/<id>/settings")`) is no text
MAX_CHARS = 60_000  # one docstring's text; a module-level literal larger than this is skipped
MAX_DEPTH = 4
MAX_MODULE_BYTES = 2 * 1024 * 1024
_PLACEHOLDER_PCT = re.compile(r"%\((\w{1,64})\)s")
_PLACEHOLDER_BRACE = re.compile(r"\{(\w{1,64})\}")


class DictItems:
    """`NAME["key"] = "..."` assignments at a module's top level and in its classes' bodies
    (pandas fills `_shared_docs["pivot"]` inside `class DataFrame`), parsed once per file."""

    def __init__(self) -> None:
        self._files: dict[str, dict[tuple[str, str], str]] = {}

    def get(self, path: str, name: str, key: str) -> str | None:
        if path not in self._files:
            self._files[path] = _dict_items(path)
            if len(self._files) > 32:
                self._files.pop(next(iter(self._files)))
        return self._files[path].get((name, key))


def _dict_items(path: str) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    try:
        p = Path(path)
        if p.stat().st_size > MAX_MODULE_BYTES:
            return out
        tree = ast.parse(p.read_text(encoding="utf-8-sig", errors="replace"))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return out
    body = list(tree.body)
    body += [n for c in tree.body if isinstance(c, ast.ClassDef) for n in c.body]
    for node in body:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0]
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str) \
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            out[(target.value.id, target.slice.value)] = node.value.value[:MAX_CHARS]
    return out


def decorator_docstring(obj, items: DictItems) -> str:
    """The docstring `obj`'s decorators give it ("" when none does)."""
    decorators = list(getattr(obj, "decorators", None) or ())
    if not decorators:
        return ""
    fills: dict[str, str] = {}
    texts: list[str] = []
    for dec in reversed(decorators):  # the one nearest the `def` applies first
        value = getattr(dec, "value", None)
        args = getattr(value, "arguments", None)
        if not args:
            continue
        for arg in args:
            if type(arg).__name__ == "ExprKeyword":
                text = _literal_str(str(arg.value))
                if text is not None and len(text) <= 200:
                    fills.setdefault(str(arg.name), text)
        first = next((a for a in args if type(a).__name__ != "ExprKeyword"), None)
        if first is None:
            continue
        callee = str(getattr(value, "function", "")).rsplit(".", 1)[-1].casefold()
        text = _resolve(first, obj, items, MAX_DEPTH, copies="doc" in callee or callee == "wraps")
        if text and len(text.strip()) >= MIN_CHARS and len(text.split(None, MIN_WORDS)) >= MIN_WORDS:
            texts.append(textwrap.dedent(text).strip("\n"))
    if not texts:
        return ""
    doc = "\n\n".join(texts)[:MAX_CHARS]
    doc = _PLACEHOLDER_PCT.sub(lambda m: fills.get(m.group(1), m.group(0)), doc)
    return _PLACEHOLDER_BRACE.sub(lambda m: fills.get(m.group(1), m.group(0)), doc)


def _resolve(expr, scope, items: DictItems, depth: int, copies: bool = False) -> str | None:
    """The text an argument expression stands for, or None. `copies`: a function's or
    class's docstring counts (the decorator copies docs)."""
    if depth <= 0 or expr is None:
        return None
    kind = type(expr).__name__
    if isinstance(expr, str):
        return _literal_str(expr)
    if kind == "ExprName":
        return _text_of(_lookup(scope, [str(expr.name)]), items, depth - 1, copies)
    if kind == "ExprAttribute":
        parts = str(expr).split(".")
        return _text_of(_lookup(scope, parts), items, depth - 1, copies)
    if kind == "ExprSubscript":
        key = _literal_str(str(expr.slice))
        left = expr.left
        if key is None or type(left).__name__ != "ExprName":
            return None
        owner = _final(_lookup(scope, [str(left.name)]))
        # the item is assigned where the decorator is (pandas fills the dict it imports)
        # or where the dict is defined
        for mod in (getattr(scope, "module", None), getattr(owner, "module", None)):
            path = getattr(mod, "filepath", None)
            if path and not isinstance(path, list):
                found = items.get(str(path), str(left.name), key) or (
                    items.get(str(path), str(owner.name), key) if owner is not None else None)
                if found:
                    return found
        return None
    if kind == "ExprBinOp" and str(expr.operator).strip() == "%":
        text = _resolve(expr.left, scope, items, depth - 1)
        if text is None:
            return None
        table = _dict_literal(_final(_lookup(scope, [str(expr.right)])) if type(expr.right).__name__ == "ExprName"
                              else None)
        return _PLACEHOLDER_PCT.sub(lambda m: table.get(m.group(1), m.group(0)), text) if table else text
    if kind == "ExprCall" and str(expr.function).split(".")[-1] == "dedent" and expr.arguments:
        inner = _resolve(expr.arguments[0], scope, items, depth - 1)
        return textwrap.dedent(inner) if inner else None
    return None


def _lookup(scope, parts: list[str]):
    """`parts[0]` in the nearest enclosing scope that has it, then its members."""
    node = scope
    found = None
    while node is not None and found is None:
        members = getattr(node, "members", None) or {}
        if parts[0] in members and members[parts[0]] is not scope:
            found = members[parts[0]]
        node = getattr(node, "parent", None)
    for part in parts[1:]:
        found = _final(found)
        members = getattr(found, "members", None) if found is not None else None
        if not members or part not in members:
            return None
        found = members[part]
    return found


def _final(obj):
    """An alias's target when griffe can resolve it (the module may not be loaded)."""
    if obj is not None and getattr(obj, "is_alias", False):
        try:
            return obj.final_target
        except Exception:  # noqa: BLE001 - griffe's alias errors vary by release
            return None
    return obj


def _text_of(obj, items: DictItems, depth: int, copies: bool = False) -> str | None:
    obj = _final(obj)
    if obj is None:
        return None
    ds = getattr(obj, "docstring", None)
    kind = getattr(getattr(obj, "kind", None), "value", "")
    if kind in ("function", "class"):
        return ds.value if copies and ds is not None and ds.value.strip() else None
    if kind == "attribute":
        value = getattr(obj, "value", None)
        if isinstance(value, str):
            return _literal_str(value)
        if value is not None and depth > 0:
            return _resolve(value, getattr(obj, "parent", None), items, depth - 1)
    return None


def _literal_str(source: str) -> str | None:
    """The value of a string literal's source text, else None (never evaluates code)."""
    s = source.strip()
    if not s or len(s) > MAX_CHARS * 2 or s[-1] not in "'\"":
        return None
    head = s.lstrip("rRuUbB")
    if not head or head[0] not in "'\"" or len(s) - len(head) > 2 or "f" in s[:len(s) - len(head)].lower():
        return None
    try:
        value = ast.literal_eval(s)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, str) else None


def _dict_literal(obj) -> dict[str, str] | None:
    """A module attribute bound to a dict literal of strings (`_shared_doc_kwargs`)."""
    if obj is None or getattr(getattr(obj, "kind", None), "value", "") != "attribute":
        return None
    value = getattr(obj, "value", None)
    src = str(value) if value is not None else ""
    if not src.startswith("{") or len(src) > 20_000:
        return None
    try:
        table = ast.literal_eval(src)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(table, dict):
        return None
    return {str(k): v for k, v in table.items() if isinstance(k, str) and isinstance(v, str)}
