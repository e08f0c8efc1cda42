"""Scrape a documentation site into a doc set.

The public surface is `scrape_site(url, docs_dir, set_name, options, progress=...)`;
the modules split the pipeline by job: `urls` (canonical form, scope), `robots`,
`discovery` (sitemap.xml, llms.txt), `fetch` (HTTP with retries and politeness),
`crawl` (the frontier and workers), `html_to_md` + `presets` (conversion), `run` (writing
the set, incremental state, the summary).
"""

from doc4llm.ingest.scrape.options import PageOutcome, ScrapeOptions, ScrapeSummary
from doc4llm.ingest.scrape.run import scrape_site

__all__ = ["PageOutcome", "ScrapeOptions", "ScrapeSummary", "scrape_site"]
