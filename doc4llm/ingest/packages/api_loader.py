"""griffe's loader, made to lose one module at most and to keep the real `__all__`.

Two things griffe does that an API reference of an untrusted archive cannot accept:

- **One module it cannot read** (Python 2 syntax, a visitor error on odd code, nesting
  deep enough for a RecursionError) raises out of `load()` when it is the package's
  `__init__`, and with some errors from any module: the whole package's API was lost
  (issue 33 item 21). Here a module that fails is replaced by an empty one and recorded;
  its submodules and every other module load as usual. The caller says so once.
- **Stubs beside the source** (`numeric.py` + `numeric.pyi`) are merged, and the stub's
  `__all__` replaces the module's: numpy's stubs declare `__all__: list[str]` with no
  value, so `numpy.core.numeric` exported nothing and `numpy.isclose` had no entry. Here
  the source's exports are kept and the stub's names are added (stubs complement, never
  shrink).

Both hook griffe's module visit (`GriffeLoader._visit_module`, present since griffe 0.x);
if a griffe release drops it, loading still works without these two guarantees, and the
tests that cover them fail.

A third, on time: griffe's dataclasses extension asks every class for its MRO while the
package loads, and `Class._mro` recomputes each base's MRO without memory, a C3 merge
per level: a chain of 200 classes took 4 s, 2,000 more than 100 s (cubic). While
`_post_load` runs, `_bounded_mro` remembers each class's MRO (or its failure), and an MRO
longer than `MAX_INHERITANCE_DEPTH` classes, or found deeper than that, is a ValueError
(which the extension reads as "no MRO"), so no C3 merge runs over a longer list.

And a fourth: griffe's visitor looks for the docstring after each assignment with
`ast_next`, which walks the parent's children from the first: quadratic in a module's
statements (`__all__ += [...]` x 8,000: 13 s; pywin32's win32con has ~6,000
assignments). `_linear_ast_next` gives it each body's next-sibling links, built once.
"""

from __future__ import annotations

import ast
import importlib
import re
import threading
from contextlib import contextmanager
from pathlib import Path

import griffe


class TolerantLoader(griffe.GriffeLoader):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.failed: list[tuple[str, str]] = []  # (module, reason)
        self._source_exports: dict[int, tuple[object, list | None]] = {}

    def _visit_module(self, module_name: str, module_path: Path, parent=None):
        name = f"{parent.path}.{module_name}" if parent is not None else module_name
        try:
            with _linear_ast_next():
                module = super()._visit_module(module_name, module_path, parent)
        except Exception as exc:  # noqa: BLE001 - any failure loses this module only
            self.failed.append((name, _reason(exc)))
            module = griffe.Module(module_name, filepath=module_path, parent=parent,
                                   lines_collection=self.lines_collection,
                                   modules_collection=self.modules_collection)
        counterpart = (parent.members.get(module_name) if parent is not None
                       else self.modules_collection.members.get(module_name))
        if counterpart is not None and not getattr(counterpart, "is_alias", False) \
                and getattr(counterpart, "is_module", False):
            pair = (counterpart, module) if Path(module_path).suffix == ".pyi" else (module, counterpart)
            if Path(str(pair[0].filepath)).suffix == ".py" and Path(str(pair[1].filepath)).suffix == ".pyi":
                _stub_wins_over_compiled(*pair)
        if Path(module_path).suffix == ".py":
            exports = module.exports
            built = _all_from_source(Path(module_path))
            self._source_exports[id(module)] = (module, built if built is not None else
                                                (list(exports) if exports is not None else None))
        return module

    def _load_package(self, package, *, submodules: bool = True):
        try:
            return super()._load_package(package, submodules=submodules)
        except (griffe.AliasResolutionError, griffe.CyclicAliasError) as exc:
            # merging the top-level stub failed on a name neither side defines: keep the
            # source module as loaded (before, the whole package's API was lost)
            module = self.modules_collection.members.get(package.name)
            if module is None:
                raise
            self.failed.append((f"{package.name} (stub)", _reason(exc)))
            return module

    def _post_load(self, module, obj_path: str):
        # before griffe expands exports and wildcards (`from .core import *` follows `__all__`)
        self._restore(expand=False)
        with _bounded_mro():
            return super()._post_load(module, obj_path)

    def restore_source_exports(self, top) -> None:
        """After loading `top`: each module's exports are its source's `__all__` plus
        its stub's names (when the source has `__all__`), then expanded again. Done by
        `_post_load` already when griffe calls it; this is the fallback."""
        self._restore(expand=True, top=top)

    def _restore(self, expand: bool, top=None) -> None:
        changed = False
        resolving: dict[int, list | None] = {}
        for key, (module, source) in list(self._source_exports.items()):
            if source is not None and any(isinstance(e, _Ref) for e in source):
                self._source_exports[key] = (module, self._resolve_refs(module, source, resolving))
        for module, source in self._source_exports.values():
            current = module.exports
            if source is None:
                if current is not None and Path(str(module.filepath)).suffix == ".py":
                    module.exports = None  # the source says "every public name": stubs do not narrow it
                    changed = True
                continue
            merged = list(source)
            seen = {_export_name(e) for e in merged}
            stub = Path(str(module.filepath)).with_suffix(".pyi")
            for e in (current or ()) if stub.is_file() else ():  # only a stub's names complement
                if isinstance(e, str) and _export_name(e) not in seen:
                    merged.append(e)
                    seen.add(_export_name(e))
            if current is None or [_export_name(e) for e in current] != [_export_name(e) for e in merged]:
                module.exports = merged
                changed = True
        if changed and expand and top is not None:  # again, with the real exports
            for step in (self.expand_exports, lambda m: self.expand_wildcards(m, external=False)):
                try:
                    step(top)
                except Exception:  # noqa: BLE001 - what griffe cannot expand is left as it was
                    pass

    def _resolve_refs(self, module, source: list, resolving: dict[int, list | None]) -> list:
        """`__all__ += core.__all__`: the names of `core`'s own (resolved) `__all__`."""
        key = id(module)
        if key in resolving:
            return resolving[key] or []  # a cycle, or already done
        resolving[key] = None
        out: list = []
        have: set = set()  # `entry not in out` on the list was quadratic in a long `__all__`
        for entry in source:
            if not isinstance(entry, _Ref):
                if _hashable(entry) not in have:
                    have.add(_hashable(entry))
                    out.append(entry)
                continue
            if entry.remove:
                if entry.name in have:
                    have.discard(entry.name)
                    out.remove(entry.name)
                continue
            target = _member_module(module, entry.name)
            if target is None:
                continue
            known = self._source_exports.get(id(target))
            names = known[1] if known is not None else target.exports
            if names and any(isinstance(e, _Ref) for e in names):
                names = self._resolve_refs(target, names, resolving)
            for name in names or ():
                if isinstance(name, str) and name not in have:
                    have.add(name)
                    out.append(name)
        resolving[key] = out
        return out


def _stub_wins_over_compiled(source, stub) -> None:
    """Names the source module imports from a module that has no Python source (a compiled
    extension: msgspec's `from ._core import convert, Struct`) are defined by the stub
    beside it: the stub's definition replaces the import. Otherwise the name stayed an
    alias nothing resolves (no entry), and griffe's merge of the stub's overloads raised
    on it, which lost msgspec's whole API."""
    base = _search_base(source)
    if base is None:
        return
    for name, member in list(source.members.items()):
        if not getattr(member, "is_alias", False):
            continue
        theirs = stub.members.get(name)
        overloads = (getattr(stub, "overloads", None) or {}).get(name)
        if (theirs is None and not overloads) or getattr(theirs, "is_alias", False):
            continue
        target = str(getattr(member, "target_path", "") or "").split(".")
        if len(target) > 1 and not _has_source(base, target[:-1]):
            del source.members[name]
            if theirs is None:  # a stub function that is only `@overload`s: the first stands for it
                source.set_member(name, overloads[0])


def _search_base(module) -> Path | None:
    """The folder the module's package path starts from (`stage` for `stage/pkg/json.py`)."""
    try:
        path = Path(str(module.filepath))
    except Exception:  # noqa: BLE001 - a namespace package has several paths
        return None
    up = len(module.path.split(".")) - (0 if path.stem == "__init__" else 1)
    folder = path.parent
    for _ in range(up):
        folder = folder.parent
    return folder


def _has_source(base: Path, parts: list[str]) -> bool:
    here = base.joinpath(*parts)
    return any(p.is_file() for p in (here.with_suffix(".py"), here.with_suffix(".pyi"),
                                     here / "__init__.py", here / "__init__.pyi"))


def _griffe_visitor():
    """griffe's visitor module (its path moved between 1.x releases); None when not found."""
    for name in ("griffe._internal.agents.visitor", "_griffe.agents.visitor"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if hasattr(module, "ast_next") and hasattr(module, "ast_children"):
            return module
    return None


MAX_INHERITANCE_DEPTH = 64  # real class hierarchies are < 20 deep

# `sync` builds packages in threads: the two griffe functions are replaced once, for good,
# and the replacements use their bounded version only in a thread inside one of the
# blocks below (its state is thread-local); anywhere else they call griffe's own.
_state = threading.local()
_install_lock = threading.Lock()
_installed = False


def _install() -> None:
    global _installed
    with _install_lock:
        if _installed:
            return
        _installed = True
        visitor = _griffe_visitor()
        if visitor is not None:
            visitor.ast_next = _make_ast_next(visitor.ast_next, visitor.ast_children)
        original_mro = getattr(griffe.Class, "_mro", None)
        if original_mro is not None:
            griffe.Class._mro = _make_mro(original_mro)


def _make_ast_next(original, children_of):
    def ast_next(node):
        links = getattr(_state, "links", None)
        if links is None:
            return original(node)
        parent = node.parent
        known = links.get(id(parent))
        if known is None:
            children = list(children_of(parent))
            known = (parent, {id(a): b for a, b in zip(children, children[1:], strict=False)})
            links[id(parent)] = known
        following = known[1].get(id(node))
        if following is None:
            raise griffe.LastNodeError("there is no next node")
        return following

    return ast_next


def _make_mro(original):
    def _mro(self, seen: tuple[str, ...] = ()):
        memo = getattr(_state, "memo", None)
        if memo is None:
            return original(self, seen)
        got = memo.get(id(self))
        if got is None:
            if len(seen) >= MAX_INHERITANCE_DEPTH:
                got = ValueError(f"inheritance deeper than {MAX_INHERITANCE_DEPTH} levels")
            else:
                try:
                    got = original(self, seen)  # its bases' MROs come from `memo`
                except (ValueError, RecursionError) as exc:
                    got = ValueError(str(exc))
                if isinstance(got, list) and len(got) > MAX_INHERITANCE_DEPTH:  # so no merge is longer
                    got = ValueError(f"inheritance deeper than {MAX_INHERITANCE_DEPTH} levels")
            memo[id(self)] = got
        if isinstance(got, ValueError):
            raise got
        return list(got)

    return _mro


@contextmanager
def _linear_ast_next():
    """The visitor's `ast_next` in O(1) a call in this thread while the block runs (module
    docstring): the same answer (the next child of the node's parent, LastNodeError after
    the last one), from links built once per parent. Parents stay referenced, so no id is
    reused."""
    _install()
    previous = getattr(_state, "links", None)
    _state.links = {}
    try:
        yield
    finally:
        _state.links = previous


@contextmanager
def _bounded_mro():
    """griffe.Class._mro memoized and depth-bounded in this thread while the block runs
    (module docstring). A success can be remembered safely: a base whose MRO was found has
    no cycle through the class asking. A failure is remembered too, so a deep chain fails
    once per class. Classes stay alive while the block runs, so no id is reused."""
    _install()
    previous = getattr(_state, "memo", None)
    _state.memo = {}
    try:
        yield
    finally:
        _state.memo = previous


def _hashable(entry: object) -> object:
    """A set key for an `__all__` entry (a name, or a griffe object compared by identity)."""
    try:
        hash(entry)
        return entry
    except TypeError:
        return id(entry)


class _Ref:
    """`name.__all__` in an `__all__` expression: resolved once every module is loaded."""

    __slots__ = ("name", "remove")

    def __init__(self, name: str, remove: bool = False) -> None:
        self.name = name
        self.remove = remove  # `__all__.remove("min")` after `+= core.__all__`


def _member_module(module, name: str):
    try:
        member = module.members.get(name)
        if member is None:
            return None
        if getattr(member, "is_alias", False):
            member = member.final_target
        return member if getattr(member, "is_module", False) else None
    except Exception:  # noqa: BLE001 - outside the loaded packages, or cyclic
        return None


_BUILDS_ALL = re.compile(r"__all__\s*(?:\+=|\.(?:extend|append|remove)\s*\()")
MAX_ALL_SOURCE = 2_000_000


def _all_from_source(path: Path) -> list | None:
    """`__all__` as the module's top-level statements build it, read with `ast` (never
    run): `=`, `+=`, `.extend()`, `.append()`, `.remove()` of string lists and of other
    modules' `__all__`, also inside top-level `if`/`try` blocks (numpy builds its
    `__all__` so, and griffe reads the first assignment only). None when the module
    does not build its `__all__` in steps (griffe's reading stands)."""
    try:
        if path.stat().st_size > MAX_ALL_SOURCE:
            return None
        text = path.read_text(encoding="utf-8-sig", errors="replace")
    except OSError:
        return None
    if not _BUILDS_ALL.search(text):
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: list | None = None
    stack = [iter(tree.body)]
    while stack:
        stmt = next(stack[-1], None)
        if stmt is None:
            stack.pop()
            continue
        if isinstance(stmt, ast.If):
            stack.append(iter(stmt.body + stmt.orelse))
        elif isinstance(stmt, ast.Try):
            stack.append(iter(stmt.body + stmt.orelse + stmt.finalbody))
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and stmt.value is not None:
                value = _names_of(stmt.value)
                if value is not None:
                    names = value
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == "__all__":
            value = _names_of(stmt.value)
            if value is not None and names is not None:
                names.extend(value)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and names is not None:
            func = stmt.value.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "__all__" \
                    and len(stmt.value.args) == 1:
                arg = stmt.value.args[0]
                if func.attr == "extend":
                    names.extend(_names_of(arg) or [])
                elif func.attr == "append" and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    names.append(arg.value)
                elif func.attr == "remove" and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    if arg.value in names:
                        names.remove(arg.value)
                    elif any(isinstance(e, _Ref) for e in names):
                        names.append(_Ref(arg.value, remove=True))  # a name from another `__all__`
    return names


def _names_of(node: ast.AST) -> list | None:
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if isinstance(node, ast.Attribute) and node.attr == "__all__" and isinstance(node.value, ast.Name):
        return [_Ref(node.value.id)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _names_of(node.left), _names_of(node.right)
        return None if left is None or right is None else left + right
    return None


def _export_name(export) -> str:
    return export if isinstance(export, str) else f"expr:{export}"


def _reason(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError) or isinstance(exc.__cause__, SyntaxError):
        return "syntax error"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return type(exc).__name__
