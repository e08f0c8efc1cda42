"""The crawl: the frontier, the workers, and what happens to each page.

Every page is identified by the canonical URL of its HTML page (its `key`); when the site
publishes a markdown version (llms.txt link, `<link rel=alternate type=text/markdown>`),
that version is fetched instead and the HTML is the fallback. What to do with a page
(write it, call it unchanged) is the `PageSink`'s business (see run.py), so this module
only decides what to fetch and in which order.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

from doc4llm.ingest.scrape.decode import decode_body
from doc4llm.ingest.scrape.discovery import LLMS_FILES, discover
from doc4llm.ingest.scrape.fetch import (
    FAILED,
    MARKDOWN_TYPES,
    NOT_MODIFIED,
    OK,
    Fetcher,
    FetchResult,
)
from doc4llm.ingest.scrape.markdown_page import convert_markdown, looks_like_html
from doc4llm.ingest.scrape.options import FAILED as OUT_FAILED
from doc4llm.ingest.scrape.options import SKIPPED, UNCHANGED, PageOutcome, ScrapeOptions
from doc4llm.ingest.scrape.robots import RobotsRules
from doc4llm.ingest.scrape.urls import (
    NON_PAGE_EXTENSIONS,
    Scope,
    canonical_url,
    extension,
    html_counterpart,
    is_markdown_url,
    same_page,
)

_GONE_STATUS = {404, 410}


def sphinx_generated(url: str) -> str | None:
    """Sphinx writes an index, module indexes and a search page for every site; they list
    names, not documentation. Their name, or None for a real page."""
    segment = urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1]
    stem = segment[:-5] if segment.endswith(".html") else segment
    if stem in ("genindex", "search", "modindex") or stem.startswith("genindex-") or stem.endswith("-modindex"):
        return stem
    return None


@dataclass
class ExtractedPage:
    """A page ready to be written: markdown body plus what the next run needs to know."""

    key: str  # canonical HTML URL: identity, source line and base of url#anchor
    fetched_url: str  # what was fetched (the .md version when one was preferred)
    title: str
    body: str
    kind: str  # html | markdown
    etag: str | None
    last_modified: str | None
    hash: str


class PageSink(Protocol):
    def previous(self, key: str) -> dict | None: ...
    def emit(self, outcome: PageOutcome) -> None: ...
    def write(self, page: ExtractedPage) -> PageOutcome: ...
    def gone(self, key: str) -> None: ...


def _hash(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:24]


def _url_title(url: str) -> str:
    path = urlsplit(url).path.rstrip("/")
    name = path.rsplit("/", 1)[-1] or urlsplit(url).netloc
    return name.rsplit(".", 1)[0].replace("-", " ").replace("_", " ").strip().capitalize() or name


class Crawler:
    """One crawl of one site into one sink."""

    def __init__(self, root_url: str, options: ScrapeOptions, sink: PageSink,
                 known_keys: set[str] | None = None):
        self.options = options
        start = canonical_url(root_url) or root_url
        # `scrape https://site/docs/llms.txt`: the file drives discovery, its folder is the scope
        self.llms_start = start if start.rsplit("/", 1)[-1] in LLMS_FILES else None
        if self.llms_start:
            root_url = start.rsplit("/", 1)[0] + "/"
        self.scope = Scope(root_url, options.allow, options.deny)
        self.sink = sink
        self.known_keys = sorted(known_keys or ())
        self.robots = RobotsRules()
        self.fetcher: Fetcher | None = None
        self.queue: asyncio.Queue = asyncio.Queue()
        self.write_lock = asyncio.Lock()
        self.seen: set[str] = set()  # canonical URLs enqueued or claimed
        self.claimed: set[str] = set()  # keys with a result in this run
        self.md_for: dict[str, str] = {}  # HTML key -> markdown URL to prefer
        self.titles: dict[str, str] = {}  # HTML key -> title from llms.txt
        self.processed = 0
        self.prefetched: dict[str, FetchResult] = {}  # the start page, fetched by discovery
        self.generators: dict[str, int] = {}
        self.discovery: dict = {}

    # -- scope ---------------------------------------------------------------------
    def excluded(self, url: str) -> str | None:
        why = self.scope.reason_excluded(url)
        if why is None and self.options.robots and not self.robots.allowed(url):
            why = "disallowed by robots.txt"
        return why

    def enqueue(self, url: str, depth: int, *, title: str = "") -> None:
        """Queue a canonical URL once, or record why it is not crawled."""
        md_url = None
        if is_markdown_url(url):
            md_url, url = url, canonical_url(html_counterpart(url)) or url
        if md_url and self.excluded(md_url) is None:
            self.md_for.setdefault(url, md_url)
        if title:
            self.titles.setdefault(url, title)
        if url in self.seen:
            return
        self.seen.add(url)
        if extension(url) in NON_PAGE_EXTENSIONS:
            self.sink.emit(PageOutcome(url, SKIPPED, f"not a page (.{extension(url)})"))
            return
        why = self.excluded(url)
        if why:
            if not self.robots.disallow_all:  # an unreachable robots.txt is not "gone"
                self.sink.gone(url)
            self.sink.emit(PageOutcome(url, SKIPPED, why))
            return
        if depth > self.options.max_depth:
            self.sink.emit(PageOutcome(url, SKIPPED, f"deeper than --max-depth {self.options.max_depth}"))
            return
        self.queue.put_nowait((url, depth))

    # -- pages ---------------------------------------------------------------------
    def _conditional(self, key: str, fetch_url: str) -> dict | None:
        prev = self.sink.previous(key)
        if prev and prev.get("fetched_url") == fetch_url:
            return prev
        return None

    def _unchanged(self, key: str, fetch_url: str, body_hash: str | None = None) -> bool:
        prev = self._conditional(key, fetch_url)
        return bool(prev and body_hash and prev.get("hash") == body_hash)

    async def _try_markdown(self, key: str, md_url: str, depth: int) -> bool:
        """True when the markdown version settled the page; False to fall back to HTML."""
        result = await self.fetcher.get(md_url, accept=MARKDOWN_TYPES,
                                        conditional=self._conditional(key, md_url))
        if result.outcome == NOT_MODIFIED:
            self.claimed.add(key)
            self.sink.emit(PageOutcome(key, UNCHANGED, "not modified (304)"))
            return True
        if result.outcome != OK:
            return False
        text = decode_body(result.body, result.charset)
        if looks_like_html(text) or not text.strip():
            return False
        body_hash = _hash(result.body)
        self.claimed.add(key)
        if self._unchanged(key, md_url, body_hash):
            self.sink.emit(PageOutcome(key, UNCHANGED, "same content"))
            return True
        title, body, links = convert_markdown(text, md_url, self.titles.get(key) or _url_title(key))
        self.generators["markdown"] = self.generators.get("markdown", 0) + 1
        await self._write(ExtractedPage(key, md_url, title, body, "markdown",
                                        result.etag, result.last_modified, body_hash))
        self._follow(links, depth)
        return True

    async def _write(self, page: ExtractedPage) -> None:
        """Write off the event loop (atomic writes fsync), one page at a time."""
        async with self.write_lock:
            outcome = await asyncio.to_thread(self.sink.write, page)
        self.sink.emit(outcome)

    def _follow(self, links: list[str], depth: int) -> None:
        for link in links:
            self.enqueue(link, depth + 1)

    async def process(self, key: str, depth: int) -> None:
        """Fetch one page (markdown version first when known) and hand it to the sink."""
        md_url = self.md_for.get(key)
        if md_url and await self._try_markdown(key, md_url, depth):
            return
        result = self.prefetched.pop(key, None) or await self.fetcher.get(
            key, conditional=self._conditional(key, key), known=lambda u: u in self.seen)
        if result.outcome == FAILED:
            if result.status in _GONE_STATUS:
                self.sink.gone(key)
            self.sink.emit(PageOutcome(key, OUT_FAILED, result.reason))
            return
        if result.outcome not in (OK, NOT_MODIFIED):
            if result.reason.startswith("redirect"):  # moved elsewhere: not a page of its own
                self.sink.gone(key)
            self.sink.emit(PageOutcome(key, SKIPPED, result.reason))
            return
        if result.url != key:  # an in-scope redirect to a page not seen yet: that is the page
            key = result.url
            self.seen.add(key)
        self.claimed.add(key)
        fetched = key
        if result.outcome == NOT_MODIFIED:
            self.sink.emit(PageOutcome(key, UNCHANGED, "not modified (304)"))
            return
        body_hash = _hash(result.body)
        if self._unchanged(key, key, body_hash):
            self.sink.emit(PageOutcome(key, UNCHANGED, "same content"))
            return
        text = decode_body(result.body, result.charset)
        if result.content_type in MARKDOWN_TYPES:
            title, body, links = convert_markdown(text, key, self.titles.get(key) or _url_title(key))
            page = ExtractedPage(key, key, title, body, "markdown", result.etag,
                                 result.last_modified, body_hash)
            await self._write(page)
            self._follow(links, depth)
            return
        from doc4llm.ingest.scrape.html_to_md import convert_html

        converted = await asyncio.to_thread(convert_html, text, key)
        for url, label in converted.nav_titles.items():
            self.titles.setdefault(url, label)
            if is_markdown_url(url):  # pages are keyed by their HTML URL
                self.titles.setdefault(canonical_url(html_counterpart(url)) or url, label)
        self._follow(converted.links, depth)
        generated = sphinx_generated(key) if converted.generator == "sphinx" else None
        if generated:
            self.sink.gone(key)
            self.sink.emit(PageOutcome(key, SKIPPED, f"Sphinx generated page ({generated})"))
            return
        if converted.refresh and converted.refresh != key:
            self.enqueue(converted.refresh, depth)
            self.sink.gone(key)
            self.sink.emit(PageOutcome(key, SKIPPED, f"moved (meta refresh to {converted.refresh})"))
            return
        canonical = converted.canonical
        if (canonical and canonical != key and same_page(canonical, key)
                and self.excluded(canonical) is None):
            # the page's own canonical URL is its identity: a second spelling is a duplicate
            if canonical in self.claimed:
                self.sink.gone(key)
                self.sink.emit(PageOutcome(key, SKIPPED, f"duplicate of {canonical} (rel=canonical)"))
                return
            self.seen.add(canonical)
            self.claimed.add(canonical)
            key = canonical
        alt = converted.markdown_alternate
        if alt and alt != key and self.excluded(alt) is None:
            if await self._try_markdown(key, alt, depth):
                return
        name = converted.generator or "generic"
        self.generators[name] = self.generators.get(name, 0) + 1
        if not converted.body.strip() and not converted.title:
            self.sink.emit(PageOutcome(key, SKIPPED, "no content"))
            return
        # no H1 and no <title>: the site's own name for the page (its nav, llms.txt), not the URL's
        title = converted.title or self.titles.get(key) or _url_title(key)
        page = ExtractedPage(key, fetched, title,
                             converted.body, "html", result.etag, result.last_modified, body_hash)
        await self._write(page)

    async def _worker(self) -> None:
        while True:
            url, depth = await self.queue.get()
            try:
                if url in self.claimed:
                    continue
                if self.processed >= self.options.max_pages:
                    self.sink.emit(PageOutcome(url, SKIPPED, f"over --max-pages {self.options.max_pages}"))
                    continue
                self.processed += 1
                await self.process(url, depth)
            except Exception as exc:  # noqa: BLE001 - one bad page must not stop the crawl
                self.sink.emit(PageOutcome(url, OUT_FAILED, f"error: {type(exc).__name__}: {exc}"[:200]))
            finally:
                self.queue.task_done()

    async def _discover(self) -> list[tuple[str, str]]:
        """Read robots.txt, llms.txt and sitemaps. `https://acme.dev/docs` may live at
        `https://docs.acme.dev/`: when the start URL redirects out of its own scope, the
        scope moves to where it lands and discovery runs there."""
        found = await discover(self.fetcher, self.scope, self.options, self.llms_start)
        self.robots = found.robots
        if self.excluded(self.scope.root) is None:
            root = self.scope.root
            first = await self.fetcher.get(root, check_scope=False,
                                           conditional=self._conditional(root, root))
            final = first.url
            if self.scope.reason_excluded(final) is None:
                self.prefetched[self.scope.root] = first  # the crawl uses it, no second GET
            else:
                self.discovery["redirected_from"] = self.scope.root
                self.scope = Scope(final, self.options.allow, self.options.deny)
                found = await discover(self.fetcher, self.scope, self.options, self.llms_start)
                self.robots = found.robots
        self.discovery.update(found.info)
        return found.seeds

    async def run(self) -> None:
        self.fetcher = Fetcher(self.options, self.excluded)
        try:
            seeds = await self._discover()
            self.enqueue(self.scope.root, 0)
            for url, title in seeds:
                self.enqueue(url, 0, title=title)
            self.discovery["from_previous_run"] = sum(1 for k in self.known_keys if k not in self.seen)
            for key in self.known_keys:
                self.enqueue(key, 0)
            workers = [asyncio.create_task(self._worker())
                       for _ in range(max(1, self.options.concurrency))]
            await self.queue.join()
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
        finally:
            await self.fetcher.aclose()
