"""The API a package passes on from its dependencies: `export * from 'd3-array'`.

Umbrella packages declare little themselves: @types/d3 is thirty `export * from
'd3-xxx'` lines, @reduxjs/toolkit re-exports all of redux, @tanstack/react-query all of
@tanstack/query-core, vitest its runner and expect packages. Their sets held a page of
re-export lines and no documentation of what the package offers. The packages these
re-exports name, found in the entry points and the files they re-export from, and
declared in `dependencies` (or their `@types/` package, as @types/d3 depends on
@types/d3-array for `d3-array`), are fetched from the same registry at the newest version
their range allows (what npm installs) and documented in the same set.

Only re-exports count: an `import` of a dependency's types (`@types/express` builds on
express-serve-static-core) passes on single names, and following imports would pull in
@types/node and whatever it imports in turn.
"""

from __future__ import annotations

import re
from collections import deque
from pathlib import Path

from doc4llm.ingest.packages.dts_files import (
    _EXPORT_FROM,
    MAX_SCAN_BYTES,
    _entries,
    dts_files,
    resolve_specifier,
)

MAX_DEPENDENCIES = 40  # @types/d3 re-exports 30 packages
_BARE_EXPORT_FROM = re.compile(
    r"""^[ \t]*export\s[^;'"]{0,2000}?\bfrom[ \t]*['"]([@\w][^'"\n]{0,200})['"]""", re.M)
_PACKAGE = re.compile(r"^(@[\w.-]+/[\w.-]+|[\w.-]+)(?:/|$)")
# `import { a, b as c } from 'pkg'` then `export { a, c }` (rollup-plugin-dts, jest's build)
_IMPORT_NAMES = re.compile(r"""^[ \t]*import[ \t]+(?:type[ \t]+)?\{([^}]{0,4000})\}[ \t]*from[ \t]*['"]([@\w][^'"\n]{0,200})['"]""",
                           re.M)
_EXPORT_NAMES = re.compile(r"""^[ \t]*export[ \t]+(?:type[ \t]+)?\{([^}]{0,4000})\}[ \t]*(;|$|from[ \t]*['"]([^'"\n]{0,200})['"])""",
                           re.M)


def reexported_dependencies(root: Path, pkg: dict) -> list[tuple[str, str, str, set[str] | None]]:
    """`(specifier, package, range, names)` for each dependency the package's public
    declaration files re-export, in the order they are met (entry points first); `names`
    is what `export { a, b } from 'pkg'` names (their sections are kept), None for `export *`
    (the whole package)."""
    deps = pkg.get("dependencies") if isinstance(pkg.get("dependencies"), dict) else {}
    files = dts_files(root)
    known = {p.resolve(): p for p in files}
    queue = deque(_entries(root, known))
    seen = set(queue)
    found: dict[str, tuple[str, str, str, set[str] | None]] = {}

    def note(spec: str, names: set[str] | None) -> None:
        pm = _PACKAGE.match(spec)
        name = pm.group(1) if pm else None
        if not name or name.startswith("node:"):
            return
        if name in found:
            have = found[name]
            if have[3] is not None:
                found[name] = have[:3] + (None if names is None else have[3] | names,)
            return
        types_name = "@types/" + (name[1:].replace("/", "__") if name.startswith("@") else name)
        for dep in (name, types_name):
            rng = deps.get(dep)
            if isinstance(rng, str) and _registry_range(rng):
                found[name] = (spec, dep, rng, None if names is None else set(names))
                return

    while queue and len(seen) <= len(files):
        path = queue.popleft()
        try:
            with open(path, "rb") as fh:
                text = fh.read(MAX_SCAN_BYTES).decode("utf-8", errors="replace")
        except OSError:
            continue
        imported: dict[str, tuple[str, str]] = {}  # local name -> (specifier, name there)
        for m in _IMPORT_NAMES.finditer(text):
            for local, there in _specifiers(m.group(1)):
                imported[local] = (m.group(2), there)
        for m in _BARE_EXPORT_FROM.finditer(text):
            spec = m.group(1)
            named = _EXPORT_NAMES.match(m.group(0))
            note(spec, {there for _, there in _specifiers(named.group(1))} if named else None)
        for m in _EXPORT_NAMES.finditer(text):
            if m.group(3) is None:  # `export { a, c }`: the names imported from a package
                for local, _ in _specifiers(m.group(1)):
                    if local in imported and not imported[local][0].startswith("."):
                        note(imported[local][0], {imported[local][1]})
        for m in _EXPORT_FROM.finditer(text):
            target = resolve_specifier(path, m.group(1), known)
            if target is not None and target not in seen:
                seen.add(target)
                queue.append(target)
    return list(found.values())[:MAX_DEPENDENCIES]


def _specifiers(clause: str) -> list[tuple[str, str]]:
    """`a, b as c, type d` -> [(a, a), (c, b), (d, d)]: (name here, name in the module)."""
    out = []
    for part in clause.split(","):
        words = part.replace("type ", " ").split()
        if len(words) == 3 and words[1] == "as":
            out.append((words[2], words[0]))
        elif len(words) == 1:
            out.append((words[0], words[0]))
    return out


def keep_sections(body: str, names: set[str]) -> str:
    """The `## Name` sections (with their `### Name.member` sections) of the names a
    package re-exports by name; an empty string when the page has none of them."""
    kept: list[str] = []
    keep = False
    for chunk in re.split(r"(?m)^(?=## )", body):
        if chunk.startswith("## "):
            title = chunk[3:].split("\n", 1)[0].strip()
            keep = title in names or title.split(".", 1)[0] in names or \
                any(t.strip() in names for t in title.split(","))
            if keep:
                kept.append(chunk.rstrip("\n"))
    return "\n\n".join(kept)


def _registry_range(rng: str) -> bool:
    """A range the registry answers (`^3.2.0`, `*`), not `workspace:`, `file:`, a git URL."""
    return ":" not in rng and "/" not in rng and len(rng) <= 100


def dependency_api_pages(root: Path, owner: str, http, npm, work: Path, warnings: list[str]):
    """API pages of the dependencies `root`'s declarations re-export, each page titled and
    keyed by the dependency (`index.d.ts (@types/d3-array@3.2.1 API)`) and opening with
    what re-exports it. A dependency that cannot be fetched is named in one warning."""
    from doc4llm.errors import Doc4llmError
    from doc4llm.ingest.packages import archive as archives
    from doc4llm.ingest.packages import npm as npm_registry
    from doc4llm.ingest.packages.api_typescript import typescript_api_pages
    from doc4llm.ingest.packages.collect import read_npm_metadata
    from doc4llm.ingest.packages.integrity import check_archive, check_metadata
    from doc4llm.ingest.packages.spec import PackageRef

    pages = []
    failed: list[str] = []
    for i, (spec, dep, rng, names) in enumerate(reexported_dependencies(root, read_npm_metadata(root))):
        try:
            release = npm_registry.resolve(http, PackageRef("npm", dep, rng), npm)
            path, sha = archives.download(http, release, work)
            check_archive(path, sha, release)
            droot = archives.extract(path, work / f"dep{i}").root
            check_metadata(read_npm_metadata(droot), release, release.filename)
        except Doc4llmError as exc:
            failed.append(f"{dep} ({exc.message})")
            continue
        label = f"{release.name}@{release.version}"
        for page in typescript_api_pages(droot, warnings):
            if names is not None:
                page.body = keep_sections(page.body, names)
                if not page.body:
                    continue
            page.title = f"{page.title} ({label} API)"
            what = "this package" if names is None else ", ".join(f"`{n}`" for n in sorted(names)[:8]) + \
                (f" and {len(names) - 8} more" if len(names) > 8 else "")
            page.body = f"*`{owner}` re-exports {what} from `{spec}`.*\n\n{page.body}"
            page.extra = {"origin": "dependency", "package": label, "path": page.source}
            page.source = f"{label}/{page.source}"
            page.key = f"api:{label}/{page.key[4:]}"
            pages.append(page)
    if failed:
        warnings.append("re-exported dependencies not documented: " + "; ".join(failed[:5])
                        + (f" and {len(failed) - 5} more" if len(failed) > 5 else ""))
    return pages
