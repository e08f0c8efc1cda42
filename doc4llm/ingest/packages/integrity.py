"""Is the downloaded archive the one that was asked for?

Three checks, in order: the lockfile's hash for the file (sha256 from uv.lock, poetry.lock,
`--hash` in requirements; SRI `integrity` from package-lock.json, pnpm-lock.yaml, yarn.lock),
the registry's digest (PyPI's sha256, npm's SRI / shasum), and the archive's own metadata
(PKG-INFO / METADATA / package.json) naming the package and version requested. A mismatch
refuses the archive (`IntegrityError`, exit 3, naming the lockfile or the registry). An
archive nobody gave a hash for is `unverified`: said in the set's metadata and the summary,
and refused under `--require-hashes`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from pathlib import Path

from doc4llm.errors import ExternalError
from doc4llm.ingest.packages.spec import Release, normalize_pypi

UNVERIFIED = "unverified"
# strongest first: with several algorithms for one file, the strongest one decides (SRI rules)
_ALGORITHMS = ("sha512", "sha384", "sha256", "sha1")
_HEX_LENGTH = {"sha512": 128, "sha384": 96, "sha256": 64, "sha1": 40}


class IntegrityError(ExternalError):
    """The archive is not what the lockfile, the registry or the request says (exit 3)."""


@dataclass(frozen=True)
class Pin:
    """The hashes a lockfile gives for one package: (file name or None, algorithm, hex)."""

    source: str  # the lockfile's name, for messages
    hashes: tuple[tuple[str | None, str, str], ...]

    def named_files(self) -> set[str]:
        return {f for f, _, _ in self.hashes if f}

    def for_file(self, filename: str) -> list[tuple[str, str]]:
        named = [(a, h) for f, a, h in self.hashes if f == filename]
        return named or [(a, h) for f, a, h in self.hashes if f is None]


def parse_hash(text: object) -> tuple[str, str] | None:
    """`sha256:HEX` / `sha256=HEX` (pip, uv, poetry) -> (algorithm, lowercase hex); None
    for anything else."""
    if not isinstance(text, str):
        return None
    for sep in (":", "="):
        algo, _, value = text.strip().partition(sep)
        algo = algo.lower()
        if value and algo in _HEX_LENGTH and len(value) == _HEX_LENGTH[algo]:
            try:
                int(value, 16)
            except ValueError:
                return None
            return algo, value.lower()
    return None


def parse_sri(text: object) -> list[tuple[str, str]]:
    """SRI `sha512-BASE64 [sha1-BASE64 ...]` (npm, pnpm, yarn) -> [(algorithm, hex)]."""
    if not isinstance(text, str):
        return []
    out = []
    for token in text.split():
        algo, _, value = token.partition("-")
        algo = algo.lower()
        if algo not in _HEX_LENGTH or not value:
            continue
        try:
            raw = base64.b64decode(value.split("?", 1)[0], validate=True)
        except (binascii.Error, ValueError):
            continue
        if len(raw) * 2 == _HEX_LENGTH[algo]:
            out.append((algo, raw.hex()))
    return out


def _registry_hashes(release: Release) -> list[tuple[str, str]]:
    out = []
    for algo, value in release.hashes.items():
        if algo == "sha512":  # npm's integrity, base64
            out += parse_sri(f"sha512-{value}")
        else:
            parsed = parse_hash(f"{algo}:{value}")
            if parsed:
                out.append(parsed)
    return out


def _digests(path: Path, algorithms: set[str], known: dict[str, str]) -> dict[str, str]:
    need = [a for a in algorithms if a not in known]
    if need:
        hashers = {a: hashlib.new(a) for a in need}
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                for h in hashers.values():
                    h.update(block)
        known = {**known, **{a: h.hexdigest() for a, h in hashers.items()}}
    return known


def _strongest(wanted: list[tuple[str, str]]) -> tuple[str, set[str]]:
    algo = next(a for a in _ALGORITHMS if any(w == a for w, _ in wanted))
    return algo, {h for a, h in wanted if a == algo}


def check_archive(path: Path, sha256: str, release: Release, pin: Pin | None = None) -> str:
    """Check the downloaded `path` against `pin` and the registry's digests; return what
    was verified (`sha256 (uv.lock), sha256 (registry)`, or `unverified`)."""
    label = f"{release.filename} ({release.ecosystem}:{release.name} {release.version})"
    known = {"sha256": sha256.lower()}
    done = []
    if pin is not None and pin.hashes:
        wanted = pin.for_file(release.filename)
        if not wanted:
            raise IntegrityError(f"{pin.source} pins other files for {release.name} {release.version} "
                                 f"({', '.join(sorted(pin.named_files()))[:200]}), not {release.filename}: not used",
                                 hint="the index serves a file the lockfile does not list; update the lockfile")
        algo, allowed = _strongest(wanted)
        known = _digests(path, {algo}, known)
        if known[algo] not in allowed:
            raise IntegrityError(f"{pin.source}: {label} has {algo} {known[algo][:16]}..., the lockfile "
                                 f"says {sorted(allowed)[0][:16]}...: not used",
                                 hint="the archive changed since the lockfile was written, or the index "
                                      "serves another file: check before trusting it")
        done.append(f"{algo} ({pin.source})")
    registry = _registry_hashes(release)
    if registry:
        algo, allowed = _strongest(registry)
        known = _digests(path, {algo}, known)
        if known[algo] not in allowed:
            raise IntegrityError(f"{label}: {algo} {known[algo][:16]}... does not match the registry's "
                                 f"{sorted(allowed)[0][:16]}... ({release.registry or 'registry'}): not used")
        done.append(f"{algo} (registry)")
    return ", ".join(done) or UNVERIFIED


def require_hash(verified: str, release: Release, pin: Pin | None) -> None:
    """--require-hashes: an archive nobody gave a hash for is refused."""
    if verified == UNVERIFIED:
        where = f"{pin.source} nor the registry" if pin else "the lockfile nor the registry"
        raise IntegrityError(f"{release.filename} ({release.name} {release.version}): neither {where} gives "
                             "a hash to check it against: not used (--require-hashes)",
                             hint="drop --require-hashes to accept unverified archives")


def check_metadata(meta: dict, release: Release, archive: str) -> None:
    """The archive's own name and version (PKG-INFO / METADATA / package.json) must be the
    ones requested: `other-9.9` served for `mismatch==1.0` is refused. An archive without
    metadata is not refused here (old sdists lack PKG-INFO; the name then comes from the request)."""
    name, version = meta.get("name"), meta.get("version")
    if release.ecosystem == "pypi":
        same_name = not isinstance(name, str) or normalize_pypi(name.strip()) == normalize_pypi(release.name)
        same_version = not isinstance(version, str) or _same_pypi_version(version.strip(), release.version)
    else:
        same_name = not isinstance(name, str) or name == release.name
        same_version = not isinstance(version, str) or \
            version.strip().lstrip("=v") == release.version.lstrip("=v")
    if not (same_name and same_version):
        raise IntegrityError(f"{archive}: the archive says it is {ascii(str(name)[:60])} {ascii(str(version)[:40])}, "
                             f"not {release.name} {release.version}: not used",
                             hint="the registry served another package's archive")


def _same_pypi_version(a: str, b: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a == b
