"""Which `.d.ts` files of an npm package are its API, most public first.

A package's public types are what its entry points (`types`/`typings`, the `types`
conditions of `exports`, else `index.d.ts`) export, and the files those re-export from
(`export * from "./lib"`) or import: zod's `index.d.ts` -> `lib/index.d.ts` ->
`lib/external.d.ts` -> `lib/types.d.ts`. Files reached that way come first (re-exports
before imports), then the rest. Never read: tests, benchmarks, examples, fixtures and
mocks (zod ships `lib/benchmarks/*.d.ts`, `lib/__tests__`), vendored copies of other
projects (openai's `_vendor/`), a `.d.cts`/`.d.mts` twin of a `.d.ts` beside it (the same
declarations for the other module system), and the down-levelled copies `typesVersions`
sends older compilers to (zustand's `"<4.0": {"*": ["ts3.4/*"]}`, jotai's `ts3.8/`): only
the mapping today's TypeScript picks is read.
Specifiers are found with a regex over the text (linear); nothing is resolved outside the
package. Each (folder, specifier) is resolved once, and ranking stops after
`MAX_SPECIFIERS` of them: 3,000 files of 100 `export * from` each took 37 s (a
`realpath` per specifier), 20,000 such files more than 100 s, to rank files of which
only `MAX_FILES` are kept.
"""

from __future__ import annotations

import json
import os
import re
from collections import deque
from pathlib import Path

import nodesemver

DTS_SUFFIXES = (".d.ts", ".d.mts", ".d.cts")
MAX_FILES = 300
MAX_SCAN_BYTES = 2 * 1024 * 1024
MAX_SPECIFIERS = 100_000  # specifiers resolved while ranking; files not reached by then rank after
SKIP_DIRS = {"node_modules", ".git", "test", "tests", "__tests__", "__test__", "spec", "__mocks__", "fixtures",
             "__fixtures__", "examples", "example", "benchmarks", "benchmark", "bench", "__benchmarks__", "e2e",
             "demo", "demos", "test-d", "type-tests", "typetests", "types-tests", "dtslint",
             # other projects' code copied in (openai 4.56: 38 of its 109 API pages were `_vendor/`)
             "_vendor", "vendor", "vendored", "third_party", "third-party", "thirdparty"}
_EXPORT_FROM = re.compile(r"""^[ \t]*export\s[^;'"]{0,2000}?\bfrom[ \t]*['"](\.{1,2}/[^'"\n]{0,300})['"]""", re.M)
_IMPORT_FROM = re.compile(r"""(?:\bfrom[ \t]*|\bimport[ \t]*\([ \t]*|^[ \t]*import[ \t]+)['"](\.{1,2}/[^'"\n]{0,300})['"]""", re.M)
_REFERENCE = re.compile(r"""^[ \t]*///[ \t]*<reference[ \t]+path[ \t]*=[ \t]*['"]([^'"\n]{1,300})['"]""", re.M)


def dts_files(root: Path) -> list[Path]:
    """Declaration files, the entry points and what they reach first."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        names = set(filenames)
        for name in sorted(filenames):
            if not name.endswith(DTS_SUFFIXES):
                continue
            if name.endswith((".d.mts", ".d.cts")) and name[:-6] + ".d.ts" in names:
                continue  # the other module system's copy of `name.d.ts`
            found.append(Path(dirpath) / name)
    if not found:
        return []
    older = _downlevel_targets(_package_json(root))
    if older:
        kept = [p for p in found if not _under(p.relative_to(root).as_posix(), older)]
        found = kept or found  # a package whose only declarations are such copies keeps them
    known = {p.resolve(): p for p in found}
    rank: dict[Path, tuple[int, int]] = {}
    queue: deque[tuple[Path, int]] = deque()
    for i, entry in enumerate(_entries(root, known)):
        rank[entry] = (0, i)
        queue.append((entry, 0))
    order = len(rank)
    resolved: dict[tuple[Path, str], Path | None] = {}
    while queue and len(resolved) < MAX_SPECIFIERS:
        path, how = queue.popleft()
        try:
            with open(path, "rb") as fh:
                text = fh.read(MAX_SCAN_BYTES).decode("utf-8", errors="replace")
        except OSError:
            continue
        reached = [(m.group(1), 0) for m in _EXPORT_FROM.finditer(text)]
        reached += [(m.group(1), 1) for m in _IMPORT_FROM.finditer(text)]
        reached += [(m.group(1), 1) for m in _REFERENCE.finditer(text)]
        for spec, kind in reached:
            key = (path.parent, spec)
            if key not in resolved:
                resolved[key] = resolve_specifier(path, spec, known)
            target = resolved[key]
            level = max(how, kind)
            if target is not None and (target not in rank or rank[target][0] > level):
                order += 1
                rank[target] = (level, order)
                queue.append((target, level))
    ordered = sorted(found, key=lambda p: (rank.get(p.resolve(), (2, 0)), len(p.relative_to(root).parts), str(p)))
    return ordered[:MAX_FILES]


def _package_json(root: Path):
    try:
        return json.loads((root / "package.json").read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None


def _downlevel_targets(pkg) -> list[str]:
    """Folders (`ts3.4/`) and files that `typesVersions` gives only compilers older than
    today's: TypeScript takes the first range it satisfies, so every other range's targets
    are copies for old compilers, unless the current range maps to them too."""
    versions = pkg.get("typesVersions") if isinstance(pkg, dict) else None
    if not isinstance(versions, dict):
        return []
    current: set[str] = set()
    other: set[str] = set()
    chosen = False
    for rng, mapping in list(versions.items())[:50]:
        if not isinstance(mapping, dict):
            continue
        targets = {_target_prefix(t) for v in list(mapping.values())[:50] if isinstance(v, list)
                   for t in v[:20] if isinstance(t, str)}
        targets.discard("")
        if not chosen and _satisfied_today(rng):
            current, chosen = targets, True
        else:
            other |= targets
    return sorted(t for t in other if not any(c == t or c.startswith(t) or t.startswith(c) for c in current))


def _target_prefix(target: str) -> str:
    """`./ts3.4/*` -> `ts3.4/`; a file target stays a file; `*` (the package root) -> ``."""
    target = target.strip()
    while target.startswith("./"):
        target = target[2:]
    return target.split("*", 1)[0] if "*" in target else target


def _satisfied_today(rng: str) -> bool:
    try:
        return bool(nodesemver.satisfies("999.0.0", rng[:100], loose=True))
    except Exception:  # noqa: BLE001 - node-semver's port raises on malformed ranges
        return False


def _under(rel: str, targets: list[str]) -> bool:
    return any(rel == t or (t.endswith("/") and rel.startswith(t)) for t in targets)


def _entries(root: Path, known: dict[Path, Path]) -> list[Path]:
    """The package's declared type entry points that exist, else its root `index.d.ts`."""
    out: list[Path] = []
    pkg = _package_json(root)
    specs: list[str] = []
    if isinstance(pkg, dict):
        for key in ("types", "typings"):
            if isinstance(pkg.get(key), str):
                specs.append(pkg[key])
        _types_conditions(pkg.get("exports"), specs, 0)
    for spec in specs + ["index.d.ts"]:
        cand = (root / spec).resolve()
        if cand.is_relative_to(root.resolve()) and cand in known and cand not in out:
            out.append(cand)
    return out


def _types_conditions(node, out: list[str], depth: int) -> None:
    """`types` paths inside an `exports` map (bounded walk: it is untrusted JSON)."""
    if depth > 8 or len(out) > 200:
        return
    if isinstance(node, dict):
        for key, value in list(node.items())[:200]:
            if key == "types" and isinstance(value, str):
                out.append(value)
            else:
                _types_conditions(value, out, depth + 1)
    elif isinstance(node, list):
        for value in node[:200]:
            _types_conditions(value, out, depth + 1)


def resolve_specifier(importer: Path, spec: str, known: dict[Path, Path]) -> Path | None:
    """A relative module specifier as TypeScript resolves it to a declaration file of the
    package (`./lib` -> `lib.d.ts` or `lib/index.d.ts`; `./x.js` -> `x.d.ts`)."""
    base = (importer.parent / spec).resolve()
    stem = str(base)
    candidates = [stem]
    for js, dts in ((".js", ".d.ts"), (".mjs", ".d.mts"), (".cjs", ".d.cts"), (".ts", ".d.ts")):
        if stem.endswith(js):
            candidates.append(stem[: -len(js)] + dts)
    candidates += [stem + ".d.ts", stem + ".d.mts", stem + ".d.cts", os.path.join(stem, "index.d.ts")]
    for cand in candidates:
        path = Path(cand)
        if path in known:
            return path
    return None
