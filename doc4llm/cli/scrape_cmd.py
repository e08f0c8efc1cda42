"""`doc4llm scrape URL --set NAME@VER`: a thin wrapper over `scrape_site`."""

from __future__ import annotations

import sys

import click

from doc4llm.cli.common import docs_dir_option, emit_json, handle_errors, json_option, warn
from doc4llm.errors import ExternalError


def _progress_printer(quiet: bool, bar):
    """On a terminal, a counter with the rate and the page being written (failures still
    get a line); otherwise one stderr line per page, so a log shows the crawl move."""
    from doc4llm.ingest.scrape.options import FAILED, SKIPPED

    pages = 0

    def show(outcome, summary) -> None:
        nonlocal pages
        if outcome.status != SKIPPED:
            pages += 1
        if quiet or (outcome.status == SKIPPED and outcome.reason.startswith("out of scope")):
            return
        label = outcome.change or outcome.status
        tail = f" ({outcome.reason})" if outcome.reason and outcome.status in (FAILED, SKIPPED) else ""
        if bar.tty:
            bar.count("scraped", "pages", pages, note=outcome.url)
            if outcome.status in (FAILED, SKIPPED):
                bar.line(f"{label:<9} {outcome.url}{tail}")
            return
        click.echo(f"[{pages}] {label:<9} {outcome.url}{tail}", err=True)

    return show


def _print_summary(summary) -> None:
    data = summary.to_dict()
    counts = data["counts"]
    click.echo(f"Scraped {data['root_url']} into {data['set_path']} in {data['seconds']:.1f}s")
    click.echo(
        f"  fetched {counts['fetched']} (created {counts['created']}, updated {counts['updated']}), "
        f"unchanged {counts['unchanged']}, skipped {counts['skipped']}, failed {counts['failed']}"
        + (f", pruned {counts['pruned']}" if counts["pruned"] else "")
    )
    for label, key in (("skipped", "skipped_reasons"), ("failed", "failed_reasons")):
        for reason, n in data[key].items():
            click.echo(f"  {label}: {n} x {reason}")
    failed = [o for o in summary.outcomes if o.status == "failed"]
    for o in failed[:20]:
        click.echo(f"  failed: {o.url} ({o.reason})")
    if len(failed) > 20:
        click.echo(f"  ... {len(failed) - 20} more failures (--json lists them all)")
    if data["generator"]:
        click.echo(f"  generator: {data['generator']}")
    if data["discovery"].get("robots_txt_truncated_at"):
        click.echo(f"  robots.txt: over 500 KiB, only its first {data['discovery']['robots_txt_truncated_at']} "
                   "bytes were read")


@click.command("scrape")
@click.argument("url")
@click.option("--set", "set_name", required=True, help="Doc set to write, NAME@VERSION.")
@docs_dir_option
@json_option
@click.option("--max-pages", type=click.IntRange(min=1), default=2000, show_default=True,
              help="Stop after this many pages (fetched or failed; skipped URLs do not count).")
@click.option("--max-depth", type=click.IntRange(min=0), default=20, show_default=True,
              help="Link hops from the start URL (sitemap / llms.txt pages count as 0).")
@click.option("--concurrency", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Requests in flight at once (--delay still spaces requests to one host).")
@click.option("--delay", type=click.FloatRange(min=0), default=0.1, show_default=True,
              help="Seconds between two requests to the same host (robots.txt Crawl-delay wins if "
                   "larger). The default caps a crawl at ~10 pages/s per host; 0 for your own site.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=20.0, show_default=True,
              help="Seconds per request attempt.")
@click.option("--retries", type=click.IntRange(min=0), default=2, show_default=True,
              help="Retries for timeouts, network errors, 429 and 5xx, with exponential backoff.")
@click.option("--allow", multiple=True, metavar="REGEX",
              help="Regular expression (searched in the full URL); when given, URLs on the same "
                   "host matching any --allow are in scope instead of the path prefix. Repeatable.")
@click.option("--deny", multiple=True, metavar="REGEX",
              help="Regular expression (searched in the full URL) of URLs never crawled. Repeatable.")
@click.option("--prune", is_flag=True, help="Remove pages of this set that are gone from the site.")
@click.option("--no-robots", is_flag=True, help="Ignore robots.txt (only for sites you own).")
@click.option("--max-bytes", type=click.IntRange(min=1024), default=10_000_000, show_default=True,
              help="Larger responses are skipped.")
@click.option("-q", "--quiet", is_flag=True, help="No per-page progress on stderr.")
@handle_errors()
def scrape_cmd(url, set_name, docs_dir, as_json, max_pages, max_depth, concurrency, delay, timeout,
               retries, allow, deny, prune, no_robots, max_bytes, quiet):
    """Crawl a documentation site (or its llms.txt) into the doc set NAME@VERSION.

    Scope: same host and path prefix as URL (see --allow/--deny). Discovers pages from
    links, sitemap.xml and llms.txt, prefers markdown versions a site publishes, honours
    robots.txt. Re-running updates the set incrementally. Exit code 3 only when nothing
    usable was scraped.
    """
    from doc4llm.corpus.paths import resolve_docs_dir, validate_set_name
    from doc4llm.ingest.scrape import ScrapeOptions, scrape_site

    validate_set_name(set_name)
    options = ScrapeOptions(
        max_pages=max_pages, max_depth=max_depth, concurrency=concurrency, delay=delay,
        timeout=timeout, retries=retries, allow=list(allow), deny=list(deny),
        robots=not no_robots, prune=prune, max_bytes=max_bytes,
    )
    from doc4llm.cli.progress import Progress

    with Progress() as bar:
        summary = scrape_site(url, resolve_docs_dir(docs_dir), set_name, options,
                              progress=_progress_printer(quiet, bar))
    if as_json:
        emit_json(summary.to_dict())
        if not summary.usable:
            warn("nothing usable was scraped")
            sys.exit(ExternalError.exit_code)  # the JSON above already tells why, page by page
        return
    _print_summary(summary)
    if not summary.usable:
        reasons = summary.reasons("failed") or summary.reasons("skipped")
        top = ", ".join(f"{n} x {r}" for r, n in list(reasons.items())[:3]) or "no page found"
        raise ExternalError(f"nothing usable was scraped from {url} ({top})",
                            hint="check the URL, --allow/--deny, robots.txt (--no-robots for your own site) or --timeout")
