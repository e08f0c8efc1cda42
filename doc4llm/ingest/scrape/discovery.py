"""What a site publishes for crawlers: robots.txt, llms.txt and sitemap.xml.

They find pages no link reaches (a sitemap-only page) and, for llms.txt, the markdown
versions of pages, which convert better than any HTML heuristic. Read once, before the
crawl starts.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
import zlib
from dataclasses import dataclass, field

from defusedxml import DefusedXmlException
from defusedxml import ElementTree as SafeET

from doc4llm.ingest.scrape.decode import decode_body
from doc4llm.ingest.scrape.fetch import HTML_TYPES, MARKDOWN_TYPES, OK, Fetcher
from doc4llm.ingest.scrape.markdown_page import looks_like_html
from doc4llm.ingest.scrape.options import ScrapeOptions
from doc4llm.ingest.scrape.robots import RobotsRules, parse_robots
from doc4llm.ingest.scrape.urls import Scope, canonical_url

LLMS_FILES = ("llms.txt", "llms-full.txt")
_SITEMAP_TYPES = ("application/xml", "text/xml", "application/gzip", "application/x-gzip", "text/plain")
_MAX_SITEMAPS = 50
_MAX_CRAWL_DELAY = 10.0

# linear on hostile text: a link text never runs past another `[`, a title never past a line
_MD_LINK = re.compile(r"\[([^\[\]\n]*)\]\(\s*+<?([^)\s>]++)>?(?:\s++\"[^\"\n]*\")?\s*+\)")
# `[ \t]`, not `\s`: under MULTILINE a `^\s*` runs on across every following blank line
_SOURCE_LINE = re.compile(r"^[ \t]*(?:>[ \t]*)?(?:\*\*)?Source(?:\*\*)?[ \t]*:[ \t]*(\S+)",
                          re.IGNORECASE | re.MULTILINE)
_MAX_SITEMAP_BYTES = 50_000_000


def parse_sitemap(body: bytes) -> tuple[list[str], list[str]]:
    """(page URLs, nested sitemap URLs) of a sitemap or sitemap index (gzip or plain).

    The body is untrusted: gzip is inflated in bounded steps and abandoned past the
    protocol's 50 MB (a 1 MB bomb of zeros once inflated to 2 GB of memory), and the XML
    is parsed by defusedxml (no DTDs, no entity expansion)."""
    if body[:2] == b"\x1f\x8b":
        body = _gunzip_bounded(body, _MAX_SITEMAP_BYTES)
        if body is None:
            return [], []
    if len(body) > _MAX_SITEMAP_BYTES:
        return [], []
    try:
        root = SafeET.fromstring(body)
    except (ET.ParseError, DefusedXmlException, ValueError):
        return [], []
    locs = [el.text.strip() for el in root.iter() if el.tag.rsplit("}", 1)[-1] == "loc" and el.text]
    if root.tag.rsplit("}", 1)[-1] == "sitemapindex":
        return [], locs
    return locs, []


def _gunzip_bounded(data: bytes, limit: int) -> bytes | None:
    """Inflate gzip `data` (all members) to at most `limit` bytes; None when it is larger
    or corrupt. Memory stays within `limit` plus one step, whatever the ratio."""
    out = bytearray()
    while data:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            while not inflater.eof:
                chunk = inflater.decompress(data, 1 << 20)
                data = inflater.unconsumed_tail
                out += chunk
                if len(out) > limit:
                    return None
                if not chunk and not data:
                    return None  # truncated: no more input, no end of stream
        except zlib.error:
            return None
        data = inflater.unused_data.lstrip(b"\x00")
        if data[:2] != b"\x1f\x8b":
            break
    return bytes(out)


def parse_llms_txt(text: str) -> list[tuple[str, str]]:
    """(title, href) of every markdown link in an llms.txt (or llms-full.txt `Source:` line)."""
    links = [(title.strip(), href) for title, href in _MD_LINK.findall(text)]
    links += [("", href) for href in _SOURCE_LINE.findall(text)]
    return links


@dataclass
class Discovery:
    robots: RobotsRules = field(default_factory=RobotsRules)
    seeds: list[tuple[str, str]] = field(default_factory=list)  # (canonical URL, title)
    info: dict = field(default_factory=dict)  # what was found, for the summary


async def _text(fetcher: Fetcher, url: str) -> str | None:
    result = await fetcher.get(url, accept=MARKDOWN_TYPES, check_scope=False)
    if result.outcome != OK:
        return None
    text = decode_body(result.body, result.charset)
    return None if looks_like_html(text) else text  # an SPA shell answering every path


async def _robots(fetcher: Fetcher, site: str, options: ScrapeOptions, found: Discovery) -> None:
    result = await fetcher.get(f"{site}robots.txt", accept=MARKDOWN_TYPES + HTML_TYPES,
                               check_scope=False)
    if result.outcome == OK:
        found.robots = parse_robots(decode_body(result.body, result.charset), options.user_agent)
        found.info["robots_txt"] = True
        if found.robots.truncated_at is not None:  # RFC 9309 2.5: the rest is ignored
            found.info["robots_txt_truncated_at"] = found.robots.truncated_at
        if found.robots.crawl_delay:
            fetcher.throttle.delay = max(fetcher.throttle.delay,
                                         min(found.robots.crawl_delay, _MAX_CRAWL_DELAY))
    elif result.status is not None and result.status >= 500:
        found.robots = RobotsRules(disallow_all=True)  # RFC 9309: assume complete disallow


async def _llms_txt(fetcher: Fetcher, scope: Scope, places: list[str], llms_start: str | None,
                    found: Discovery) -> None:
    candidates = ([llms_start] if llms_start else []) + [
        f"{place}{name}" for name in LLMS_FILES for place in places]
    for llms_url in dict.fromkeys(candidates):
        text = await _text(fetcher, llms_url)
        if text is None:
            continue
        found.info["llms_txt"] = llms_url
        before = len(found.seeds)
        for title, href in parse_llms_txt(text):
            url = canonical_url(href, base=llms_url)
            if url and scope.reason_excluded(url) is None:
                found.seeds.append((url, title))
        found.info["from_llms_txt"] = len(found.seeds) - before
        return


async def _sitemaps(fetcher: Fetcher, scope: Scope, places: list[str], found: Discovery) -> None:
    queue = list(dict.fromkeys(
        [s for s in (canonical_url(u) for u in found.robots.sitemaps) if s]
        + [f"{place}sitemap.xml" for place in places]))
    done: set[str] = set()
    count = 0
    while queue and len(done) < _MAX_SITEMAPS:
        sitemap = queue.pop(0)
        if sitemap in done:
            continue
        done.add(sitemap)
        result = await fetcher.get(sitemap, accept=_SITEMAP_TYPES, check_scope=False)
        if result.outcome != OK:
            continue
        pages, nested = parse_sitemap(result.body)
        if pages or nested:
            found.info["sitemaps"].append(sitemap)
        queue += [u for u in (canonical_url(n) for n in nested) if u]
        for page in pages:
            url = canonical_url(page)
            if url and scope.reason_excluded(url) is None:  # big sitemaps: counted, not listed
                found.seeds.append((url, ""))
                count += 1
    found.info["from_sitemap"] = count


async def discover(fetcher: Fetcher, scope: Scope, options: ScrapeOptions,
                   llms_start: str | None = None) -> Discovery:
    """robots.txt rules, then seeds from llms.txt (at the path prefix, then the site root,
    or `llms_start` when the user gave one) and from sitemaps (robots.txt `Sitemap:`
    lines, then sitemap.xml at the prefix and the root), in scope only."""
    found = Discovery(info={"robots_txt": False, "llms_txt": None, "sitemaps": [],
                            "from_llms_txt": 0, "from_sitemap": 0})
    site = scope.site_root()
    places = list(dict.fromkeys([f"{site.rstrip('/')}{scope.prefix}", site]))
    if options.robots:
        await _robots(fetcher, site, options, found)
    await _llms_txt(fetcher, scope, places, llms_start, found)
    await _sitemaps(fetcher, scope, places, found)
    return found
