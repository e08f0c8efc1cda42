"""Real-site benchmark: scrape a documentation site served on 127.0.0.1, check its structure,
score a labelled query file on it.

    python benchmarks/ingest/sphinx_site_bench.py                      # Python 3.11 stdlib docs
    python benchmarks/ingest/sphinx_site_bench.py --skip-scrape --docs-dir /tmp/pydocs
    python benchmarks/ingest/sphinx_site_bench.py --html-root site/ --start index.html \
        --set uv@dev --queries none                             # any built site (MkDocs...)

The default site is Debian's python3.11-doc (`apt-get install python3.11-doc`, HTML under
/usr/share/doc/python3.11/html); its library reference is scraped with `doc4llm scrape`
into --docs-dir, then `doc4llm eval benchmarks/search/queries/python_stdlib_queries.json` runs on it.

Structure report (from the docTOC.md files as written, so an older scrape can be compared):
heading count and level distribution; headings whose title (docTOC / heading path) or
docContent.md heading line still holds inline markup (links, code, emphasis, HTML);
heading paths that skip a level; and, given the HTML root, TOC anchors that are no id
of the page they point into (invented anchors).
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

from doc4llm.corpus.sections import parse_page
from doc4llm.corpus.toc import parse_toc

REPO = Path(__file__).resolve().parents[2]
_MARKUP_IN_TITLE = re.compile(r"\]\(|`|</?(?:a|code|em|strong|span|b|i|img|br|sub|sup|div|p)[\s>/]|\{#|\{:")
_UNESCAPED_MARKUP = re.compile(r"(?<!\\)(?:\]\(|`|\*\*|<[a-z][a-z0-9]*[\s>/])")
_ID = re.compile(r"""\bid=["']([^"']+)["']""")


def structure_report(set_dir: Path, html_root: Path | None = None, url_prefix: str = "") -> dict:
    """Counts over every page of one doc set folder (see the module doc)."""
    levels: collections.Counter = collections.Counter()
    headings = title_markup = line_markup = skips = anchored = invented = pages = 0
    examples: dict[str, list[str]] = {"title_markup": [], "invented_anchor": [], "level_skip": []}
    ids_cache: dict[Path, set[str]] = {}
    for toc_file in sorted(set_dir.glob("*/docTOC.md")):
        pages += 1
        _, _, entries = parse_toc(toc_file.read_text(encoding="utf-8"))
        content = toc_file.with_name("docContent.md").read_text(encoding="utf-8")
        lines = content.splitlines()
        for sec in parse_page(content).sections:
            if sec.level and sec.start > 1 and _UNESCAPED_MARKUP.search(lines[sec.start - 1]):
                line_markup += 1
        previous = 0
        for entry in entries:
            if not entry.level:
                continue
            headings += 1
            levels[entry.level] += 1
            if _MARKUP_IN_TITLE.search(entry.title):
                title_markup += 1
                _sample(examples["title_markup"], entry.title)
            if previous and entry.level > previous + 1:
                skips += 1
                _sample(examples["level_skip"], f"h{previous} -> h{entry.level} {entry.title}")
            previous = entry.level
            if entry.url and "#" in entry.url and html_root is not None:
                anchored += 1
                page_url, fragment = entry.url.split("#", 1)
                path = urlsplit(page_url).path
                if url_prefix and path.startswith(url_prefix):
                    path = path[len(url_prefix):]
                html_file = html_root / (path.lstrip("/") + ("index.html" if path.endswith("/") else ""))
                if html_file not in ids_cache:
                    text = html_file.read_text(encoding="utf-8", errors="replace") if html_file.is_file() else ""
                    ids_cache[html_file] = set(_ID.findall(text))
                if fragment not in ids_cache[html_file]:
                    invented += 1
                    _sample(examples["invented_anchor"], entry.url)

    def pct(n: int) -> float:
        return round(100.0 * n / headings, 1) if headings else 0.0

    return {
        "pages": pages,
        "headings": headings,
        "levels": {f"h{k}": levels[k] for k in sorted(levels)},
        "levels_pct": {f"h{k}": pct(levels[k]) for k in sorted(levels)},
        "title_markup": title_markup, "title_markup_pct": pct(title_markup),
        "heading_line_markup": line_markup, "heading_line_markup_pct": pct(line_markup),
        "level_skips": skips,
        "anchored_urls": anchored, "invented_anchors": invented,
        "examples": examples,
    }


def _sample(bucket: list[str], item: str, limit: int = 5) -> None:
    if len(bucket) < limit:
        bucket.append(item[:160])


def _serve(root: Path, port: int) -> subprocess.Popen:
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                              cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    return server


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--html-root", type=Path, default=Path("/usr/share/doc/python3.11/html"))
    ap.add_argument("--start", default="library/index.html", help="start page, relative to the root")
    ap.add_argument("--docs-dir", type=Path, default=Path("/tmp/pydocs"))
    ap.add_argument("--set", default="Python@3.11")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--queries", default=str(REPO / "benchmarks" / "search" / "queries" / "python_stdlib_queries.json"),
                    help="labelled query file for `doc4llm eval`, or 'none'")
    ap.add_argument("--skip-scrape", action="store_true", help="reuse the docs dir as it is")
    ap.add_argument("--embedder", default=None, help="passed to `doc4llm eval`")
    args = ap.parse_args(argv)
    base = f"http://127.0.0.1:{args.port}/"
    if not args.skip_scrape:
        if not (args.html_root / args.start).is_file():
            print(f"no {args.html_root / args.start}: install python3.11-doc or pass --html-root",
                  file=sys.stderr)
            return 2
        server = _serve(args.html_root, args.port)
        try:
            t0 = time.perf_counter()
            subprocess.run(["doc4llm", "scrape", base + args.start, "--set", args.set, "--docs-dir",
                            str(args.docs_dir), "--delay", "0", "-q"], check=True)
            print(f"scraped in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        finally:
            server.terminate()
            server.wait()
    report = {"structure": structure_report(args.docs_dir / args.set, args.html_root, "")}
    if args.queries != "none":
        cmd = ["doc4llm", "eval", args.queries, "--docs-dir", str(args.docs_dir), "--json"]
        if args.embedder:
            cmd += ["--embedder", args.embedder]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        report["eval"] = json.loads(out)
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
