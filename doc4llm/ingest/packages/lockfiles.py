"""A project's dependencies from its lockfile or manifest.

Python, first found wins: uv.lock, poetry.lock, requirements*.txt, pyproject.toml.
JavaScript, first found wins: package-lock.json (npm-shrinkwrap.json), pnpm-lock.yaml,
yarn.lock (v1 and Berry), package.json. Direct dependencies are the ones the project
declares (runtime, dev groups and extras alike: all of them are code an agent reads and
writes against); `include_all` adds every package the lockfile resolved. Lockfiles give
exact versions; a manifest alone gives ranges, resolved against the registry later.
Entries that do not come from a registry (git, path, workspace links) are reported, not
fetched. Hashes a lockfile records (uv/poetry sha256, `--hash`, npm/pnpm/yarn SRI
`integrity`) travel with the dependency as a `Pin`, checked against the download.

These files are untrusted input. A file that does not parse (or nests deeper than any real
one, or expands a YAML alias bomb) is an InputError naming the file. A file that parses
but holds something of the wrong type, or a name or version that is not one (`..`, a NUL,
`a/../b`), costs only that entry: it lands in `ProjectDeps.bad` as one sentence naming the
file and the entry (or line), and every other entry is still read.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from doc4llm.corpus.safe_data import loads_json, loads_toml
from doc4llm.corpus.safe_yaml import load_yaml
from doc4llm.errors import InputError
from doc4llm.ingest.packages.integrity import Pin, parse_hash, parse_sri
from doc4llm.ingest.packages.spec import name_problem, normalize_pypi, version_problem

MAX_LOCK_BYTES = 64 * 1024 * 1024
MAX_BAD = 50  # bad entries reported per project; the rest are counted


@dataclass(frozen=True)
class Dependency:
    ecosystem: str  # pypi | npm
    name: str
    version: str | None  # exact (from a lockfile or a pin)
    spec: str | None = None  # a range to resolve when there is no exact version
    direct: bool = True
    pin: Pin | None = None  # the lockfile's hashes for it


@dataclass
class ProjectDeps:
    deps: list[Dependency] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "name: reason"
    bad: list[str] = field(default_factory=list)  # "file: entry: what is wrong" (input errors)
    bad_count: int = 0

    def add_bad(self, sentence: str) -> None:
        self.bad_count += 1
        if len(self.bad) < MAX_BAD:
            self.bad.append(sentence)


class _Bad(Exception):
    """One entry that cannot be read: it is reported, the others go on."""


def _kind(value: object) -> str:
    return {dict: "a table", list: "a list", str: "a string", int: "a number", float: "a number",
            bool: "a boolean", type(None): "null"}.get(type(value), f"a {type(value).__name__}")


def _table(value: object, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Bad(f"{where} is {_kind(value)}, not a table")
    return value


def _list(value: object, where: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Bad(f"{where} is {_kind(value)}, not a list")
    return value


def _shown(value: object) -> str:
    return ascii(value[:60]) if isinstance(value, str) else _kind(value)


def _read(path: Path) -> str:
    """The file's text; a project's lockfile may be a link to `/dev/zero` or a FIFO (a
    cloned repository holds symlinks), so it must be a regular file and is read only up to
    the cap, whatever its size says."""
    try:  # O_NONBLOCK: opening a FIFO waits for a writer otherwise
        with os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise InputError(f"{path.name} is not a regular file (a device, FIFO or folder): not read")
            data = fh.read(MAX_LOCK_BYTES + 1)
    except OSError as exc:
        raise InputError(f"{path.name} cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_LOCK_BYTES:
        raise InputError(f"{path.name} is larger than {MAX_LOCK_BYTES // (1024 * 1024)} MB")
    return data.decode("utf-8", errors="replace")


def _toml(path: Path) -> dict:
    return loads_toml(_read(path), path.name)


def _json(path: Path) -> dict:
    return loads_json(_read(path), path.name)


def _add(out: ProjectDeps, where: str, ecosystem: str, name: object, version: object,
         spec: str | None = None, direct: bool = True, pin: Pin | None = None) -> None:
    """Append a dependency after the one validator every name and version passes."""
    problem = name_problem(ecosystem, name) or (version_problem(version) if version is not None else None)
    if problem:
        out.add_bad(f"{where}: {problem}")
        return
    out.deps.append(Dependency(ecosystem, name, version, spec, direct, pin))  # type: ignore[arg-type]


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


def _requirement_lists(data: dict, file: str, out: ProjectDeps) -> list[str]:
    """PEP 621 dependencies, optional-dependencies and PEP 735 dependency-groups."""
    reqs: list[str] = []
    try:
        proj = _table(data.get("project"), f"{file}: [project]")
    except _Bad as exc:
        out.add_bad(str(exc))
        proj = {}
    groups: list[tuple[str, object]] = [("[project] dependencies", proj.get("dependencies"))]
    for table_name, label in (("optional-dependencies", "[project.optional-dependencies]"),):
        try:
            groups += [(f"{label} {k}", v) for k, v in _table(proj.get(table_name), f"{file}: {label}").items()]
        except _Bad as exc:
            out.add_bad(str(exc))
    try:
        groups += [(f"[dependency-groups] {k}", v)
                   for k, v in _table(data.get("dependency-groups"), f"{file}: [dependency-groups]").items()]
    except _Bad as exc:
        out.add_bad(str(exc))
    for label, group in groups:
        try:
            items = _list(group, f"{file}: {label}")
        except _Bad as exc:
            out.add_bad(str(exc))
            continue
        for item in items:
            if isinstance(item, str):
                reqs.append(item)
            elif not isinstance(item, dict):  # `{include-group = "x"}` is fine, a number is not
                out.add_bad(f"{file}: {label}: {_shown(item)} is not a requirement")
    return reqs


def _pyproject_direct(project: Path, out: ProjectDeps,
                      report: bool = True) -> tuple[list[tuple[str, str | None, str | None]], bool]:
    """The requirements pyproject.toml declares; `report=False` when a lockfile is the
    source (its problems are then reported once, by the lockfile's reader)."""
    path = project / "pyproject.toml"
    if not path.is_file():
        return [], False
    file = "pyproject.toml"
    sink = out if report else ProjectDeps()
    data = _toml(path)
    reqs = _requirement_lists(data, file, sink)
    proj = data.get("project") if isinstance(data.get("project"), dict) else {}
    own = normalize_pypi(proj["name"]) if isinstance(proj.get("name"), str) else None
    found: list[tuple[str, str | None, str | None]] = []
    for r in reqs:
        parsed = _pep508(r)
        if parsed and parsed[0] != own:
            found.append(parsed)
    try:
        tool = _table(data.get("tool"), f"{file}: [tool]")
        poetry = _table(tool.get("poetry"), f"{file}: [tool.poetry]")
        tables = [("[tool.poetry.dependencies]", poetry.get("dependencies")),
                  ("[tool.poetry.dev-dependencies]", poetry.get("dev-dependencies"))]
        for gname, group in _table(poetry.get("group"), f"{file}: [tool.poetry.group]").items():
            tables.append((f"[tool.poetry.group.{gname}]", _table(group, f"{file}: [tool.poetry.group.{gname}]")
                           .get("dependencies")))
    except _Bad as exc:
        sink.add_bad(str(exc))
        tables = []
    for label, table in tables:
        try:
            items = _table(table, f"{file}: {label}").items()
        except _Bad as exc:
            sink.add_bad(str(exc))
            continue
        for name, value in items:
            if name.lower() == "python":
                continue
            if isinstance(value, dict) and ("git" in value or "path" in value or "url" in value):
                continue
            spec = value if isinstance(value, str) else value.get("version") if isinstance(value, dict) else None
            if not isinstance(value, str | dict | list) or (spec is not None and not isinstance(spec, str)):
                sink.add_bad(f"{file}: {label} {_shown(name)} is {_kind(value)}, not a version constraint")
                continue
            found.append((normalize_pypi(name), None, _poetry_spec(spec)))
    return found, True


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
        read: set[Path] = set()  # each file once: `-r` cycles and fan-outs cost one read a file
        for path in sorted(project.glob("requirements*.txt")):
            out.files.append(path.name)
            _requirements(path, project, out, depth=0, read=read)
    else:
        direct, found = _pyproject_direct(project, out)
        if found:
            out.files.append("pyproject.toml")
            for n, v, s in direct:
                _add(out, f"pyproject.toml: {n}", "pypi", n, v, s)


def _entries(data: dict, file: str, key: str, out: ProjectDeps) -> list[tuple[str, dict]]:
    """The `[[package]]` tables of a TOML lockfile as (label for messages, table)."""
    try:
        packages = _list(data.get(key), f"{file}: [[{key}]]")
    except _Bad as exc:
        out.add_bad(str(exc))
        return []
    found = []
    for i, p in enumerate(packages, 1):
        name = p.get("name") if isinstance(p, dict) else None
        label = f"{file}: [[{key}]] #{i}" + (f" ({_shown(name)})" if isinstance(name, str) else "")
        if not isinstance(p, dict):
            out.add_bad(f"{label} is {_kind(p)}, not a table")
        elif not isinstance(name, str):
            out.add_bad(f"{label}: name is {_kind(name)}, not a string")
        else:
            found.append((label, p))
    return found


def _uv_pin(p: dict, label: str) -> Pin | None:
    """sha256 of the sdist and wheels uv.lock records, by file name."""
    hashes = []
    files = [_table(p.get("sdist"), f"{label}: sdist")] + \
        [_table(w, f"{label}: wheels") for w in _list(p.get("wheels"), f"{label}: wheels")]
    for f in files:
        url, parsed = f.get("url") or f.get("path") or f.get("filename"), parse_hash(f.get("hash"))
        if parsed and isinstance(url, str):
            hashes.append((url.rsplit("/", 1)[-1].split("#", 1)[0], *parsed))
    return Pin("uv.lock", tuple(hashes)) if hashes else None


def _uv_lock(project: Path, include_all: bool, out: ProjectDeps) -> None:
    file = "uv.lock"
    data = _toml(project / file)
    out.files.append(file)
    registry: dict[str, tuple[str, object, Pin | None]] = {}
    roots, direct = [], set()
    for label, p in _entries(data, file, "package", out):
        try:
            source = _table(p.get("source"), f"{label}: source")
            name = normalize_pypi(p["name"])
            if "editable" in source or "virtual" in source:
                roots.append((label, p))
            elif "registry" in source:
                registry[name] = (label, p.get("version"), _uv_pin(p, label))
            else:
                out.skipped.append(f"{name}: not from a registry ({', '.join(map(str, source))[:60] or 'no source'})")
        except _Bad as exc:
            out.add_bad(str(exc))
    for label, root in roots:
        try:
            lists = [_list(root.get("dependencies"), f"{label}: dependencies")]
            for key in ("optional-dependencies", "dev-dependencies"):
                lists += [_list(v, f"{label}: {key}") for v in _table(root.get(key), f"{label}: {key}").values()]
        except _Bad as exc:
            out.add_bad(str(exc))
            continue
        for deps in lists:
            for d in deps:
                if isinstance(d, dict) and isinstance(d.get("name"), str):
                    direct.add(normalize_pypi(d["name"]))
    if not roots:  # a lock without its project entry: what pyproject declares is direct
        direct = {n for n, _, _ in _pyproject_direct(project, out, report=False)[0]}
    for name, (label, version, pin) in sorted(registry.items()):
        if name in direct or include_all:
            _add(out, label, "pypi", name, version, direct=name in direct, pin=pin)


def _poetry_pins(data: dict, out: ProjectDeps) -> dict[str, Pin]:
    """Poetry 1.x's `[metadata.files]` (name -> [{file, hash}]), the older place for hashes."""
    pins: dict[str, Pin] = {}
    meta = data.get("metadata")
    files = meta.get("files") if isinstance(meta, dict) else None
    for name, items in files.items() if isinstance(files, dict) else []:
        hashes = _file_hashes(items)
        if hashes:
            pins[normalize_pypi(str(name))] = Pin("poetry.lock", hashes)
    return pins


def _file_hashes(items: object) -> tuple[tuple[str | None, str, str], ...]:
    out = []
    for f in items if isinstance(items, list) else []:
        parsed = parse_hash(f.get("hash")) if isinstance(f, dict) else None
        if parsed and isinstance(f.get("file"), str):
            out.append((f["file"], *parsed))
    return tuple(out)


def _poetry_lock(project: Path, include_all: bool, out: ProjectDeps) -> None:
    file = "poetry.lock"
    data = _toml(project / file)
    out.files.append(file)
    direct = {n for n, _, _ in _pyproject_direct(project, out)[0]}
    old_pins = _poetry_pins(data, out)
    for label, p in _entries(data, file, "package", out):
        try:
            name = normalize_pypi(p["name"])
            source = _table(p.get("source"), f"{label}: source")
        except _Bad as exc:
            out.add_bad(str(exc))
            continue
        if source.get("type") in ("git", "directory", "file", "url"):
            out.skipped.append(f"{name}: not from a registry ({source.get('type')})")
            continue
        if name in direct or include_all:
            hashes = _file_hashes(p.get("files"))
            pin = Pin(file, hashes) if hashes else old_pins.get(name)
            _add(out, label, "pypi", name, p.get("version"), direct=name in direct, pin=pin)


_HASH_OPTION = re.compile(r"\s--hash[= ]\s*(\S+)")


def _requirements(path: Path, project: Path, out: ProjectDeps, depth: int, read: set[Path]) -> None:
    """pip's format: `name==1.0 --hash=sha256:...`, `-r other.txt`, continuations. Each file
    is read once (`read`): 100 lines of `-r requirements.txt` were 100^3 reads at depth 3."""
    if path.resolve() in read:
        return
    read.add(path.resolve())
    lines: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(_read(path).splitlines(), 1):
        if not pending:
            start = number
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        lines.append((start, pending + raw))
        pending = ""
    if pending:
        lines.append((start, pending))
    for number, raw in lines:
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path.name} line {number}"
        if line.startswith(("-r ", "--requirement ", "-c ", "--constraint ")):
            if line.startswith(("-r", "--requirement")) and depth < 3:
                target = (path.parent / line.split(None, 1)[1].strip()).resolve()
                if target.is_relative_to(project.resolve()) and target.is_file():
                    _requirements(target, project, out, depth + 1, read)
            continue
        if line.startswith("-"):  # -e, --index-url, --hash on its own...
            if line.startswith(("-e", "--editable")):
                out.skipped.append(f"{line[:60]}: editable, not from a registry")
            continue
        hashes = tuple((None, *h) for h in (parse_hash(x) for x in _HASH_OPTION.findall(" " + line)) if h)
        line = re.split(r"\s--hash[= ]", line, maxsplit=1)[0].strip()
        parsed = _pep508(line)
        if parsed is None:
            if "://" in line or " @ " in line:
                out.skipped.append(f"{line[:60]}: URL requirement, not from a registry")
            elif not re.match(r"^[A-Za-z0-9]", line):
                out.add_bad(f"{where}: cannot read {ascii(line[:80])}")
            continue
        name, version, spec = parsed
        _add(out, where, "pypi", name, version, spec, pin=Pin(path.name, hashes) if hashes else None)


# -- JavaScript --------------------------------------------------------------------------

_NON_REGISTRY = ("file:", "link:", "workspace:", "git", "github:", "http:", "https:", "portal:", "patch:")
_DEP_KEYS = ("dependencies", "devDependencies", "optionalDependencies")


def _package_json_direct(project: Path, out: ProjectDeps) -> dict[str, str]:
    """name -> range from package.json; a value that is not a string is a bad entry."""
    path = project / "package.json"
    if not path.is_file():
        return {}
    data = _json(path)
    found: dict[str, str] = {}
    for key in _DEP_KEYS:
        try:
            table = _table(data.get(key), f"package.json: {key}")
        except _Bad as exc:
            out.add_bad(str(exc))
            continue
        for name, spec in table.items():
            if isinstance(spec, str):
                found[name] = spec
            else:
                out.add_bad(f"package.json: {key}[{_shown(name)}] is {_kind(spec)}, not a version range")
    return found


def _javascript(project: Path, include_all: bool, out: ProjectDeps) -> None:
    direct = _package_json_direct(project, out)
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
            where = f"package.json: dependency {_shown(name)}"
            if _exact_semver(exact):
                _add(out, where, "npm", name, exact)
            elif "\x00" in spec or any(ord(c) < 32 for c in spec):
                out.add_bad(f"{where}: range {_shown(spec)} holds control characters")
            else:
                _add(out, where, "npm", name, None, spec or "latest")
    return None


def _exact_semver(text: str) -> bool:
    """`5.0.0` (a pin in package.json), not a range."""
    return bool(re.fullmatch(r"\d{1,9}\.\d{1,9}\.\d{1,9}(?:-[0-9A-Za-z.-]{1,64})?(?:\+[0-9A-Za-z.-]{1,64})?", text))


def _sri_pin(source: str, integrity: object) -> Pin | None:
    hashes = tuple((None, a, h) for a, h in parse_sri(integrity))
    return Pin(source, hashes) if hashes else None


def _npm_alias(name: str, version: str) -> tuple[str, str]:
    """lockfile v1 aliases: `"version": "npm:string-width@4.2.3"`."""
    if version.startswith("npm:"):
        rest = version[4:]
        at = rest.rfind("@")
        if at > 0:
            return rest[:at], rest[at + 1:]
    return name, version


def _npm_lock(path: Path, direct: dict[str, str], include_all: bool, out: ProjectDeps) -> None:
    file = path.name
    data = _json(path)
    out.files.append(file)
    packages = data.get("packages")
    found: dict[tuple[str, str], tuple[bool, str, Pin | None]] = {}
    if packages is not None:  # lockfileVersion 2 and 3
        if not isinstance(packages, dict):
            out.add_bad(f"{file}: packages is {_kind(packages)}, not an object")
            return
        names = set(direct)
        try:
            root = _table(packages.get(""), f'{file}: packages[""]')
            for key in _DEP_KEYS:
                names |= set(_table(root.get(key), f'{file}: packages[""].{key}'))
        except _Bad as exc:
            out.add_bad(str(exc))
        for key, meta in packages.items():
            if not key.startswith("node_modules/") and "/node_modules/" not in key:
                continue
            where = f"{file}: packages[{_shown(key)}]"
            if not isinstance(meta, dict):
                out.add_bad(f"{where} is {_kind(meta)}, not an object")
                continue
            if meta.get("link"):
                continue
            version = meta.get("version")
            name = meta.get("name") or key.rsplit("node_modules/", 1)[1]
            if not isinstance(version, str) or not isinstance(name, str):
                out.add_bad(f"{where}: {'version' if not isinstance(version, str) else 'name'} is "
                            f"{_kind(version if not isinstance(version, str) else name)}, not a string")
                continue
            if version.startswith(_NON_REGISTRY):
                continue
            top = key == f"node_modules/{name}"
            is_direct = top and name in names
            if is_direct or include_all:
                old = found.get((name, version))
                found[(name, version)] = ((old[0] if old else False) or is_direct, where,
                                          _sri_pin(file, meta.get("integrity")))
    else:  # lockfileVersion 1
        try:
            deps = _table(data.get("dependencies"), f"{file}: dependencies")
        except _Bad as exc:
            out.add_bad(str(exc))
            deps = {}
        for name, meta in deps.items():
            where = f"{file}: dependencies[{_shown(name)}]"
            if not isinstance(meta, dict) or not isinstance(meta.get("version"), str):
                out.add_bad(f"{where}: {'version' if isinstance(meta, dict) else 'entry'} is "
                            f"{_kind(meta.get('version') if isinstance(meta, dict) else meta)}, not a string")
                continue
            if (name in direct or include_all) and not meta["version"].startswith(_NON_REGISTRY):
                real, version = _npm_alias(name, meta["version"])
                found[(real, version)] = (name in direct, where, _sri_pin(file, meta.get("integrity")))
    for (n, v), (d, where, pin) in sorted(found.items()):
        _add(out, where, "npm", n, v, direct=d, pin=pin)


def _clean_pnpm_version(v: str) -> str | None:
    v = v.split("(", 1)[0].strip()
    if v.startswith(_NON_REGISTRY) or not v:
        return None
    return v


_PNPM_KEY = re.compile(r"^/?((?:@[^/@]+/)?[^/@]+)[@/]([^/()]+)")


def _pnpm_lock(path: Path, direct: dict[str, str], include_all: bool, out: ProjectDeps) -> None:
    file = path.name
    data = load_yaml(_read(path), file) or {}
    if not isinstance(data, dict):
        raise InputError(f"{file} is not a YAML mapping")
    out.files.append(file)
    pins: dict[tuple[str, str], Pin] = {}
    listed: list[tuple[str, str]] = []
    packages = data.get("packages")
    if packages is not None and not isinstance(packages, dict):
        out.add_bad(f"{file}: packages is {_kind(packages)}, not a mapping")
        packages = {}
    for key, meta in (packages or {}).items():
        m = _PNPM_KEY.match(key) if isinstance(key, str) else None
        if not m:
            continue
        listed.append((m.group(1), m.group(2)))
        resolution = meta.get("resolution") if isinstance(meta, dict) else None
        pin = _sri_pin(file, resolution.get("integrity")) if isinstance(resolution, dict) else None
        if pin:
            pins[(m.group(1), m.group(2))] = pin
    importers = data.get("importers")
    importer = importers.get(".") if isinstance(importers, dict) else None
    tables = importer if isinstance(importer, dict) else data
    found: dict[tuple[str, str], tuple[bool, str]] = {}
    for key in _DEP_KEYS:
        try:
            table = _table(tables.get(key), f"{file}: {key}")
        except _Bad as exc:
            out.add_bad(str(exc))
            continue
        for name, value in table.items():
            where = f"{file}: {key}[{_shown(name)}]"
            raw = value.get("version") if isinstance(value, dict) else value
            if isinstance(raw, int | float) and not isinstance(raw, bool):
                raw = str(raw)  # YAML reads `1.0` as a number
            if not isinstance(raw, str) or not isinstance(name, str):
                out.add_bad(f"{where} is {_kind(raw if isinstance(name, str) else name)}, not a version")
                continue
            version = _clean_pnpm_version(raw)
            if version is None:
                out.skipped.append(f"{name}: {raw[:40]} is not from the registry")
                continue
            found[(name, version)] = (True, where)
    if include_all:
        for name, version in listed:
            found.setdefault((name, version), (False, f"{file}: packages[{_shown(f'{name}@{version}')}]"))
    for (n, v), (d, where) in sorted(found.items()):
        _add(out, where, "npm", n, v, direct=d, pin=pins.get((n, v)))


def _yarn_lock(path: Path, direct: dict[str, str], include_all: bool, out: ProjectDeps) -> None:
    """yarn v1 (`"a@^1.0.0", a@~1.1:` + `  version "1.2.3"` + `  integrity sha512-...`) and
    Berry (`"a@npm:^1.0.0":` + `  version: 1.2.3`), read line by line. Berry's `checksum` is
    of its own zip cache, not of the registry's tarball: no pin from it."""
    file = path.name
    out.files.append(file)
    first_bad: str | None = None
    by_spec: dict[str, tuple[str, str, int]] = {}  # "name@range" -> (name, version, entry line)
    integrity: dict[int, Pin] = {}  # entry line -> pin
    header: list[str] | None = None
    header_line = 0
    entries = 0
    text = _read(path)
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            if not line.rstrip().endswith(":"):
                first_bad = first_bad or f"{file} line {number}: cannot read {ascii(line[:80])}"
                out.add_bad(f"{file} line {number}: cannot read {ascii(line[:80])}")
                header = None
                continue
            header = [s.strip().strip('"') for s in line.rstrip()[:-1].split(",")]
            header_line = number
            continue
        m = re.match(r'^\s{2}integrity:?\s+"?([^"\s]+)"?\s*$', line)
        if m and header_line:
            pin = _sri_pin(file, m.group(1))
            if pin:
                integrity[header_line] = pin
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
                by_spec[f"{name}@{rng.removeprefix('npm:')}"] = (name, m.group(1), header_line)
            header = None
    if entries == 0 and first_bad:  # nothing readable at all: not a yarn.lock
        raise InputError(f"{first_bad}: not a yarn.lock")
    if entries == 0 and by_spec == {} and path.stat().st_size > 0 and "version" not in text[:100000]:
        raise InputError(f"{file}: no package entries found")
    found: dict[tuple[str, str], tuple[bool, int]] = {}
    for name, rng in direct.items():
        hit = by_spec.get(f"{name}@{rng.removeprefix('npm:')}")
        if hit:
            found[(hit[0], hit[1])] = (True, hit[2])
        else:
            out.skipped.append(f"{name}@{rng}: not in yarn.lock")
    if include_all:
        for name, version, line in by_spec.values():
            if "__metadata" not in name:
                found.setdefault((name, version), (False, line))
    for (n, v), (d, line) in sorted(found.items()):
        _add(out, f"{file} line {line}", "npm", n, v, direct=d, pin=integrity.get(line))
