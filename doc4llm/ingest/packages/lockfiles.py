"""A project's dependencies from its lockfile or manifest.

Python, first found wins: uv.lock, poetry.lock, requirements*.txt, pyproject.toml.
JavaScript, first found wins: package-lock.json (npm-shrinkwrap.json), pnpm-lock.yaml,
yarn.lock (v1 and Berry), package.json. Direct dependencies are the ones the project
declares (runtime, dev groups and extras alike: all of them are code an agent reads and
writes against); `include_all` adds every package the lockfile resolved. Lockfiles give
exact versions; a manifest alone gives ranges, resolved against the registry later.
Entries that do not come from a registry (git, path, workspace links) are reported, not
fetched. A file that does not parse is an InputError naming the file.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from doc4llm.errors import InputError
from doc4llm.ingest.packages.spec import normalize_pypi

MAX_LOCK_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Dependency:
    ecosystem: str  # pypi | npm
    name: str
    version: str | None  # exact (from a lockfile or a pin)
    spec: str | None = None  # a range to resolve when there is no exact version
    direct: bool = True


@dataclass
class ProjectDeps:
    deps: list[Dependency] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "name: reason"


def _read(path: Path) -> str:
    if path.stat().st_size > MAX_LOCK_BYTES:
        raise InputError(f"{path.name} is larger than {MAX_LOCK_BYTES // (1024 * 1024)} MB")
    return path.read_text(encoding="utf-8", errors="replace")


def _toml(path: Path) -> dict:
    try:
        return tomllib.loads(_read(path))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path.name} does not parse as TOML: {exc}") from exc


def _json(path: Path) -> dict:
    try:
        data = json.loads(_read(path))
    except ValueError as exc:
        raise InputError(f"{path.name} does not parse as JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise InputError(f"{path.name} is not a JSON object")
    return data


def read_project(project: Path, include_all: bool = False) -> ProjectDeps:
    project = Path(project)
    if not project.is_dir():
        raise InputError(f"{project} is not a folder")
    out = ProjectDeps()
    _python(project, include_all, out)
    _javascript(project, include_all, out)
    if not out.files:
        raise InputError(f"no lockfile or manifest in {project}",
                         hint="sync reads uv.lock, poetry.lock, requirements*.txt, pyproject.toml, "
                              "package-lock.json, pnpm-lock.yaml, yarn.lock or package.json")
    seen: set[tuple[str, str, str | None]] = set()
    unique = []
    for d in out.deps:
        key = (d.ecosystem, d.name, d.version or d.spec)
        if key not in seen:
            seen.add(key)
            unique.append(d)
    out.deps = unique
    return out


# -- Python ------------------------------------------------------------------------------

def _pep508(text: str) -> tuple[str, str | None, str | None] | None:
    """(name, exact version, specifier) of a PEP 508 requirement; None when its marker
    excludes this environment or it is a URL requirement."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    if req.url or (req.marker is not None and not _marker_ok(req.marker)):
        return None
    specs = list(req.specifier)
    if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
        return normalize_pypi(req.name), specs[0].version, None
    return normalize_pypi(req.name), None, str(req.specifier) or None


def _marker_ok(marker) -> bool:
    try:
        return marker.evaluate({"extra": ""}) or "extra" in str(marker)
    except Exception:  # noqa: BLE001 - an odd marker: keep the dependency
        return True


def _pyproject_direct(project: Path) -> tuple[list[tuple[str, str | None, str | None]], bool]:
    path = project / "pyproject.toml"
    if not path.is_file():
        return [], False
    data = _toml(path)
    reqs: list[str] = []
    proj = data.get("project") or {}
    reqs += [r for r in proj.get("dependencies") or [] if isinstance(r, str)]
    for group in (proj.get("optional-dependencies") or {}).values():
        reqs += [r for r in group or [] if isinstance(r, str)]
    for group in (data.get("dependency-groups") or {}).values():
        reqs += [r for r in group or [] if isinstance(r, str)]
    own = normalize_pypi(proj["name"]) if isinstance(proj.get("name"), str) else None
    out = [x for x in (_pep508(r) for r in reqs) if x and x[0] != own]
    poetry = ((data.get("tool") or {}).get("poetry") or {})
    tables = [poetry.get("dependencies") or {}, poetry.get("dev-dependencies") or {}]
    tables += [(g or {}).get("dependencies") or {} for g in (poetry.get("group") or {}).values()]
    for table in tables:
        for name, value in table.items():
            if name.lower() == "python":
                continue
            spec = value if isinstance(value, str) else value.get("version") if isinstance(value, dict) else None
            if isinstance(value, dict) and ("git" in value or "path" in value or "url" in value):
                continue
            out.append((normalize_pypi(name), None, _poetry_spec(spec)))
    return out, True


def _poetry_spec(spec: str | None) -> str | None:
    """Poetry's `^1.2` / `~1.2` as PEP 440 (`>=1.2,<2.0`); `*` means any."""
    if not spec or spec.strip() in ("*", ""):
        return None
    spec = spec.strip()
    m = re.match(r"^([\^~])\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$", spec)
    if m:
        major, minor = int(m.group(2)), int(m.group(3) or 0)
        base = ".".join(x for x in m.group(2, 3, 4) if x)
        if m.group(1) == "^":
            upper = f"{major + 1}" if major else f"0.{minor + 1}"
        else:
            upper = f"{major}.{minor + 1}" if m.group(3) else f"{major + 1}"
        return f">={base},<{upper}"
    return spec


def _python(project: Path, include_all: bool, out: ProjectDeps) -> None:
    if (project / "uv.lock").is_file():
        _uv_lock(project, include_all, out)
    elif (project / "poetry.lock").is_file():
        _poetry_lock(project, include_all, out)
    elif sorted(project.glob("requirements*.txt")):
        for path in sorted(project.glob("requirements*.txt")):
            out.files.append(path.name)
            _requirements(path, project, out, depth=0)
    else:
        direct, found = _pyproject_direct(project)
        if found:
            out.files.append("pyproject.toml")
            out.deps += [Dependency("pypi", n, v, s) for n, v, s in direct]


def _uv_lock(project: Path, include_all: bool, out: ProjectDeps) -> None:
    data = _toml(project / "uv.lock")
    out.files.append("uv.lock")
    packages = [p for p in data.get("package") or [] if isinstance(p, dict) and isinstance(p.get("name"), str)]
    versions: dict[str, str] = {}
    roots, direct = [], set()
    for p in packages:
        source = p.get("source") or {}
        name = normalize_pypi(p["name"])
        if "editable" in source or "virtual" in source:
            roots.append(p)
        elif "registry" in source and isinstance(p.get("version"), str):
            versions[name] = p["version"]
        else:
            out.skipped.append(f"{name}: not from a registry ({', '.join(source) or 'no source'})")
    for root in roots:
        lists = [root.get("dependencies") or []]
        lists += list((root.get("optional-dependencies") or {}).values())
        lists += list((root.get("dev-dependencies") or {}).values())
        for deps in lists:
            for d in deps:
                if isinstance(d, dict) and isinstance(d.get("name"), str):
                    direct.add(normalize_pypi(d["name"]))
    if not roots:  # a lock without its project entry: what pyproject declares is direct
        direct = {n for n, _, _ in _pyproject_direct(project)[0]}
    for name, version in sorted(versions.items()):
        if name in direct or include_all:
            out.deps.append(Dependency("pypi", name, version, direct=name in direct))


def _poetry_lock(project: Path, include_all: bool, out: ProjectDeps) -> None:
    data = _toml(project / "poetry.lock")
    out.files.append("poetry.lock")
    direct = {n for n, _, _ in _pyproject_direct(project)[0]}
    for p in data.get("package") or []:
        if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not isinstance(p.get("version"), str):
            continue
        name = normalize_pypi(p["name"])
        source = p.get("source") or {}
        if source.get("type") in ("git", "directory", "file", "url"):
            out.skipped.append(f"{name}: not from a registry ({source.get('type')})")
            continue
        if name in direct or include_all:
            out.deps.append(Dependency("pypi", name, p["version"], direct=name in direct))


def _requirements(path: Path, project: Path, out: ProjectDeps, depth: int) -> None:
    text = _read(path)
    logical = re.sub(r"\\\r?\n", " ", text)  # line continuations
    for raw in logical.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "--requirement ", "-c ", "--constraint ")):
            if line.startswith(("-r", "--requirement")) and depth < 3:
                target = (path.parent / line.split(None, 1)[1].strip()).resolve()
                if target.is_relative_to(project.resolve()) and target.is_file():
                    _requirements(target, project, out, depth + 1)
            continue
        if line.startswith("-"):  # -e, --index-url, --hash on its own...
            if line.startswith(("-e", "--editable")):
                out.skipped.append(f"{line[:60]}: editable, not from a registry")
            continue
        line = re.split(r"\s--hash[= ]", line, maxsplit=1)[0].strip()
        parsed = _pep508(line)
        if parsed is None:
            if "://" in line or " @ " in line:
                out.skipped.append(f"{line[:60]}: URL requirement, not from a registry")
            elif not re.match(r"^[A-Za-z0-9]", line):
                raise InputError(f"{path.name}: cannot read the line {raw.strip()[:80]!r}")
            continue
        name, version, spec = parsed
        out.deps.append(Dependency("pypi", name, version, spec))


# -- JavaScript --------------------------------------------------------------------------

_NON_REGISTRY = ("file:", "link:", "workspace:", "git", "github:", "http:", "https:", "portal:", "patch:")


def _package_json_direct(project: Path) -> dict[str, str]:
    path = project / "package.json"
    if not path.is_file():
        return {}
    data = _json(path)
    out: dict[str, str] = {}
    for key in ("dependencies", "devDependencies", "optionalDependencies"):
        table = data.get(key) or {}
        if isinstance(table, dict):
            out.update({k: str(v) for k, v in table.items() if isinstance(k, str)})
    return out


def _javascript(project: Path, include_all: bool, out: ProjectDeps) -> None:
    direct = _package_json_direct(project)
    for lock in ("package-lock.json", "npm-shrinkwrap.json"):
        if (project / lock).is_file():
            return _npm_lock(project / lock, direct, include_all, out)
    if (project / "pnpm-lock.yaml").is_file():
        return _pnpm_lock(project / "pnpm-lock.yaml", direct, include_all, out)
    if (project / "yarn.lock").is_file():
        return _yarn_lock(project / "yarn.lock", direct, include_all, out)
    if (project / "package.json").is_file():
        out.files.append("package.json")
        for name, spec in sorted(direct.items()):
            if spec.startswith(_NON_REGISTRY) or spec.startswith("npm:"):
                out.skipped.append(f"{name}: {spec[:40]} is not a registry range")
                continue
            exact = spec.strip().lstrip("=v")
            if _exact_semver(exact):
                out.deps.append(Dependency("npm", name, exact))
            else:
                out.deps.append(Dependency("npm", name, None, spec or "latest"))
    return None


def _exact_semver(text: str) -> bool:
    """`5.0.0` (a pin in package.json), not a range."""
    return bool(re.fullmatch(r"\d{1,9}\.\d{1,9}\.\d{1,9}(?:-[0-9A-Za-z.-]{1,64})?(?:\+[0-9A-Za-z.-]{1,64})?", text))


def _npm_lock(path: Path, direct: dict[str, str], include_all: bool, out: ProjectDeps) -> None:
    data = _json(path)
    out.files.append(path.name)
    packages = data.get("packages")
    found: dict[tuple[str, str], bool] = {}
    if isinstance(packages, dict):  # lockfileVersion 2 and 3
        root = packages.get("") or {}
        names = set(direct)
        for key in ("dependencies", "devDependencies", "optionalDependencies"):
            names |= set((root.get(key) or {}) if isinstance(root.get(key), dict) else {})
        for key, meta in packages.items():
            if not key.startswith("node_modules/") and "/node_modules/" not in key:
                continue
            if not isinstance(meta, dict) or meta.get("link") or not isinstance(meta.get("version"), str):
                continue
            name = meta.get("name") or key.rsplit("node_modules/", 1)[1]
            top = key == f"node_modules/{name}"
            is_direct = top and name in names
            if is_direct or include_all:
                found[(name, meta["version"])] = found.get((name, meta["version"]), False) or is_direct
    else:  # lockfileVersion 1
        deps = data.get("dependencies") or {}
        for name, meta in deps.items() if isinstance(deps, dict) else []:
            if isinstance(meta, dict) and isinstance(meta.get("version"), str) and \
                    (name in direct or include_all) and not meta["version"].startswith(_NON_REGISTRY):
                found[(name, meta["version"])] = name in direct
    out.deps += [Dependency("npm", n, v, direct=d) for (n, v), d in sorted(found.items())]


def _clean_pnpm_version(v: str) -> str | None:
    v = v.split("(", 1)[0].strip()
    if v.startswith(_NON_REGISTRY) or not v:
        return None
    return v


def _pnpm_lock(path: Path, direct: dict[str, str], include_all: bool, out: ProjectDeps) -> None:
    import yaml

    try:
        data = yaml.load(_read(path), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
    except yaml.YAMLError as exc:
        raise InputError(f"{path.name} does not parse as YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise InputError(f"{path.name} is not a YAML mapping")
    out.files.append(path.name)
    importer = (data.get("importers") or {}).get(".") if isinstance(data.get("importers"), dict) else None
    tables = importer if isinstance(importer, dict) else data
    found: dict[tuple[str, str], bool] = {}
    for key in ("dependencies", "devDependencies", "optionalDependencies"):
        for name, value in (tables.get(key) or {}).items():
            raw = value.get("version") if isinstance(value, dict) else value
            version = _clean_pnpm_version(str(raw or ""))
            if version is None:
                out.skipped.append(f"{name}: {str(raw)[:40]} is not from the registry")
                continue
            found[(name, version)] = True
    if include_all:
        for key in (data.get("packages") or {}):
            m = re.match(r"^/?((?:@[^/@]+/)?[^/@]+)[@/]([^/()]+)", str(key))
            if m:
                found.setdefault((m.group(1), m.group(2)), False)
    out.deps += [Dependency("npm", n, v, direct=d) for (n, v), d in sorted(found.items())]


def _yarn_lock(path: Path, direct: dict[str, str], include_all: bool, out: ProjectDeps) -> None:
    """yarn v1 (`"a@^1.0.0", a@~1.1:` + `  version "1.2.3"`) and Berry (`"a@npm:^1.0.0":`
    + `  version: 1.2.3`), read line by line."""
    out.files.append(path.name)
    by_spec: dict[str, tuple[str, str]] = {}
    header: list[str] | None = None
    entries = 0
    for line in _read(path).splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            if not line.rstrip().endswith(":"):
                raise InputError(f"{path.name}: cannot read the line {line[:80]!r}")
            header = [s.strip().strip('"') for s in line.rstrip()[:-1].split(",")]
            continue
        m = re.match(r'^\s{2}version:?\s+"?([^"\s]+)"?\s*$', line)
        if m and header:
            entries += 1
            for spec in header:
                at = spec.find("@", 1)
                if at <= 0:
                    continue
                name, rng = spec[:at], spec[at + 1:]
                if rng.startswith(_NON_REGISTRY):
                    continue
                by_spec[f"{name}@{rng.removeprefix('npm:')}"] = (name, m.group(1))
            header = None
    if entries == 0 and by_spec == {} and path.stat().st_size > 0 and "version" not in _read(path)[:100000]:
        raise InputError(f"{path.name}: no package entries found")
    found: dict[tuple[str, str], bool] = {}
    for name, rng in direct.items():
        hit = by_spec.get(f"{name}@{rng.removeprefix('npm:')}")
        if hit:
            found[hit] = True
        else:
            out.skipped.append(f"{name}@{rng}: not in yarn.lock")
    if include_all:
        for hit in by_spec.values():
            if "__metadata" not in hit[0]:
                found.setdefault(hit, False)
    out.deps += [Dependency("npm", n, v, direct=d) for (n, v), d in sorted(found.items())]
