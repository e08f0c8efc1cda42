"""An API reference from Python source, by static analysis (griffe): nothing is imported.

A page per public module (`click.testing`), a section per public name (`## CliRunner`),
methods as `### CliRunner.invoke`, each with its signature in a code block and its
docstring. A package's `__init__` that only re-exports gets one page that maps each name
to the module that defines it, so `click.option` leads to `click.decorators`.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from doc4llm.ingest.packages.pages import API, DocPage

EXCLUDED_TOP = {"tests", "test", "testing_utils", "docs", "doc", "examples", "example", "benchmarks",
                "bench", "scripts", "tools", "build", "dist", "setup", "conftest", "noxfile", "fabfile",
                "tasks", "_build", "site"}
EXCLUDED_PARENTS = {"testing", "example_scripts", "fixtures", "samples", "third_party", "vendor", "_vendor"}
MAX_MODULES = 400
MAX_DEFAULT = 80
_VERSIONED = re.compile(r"^(\s*)\.\. (versionadded|versionchanged|deprecated|versionremoved)::[ \t]*(\S*)[ \t]*(.*)$")
_LABEL = {"versionadded": "New in version", "versionchanged": "Changed in version",
          "deprecated": "Deprecated since version", "versionremoved": "Removed in version"}


def find_top_packages(root: Path, dist_name: str) -> list[tuple[str, Path]]:
    """(import name, search path) of the top-level packages in an sdist or wheel: folders
    with `__init__.py` (or `.pyi`) whose parent is not a package, at most three deep."""
    found: dict[str, Path] = {}
    for depth_glob in ("*/__init__.py*", "*/*/__init__.py*", "*/*/*/__init__.py*"):
        for init in sorted(root.glob(depth_glob)):
            pkg = init.parent
            if pkg.name in EXCLUDED_TOP or pkg.name.startswith(".") or not pkg.name.isidentifier():
                continue
            parts = pkg.relative_to(root).parts
            if any(p in EXCLUDED_TOP or p in EXCLUDED_PARENTS or p.startswith(".") or p.endswith(".dist-info")
                   for p in parts[:-1]):
                continue
            if (pkg.parent / "__init__.py").exists() or (pkg.parent / "__init__.pyi").exists():
                continue
            found.setdefault(pkg.name, pkg.parent)
    if not found:  # a single-module distribution (six.py)
        want = dist_name.replace("-", "_").lower()
        for base in (root / "src", root):
            for mod in sorted(base.glob("*.py*")):
                if mod.suffix in (".py", ".pyi") and mod.stem.lower() == want:
                    found[mod.stem] = base
    want = dist_name.replace("-", "_").lower()
    ordered = sorted(found.items(), key=lambda kv: (kv[0].lower() != want, kv[0].startswith("_"), kv[0]))
    return ordered[:6]


def python_api_pages(root: Path, dist_name: str, warnings: list[str]) -> list[DocPage]:
    import griffe

    pages: list[DocPage] = []
    logger = logging.getLogger("griffe")
    level = logger.level
    logger.setLevel(logging.CRITICAL)  # griffe warns about every unresolved alias
    try:
        tops = find_top_packages(root, dist_name)
        # one loader for all: `pytest` re-exports from `_pytest`, whose names must resolve
        loader = griffe.GriffeLoader(search_paths=sorted({str(p) for _, p in tops}), allow_inspection=False,
                                     store_source=False)
        loaded = []
        for name, _ in tops:
            try:
                loaded.append((name, loader.load(name, find_stubs_package=False)))
            except Exception as exc:  # noqa: BLE001 - griffe on odd source: keep the rest
                warnings.append(f"API of {name}: griffe could not read it ({type(exc).__name__})")
        for name, module in loaded:
            if name.startswith("_"):  # private (`_pytest`): loaded only to resolve re-exports
                continue
            for mod in _walk_modules(module):
                if len(pages) >= MAX_MODULES:
                    warnings.append(f"API reference cut at {MAX_MODULES} modules")
                    return pages
                page = _module_page(mod, root)
                if page:
                    pages.append(page)
    finally:
        logger.setLevel(level)
    return pages


def _walk_modules(module):
    yield module
    for name, sub in sorted(module.modules.items()):
        if name.startswith("_") or name in EXCLUDED_TOP or getattr(sub, "is_alias", False):
            continue
        yield from _walk_modules(sub)


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
    for name, member in module.members.items():
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


def _module_page(module, root: Path) -> DocPage | None:
    parts: list[str] = []
    doc = _docstring(module)
    if doc:
        parts.append(doc)
    reexports: list[str] = []
    for name, member in _public_members(module):
        if member.is_alias:
            target = getattr(member, "target_path", "") or ""
            hidden = _private_target(member)
            if hidden is not None:  # defined in a private module (httpx._client): document it here
                section = _member_section(name, hidden, 2)
                if section:
                    parts.append(section)
                    continue
            reexports.append(f"- `{name}`: defined in `{target.rsplit('.', 1)[0]}`" if "." in target else f"- `{name}`")
            continue
        section = _member_section(name, member, 2)
        if section:
            parts.append(section)
    if reexports:
        parts.append("## Names exported here\n\n" + "\n".join(reexports))
    if not parts:
        return None
    try:
        rel = Path(module.filepath).resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, TypeError, AttributeError):
        rel = module.path
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


def _member_section(name: str, obj, level: int, owner: str = "") -> str | None:
    kind = obj.kind.value
    title = f"{owner}.{name}" if owner else name
    head = "#" * level + " " + title
    doc = _docstring(obj)
    if kind == "function":
        sig = _function_signature(name, obj)
        return "\n\n".join(x for x in (head, f"```python\n{sig}\n```", doc) if x)
    if kind == "class":
        bases = ", ".join(str(b) for b in obj.bases)
        init = obj.members.get("__init__")
        params = _params(init, drop_self=True) if init is not None and init.kind.value == "function" else ""
        sig = f"class {name}({bases})" if bases else f"class {name}"
        if params:
            sig += f"\n    # {name}({params})"
        out = [head, f"```python\n{sig}\n```"]
        if doc:
            out.append(doc)
        attrs = []
        for mname, member in obj.members.items():
            if mname.startswith("_") or member.is_alias:
                continue
            if member.kind.value == "attribute":
                ann = f": {member.annotation}" if member.annotation is not None else ""
                mdoc = _docstring(member)
                attrs.append(f"- `{mname}{ann}`" + (f": {' '.join(mdoc.split())[:300]}" if mdoc else ""))
        if attrs:
            out.append("Attributes:\n\n" + "\n".join(attrs))
        if level < 4:
            for mname, member in obj.members.items():
                if mname.startswith("_") or member.is_alias or member.kind.value not in ("function", "class"):
                    continue
                sub = _member_section(mname, member, level + 1, owner=title)
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
        return "\n\n".join(x for x in (head, f"```python\n{code}\n```", doc) if x)
    return None


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


def _docstring(obj) -> str:
    """The docstring as markdown-safe text: no line turns into a heading, and Sphinx's
    versionadded / versionchanged / deprecated read as sentences (version questions)."""
    ds = getattr(obj, "docstring", None)
    if ds is None or not ds.value.strip():
        return ""
    out = []
    for line in ds.value.strip("\n").split("\n"):
        m = _VERSIONED.match(line)
        if m:
            line = f"{m.group(1)}*{_LABEL[m.group(2)]} {m.group(3)}*" + (f" {m.group(4)}" if m.group(4) else "")
        elif line.lstrip().startswith("#"):
            line = line.replace("#", "\\#", 1)
        out.append(line)
    return "\n".join(out)
