"""The npm registry: a version (exact, range or dist-tag) and its tarball.

Ranges are matched with node-semver's Python port (the same rules npm applies), so a
`package.json` range resolves to the version npm would install today. When a package
ships no `.d.ts`, its `@types/` package at the nearest version gives the API reference.
"""

from __future__ import annotations

from urllib.parse import quote

import nodesemver

from doc4llm.errors import InputError
from doc4llm.ingest.packages.http import Http, NotFoundOnRegistry
from doc4llm.ingest.packages.registry_config import NpmConfig, display_url, npm_config
from doc4llm.ingest.packages.spec import PackageRef, Release, version_problem


def packument(http: Http, name: str, config: NpmConfig) -> dict:
    registry = config.registry_for(name)
    url = registry + quote(name, safe="@")  # `@scope/name` -> `@scope%2fname`
    try:
        return http.get_json(url)
    except NotFoundOnRegistry:
        raise InputError(f"no npm package named {name!r} on {display_url(registry)}",
                         hint="check the spelling (npm:NAME[@VERSION])") from None


def resolve(http: Http, ref: PackageRef, config: NpmConfig | None = None) -> Release:
    config = config or npm_config()
    doc = packument(http, ref.name, config)
    versions = doc.get("versions")
    if not isinstance(versions, dict) or not versions:
        raise InputError(f"npm package {ref.name!r} has no published version")
    version = choose_version(ref, doc)
    return _release(doc, ref.name, version, config)


def _release(doc: dict, name: str, version: str, config: NpmConfig) -> Release:
    meta = doc["versions"][version]
    dist = meta.get("dist") if isinstance(meta, dict) else None
    url = dist.get("tarball") if isinstance(dist, dict) else None
    if not isinstance(url, str) or not url:
        raise InputError(f"{name}@{version} has no tarball in the registry's metadata")
    hashes = {}
    integrity = dist.get("integrity")
    if isinstance(integrity, str) and integrity.startswith("sha512-"):
        hashes["sha512"] = integrity.split()[0][len("sha512-"):]
    if isinstance(dist.get("shasum"), str) and dist["shasum"]:
        hashes["sha1"] = dist["shasum"]
    return Release("npm", name, version, url, url.rsplit("/", 1)[-1], hashes,
                   display_url(config.registry_for(name)))


def choose_version(ref: PackageRef, doc: dict) -> str:
    """The version `ref` asks for among the registry's versions that are valid version
    strings (a version with a NUL or a `/` is never a candidate)."""
    listed = doc.get("versions")
    versions = [v for v in (listed if isinstance(listed, dict) else {}) if version_problem(v) is None]
    tags = doc.get("dist-tags")
    tags = tags if isinstance(tags, dict) else {}
    req = ref.requested
    if req is None:
        req = "latest"
    if req in versions:
        return req
    if isinstance(req, str) and req in tags and tags[req] in versions:
        return tags[req]
    try:
        best = nodesemver.max_satisfying(versions, req, loose=True)
    except (ValueError, TypeError):
        best = None
    if best:
        return best
    stable = nodesemver.sort([v for v in versions if _valid(v)], loose=True)[-10:]
    raise InputError(f"{ref.name} has no version matching {req!r} on the registry", candidates=stable)


def types_release(http: Http, name: str, version: str, config: NpmConfig) -> Release | None:
    """`@types/<name>` at the version nearest `version` (same major.minor, else same major),
    for packages such as react that publish their types separately. None if there is none."""
    types_name = "@types/" + (name[1:].replace("/", "__") if name.startswith("@") else name)
    try:
        doc = packument(http, types_name, config)
    except InputError:
        return None
    parts = version.split(".")
    for rng in (f"~{parts[0]}.{parts[1] if len(parts) > 1 else 0}.0", f"^{parts[0]}.0.0", "*"):
        try:
            return resolve_from(doc, types_name, rng, config)
        except InputError:
            continue
    return None


def resolve_from(doc: dict, name: str, req: str, config: NpmConfig) -> Release:
    version = choose_version(PackageRef("npm", name, req), doc)
    return _release(doc, name, version, config)


def _valid(v: str) -> bool:
    return len(v) <= 256 and nodesemver.valid(v, loose=True) is not None
