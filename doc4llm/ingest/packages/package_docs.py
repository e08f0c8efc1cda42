"""`add` for packages: resolve a release, fetch and extract its archive, collect its pages,
write the set. Also used per dependency by `sync`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from doc4llm.corpus.atomic import file_sha256
from doc4llm.errors import InputError
from doc4llm.ingest.packages import archive as archives
from doc4llm.ingest.packages.autodoc import ApiLookup
from doc4llm.ingest.packages.build import (
    BUILD_FORMAT,
    check_replaceable,
    release_root,
    temp_root,
    write_set,
)
from doc4llm.ingest.packages.collect import (
    Converter,
    changelog_pages,
    docs_pages,
    read_npm_metadata,
    read_python_metadata,
    readme_page,
)
from doc4llm.ingest.packages.holdings import holdings, missing
from doc4llm.ingest.packages.http import Http
from doc4llm.ingest.packages.integrity import (
    Pin,
    check_archive,
    check_metadata,
    require_hash,
)
from doc4llm.ingest.packages.pages import API, CHANGELOG, DOCS, DocPage
from doc4llm.ingest.packages.registry_config import NpmConfig, display_url, npm_config
from doc4llm.ingest.packages.spec import PackageRef, Release, set_base_name, validate_package
from doc4llm.ingest.packages.upstream import NOT_NEEDED, UpstreamDocs, missing_docs, upstream_retry


@dataclass
class AddResult:
    set_name: str
    status: str  # created | replaced | unchanged
    ecosystem: str
    name: str
    version: str
    path: str = ""
    pages: int = 0
    sources: dict[str, int] = field(default_factory=dict)
    api_sections: int = 0
    seconds: float = 0.0
    archive: str = ""
    sha256: str = ""
    verified: str = ""  # what the archive was checked against, or `unverified`
    warnings: list[str] = field(default_factory=list)
    holds: dict = field(default_factory=dict)  # holdings.py: docs / API / readme / changelog
    missing: list[str] = field(default_factory=list)  # "no narrative docs (looked at: ...)"
    looked_at: list[dict] = field(default_factory=list)  # places asked for docs beyond the archive

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def same_release(current: dict | None, release: Release, langs: set[str] | None = None) -> bool:
    """The existing set was built from this very archive by this builder format, with the
    same translations (`--lang`)."""
    if not current or current.get("format") != BUILD_FORMAT:
        return False
    if sorted(current.get("langs") or []) != sorted(langs or []):
        return False
    if (current.get("ecosystem"), current.get("name"), current.get("version")) != \
            (release.ecosystem, release.name, release.version):
        return False
    want = release.hashes.get("sha256")
    if want:
        return current.get("sha256") == want
    if release.hashes.get("sha512"):
        return current.get("integrity") == release.hashes["sha512"]
    return current.get("archive") == release.filename


def add_package(ref: PackageRef, docs_dir: Path, *, set_name: str | None = None, http: Http | None = None,
                index_url: str | None = None, npm: NpmConfig | None = None, force: bool = False,
                release: Release | None = None, offline: bool = False, pin: Pin | None = None,
                require_hashes: bool = False, timeout: float | None = None,
                langs: set[str] | None = None) -> AddResult:
    """Build (or keep) the set of one package release from the registry. `pin`: the hashes
    a lockfile gives for it; `timeout`: seconds for the whole add (when it makes its Http);
    `langs`: the translations to read besides the default language (`--lang`)."""
    from doc4llm.ingest.packages import npm as npm_registry
    from doc4llm.ingest.packages import pypi

    started = time.monotonic()
    own_http = http is None
    http = http or Http(budget=timeout, what="this add")
    try:
        npm = npm or npm_config()
        if release is None:
            release = pypi.resolve(http, ref, index_url, pin=pin) if ref.ecosystem == "pypi" else \
                npm_registry.resolve(http, ref, npm)
        name = set_name or release.set_name()
        current = check_replaceable(Path(docs_dir), name)
        if not force and same_release(current, release, langs) and not upstream_retry(current, offline):
            return AddResult(name, "unchanged", release.ecosystem, release.name, release.version,
                             str(Path(docs_dir).resolve() / name), current.get("pages", 0),
                             current.get("sources") or {}, current.get("api_sections", 0),
                             round(time.monotonic() - started, 2), release.filename, current.get("sha256", ""),
                             current.get("verified", ""),
                             holds=current.get("holds") or {}, missing=list(current.get("missing") or []),
                             looked_at=list(current.get("looked_at") or []))
        work = temp_root(Path(docs_dir).resolve())
        try:
            path, sha256 = archives.download(http, release, work)
            verified = check_archive(path, sha256, release, pin)
            if require_hashes:
                require_hash(verified, release, pin)
            http.check_budget()
            return _build(path, sha256, work, Path(docs_dir), name, release, http, npm, started, verified,
                          offline, langs)
        finally:
            release_root(work)
    finally:
        if own_http:
            http.close()


def add_archive(path: Path, docs_dir: Path, *, set_name: str | None = None, http: Http | None = None,
                offline: bool = False, langs: set[str] | None = None) -> AddResult:
    """Build the set of a package archive on disk (`.tar.gz`, `.tgz`, `.whl`, `.zip`)."""
    started = time.monotonic()
    work = temp_root(Path(docs_dir).resolve())
    try:
        sha256 = file_sha256(path)
        return _build(Path(path), sha256, work, Path(docs_dir), set_name, None, http, None, started,
                      "local file", offline, langs)
    finally:
        release_root(work)


def _build(path: Path, sha256: str, work: Path, docs_dir: Path, set_name: str | None, release: Release | None,
           http: Http | None, npm: NpmConfig | None, started: float, verified: str,
           offline: bool = False, langs: set[str] | None = None) -> AddResult:
    extracted = archives.extract(path, work / "x")
    root = extracted.root
    warnings = [f"{s}" for s in extracted.skipped[:20]]
    ecosystem = release.ecosystem if release else _guess_ecosystem(root, path)
    meta = read_python_metadata(root) if ecosystem == "pypi" else read_npm_metadata(root)
    if release is None:
        name, version = meta.get("name"), meta.get("version")
        if not isinstance(name, str) or not isinstance(version, str) or not name or not version:
            raise InputError(f"{path.name}: no package name and version in its metadata "
                             "(PKG-INFO, METADATA or package.json)")
        from doc4llm.ingest.packages.spec import normalize_pypi

        name, version = name.strip(), version.strip()
        validate_package(ecosystem, name, version, f"{path.name} ({meta.get('file') or 'package.json'})")
        release = Release(ecosystem, normalize_pypi(name) if ecosystem == "pypi" else name, version,
                          str(path), path.name, {"sha256": sha256}, "local file")
    else:
        check_metadata(meta, release, release.filename)
    set_name = set_name or release.set_name()
    check_replaceable(docs_dir, set_name)
    pages, types_from = collect_pages(root, release, meta, warnings, http, npm, work, langs)
    for page in pages:  # where each page came from (doc4llm-set.yaml `extra.origin`)
        page.extra = page.extra or {"origin": "archive", "path": page.source}
    upstream = UpstreamDocs(NOT_NEEDED)
    if not any(p.origin == DOCS for p in pages):
        api = [p for p in pages if p.origin == API]
        upstream = missing_docs(root, release, meta, work, offline=offline,
                                want_changelog=not any(p.origin == CHANGELOG for p in pages),
                                lookup=ApiLookup(api) if release.ecosystem == "pypi" else None, langs=langs)
        pages += upstream.pages
        warnings += upstream.warnings
    if not pages:
        raise InputError(f"{release.name} {release.version}: no README, docs, changelog or API found "
                         "in its archive")
    api_sections = sum(_count_sections(p.body) for p in pages if p.origin == API)
    holds = holdings(pages, api_sections)
    api_looked = "archive" + (f", @types/{release.name.lstrip('@').replace('/', '__')}"
                              if release.ecosystem == "npm" and npm is not None else "")
    gaps = missing(holds, upstream.looked_text(), api_looked)
    package = {"ecosystem": release.ecosystem, "name": release.name, "version": release.version,
               "archive": release.filename,
               "url": display_url(release.url) if release.registry != "local file" else None,  # no credentials
               "registry": release.registry, "sha256": sha256, "integrity": release.hashes.get("sha512"),
               "verified": verified, "pages": len(pages), "api_sections": api_sections, "holds": holds,
               "missing": gaps, "upstream": upstream.status,
               "looked_at": [lk.to_dict() for lk in upstream.looked]}
    if types_from:
        package["types_package"] = types_from
    if langs:
        package["langs"] = sorted(langs)
    result = write_set(docs_dir, set_name, pages, {k: v for k, v in package.items() if v is not None}, work)
    return AddResult(set_name, result.status, release.ecosystem, release.name, release.version, str(result.path),
                     result.pages, result.sources, api_sections, round(time.monotonic() - started, 2),
                     release.filename, sha256, verified, warnings, holds, gaps, package["looked_at"])


def _guess_ecosystem(root: Path, path: Path) -> str:
    if path.name.lower().endswith(".whl") or (root / "PKG-INFO").is_file() or any(root.glob("*.dist-info")):
        return "pypi"
    if (root / "package.json").is_file():
        return "npm"
    raise InputError(f"{path.name} is not a PyPI or npm package archive (no PKG-INFO, METADATA or package.json)")


def collect_pages(root: Path, release: Release, meta: dict, warnings: list[str], http: Http | None,
                  npm: NpmConfig | None, work: Path, langs: set[str] | None = None) -> tuple[list[DocPage], str | None]:
    display = release.name
    types_from = None
    # the API reference first: Sphinx autodoc directives in the docs are filled from it
    if release.ecosystem == "pypi":
        from doc4llm.ingest.packages.api_python import python_api_pages

        api = python_api_pages(root, release.name, warnings, release.version)
    else:
        from doc4llm.ingest.packages.api_typescript import typescript_api_pages

        api = typescript_api_pages(root, warnings, label="")
        api_root = root
        if not api and http is not None and npm is not None:
            api, types_from, types_root = _types_package_api(release, http, npm, work, warnings)
            api_root = types_root if types_from else root
        for page in api:
            page.title = f"{page.title} ({types_from or display} API)"
        if http is not None and npm is not None:  # what it re-exports from its dependencies
            from doc4llm.ingest.packages.dts_deps import dependency_api_pages

            api += dependency_api_pages(api_root, types_from or display, http, npm, work, warnings)
    conv = Converter(root, lookup=ApiLookup(api) if release.ecosystem == "pypi" else None, version=release.version)
    docs = docs_pages(root, conv, warnings, langs)
    readme = readme_page(root, meta, release.ecosystem, display, conv)
    if readme and any(p.title.casefold() == readme.title.casefold() for p in docs):
        readme.title = f"{display} README"  # tornado's README and docs index share their title
    changelog = changelog_pages(root, display, conv, docs)
    warnings.extend(conv.warnings())
    return ([readme] if readme else []) + docs + changelog + api, types_from


def _types_package_api(release: Release, http: Http, npm: NpmConfig, work: Path,
                       warnings: list[str]) -> tuple[list[DocPage], str | None, Path]:
    from doc4llm.errors import Doc4llmError
    from doc4llm.ingest.packages import npm as npm_registry
    from doc4llm.ingest.packages.api_typescript import typescript_api_pages

    try:
        types = npm_registry.types_release(http, release.name, release.version, npm)
        if types is None:
            return [], None, work
        tpath, tsha = archives.download(http, types, work)
        check_archive(tpath, tsha, types)
        textracted = archives.extract(tpath, work / "types")
        troot = textracted.root
        check_metadata(read_npm_metadata(troot), types, types.filename)
    except Doc4llmError as exc:
        warnings.append(f"@types package not used: {exc.message}")
        return [], None, work
    label = f"{types.name}@{types.version}"
    pages = typescript_api_pages(troot, warnings)
    for p in pages:
        p.source = f"{label}/{p.source}"
        p.key = f"api:{label}/{p.key[4:]}"
    return pages, label, troot


def _count_sections(body: str) -> int:
    return sum(1 for line in body.split("\n") if line.startswith(("## ", "### ")))


__all__ = ["AddResult", "add_archive", "add_package", "set_base_name"]
