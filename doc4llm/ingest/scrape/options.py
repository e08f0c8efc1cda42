"""What a scrape is asked to do (options) and what it did (outcomes and the summary).

Kept apart from the crawler so the CLI, the MCP server and tests share one vocabulary.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from doc4llm import __version__

USER_AGENT = f"doc4llm/{__version__} (documentation indexer)"

# Outcome statuses. `written` covers created and updated pages.
WRITTEN = "written"
UNCHANGED = "unchanged"
SKIPPED = "skipped"
FAILED = "failed"


@dataclass
class ScrapeOptions:
    """Crawl limits and politeness. Defaults are polite for a public documentation site."""

    max_pages: int = 2000
    max_depth: int = 20
    concurrency: int = 4
    delay: float = 0.1  # seconds between two request starts to the same host
    timeout: float = 20.0
    retries: int = 2
    retry_backoff: float = 0.5  # first retry waits this long, then doubles
    max_bytes: int = 10_000_000  # larger responses are skipped, not truncated
    max_redirects: int = 10
    allow: list[str] = field(default_factory=list)  # regexes; replace the path-prefix rule
    deny: list[str] = field(default_factory=list)  # regexes; always exclude
    robots: bool = True
    prune: bool = False
    user_agent: str = USER_AGENT
    # "https://docs.example.dev" -> "http://127.0.0.1:8000/mirror": requests for that origin
    # go to the base instead (a mirror, a local build, a test stand-in); URLs, scope and the
    # set keep the public origin, so the pages read as the site's own
    mirrors: dict[str, str] = field(default_factory=dict)


@dataclass
class PageOutcome:
    """What happened to one URL: status is written / unchanged / skipped / failed."""

    url: str
    status: str
    reason: str = ""
    page: str | None = None  # folder name in the set, when a page exists for it
    change: str | None = None  # created / updated for written pages

    def to_dict(self) -> dict:
        data = {"url": self.url, "status": self.status}
        if self.reason:
            data["reason"] = self.reason
        if self.page:
            data["page"] = self.page
        if self.change:
            data["change"] = self.change
        return data


@dataclass
class ScrapeSummary:
    """The result of a scrape; `usable` is False only when the run produced no page at all."""

    root_url: str
    set_name: str
    set_path: str
    outcomes: list[PageOutcome] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    discovery: dict = field(default_factory=dict)
    generator: str | None = None
    requests: int = 0  # HTTP requests sent, retries and redirects included
    seconds: float = 0.0

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def usable(self) -> bool:
        return self.count(WRITTEN) + self.count(UNCHANGED) > 0

    def reasons(self, status: str) -> dict[str, int]:
        """Reasons of skipped/failed URLs, most frequent first."""
        return dict(Counter(o.reason for o in self.outcomes if o.status == status).most_common())

    def to_dict(self) -> dict:
        return {
            "set": self.set_name,
            "set_path": self.set_path,
            "root_url": self.root_url,
            "ok": self.usable,
            "counts": {
                "fetched": self.count(WRITTEN),
                "created": sum(1 for o in self.outcomes if o.change == "created"),
                "updated": sum(1 for o in self.outcomes if o.change == "updated"),
                "unchanged": self.count(UNCHANGED),
                "skipped": self.count(SKIPPED),
                "failed": self.count(FAILED),
                "pruned": len(self.pruned),
            },
            "skipped_reasons": self.reasons(SKIPPED),
            "failed_reasons": self.reasons(FAILED),
            "generator": self.generator,
            "discovery": self.discovery,
            "pruned": self.pruned,
            "requests": self.requests,
            "seconds": round(self.seconds, 3),
            "pages": [o.to_dict() for o in self.outcomes if o.status in (WRITTEN, UNCHANGED)],
            "failed": [o.to_dict() for o in self.outcomes if o.status == FAILED],
            # links leaving the scope are only counted (skipped_reasons): a site has many
            "skipped": [o.to_dict() for o in self.outcomes
                        if o.status == SKIPPED and not o.reason.startswith("out of scope")],
        }
