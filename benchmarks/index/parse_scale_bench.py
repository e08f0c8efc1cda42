"""Parse scale: lexical index time per MB of markdown, 1 MB to 60 MB in ONE page, plus
50k headings in one page and the hostile inputs of issue 13 (a 6,000-space line, a
500-level nested list, a heading of 20k backticks).

Index time for a page must grow linearly with its size and heading count: the targets
are 50k headings in under 5 s, the hostile inputs in under 1 s each, and time per MB
within 2x from 1 MB to 60 MB. Each case is a fresh docs dir with one set and one page
(docContent.md only), indexed lexically in-process (`build_index(vectors=False)`).

    python benchmarks/index/parse_scale_bench.py                  # 1, 5, 15, 30, 60 MB
    python benchmarks/index/parse_scale_bench.py --sizes 1,5 --json
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from doc4llm.index.service import build_index  # noqa: E402

WORDS = ("config hook server token request response index section page search query "
         "model embed vector cache timeout retry plugin command option flag value "
         "error install update client session stream parser schema field default").split()


def _para(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def _block(rng: random.Random, i: int) -> str:
    """One section of realistic shape: a heading, prose, sometimes code, a list or a table."""
    level = (2, 3, 3, 4)[i % 4]
    parts = [f"{'#' * level} {rng.choice(WORDS).title()} {rng.choice(WORDS)} {i}", "", _para(rng, 18)]
    kind = i % 5
    if kind == 1:
        parts += ["", "```python", f"def {rng.choice(WORDS)}_{i}(x):", "    return x", "```"]
    elif kind == 2:
        parts += ["", f"- `{rng.choice(WORDS)}`: {_para(rng, 5)}", f"- `{rng.choice(WORDS)}`: {_para(rng, 5)}"]
    elif kind == 3:
        parts += ["", "| Name | Default |", "| --- | --- |", f"| `{rng.choice(WORDS)}` | {i} |"]
    return "\n".join(parts) + "\n\n"


def page_of(megabytes: float, seed: int = 13) -> str:
    rng = random.Random(seed)
    target = int(megabytes * 1_000_000)
    out, size, i = ["# Big Page\n\n"], 0, 0
    while size < target:
        block = _block(rng, i)
        out.append(block)
        size += len(block)
        i += 1
    return "".join(out)


def headings_page(n: int) -> str:
    """Sibling H2s under one H1: each one's parent is the first heading (the worst case for
    a backwards scan)."""
    return "# Many\n\n" + "".join(f"## Heading {i}\n\nline {i}\n\n" for i in range(n))


def hostile_pages() -> dict[str, str]:
    return {
        "6,000-space line": "# Spaces\n\n" + " " * 6000 + "x\n",
        "500-level nested list": "# Nested\n\n" + "".join("  " * i + f"- item {i}\n" for i in range(500)),
        "20k-backtick heading": "# Ticks\n\n## " + "`" * 20000 + " x\n\nbody\n",
        "20k-space TOC-like heading": "# T\n\n## t" + " " * 20000 + "x #\n\nbody\n",
    }


def index_one(text: str) -> dict:
    """Index one page in a fresh docs dir; seconds, sections, MB."""
    tmp = Path(tempfile.mkdtemp(prefix="d4l-parse-"))
    try:
        page = tmp / "Bench@1" / "Page"
        page.mkdir(parents=True)
        (page / "docContent.md").write_text(text, encoding="utf-8")
        t0 = time.perf_counter()
        report = build_index(tmp, vectors=False)
        seconds = time.perf_counter() - t0
        return {"mb": round(len(text.encode()) / 1e6, 3), "seconds": round(seconds, 3),
                "sections": report["lexical"].get("sections")}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1,5,15,30,60", help="page sizes in MB (comma-separated)")
    ap.add_argument("--headings", type=int, default=50_000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    for name, text in hostile_pages().items():
        rows.append({"case": name, **index_one(text)})
    rows.append({"case": f"{args.headings:,} headings", **index_one(headings_page(args.headings))})
    for mb in (float(x) for x in args.sizes.split(",")):
        r = index_one(page_of(mb))
        r["s_per_mb"] = round(r["seconds"] / r["mb"], 3)
        rows.append({"case": f"{mb:g} MB page", **r})
        print(f"  {rows[-1]}", file=sys.stderr, flush=True)
    per_mb = [r["s_per_mb"] for r in rows if "s_per_mb" in r]
    summary = {"max_over_min_s_per_mb": round(max(per_mb) / min(per_mb), 2) if per_mb else None}
    if args.json:
        print(json.dumps({"rows": rows, **summary}, indent=2))
        return
    print(f"{'case':30} {'MB':>8} {'sections':>9} {'seconds':>8} {'s/MB':>7}")
    for r in rows:
        print(f"{r['case']:30} {r['mb']:8.3f} {r['sections'] or 0:9d} {r['seconds']:8.3f} "
              f"{r.get('s_per_mb', ''):>7}")
    print(f"time per MB, largest / smallest: {summary['max_over_min_s_per_mb']}x")


if __name__ == "__main__":
    main()
