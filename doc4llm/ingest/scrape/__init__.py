"""Scrape a documentation site into a doc set.

The public surface is `scrape_site(url, docs_dir, set_name, options, progress=...)`
(`scrape_site_async` inside a running event loop). The modules split the pipeline by job:

- `urls` canonical form and scope; `robots` RFC 9309 rules; `discovery` robots.txt,
  llms.txt and sitemap.xml before the crawl;
- `fetch` HTTP (politeness, retries, redirects in scope, limits, conditional requests);
- `crawl` the frontier and the workers; `run` writing the set and the summary;
- `decode` bytes to text; `html_to_md` HTML to markdown, with `presets` (generators),
  `selectors` (one-pass matching) and `blocks` (code, anchors, admonitions, tabs, API
  entries); `markdown_page` for pages the site publishes as markdown.
"""

from doc4llm.ingest.scrape.options import PageOutcome, ScrapeOptions, ScrapeSummary
from doc4llm.ingest.scrape.run import scrape_site, scrape_site_async

__all__ = ["PageOutcome", "ScrapeOptions", "ScrapeSummary", "scrape_site", "scrape_site_async"]
