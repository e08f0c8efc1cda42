"""Docs that are not in the package archive: the source repository at the version's tag,
else the docs site, as the package's own metadata names them.

Called when the archive holds no narrative docs. Everything fetched is untrusted and
bounded like an archive from a registry: the repository archive is streamed against a
byte cap and a deadline and extracted by the same safe extraction (archive.py); the docs
folder is found by the same code as in an archive (collect.py); the site goes through the
site scraper (site_docs.py). A failure of any of these leaves the set as the archive
makes it and is said in the report (`looked_at`), never raised.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from doc4llm.errors import Doc4llmError
from doc4llm.ingest.packages import archive as archives
from doc4llm.ingest.packages.autodoc import ApiLookup
from doc4llm.ingest.packages.http import MAX_ARCHIVE_BYTES, USER_AGENT
from doc4llm.ingest.packages.pages import CHANGELOG, DocPage
from doc4llm.ingest.packages.project_links import (
    ProjectLinks,
    RepoRef,
    archive_url,
    npm_links,
    python_links,
    tag_candidates,
)
from doc4llm.ingest.packages.registry_config import display_url
from doc4llm.ingest.packages.spec import Release
from doc4llm.ingest.packages.upstream_config import UpstreamSettings, load_upstream_settings

NOT_NEEDED, OFFLINE, DISABLED, NO_LINKS, TRIED = "not needed", "skipped offline", "disabled", "no links", "tried"


@dataclass
class Looked:
    """One place looked at for docs: what it is, how many pages it gave, what went wrong."""

    where: str  # archive | github.com/o/r@v1.0 | docs.example.dev/1.0
    pages: int = 0
    why: str = ""  # empty when the place answered (with or without docs)

    def to_dict(self) -> dict:
        return {"where": self.where, "pages": self.pages, **({"why": self.why} if self.why else {})}


@dataclass
class UpstreamDocs:
    status: str  # not needed | skipped offline | disabled | no links | tried
    pages: list[DocPage] = field(default_factory=list)
    looked: list[Looked] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    disabled_by: str = ""

    def looked_text(self) -> str:
        """`archive, github.com/o/r@v1 (HTTP 404), docs.x.dev` or, when nothing beyond the
        archive was asked, `archive; <why not>`."""
        if self.status == OFFLINE:
            return "archive; repository and site skipped offline"
        if self.status == DISABLED:
            return f"archive; repository and site lookup turned off ({self.disabled_by})"
        if self.status == NO_LINKS:
            return "archive; its metadata names no source repository or docs site"
        return ", ".join(f"{lk.where} ({lk.why})" if lk.why else lk.where for lk in self.looked)


def project_links(root: Path, meta: dict, ecosystem: str, settings: UpstreamSettings) -> ProjectLinks:
    if ecosystem == "pypi":
        return python_links(root, meta.get("file"), settings)
    return npm_links(meta, settings)


def missing_docs(root: Path, release: Release, meta: dict, work: Path, *, offline: bool,
                 want_changelog: bool, settings: UpstreamSettings | None = None,
                 lookup: ApiLookup | None = None, langs: set[str] | None = None) -> UpstreamDocs:
    """Narrative docs for a release whose archive has none: from its repository at the
    version's tag, else from its docs site. Never raises for network or archive trouble.
    `lookup`: the archive's API reference, which fills the repository docs' autodoc
    directives; `langs`: translations to read besides the default language."""
    settings = settings or load_upstream_settings()
    if offline:
        return UpstreamDocs(OFFLINE, looked=[Looked("archive")])
    if not settings.enabled:
        return UpstreamDocs(DISABLED, looked=[Looked("archive")], disabled_by=settings.disabled_by)
    links = project_links(root, meta, release.ecosystem, settings)
    out = UpstreamDocs(TRIED, looked=[Looked("archive")])
    if not links.repos and not links.sites:
        out.status = NO_LINKS
        return out
    deadline = time.monotonic() + settings.deadline
    for i, repo in enumerate(links.repos):
        pages = _repo_docs(repo, release, work / f"upstream-repo-{i}", settings, deadline, out, want_changelog,
                           lookup, langs)
        if any(p.origin != CHANGELOG for p in pages):
            out.pages = pages
            return out
        want_changelog = want_changelog and not pages
        out.pages += pages  # a changelog from a tag without docs is still worth keeping
    for url in links.sites:
        if time.monotonic() > deadline:
            out.looked.append(Looked(urlsplit(url).netloc, why="deadline reached"))
            break
        from doc4llm.ingest.packages.site_docs import site_docs

        site = site_docs(url, release.version, settings, deadline)
        out.looked.append(Looked(site.where, len(site.pages), "" if site.pages else site.note))
        if site.pages:
            if site.note:
                out.warnings.append(f"docs site {site.where}: {site.note}")
            out.pages += site.pages
            return out
    return out


def _repo_docs(repo: RepoRef, release: Release, work: Path, settings: UpstreamSettings, deadline: float,
               out: UpstreamDocs, want_changelog: bool, lookup: ApiLookup | None = None,
               langs: set[str] | None = None) -> list[DocPage]:
    """The docs folder of `repo` at the release's tag: tags tried in order until one exists
    (404 means "no such tag"; any other failure ends the attempt on this forge)."""
    forge = settings.forge_for(repo.host)
    if forge is None:  # cannot happen for links built with these settings
        return []
    tags = tag_candidates(release.name, release.version, settings.tags)
    work.mkdir(parents=True, exist_ok=True)
    missing: list[str] = []
    for tag in tags:
        if time.monotonic() > deadline:
            out.looked.append(Looked(repo.label(), why="deadline reached"))
            return []
        url = archive_url(forge, repo, tag)
        path = work / "source.tar.gz"
        status, why = fetch_archive(url, path, deadline, settings.timeout)
        if status == 404:
            missing.append(tag)
            continue
        where = f"{repo.label()}@{tag}"
        if why:
            out.looked.append(Looked(where if status else repo.label(), why=why))
            return []
        try:
            root = archives.extract(path, work / "x").root
        except Doc4llmError as exc:
            out.looked.append(Looked(where, why=exc.message))
            return []
        finally:
            path.unlink(missing_ok=True)
        warnings: list[str] = []
        pages = _docs_in_repo(root, repo.subdir, warnings, lookup, langs)
        if want_changelog:
            pages += _changelog_in_repo(root, release.name)
        for page in pages:
            page.extra = {"origin": "repo", "repo": repo.label(), "tag": tag, "path": page.source}
            page.source = f"{repo.label()}@{tag}/{page.source}"
            page.key = f"repo:{page.key}"
        out.warnings += [f"{where}: {w}" for w in warnings[:10]]
        docs = sum(1 for p in pages if p.origin != CHANGELOG)
        out.looked.append(Looked(where, docs))
        return pages
    out.looked.append(Looked(repo.label(), why=f"no tag {', '.join(missing)}"))
    return []


def _docs_in_repo(root: Path, subdir: str, warnings: list[str], lookup: ApiLookup | None = None,
                  langs: set[str] | None = None) -> list[DocPage]:
    """The docs of a source tree, found by the same code as in a package archive; a
    monorepo package's own folder first, then the repository's."""
    from doc4llm.ingest.packages.collect import Converter, docs_pages

    for base in ([root / subdir] if subdir else []) + [root]:
        if base.is_dir() and base.resolve().is_relative_to(root.resolve()):
            conv = Converter(base, lookup=lookup)
            pages = docs_pages(base, conv, warnings, langs)
            warnings.extend(conv.warnings())
            if pages:
                if base != root:
                    prefix = base.relative_to(root).as_posix()
                    for p in pages:
                        p.source = f"{prefix}/{p.source}"
                        p.key = f"{p.key.split(':', 1)[0]}:{prefix}/{p.key.split(':', 1)[-1]}"
                return pages
    return []


def _changelog_in_repo(root: Path, name: str) -> list[DocPage]:
    from doc4llm.ingest.packages.collect import Converter, changelog_pages

    return changelog_pages(root, name, Converter(root))


def fetch_archive(url: str, dest: Path, deadline: float, timeout: float,
                  max_bytes: int = MAX_ARCHIVE_BYTES) -> tuple[int | None, str]:
    """Stream `url` into `dest` within a byte cap and a total deadline (a server that drips
    bytes is cut at the deadline, not kept alive by each chunk). (HTTP status, "") when
    fetched, (404, "...") for a missing tag, (status or None, why) otherwise."""
    shown = display_url(url)
    try:
        with httpx.Client(timeout=timeout, follow_redirects=True, trust_env=True,
                          headers={"User-Agent": USER_AGENT}) as client, \
                client.stream("GET", url) as resp:
            if resp.status_code in (404, 410):
                return 404, "not found"
            if resp.status_code >= 400:
                return resp.status_code, f"HTTP {resp.status_code}"
            total = 0
            fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "wb") as fh:
                for chunk in resp.iter_bytes(256 * 1024):
                    total += len(chunk)
                    if total > max_bytes:
                        return resp.status_code, f"larger than {max_bytes // (1024 * 1024)} MB, not downloaded"
                    if time.monotonic() > deadline:
                        return resp.status_code, "deadline reached while downloading"
                    fh.write(chunk)
            return resp.status_code, ""
    except httpx.HTTPError as exc:
        return None, f"unreachable: {type(exc).__name__}"
    except ValueError as exc:  # a URL httpx cannot use
        return None, f"cannot fetch {shown[:100]} ({exc})"


def upstream_retry(current: dict | None, offline: bool, settings: UpstreamSettings | None = None) -> bool:
    """True for a set built with the lookup skipped (`--offline`, or turned off) when the
    lookup can run now: the next online `add`/`sync` rebuilds it once. A set whose lookup
    ran (found docs or not) is kept; `--force` asks again."""
    if offline or not current or current.get("upstream") not in (OFFLINE, DISABLED):
        return False
    return (settings or load_upstream_settings()).enabled


def upstream_plan(root: Path, release: Release, meta: dict, settings: UpstreamSettings | None = None) -> dict:
    """What `missing_docs` would fetch for this release, without fetching anything: the
    repositories with their tag archive URLs in order, and the docs site's candidate URLs
    (for benchmarks and for checking a mapping)."""
    from doc4llm.ingest.packages.project_links import versioned_site_candidates
    from doc4llm.ingest.packages.site_docs import mapped

    settings = settings or load_upstream_settings()
    links = project_links(root, meta, release.ecosystem, settings)
    tags = tag_candidates(release.name, release.version, settings.tags)
    repos = []
    for repo in links.repos:
        forge = settings.forge_for(repo.host)
        repos.append({"repo": repo.label(), "subdir": repo.subdir, "tags": tags,
                      "urls": [archive_url(forge, repo, t) for t in tags] if forge else []})
    sites = [{"site": url, "candidates": [mapped(u, settings) for u, _ in versioned_site_candidates(url, release.version)]}
             for url in links.sites]
    return {"repos": repos, "sites": sites, "ignored": links.ignored}
