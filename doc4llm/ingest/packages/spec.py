"""What `doc4llm add SOURCE` was asked for, and the release a registry resolved it to."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from doc4llm.errors import InputError

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".whl", ".zip", ".tar.bz2", ".tar")
_PEP503 = re.compile(r"[-_.]+")
_NPM_NAME = re.compile(r"^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$", re.IGNORECASE)
_PY_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")
# PEP 440 (epochs `1!2.0`, local `+abc`) and semver (`1.0.0-rc.1+build.5`) and nothing else:
# a version becomes part of a folder name, so no `/`, `\`, NUL, control character or `..`
_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+!_-]{0,127}$")
MAX_NAME = 214  # npm's limit; PyPI names are shorter in practice


def name_problem(ecosystem: str, name: object) -> str | None:
    """Why `name` is not a valid package name for `ecosystem` (None when it is)."""
    if not isinstance(name, str) or not name:
        return f"the package name is {_shown(name)}, not a name"
    pattern = _PY_NAME if ecosystem == "pypi" else _NPM_NAME
    if len(name) > MAX_NAME or not pattern.match(name):
        return f"{_shown(name)} is not a valid {'PyPI' if ecosystem == 'pypi' else 'npm'} package name"
    return None


def version_problem(version: object) -> str | None:
    """Why `version` is not an exact version doc4llm can name a set after (None when it is)."""
    if not isinstance(version, str) or not version:
        return f"the version is {_shown(version)}, not a version"
    if not _VERSION.match(version):
        return f"version {_shown(version)} is not a version (letters, digits and . + ! _ - only)"
    return None


def validate_package(ecosystem: str, name: object, version: object, source: str) -> None:
    """The one check every name and version passes (from `add`, lockfiles, manifests,
    PKG-INFO, package.json and registry answers) before it names a set or a URL."""
    problem = name_problem(ecosystem, name) or (version_problem(version) if version is not None else None)
    if problem:
        raise InputError(f"{source}: {problem}: refused")


def _shown(value: object) -> str:
    """A short, printable form of untrusted text for a message."""
    if isinstance(value, str):
        return repr(value[:60] + ("..." if len(value) > 60 else ""))
    return "null" if value is None else f"a {type(value).__name__}"


def normalize_pypi(name: str) -> str:
    """PEP 503: `Foo_Bar.baz` and `foo-bar-baz` are the same project."""
    return _PEP503.sub("-", name).lower()


@dataclass
class PackageRef:
    """A package request: ecosystem, name and what version (None = latest)."""

    ecosystem: str  # "pypi" | "npm"
    name: str
    requested: str | None = None  # exact version, a specifier/range, or an npm dist-tag

    def __str__(self) -> str:
        sep = "==" if self.ecosystem == "pypi" else "@"
        return f"{self.ecosystem}:{self.name}" + (f"{sep}{self.requested}" if self.requested else "")


@dataclass
class Release:
    """One version of a package and the archive to build it from."""

    ecosystem: str
    name: str
    version: str
    url: str
    filename: str
    hashes: dict[str, str] = field(default_factory=dict)  # sha256 hex / sha512 / sha1 (npm)
    registry: str = ""  # display form (no credentials)
    types_url: str | None = None  # npm: an @types/ package when the package has no .d.ts

    def __post_init__(self) -> None:
        validate_package(self.ecosystem, self.name, self.version, f"{self.ecosystem}:{self.name}")

    def set_name(self) -> str:
        return f"{set_base_name(self.ecosystem, self.name)}@{self.version}"


def set_base_name(ecosystem: str, name: str) -> str:
    """The set name before '@': the PyPI name normalized; npm scopes as `scope__name`
    (a set name holds exactly one '@' and no '/')."""
    if ecosystem == "pypi":
        return normalize_pypi(name)
    if name.startswith("@") and "/" in name:
        scope, rest = name[1:].split("/", 1)
        return f"{scope}__{rest}"
    return name


def parse_source(source: str) -> PackageRef | None:
    """`pypi:NAME[==VER|SPEC]` / `npm:NAME[@VER|RANGE|TAG]` -> PackageRef; anything else None."""
    low = source[:5].lower()
    if low.startswith("pypi:"):
        body = source[5:].strip()
        m = re.match(r"^([A-Za-z0-9._-]+)\s*(\[[^\]]*\])?\s*(.*)$", body)
        if not m or not _PY_NAME.match(m.group(1)):
            raise InputError(f"not a PyPI package name: {body!r}", hint="e.g. pypi:click==8.1.7")
        rest = m.group(3).strip()
        if rest.startswith("=="):
            rest = rest[2:].strip()
        elif rest and rest[0] not in "<>=!~":
            raise InputError(f"cannot read the version in {source!r}", hint="e.g. pypi:click==8.1.7")
        return PackageRef("pypi", m.group(1), rest or None)
    if low.startswith("npm:"):
        body = source[4:].strip()
        at = body.find("@", 1)  # a scope's leading '@' is part of the name
        name, req = (body[:at], body[at + 1:].strip()) if at > 0 else (body, "")
        if not _NPM_NAME.match(name):
            raise InputError(f"not an npm package name: {name!r}", hint="e.g. npm:p-limit@5.0.0")
        return PackageRef("npm", name, req or None)
    return None


def is_archive_path(path: Path) -> bool:
    name = path.name.lower()
    return path.is_file() and name.endswith(ARCHIVE_SUFFIXES)
