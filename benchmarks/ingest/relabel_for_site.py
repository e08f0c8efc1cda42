"""Relabel a corpus-aware query file (labels: source file + heading) onto a scraped MkDocs
site (labels: set + page folder + heading path), to score the same questions on the
site's HTML as on its markdown sources.

    python benchmarks/ingest/relabel_for_site.py ../shared/benchmarks/realdocs-dev/queries.json \
        --corpus uv --set-dir /tmp/uvdocs/uv@site --base http://127.0.0.1:8766/ > /tmp/uv_site.json
    doc4llm eval /tmp/uv_site.json --docs-dir /tmp/uvdocs

MkDocs maps `a/b.md` to `<base>a/b/` and `a/index.md` to `<base>a/`; a page is found by
its source URL, a section by its plain heading text (`{#id}` attribute lists ignored).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from doc4llm.corpus.sections import Section, parse_page, split_attributes
from doc4llm.evaluation import norm_heading


def _page_url(base: str, file: str) -> str:
    stem = re.sub(r"\.(md|markdown)$", "", file)
    if stem == "index" or stem.endswith("/index"):
        return base + stem[: -len("index")]
    return base + stem + "/"


def _pages(set_dir: Path) -> dict[str, tuple[str, list[Section]]]:
    pages = {}
    for folder in set_dir.iterdir():
        if folder.is_dir() and (folder / "docContent.md").is_file():
            parsed = parse_page((folder / "docContent.md").read_text(encoding="utf-8"))
            pages[parsed.source] = (folder.name, parsed.sections)
    return pages


def _label(entry: dict, pages: dict, set_name: str, base: str) -> dict | None:
    hit = pages.get(_page_url(base, entry["file"]))
    if hit is None:
        return None
    folder, sections = hit
    titled = [s for s in sections if s.level]
    if entry.get("heading") is None:  # the page intro
        path = titled[0].heading_path[:1] if titled else None
    else:
        want = norm_heading(split_attributes(entry["heading"])[0])
        match = next((s for s in titled if norm_heading(s.title) == want), None)
        path = (match.heading_path[1:] or match.heading_path) if match else None
    if not path:
        return None
    label = {"set": set_name, "page": folder, "section": " > ".join(path)}
    if "grade" in entry:
        label["grade"] = entry["grade"]
    return label


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("queries", type=Path)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--set-dir", type=Path, required=True, help="the scraped set folder")
    ap.add_argument("--base", required=True, help="the site's base URL, ending in /")
    args = ap.parse_args(argv)
    pages = _pages(args.set_dir)
    out, dropped = [], 0
    for q in json.loads(args.queries.read_text(encoding="utf-8"))["queries"]:
        if q.get("corpus") != args.corpus:
            continue
        expected = [_label(e, pages, args.set_dir.name, args.base) for e in q.get("expected") or []]
        if q["kind"] != "no_answer" and (not expected or not all(expected)):
            dropped += 1
            continue
        item = {"query": q["query"], "kind": q["kind"], "expected": expected}
        also = [_label({"grade": 1, **e}, pages, args.set_dir.name, args.base) for e in q.get("also_valid") or []]
        if any(also):
            item["also_valid"] = [a for a in also if a]
        out.append(item)
    print(json.dumps(out, indent=1, ensure_ascii=False))
    print(f"{len(out)} queries, {dropped} not found on the site", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
