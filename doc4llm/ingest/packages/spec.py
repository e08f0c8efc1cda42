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
