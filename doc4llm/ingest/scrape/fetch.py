"""HTTP fetching: politeness, retries with backoff, redirects kept in scope, size and
type limits, conditional requests.

One `Fetcher` per scrape owns one `httpx.AsyncClient` (connection reuse). Redirects are
followed by hand so every hop is checked against the scope and robots.txt and a loop is
caught at its first repeat instead of after N wasted requests.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

from doc4llm.ingest.scrape.options import ScrapeOptions
from doc4llm.ingest.scrape.urls import canonical_url

HTML_TYPES = ("text/html", "application/xhtml+xml")
MARKDOWN_TYPES = ("text/markdown", "text/x-markdown", "text/plain")  # for a known .md URL
PAGE_TYPES = HTML_TYPES + ("text/markdown", "text/x-markdown")  # plain text is not a page
_RETRY_STATUS = {429, 500, 502, 503, 504}
_MAX_RETRY_AFTER = 30.0

OK, NOT_MODIFIED, SKIPPED, FAILED = "ok", "not_modified", "skipped", "failed"
REDIRECT = "redirect"  # internal: one hop, followed by `Fetcher.get`


@dataclass
class FetchResult:
    """One fetch after redirects. `outcome` is ok / not_modified / skipped / failed."""

    url: str  # final canonical URL (after in-scope redirects)
    outcome: str
    reason: str = ""
    status: int | None = None
    content_type: str = ""
    charset: str | None = None
    body: bytes = b""
    etag: str | None = None
    last_modified: str | None = None
    location: str | None = None  # for a redirect answer, where it points


class HostThrottle:
    """At most one request start per `delay` seconds per host (a polite crawler)."""

    def __init__(self, delay: float):
        self.delay = delay
        self._next: dict[str, float] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def wait(self, host: str) -> None:
        if self.delay <= 0:
            return
        lock = self._locks.setdefault(host, asyncio.Lock())
        async with lock:
            now = time.monotonic()
            start = max(now, self._next.get(host, 0.0))
            self._next[host] = start + self.delay
        if start > now:
            await asyncio.sleep(start - now)


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return min(float(value), _MAX_RETRY_AFTER)
    except ValueError:
        pass
    try:
        return min(max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0), _MAX_RETRY_AFTER)
    except (TypeError, ValueError):
        return None


def _media_type(header: str) -> tuple[str, str | None]:
    parts = [p.strip() for p in header.split(";")]
    charset = None
    for p in parts[1:]:
        if p.lower().startswith("charset="):
            charset = p.split("=", 1)[1].strip("\"' ") or None
    return parts[0].lower(), charset


class _Attempt(Exception):
    """A retryable failure of one attempt (network error, timeout, 429/5xx)."""

    def __init__(self, reason: str, wait: float | None = None, status: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.wait = wait
        self.status = status


class Fetcher:
    """Fetches pages for one scrape; `check(url)` returns why a URL is off limits, or None."""

    def __init__(self, options: ScrapeOptions, check: Callable[[str], str | None]):
        import httpx

        self.options = options
        self.check = check
        self.throttle = HostThrottle(options.delay)
        self.client = httpx.AsyncClient(
            follow_redirects=False,
            timeout=httpx.Timeout(options.timeout),
            headers={"User-Agent": options.user_agent, "Accept-Encoding": "gzip, deflate"},
            limits=httpx.Limits(max_connections=max(options.concurrency * 2, 4)),
        )
        self.requests = 0
        self.mirrors = {origin.rstrip("/"): base.rstrip("/") for origin, base in options.mirrors.items()}

    def routed(self, url: str) -> str:
        """The URL really requested for `url`: its origin replaced by a configured mirror."""
        for origin, base in self.mirrors.items():
            if url == origin or url.startswith(origin + "/"):
                return base + url[len(origin):]
        return url

    def public(self, url: str) -> str:
        """A mirror's absolute URL (a redirect's Location) back in the public origin."""
        for origin, base in self.mirrors.items():
            if url == base or url.startswith(base + "/"):
                return origin + url[len(base):]
        return url

    async def aclose(self) -> None:
        await self.client.aclose()

    async def get(self, url: str, *, accept: tuple[str, ...] = PAGE_TYPES,
                  conditional: dict | None = None, check_scope: bool = True,
                  known: Callable[[str], bool] | None = None) -> FetchResult:
        """GET `url`, following in-scope redirects; never raises for network trouble.

        A redirect to a URL for which `known(url)` is true stops there (skipped): that page
        is crawled on its own, fetching it twice would waste a request."""
        chain = [url]
        current = url
        for _ in range(self.options.max_redirects + 1):
            headers = {"Accept": "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.8,*/*;q=0.1"}
            if conditional and current == url:
                if conditional.get("etag"):
                    headers["If-None-Match"] = conditional["etag"]
                if conditional.get("last_modified"):
                    headers["If-Modified-Since"] = conditional["last_modified"]
            result = await self._with_retries(current, headers, accept)
            if result.outcome != REDIRECT:
                return result
            target = canonical_url(self.public(result.location or ""), base=current)
            if target is None:
                return FetchResult(current, SKIPPED, f"redirect to a non-http URL ({(result.location or '')[:80]})")
            if target in chain:
                return FetchResult(current, FAILED, "redirect loop", status=result.status)
            why = self.check(target) if check_scope else None
            if why:
                return FetchResult(target, SKIPPED, f"redirect target {why}", status=result.status)
            if known is not None and known(target):
                return FetchResult(target, SKIPPED, f"redirects to {target} (already crawled)",
                                   status=result.status)
            chain.append(target)
            current = target
        return FetchResult(current, FAILED, f"more than {self.options.max_redirects} redirects")

    async def _with_retries(self, url: str, headers: dict,
                            accept: tuple[str, ...]) -> FetchResult:
        from urllib.parse import urlsplit

        host = urlsplit(url).netloc
        attempt = 0
        while True:
            await self.throttle.wait(host)
            try:
                return await asyncio.wait_for(
                    self._once(url, headers, accept), self.options.timeout
                )
            except TimeoutError:
                failure = _Attempt(f"timeout after {self.options.timeout:g}s")
            except _Attempt as exc:
                failure = exc
            if attempt >= self.options.retries:
                return FetchResult(url, FAILED, failure.reason, status=failure.status)
            backoff = self.options.retry_backoff * (2 ** attempt) * (1 + random.random() * 0.25)
            await asyncio.sleep(failure.wait if failure.wait is not None else backoff)
            attempt += 1

    async def _once(self, url: str, headers: dict,
                    accept: tuple[str, ...]) -> FetchResult:
        import httpx

        self.requests += 1
        try:
            async with self.client.stream("GET", self.routed(url), headers=headers) as resp:
                status = resp.status_code
                if status in _RETRY_STATUS:
                    raise _Attempt(f"HTTP {status}", _retry_after(resp.headers.get("retry-after")), status)
                if 300 <= status < 400 and status != 304:
                    location = resp.headers.get("location")
                    if not location:
                        return FetchResult(url, FAILED, f"HTTP {status} without Location",
                                           status=status)
                    return FetchResult(url, REDIRECT, status=status, location=location)
                etag = resp.headers.get("etag")
                last_modified = resp.headers.get("last-modified")
                if status == 304:
                    return FetchResult(url, NOT_MODIFIED, status=status, etag=etag,
                                       last_modified=last_modified)
                if status >= 400:
                    return FetchResult(url, FAILED, f"HTTP {status}", status=status)
                media, charset = _media_type(resp.headers.get("content-type", ""))
                if media and media not in accept:
                    return FetchResult(url, SKIPPED, f"not a page ({media})", status=status,
                                       content_type=media)
                declared = resp.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > self.options.max_bytes:
                    return FetchResult(url, SKIPPED,
                                       f"too large ({int(declared)} bytes > {self.options.max_bytes})",
                                       status=status, content_type=media)
                chunks: list[bytes] = []
                size = 0
                async for chunk in resp.aiter_bytes():
                    size += len(chunk)
                    if size > self.options.max_bytes:
                        return FetchResult(url, SKIPPED,
                                           f"too large (> {self.options.max_bytes} bytes)",
                                           status=status, content_type=media)
                    chunks.append(chunk)
        except httpx.TimeoutException as exc:
            raise _Attempt(f"timeout after {self.options.timeout:g}s") from exc
        except httpx.TransportError as exc:
            raise _Attempt(f"network error ({type(exc).__name__})") from exc
        body = b"".join(chunks)
        if b"\x00" in body[:2048]:
            return FetchResult(url, SKIPPED, "binary content", status=status,
                               content_type=media)
        return FetchResult(url, OK, status=status, content_type=media, charset=charset,
                           body=body, etag=etag, last_modified=last_modified)
