"""`scrape_site`: crawl a site into a doc set, incrementally, and say what happened.

The sink below is the only place that writes: pages go through `SetWriter` (naming,
collisions, atomic writes), a page whose fetch fails keeps its previous copy, and
`--prune` removes only pages that are really gone (404/410, moved away, or now out of
scope), never pages that merely failed this time or were cut by --max-pages.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from doc4llm.corpus.writer import SetWriter
from doc4llm.ingest.scrape.crawl import Crawler, ExtractedPage
from doc4llm.ingest.scrape.local_links import is_local_host, rewrite_local_links
from doc4llm.ingest.scrape.options import (
    UNCHANGED,
    WRITTEN,
    PageOutcome,
    ScrapeOptions,
    ScrapeSummary,
)
from doc4llm.ingest.scrape.urls import Scope

Progress = Callable[[PageOutcome, ScrapeSummary], None]


class SetSink:
    """Writes crawled pages into one set and keeps the summary."""

    def __init__(self, writer: SetWriter, summary: ScrapeSummary, progress: Progress | None):
        self.writer = writer
        self.summary = summary
        self.progress = progress
        self.old_keys = writer.keys()
        self.gone_keys: set[str] = set()

    def previous(self, key: str) -> dict | None:
        record = self.writer.page_record(key)
        return (record or {}).get("extra") or None

    def emit(self, outcome: PageOutcome) -> None:
        if outcome.status == UNCHANGED and outcome.page is None:
            outcome.page = (self.writer.page_record(outcome.url) or {}).get("folder")
        self.summary.outcomes.append(outcome)
        if self.progress:
            self.progress(outcome, self.summary)

    def write(self, page: ExtractedPage) -> PageOutcome:
        extra = {"fetched_url": page.fetched_url, "kind": page.kind, "hash": page.hash}
        if page.etag:
            extra["etag"] = page.etag
        if page.last_modified:
            extra["last_modified"] = page.last_modified
        result = self.writer.write_page(page.title, page.body, source=page.key, key=page.key,
                                        url=page.key, extra=extra,
                                        slug_anchors=page.kind != "html")
        if result.status == "unchanged":
            return PageOutcome(page.key, UNCHANGED, "same markdown", page=result.folder)
        return PageOutcome(page.key, WRITTEN, page=result.folder, change=result.status)

    def gone(self, key: str) -> None:
        if key in self.old_keys:
            self.gone_keys.add(key)


def _finish(writer: SetWriter, summary: ScrapeSummary, set_existed: bool) -> None:
    if summary.usable or writer.keys() or set_existed:
        writer.finish({
            "source": summary.root_url,
            "scraped_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "generator": summary.generator,
            "pages_written": summary.count(WRITTEN),
            "pages_unchanged": summary.count(UNCHANGED),
            "pages_failed": summary.count("failed"),
            "pages_skipped": summary.count("skipped"),
            "llms_txt": summary.discovery.get("llms_txt"),
            "sitemaps": summary.discovery.get("sitemaps"),
        })
    elif not any(writer.set_dir.iterdir()):
        writer.set_dir.rmdir()  # nothing scraped into a new set: leave no empty set behind


async def scrape_site_async(url: str, docs_dir: Path, set_name: str,
                            options: ScrapeOptions | None = None,
                            progress: Progress | None = None) -> ScrapeSummary:
    """Crawl `url` into `docs_dir/set_name`; see `scrape_site`."""
    options = options or ScrapeOptions()
    started = time.monotonic()
    Scope(url, options.allow, options.deny)  # bad URL or pattern: fail before touching the disk
    set_existed = (Path(docs_dir) / set_name).is_dir()
    writer = SetWriter(Path(docs_dir), set_name, origin="scrape")
    summary = ScrapeSummary(root_url=url, set_name=set_name, set_path=str(writer.set_dir))
    sink = SetSink(writer, summary, progress)
    crawler = Crawler(url, options, sink, known_keys=sink.old_keys)
    try:
        await crawler.run()
        if is_local_host(crawler.scope.root):  # links to 127.0.0.1 mean nothing later
            rewrite_local_links(writer, crawler.scope.root)
        if options.prune:
            summary.pruned = writer.prune(writer.keys() - sink.gone_keys)
    finally:
        # Always record what was written, even when interrupted: the set's records are
        # what lets the next run reuse these folders instead of adding ' (2)' copies.
        summary.root_url = crawler.scope.root
        summary.discovery = crawler.discovery
        summary.generator = (max(crawler.generators, key=crawler.generators.get)
                             if crawler.generators else None)
        summary.requests = crawler.fetcher.requests if crawler.fetcher else 0
        summary.seconds = time.monotonic() - started
        _finish(writer, summary, set_existed)
    return summary


def scrape_site(url: str, docs_dir: Path, set_name: str, options: ScrapeOptions | None = None,
                progress: Progress | None = None) -> ScrapeSummary:
    """Crawl a documentation site into a doc set and return what happened to every URL.

    Re-running updates the set: unchanged pages are not rewritten (conditional requests,
    then content hashes), failed pages keep their previous copy, `options.prune` removes
    pages gone from the site.
    """
    return asyncio.run(scrape_site_async(url, docs_dir, set_name, options, progress))
