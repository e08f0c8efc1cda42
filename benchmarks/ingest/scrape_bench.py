"""Scraper throughput and memory on a generated documentation site served on loopback.

    python benchmarks/ingest/scrape_bench.py [--pages 600] [--concurrency 1 8]

Generates a static site (Docusaurus- and MkDocs-shaped pages with sidebars, code blocks,
tables and admonitions, plus a sitemap), serves it with `python -m http.server` on
127.0.0.1, scrapes it once per concurrency level in a fresh process (so peak RSS is the
scraper's alone), then re-scrapes incrementally, and prints a markdown table.
No network beyond loopback; the run stops by itself.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

SECTIONS = 12


def _page_html(i: int, n: int, rng: random.Random) -> str:
    section = i % SECTIONS
    siblings = [j for j in range(section, n, SECTIONS)][:40]
    nav = "".join(f'<li><a href="/docs/s{section}/p{j}.html">Page {j}</a></li>' for j in siblings)
    nav += "".join(f'<li><a href="/docs/s{s}/p{s}.html">Section {s}</a></li>' for s in range(SECTIONS))
    words = ("configure", "install", "token", "client", "server", "cache", "retry", "webhook",
             "deploy", "schema", "query", "index", "plugin", "session", "timeout")
    blocks = []
    for h in range(rng.randint(4, 8)):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(40, 90)))
        blocks.append(f'<h2 id="sec-{h}">Section {h} of page {i}</h2><p>{text}.</p>')
        if h % 2 == 0:
            blocks.append(f'<div class="language-python"><pre><code class="language-python">'
                          f"client = Client(timeout={h})\nclient.run(page={i})\n</code></pre></div>")
        if h % 3 == 0:
            blocks.append("<table><thead><tr><th>Option</th><th>Default</th></tr></thead><tbody>"
                          + "".join(f"<tr><td>opt_{k}</td><td>{k}</td></tr>" for k in range(5))
                          + "</tbody></table>")
        if h == 1:
            blocks.append('<div class="admonition note"><p class="admonition-title">Note</p>'
                          f"<p>{text[:120]}</p></div>")
    generator = "Docusaurus v3" if i % 2 else "mkdocs-1.6, mkdocs-material-9"
    article = (f'<article class="md-content__inner"><div class="theme-doc-markdown"><h1>Page {i}: '
               f"{rng.choice(words).title()}</h1>{''.join(blocks)}</div></article>")
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="generator" '
            f'content="{generator}"><title>Page {i} | Bench Docs</title></head><body>'
            f'<div id="cookie-banner">Cookies?</div><nav class="sidebar"><ul>{nav}</ul></nav>'
            f"<main>{article}</main><footer>Footer</footer></body></html>")


def generate(root: Path, n: int) -> None:
    rng = random.Random(42)
    urls = []
    for i in range(n):
        path = root / "docs" / f"s{i % SECTIONS}" / f"p{i}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_page_html(i, n, rng), encoding="utf-8")
        urls.append(f"/docs/s{i % SECTIONS}/p{i}.html")
    index = "".join(f'<li><a href="/docs/s{s}/p{s}.html">Section {s}</a></li>' for s in range(SECTIONS))
    (root / "docs" / "index.html").write_text(
        f"<html><head><title>Bench Docs</title></head><body><main><h1>Bench Docs</h1><ul>{index}</ul>"
        "</main></body></html>", encoding="utf-8")
    # a sitemap listing every page, relative to the host (filled in when served)
    (root / "urls.txt").write_text("\n".join(urls), encoding="utf-8")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_sitemap(root: Path, base: str) -> None:
    urls = (root / "urls.txt").read_text(encoding="utf-8").split("\n")
    body = "".join(f"<url><loc>{base}{u}</loc></url>" for u in urls)
    (root / "sitemap.xml").write_text(
        f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>',
        encoding="utf-8")


def child(url: str, docs: str, concurrency: int, max_pages: int) -> None:
    """Run one scrape in this process and print its numbers as JSON."""
    from doc4llm.ingest.scrape import ScrapeOptions, scrape_site

    options = ScrapeOptions(concurrency=concurrency, delay=0.0, max_pages=max_pages, timeout=30)
    started = time.perf_counter()
    summary = scrape_site(url, Path(docs), "Bench@1", options)
    seconds = time.perf_counter() - started
    counts = summary.to_dict()["counts"]
    print(json.dumps({"seconds": seconds, "counts": counts,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def _run_child(url: str, docs: Path, concurrency: int, max_pages: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", url, str(docs), str(concurrency),
                          str(max_pages)], capture_output=True, text=True, timeout=900, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=600)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        generate(site, args.pages)
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        _write_sitemap(site, base)
        server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                                   "--directory", str(site)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                try:
                    urllib.request.urlopen(f"{base}/docs/", timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            rows = []
            limit = args.pages + 10
            for conc in args.concurrency:
                docs = Path(tmp) / f"md_docs_c{conc}"
                first = _run_child(f"{base}/docs/", docs, conc, limit)
                rows.append(("full scrape", conc, first))
                if conc == max(args.concurrency):
                    again = _run_child(f"{base}/docs/", docs, conc, limit)
                    rows.append(("re-scrape (unchanged)", conc, again))
        finally:
            server.terminate()
            server.wait(timeout=10)

    print(f"Scrape benchmark: {args.pages} generated pages served by http.server on loopback, "
          "delay 0, 2-core machine\n")
    print("| run | concurrency | pages written | unchanged | seconds | pages/s | peak RSS (MB) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, conc, r in rows:
        pages = r["counts"]["fetched"] + r["counts"]["unchanged"]
        print(f"| {label} | {conc} | {r['counts']['fetched']} | {r['counts']['unchanged']} | "
              f"{r['seconds']:.1f} | {pages / r['seconds']:.1f} | {r['peak_rss_mb']:.0f} |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        main()
