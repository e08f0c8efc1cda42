"""An API reference from Python source, by static analysis (griffe): nothing is imported.

A page per public module (`click.testing (API)`), a section per public name
(`## CliRunner`), methods as `### CliRunner.invoke`, each with its signature in a code
block and its docstring as markdown (docstring_md.py). A package's `__init__` that only
re-exports gets one page that maps each name to the module that defines it, so
`click.option` leads to `click.decorators`.

What is read: the distribution's own packages without tests, vendored projects,
benchmarks, examples, locale data and migrations (api_scope.py). Deprecated members say
so on their first line (`**Deprecated:** ...`, api_deprecation.py) and legacy namespaces
(`pydantic.v1`) in their page's first lines. When there are more modules than the cap,
the most important are kept: public, re-exported by the top package, shallow.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
from pathlib import Path

from doc4llm.ingest.packages.api_cython import is_cython_stub
from doc4llm.ingest.packages.api_deprecation import (
    SourceCache,
    body_deprecation,
    decorator_deprecation,
    docstring_says_deprecated,
    module_deprecation,
)
from doc4llm.ingest.packages.api_docfrom import decorator_docstring
from doc4llm.ingest.packages.api_scope import legacy_note, python_scope, stage_packages
from doc4llm.ingest.packages.docstring_md import docstring_markdown, inline_markdown
from doc4llm.ingest.packages.pages import API, DocPage

# Django 5.0 has 660 modules once locale data and migrations are left out; the cap bounds
# a set's size for packages with thousands of generated modules, and falls on the deepest.
MAX_MODULES = 600
MAX_DEFAULT = 80
MAX_SUMMARY = 160
MAX_BASES = 20  # private bases walked for one class
DEPRECATED_MARK = "**Deprecated"  # the first line of a deprecated member's section (search reads it)


def find_top_packages(root: Path, dist_name: str) -> list[tuple[str, Path]]:
    """(import name, search path) of the distribution's top-level packages."""
    return python_scope(root, dist_name).tops


def python_api_pages(root: Path, dist_name: str, warnings: list[str], version: str | None = None) -> list[DocPage]:
    scope = python_scope(root, dist_name)
    if not scope.tops:
        return []
    stage = _stage_dir(root)
    try:
        stage_packages(scope, root, stage)
        # one griffe load at a time: `sync` builds packages in threads, griffe's loader was
        # not written for that (a parallel test build once lost a module page, undiagnosed),
        # and the work is CPU-bound Python, which threads do not run in parallel anyway
        with _GRIFFE_LOCK:
            logger = logging.getLogger("griffe")
            level = logger.level
            logger.setLevel(logging.CRITICAL)  # griffe warns about every unresolved alias
            try:
                return _pages(scope.tops, root, stage, version, warnings)
            finally:
                logger.setLevel(level)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


_GRIFFE_LOCK = threading.Lock()


def _stage_dir(root: Path) -> Path:
    try:  # beside the extracted archive: same file system, so files are hard-linked
        return Path(tempfile.mkdtemp(prefix=".doc4llm-api-", dir=root.resolve().parent))
    except OSError:
        return Path(tempfile.mkdtemp(prefix="doc4llm-api-"))


def _pages(tops: list[tuple[str, Path]], root: Path, stage: Path, version: str | None,
           warnings: list[str]) -> list[DocPage]:
    from doc4llm.ingest.packages.api_loader import TolerantLoader

    search = [stage / base.resolve().relative_to(root.resolve()) for _, base in tops]
    # one loader for all: `pytest` re-exports from `_pytest`, whose names must resolve
    loader = TolerantLoader(search_paths=sorted({str(p) for p in search}), allow_inspection=False,
                            store_source=False)
    loaded = []
    for name, _ in tops:
        try:
            module = loader.load(name, find_stubs_package=False)
        except Exception as exc:  # noqa: BLE001 - not a package griffe can find: keep the rest
            warnings.append(f"API of {name}: griffe could not read it ({type(exc).__name__})")
            continue
        loader.restore_source_exports(module)
        loaded.append((name, module))
    if loader.failed:
        shown = ", ".join(f"{m} ({why})" for m, why in loader.failed[:5])
        more = f" and {len(loader.failed) - 5} more" if len(loader.failed) > 5 else ""
        warnings.append(f"API: {len(loader.failed)} module(s) skipped, griffe could not read them: {shown}{more}")
    sources = SourceCache()
    candidates = []
    for name, module in loaded:
        if name.startswith("_"):  # private (`_pytest`): loaded only to resolve re-exports
            continue
        referenced = _referenced_modules(module)
        for mod in _walk_modules(module):
            note = legacy_note(mod.path, name, version)
            candidates.append((_importance(mod, referenced, note), mod, note))
    ranked = sorted(candidates, key=lambda c: c[0])
    kept = ranked[:MAX_MODULES]
    if len(candidates) > MAX_MODULES:
        # past the cap the reference is partial anyway: modules without a single docstring
        # the top package does not re-export (plotly's generated validators) are noise
        bare = [c for c in kept if c[0][2] and c[0][1]]
        kept = [c for c in kept if not (c[0][2] and c[0][1])]
        cut = ranked[MAX_MODULES:]
        also = f"; {len(bare)} more without a single docstring left out too" if bare else ""
        warnings.append(f"API reference: {len(kept)} of {len(candidates)} modules documented (the cap is "
                        f"{MAX_MODULES}{also}); left out the least central, e.g. "
                        f"{', '.join(c[1].path for c in (cut or bare)[:3])}")
    order = {id(c[1]): i for i, c in enumerate(candidates)}
    pages: list[DocPage] = []
    failed: list[str] = []
    for _, mod, note in sorted(kept, key=lambda c: order[id(c[1])]):  # in the package's own order
        try:
            page = _module_page(mod, stage, note, sources)
        except Exception:  # noqa: BLE001 - one module that cannot be written loses that page only
            failed.append(mod.path)
            continue
        if page:
            pages.append(page)
    if failed:
        warnings.append(f"API: {len(failed)} module page(s) not written (griffe data unreadable): "
                        + ", ".join(failed[:5]))
    return pages


def _walk_modules(module):
    """The module and its public submodules, depth first, without recursion."""
    stack = [module]
    while stack:
        mod = stack.pop()
        yield mod
        subs = []
        for name, sub in sorted(mod.modules.items()):
            if name.startswith("_") or getattr(sub, "is_alias", False):
                continue
            subs.append(sub)
        stack.extend(reversed(subs))


def _referenced_modules(top) -> set[str]:
    """Modules the top package re-exports names from (and their parents)."""
    out: set[str] = set()
    for member in list(top.members.values()):
        if not getattr(member, "is_alias", False):
            continue
        target = str(getattr(member, "target_path", "") or "")
        parts = target.split(".")
        for i in range(2, len(parts) + 1):
            out.add(".".join(parts[:i]))
    return out


def _importance(mod, referenced: set[str], legacy: str | None) -> tuple:
    """Sort key, most important first: not legacy, re-exported by the top package,
    documented, shallow, then by name."""
    path = mod.path
    return (legacy is not None, path not in referenced and "." in path, not _documented(mod),
            path.count("."), path)


def _documented(mod) -> bool:
    """The module, or something it defines (a class's members included), has a docstring.
    plotly 5.23's 860 `plotly.validators.*` modules are generated code without one: under
    the module cap they took the place of documented `plotly.graph_objs.*` pages."""
    if getattr(mod, "docstring", None) is not None:
        return True
    top = mod.path.split(".", 1)[0] + "."
    for member in list(mod.members.values())[:200]:
        if getattr(member, "is_alias", False):  # a re-export from the package itself (not `sys`)
            if not str(getattr(member, "target_path", "")).startswith(top):
                continue
            try:
                member = member.final_target
            except Exception:  # noqa: BLE001 - griffe raises several kinds for unresolvable aliases
                continue
        if member.docstring is not None:
            return True
        if member.kind.value == "class" and any(
                not getattr(m, "is_alias", False) and m.docstring is not None for m in list(member.members.values())):
            return True
    return False


def _exports(module) -> set[str] | None:
    exports = getattr(module, "exports", None)
    if exports is None:
        return None
    return {e if isinstance(e, str) else getattr(e, "name", str(e)) for e in exports}


def _public_members(module):
    """`__all__` when the module has one; else public names it defines, and in a package's
    `__init__` also the names it re-exports from inside the package."""
    exports = _exports(module)
    top = module.path.split(".", 1)[0] + "."
    is_init = str(getattr(module, "filepath", "")).endswith(("__init__.py", "__init__.pyi"))
    for name, member in list(module.members.items()):
        if exports is not None:
            if name in exports:
                yield name, member
        elif name.startswith("_"):
            continue
        elif member.is_alias:
            if is_init and str(getattr(member, "target_path", "")).startswith(top):
                yield name, member
        elif member.kind.value != "module":
            yield name, member


def _module_page(module, stage: Path, legacy: str | None, sources: SourceCache) -> DocPage | None:
    parts: list[str] = []
    if legacy:
        parts.append(f"> **{legacy.split(':', 1)[0]}:**{legacy.split(':', 1)[1]}")
    deprecated = module_deprecation(module, sources)
    if deprecated is not None:
        parts.append(_deprecated_line(deprecated))
    doc, _ = _docstring(module)
    if doc:
        parts.append(doc)
    reexports: list[str] = []
    for name, member in _public_members(module):
        if member.is_alias:
            target = getattr(member, "target_path", "") or ""
            hidden = _private_target(member)
            if hidden is not None:  # defined in a private module (httpx._client): document it here
                section = _member_section(name, hidden, 2, sources)
                if section:
                    parts.append(section)
                    continue
            where = f": defined in `{target.rsplit('.', 1)[0]}`" if "." in target else ""
            summary = _alias_summary(member)
            reexports.append(f"- `{name}`{where}" + (f". {summary}" if summary else ""))
            continue
        section = _member_section(name, member, 2, sources)
        if section:
            parts.append(section)
    if reexports:
        parts.append("## Names exported here\n\n" + "\n".join(reexports))
    if not parts or (legacy and len(parts) == 1):
        return None
    try:
        rel = Path(module.filepath).resolve().relative_to(stage.resolve()).as_posix()
    except (ValueError, TypeError, AttributeError):
        rel = module.path
    if rel.endswith(".py") and is_cython_stub(Path(module.filepath)):
        rel = rel[:-3] + ".pyx"  # the page's source is the Cython module the stub was read from
    return DocPage(f"{module.path} (API)", "\n\n".join(parts), rel, f"api:{module.path}", API)


def _private_target(alias):
    """The object an exported alias points to when it lives in a private module of the
    package (no page of its own), resolved statically; None otherwise."""
    path = str(getattr(alias, "target_path", "") or "")
    if not any(part.startswith("_") and not part.startswith("__") for part in path.split(".")[:-1]):
        return None
    try:
        target = alias.final_target
    except Exception:  # noqa: BLE001 - unresolvable (outside the package): listed instead
        return None
    return None if getattr(target, "is_alias", False) else target


def _alias_summary(alias) -> str:
    """The first sentence of a re-exported name's docstring, when it resolves."""
    try:
        target = alias.final_target
        ds = getattr(target, "docstring", None)
    except Exception:  # noqa: BLE001 - outside the package or cyclic
        return ""
    if ds is None or not ds.value.strip():
        return ""
    first = " ".join(ds.value.strip().split("\n\n", 1)[0].split())
    sentence = first.split(". ", 1)[0].rstrip(".")
    if sentence.startswith(("..", ":")):
        return ""
    return inline_markdown((sentence[:MAX_SUMMARY] + "...") if len(sentence) > MAX_SUMMARY else sentence + ".")


def _deprecated_line(message: str) -> str:
    message = inline_markdown(" ".join(message.split()))
    return f"{DEPRECATED_MARK}:** {message}" if message else f"{DEPRECATED_MARK}.**"


def _deprecation(obj, doc_deprecations: list[str], raw_doc: str, sources: SourceCache) -> str | None:
    """Why `obj` is deprecated ("" when nothing says more than that), else None."""
    found = decorator_deprecation(obj)
    if found is None and getattr(obj, "kind", None) is not None and obj.kind.value in ("function", "class"):
        found = body_deprecation(obj, sources)
    if found is None and doc_deprecations:
        found = doc_deprecations[0]
    if found is None and raw_doc and docstring_says_deprecated(raw_doc):
        found = ""
    return found


def _member_section(name: str, obj, level: int, sources: SourceCache, owner: str = "") -> str | None:
    kind = obj.kind.value
    title = f"{owner}.{name}" if owner else name
    head = "#" * level + " " + title
    doc, doc_deprecations = _docstring(obj, sources)
    raw = obj.docstring.value if getattr(obj, "docstring", None) is not None else ""
    if kind in ("function", "class"):
        deprecated = _deprecation(obj, doc_deprecations, raw, sources)
    else:
        deprecated = doc_deprecations[0] if doc_deprecations else None
    mark = _deprecated_line(deprecated) if deprecated is not None else ""
    if kind == "function":
        sig = _function_signature(name, obj)
        return "\n\n".join(x for x in (head, mark, f"```python\n{sig}\n```", doc) if x)
    if kind == "class":
        bases = ", ".join(str(b) for b in obj.bases)
        init = obj.members.get("__init__")
        params = _params(init, drop_self=True) if init is not None and init.kind.value == "function" else ""
        sig = f"class {name}({bases})" if bases else f"class {name}"
        if params:
            sig += f"\n    # {name}({params})"
        out = [x for x in (head, mark, f"```python\n{sig}\n```", doc) if x]
        attrs = []
        inherited = _from_private_bases(obj)
        for mname, member in list(obj.members.items()) + inherited:
            if mname.startswith("_") or member.is_alias:
                continue
            if member.kind.value == "attribute":
                ann = f": {member.annotation}" if member.annotation is not None else ""
                mdoc = member.docstring.value if member.docstring is not None else ""
                summary = _one_line(mdoc)
                attrs.append(f"- `{mname}{ann}`" + (f": {summary}" if summary else ""))
        if attrs:
            out.append("Attributes:\n\n" + "\n".join(attrs))
        if level < 4:
            for mname, member in list(obj.members.items()) + inherited:
                if mname.startswith("_") or member.is_alias or member.kind.value not in ("function", "class"):
                    continue
                sub = _member_section(mname, member, level + 1, sources, owner=title)
                if sub:
                    out.append(sub)
        return "\n\n".join(out)
    if kind == "attribute":
        if not doc and obj.value is None:
            return None
        ann = f": {obj.annotation}" if obj.annotation is not None else ""
        value = str(obj.value) if obj.value is not None else ""
        value = value if len(value) <= MAX_DEFAULT else value[:MAX_DEFAULT] + "..."
        code = f"{name}{ann}" + (f" = {value}" if value else "")
        out = [x for x in (head, mark, f"```python\n{code}\n```", doc) if x]
        cls = _private_class_of_instance(obj) if level < 4 else None
        if cls is not None:
            out.extend(_instance_sections(title, cls, level, sources))
        return "\n\n".join(out)
    return None


def _from_private_bases(cls) -> list:
    """Members a class inherits from private bases (`_Name`: no entry of their own shows
    them): lxml's `ElementBase(_Element)` gets `find`, `xpath`, `iter`...; pyarrow's
    `Table(_Tabular)` gets `select`, `to_pydict`... A public base stops the walk: its own
    entry lists what it holds and inherits (matplotlib's `GeoAxes(Axes)` does not repeat
    `Axes`' 200 methods from `_AxesBase`)."""
    out: list = []
    seen_names = set(cls.members)
    seen_classes = {id(cls)}
    stack = list(reversed(_bases_of(cls)))
    while stack:
        base = stack.pop()
        if id(base) in seen_classes or not base.name.startswith("_") or len(seen_classes) > MAX_BASES:
            continue
        seen_classes.add(id(base))
        for name, member in list(base.members.items()):
            if name not in seen_names:
                seen_names.add(name)
                out.append((name, member))
        stack.extend(reversed(_bases_of(base)))
    return out


def _bases_of(cls) -> list:
    try:
        return [b for b in cls.resolved_bases if getattr(getattr(b, "kind", None), "value", "") == "class"]
    except Exception:  # noqa: BLE001 - bases griffe cannot resolve statically
        return []


def _private_class_of_instance(attr):
    """The class a public attribute is an instance of, when that class has no page of its
    own (private name or module): loguru's `logger = _Logger(...)`, whose class
    `loguru._logger.Logger` holds the whole API (`add`, `remove`, `bind`...). Read from
    the assignment (`name = Class(...)`), statically; None otherwise."""
    func = getattr(attr.value, "function", None)
    path = str(getattr(func, "canonical_path", "") or "")
    if not path or not any(p.startswith("_") and not p.startswith("__") for p in path.split(".")):
        return None
    try:
        target = attr.modules_collection.get_member(path)
        if getattr(target, "is_alias", False):
            target = target.final_target
    except Exception:  # noqa: BLE001 - outside the loaded packages, or cyclic
        return None
    return target if getattr(getattr(target, "kind", None), "value", "") == "class" else None


def _instance_sections(title: str, cls, level: int, sources: SourceCache) -> list[str]:
    """The instance's class docstring and its public methods as `title.method` sections."""
    out = [f"*An instance of `{cls.name}` (`{cls.path}`), documented here: the class has no page of its own.*"]
    doc, _ = _docstring(cls, sources)
    if doc:
        out.append(doc)
    for mname, member in list(cls.members.items()):
        if mname.startswith("_") or member.is_alias or member.kind.value not in ("function", "class"):
            continue
        sub = _member_section(mname, member, level + 1, sources, owner=title)
        if sub:
            out.append(sub)
    return out


def _one_line(doc: str) -> str:
    text = inline_markdown(" ".join(doc.split()))  # before the cut: a role cut in two stays a role
    return text[:300] + ("..." if len(text) > 300 else "")


def _params(func, drop_self: bool = False) -> str:
    out: list[str] = []
    star_done = slash_pending = False
    for i, p in enumerate(func.parameters):
        if drop_self and i == 0 and p.name in ("self", "cls"):
            continue
        kind = p.kind.value
        if kind == "positional-only":
            slash_pending = True
        elif slash_pending:
            out.append("/")
            slash_pending = False
        text = p.name
        if kind == "variadic positional":
            text, star_done = "*" + text, True
        elif kind == "variadic keyword":
            text = "**" + text
        elif kind == "keyword-only" and not star_done:
            out.append("*")
            star_done = True
        if p.annotation is not None:
            text += f": {p.annotation}"
        if p.default is not None and kind not in ("variadic positional", "variadic keyword"):
            default = str(p.default)
            if len(default) > MAX_DEFAULT:
                default = default[:MAX_DEFAULT] + "..."
            text += f" = {default}" if p.annotation is not None else f"={default}"
        out.append(text)
    if slash_pending:
        out.append("/")
    return ", ".join(out)


def _function_signature(name: str, func) -> str:
    prefix = "async def" if "async" in {str(label) for label in getattr(func, "labels", ())} else "def"
    ret = f" -> {func.returns}" if func.returns is not None else ""
    decorators = [f"@{d.value}" for d in getattr(func, "decorators", []) if str(d.value) in
                  ("property", "classmethod", "staticmethod", "t.overload", "typing.overload", "overload")]
    return "\n".join(decorators + [f"{prefix} {name}({_params(func)}){ret}"])


def _docstring(obj, sources: SourceCache | None = None) -> tuple[str, list[str]]:
    """The docstring as markdown (docstring_md.py) and the deprecation notes it holds; for a
    function or class without one, the text its decorators supply (api_docfrom.py:
    pandas' `@Appender(_merge_doc)`)."""
    ds = getattr(obj, "docstring", None)
    text = ds.value if ds is not None else ""
    if not text.strip() and sources is not None and \
            getattr(getattr(obj, "kind", None), "value", "") in ("function", "class"):
        text = decorator_docstring(obj, sources.dict_items)
    if not text.strip():
        return "", []
    converted = docstring_markdown(text)
    return converted.markdown, converted.deprecations
