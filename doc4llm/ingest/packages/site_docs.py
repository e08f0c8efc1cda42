"""A package's docs site at its version, through the site scraper, into package pages.

The versioned path is looked for first (`/2.7.4/`, `/v2.7.4/`, `/2.7/`, Read the Docs'
`/en/<version>/`; `latest`/`stable` in the published URL replaced), the URL as published
last (then the pages are the site's current docs, and say so). The crawl is the one
`doc4llm scrape` runs (llms.txt and its markdown pages first, robots.txt obeyed, size
caps, retries, scope kept to the path prefix), bounded here by a page count and a total
deadline; pages collected when the deadline strikes are kept.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from doc4llm.ingest.packages.pages import DOCS, DocPage
from doc4llm.ingest.packages.project_links import versioned_site_candidates
from doc4llm.ingest.packages.upstream_config import UpstreamSettings
from doc4llm.ingest.scrape.crawl import Crawler, ExtractedPage
from doc4llm.ingest.scrape.options import FAILED, SKIPPED, WRITTEN, PageOutcome, ScrapeOptions

MAX_PROBE_BYTES = 2 * 1024 * 1024
_PAGE_TYPES = ("text/html", "application/xhtml+xml", "text/markdown", "text/x-markdown", "text/plain")


@dataclass
class SiteResult:
    where: str  # host/path as the package names it, for the report
    pages: list[DocPage] = field(default_factory=list)
    versioned: bool = False
    note: str = ""  # why nothing came, or what to know about what came


def mapped(url: str, settings: UpstreamSettings) -> str:
    """The URL fetched for `url`: its host replaced by the user's mapping, if any."""
    parts = urlsplit(url)
    base = settings.sites.get((parts.hostname or "").lower())
    if not base:
        return url
    return base.rstrip("/") + (parts.path or "/")


def _short(url: str) -> str:
    parts = urlsplit(url)
    return (parts.netloc + parts.path).rstrip("/")


def probe(client: httpx.Client, url: str) -> tuple[bool, str]:
    """(True, "") when `url` answers a page without leaving its own path; else (False, why)."""
    prefix = urlsplit(url).path
    try:
        with client.stream("GET", url) as resp:
            if resp.status_code >= 400:
                return False, f"HTTP {resp.status_code}"
            final = urlsplit(str(resp.url))
            if final.netloc != urlsplit(url).netloc or not (final.path + "/").startswith(prefix):
                return False, f"redirects to {_short(str(resp.url))}"
            ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype and ctype not in _PAGE_TYPES:
                return False, f"not a page ({ctype})"
            size = 0
            for chunk in resp.iter_bytes(64 * 1024):
                size += len(chunk)
                if size > MAX_PROBE_BYTES:
                    break
            return True, ""
    except httpx.HTTPError as exc:
        return False, f"unreachable: {type(exc).__name__}"


class _Collect:
    """The crawler's sink: pages kept in memory as package pages, nothing written."""

    def __init__(self, root: str, versioned: bool):
        self.root, self.versioned = root, versioned
        self.pages: list[DocPage] = []
        self.outcomes: list[PageOutcome] = []

    def previous(self, key: str) -> dict | None:
        return None

    def emit(self, outcome: PageOutcome) -> None:
        if len(self.outcomes) < 10_000:
            self.outcomes.append(outcome)

    def gone(self, key: str) -> None:
        pass

    def write(self, page: ExtractedPage) -> PageOutcome:
        extra = {"origin": "site", "url": page.key, "site": self.root}
        if not self.versioned:
            extra["versioned"] = False
        self.pages.append(DocPage(page.title, page.body, page.key, f"site:{page.key}", DOCS, extra))
        return PageOutcome(page.key, WRITTEN, page=page.title)


async def _crawl(start: str, options: ScrapeOptions, sink: _Collect, seconds: float) -> bool:
    """True when the crawl finished, False when the deadline cut it (pages so far kept)."""
    crawler = Crawler(start, options, sink)
    try:
        await asyncio.wait_for(crawler.run(), timeout=max(1.0, seconds))
        return True
    except TimeoutError:
        return False


def site_docs(url: str, version: str, settings: UpstreamSettings, deadline: float) -> SiteResult:
    """The pages of the docs site at `url` for `version` (see the module docstring)."""
    result = SiteResult(urlsplit(url).netloc)
    tried: dict[str, list[str]] = {}  # why -> paths, said once per reason
    chosen: tuple[str, bool] | None = None
    with httpx.Client(timeout=settings.timeout, follow_redirects=True, trust_env=True,
                      headers={"User-Agent": ScrapeOptions().user_agent}) as client:
        for candidate, versioned in versioned_site_candidates(url, version)[:5]:
            if time.monotonic() > deadline:
                tried["deadline reached"] = []
                break
            ok, why = probe(client, mapped(candidate, settings))
            if ok:
                chosen = (candidate, versioned)
                break
            if why.startswith("unreachable"):
                tried[why] = []
                break  # the host is down: its other paths are too
            tried.setdefault(why, []).append(urlsplit(candidate).path or "/")
    if chosen is None:
        result.note = "; ".join(f"{why} at {', '.join(paths)}" if paths else why
                                for why, paths in tried.items()) or "nothing tried"
        return result
    candidate, versioned = chosen
    result.where, result.versioned = _short(candidate), versioned
    parts = urlsplit(candidate)
    base = settings.sites.get((parts.hostname or "").lower())
    options = ScrapeOptions(max_pages=settings.max_site_pages, max_depth=settings.max_site_depth, concurrency=2,
                            timeout=settings.timeout, retries=1, max_bytes=5_000_000,
                            mirrors={f"{parts.scheme}://{parts.netloc}": base} if base else {})
    sink = _Collect(candidate, versioned)
    finished = asyncio.run(_crawl(candidate, options, sink, deadline - time.monotonic()))
    result.pages = sink.pages
    failed = sum(1 for o in sink.outcomes if o.status == FAILED)
    notes = []
    if not versioned:
        notes.append(f"no page at the version's path, so these are the site's current docs, not {version}'s")
    if not finished:
        notes.append(f"cut at the deadline after {len(sink.pages)} pages")
    if failed:
        notes.append(f"{failed} pages failed")
    if not sink.pages:
        skipped = sum(1 for o in sink.outcomes if o.status == SKIPPED)
        notes.append(f"no page kept ({failed} failed, {skipped} skipped)")
    result.note = "; ".join(notes)
    return result
