#!/usr/bin/env python3
"""Chunking throughput of doc4llm.code.chunks_for_section, in lines per second.

Usage: python benchmarks/code/chunk_bench.py [--repeat N]

Measures, per section as the indexer calls it (code detection, language resolution,
tree-sitter parse and split included):
  * the upstream corpus (../shared/corpora/upstream_md_docs, 82 real pages);
  * benchmarks/code/code_docs (code-heavy pages with long blocks in six languages);
  * one synthetic 5,000-line code block per language (Python, TypeScript, Go, JSON),
    unlabelled, so language detection is part of the cost.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from doc4llm.code import chunks_for_section
from doc4llm.corpus.sections import parse_sections

HERE = Path(__file__).resolve().parent
REPO = Path(__file__).resolve().parents[2]
UPSTREAM = REPO.parent / "shared" / "corpora" / "upstream_md_docs"


def section_texts(pages: list[Path]) -> list[tuple[str, int]]:
    out = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        lines = text.splitlines()
        for sec in parse_sections(text):
            out.append(("\n".join(lines[sec.start - 1 : sec.end]), sec.start))
    return out


def synthetic_blocks() -> dict[str, str]:
    py = "".join(f"def handler_{i}(event):\n    value = event.get('x', {i})\n    return value * 2\n\n\n" for i in range(1000))
    ts = "".join(f"export function handler{i}(x: number): number {{\n  const y = x + {i};\n  return y * 2;\n}}\n\n" for i in range(1000))
    go = "package main\n\n" + "".join(f"func Handler{i}(x int) int {{\n\ty := x + {i}\n\treturn y * 2\n}}\n\n" for i in range(1000))
    js = "{\n" + ",\n".join(f'  "key{i}": {{\n    "value": {i},\n    "on": true\n  }}' for i in range(1250)) + "\n}\n"
    return {"python": py, "typescript": ts, "go": go, "json": js}


def measure(label: str, items: list[tuple[str, int]], repeat: int) -> None:
    n_lines = sum(text.count("\n") + 1 for text, _ in items)
    best = float("inf")
    n_chunks = 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        n_chunks = sum(len(chunks_for_section(text, first)) for text, first in items)
        best = min(best, time.perf_counter() - t0)
    print(f"{label:<34} {n_lines:>7} lines {n_chunks:>6} chunks {best * 1000:>8.1f} ms "
          f"{n_lines / best:>10,.0f} lines/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best is kept")
    args = ap.parse_args()
    chunks_for_section("```python\nx = 1\n```\n", 1)  # load grammars outside the timing
    if UPSTREAM.is_dir():
        measure("upstream corpus (per section)", section_texts(sorted(UPSTREAM.glob("*/*/docContent.md"))), args.repeat)
    measure("code_docs (per section)", section_texts(sorted((HERE / "code_docs").glob("*.md"))), args.repeat)
    for lang, code in synthetic_blocks().items():
        measure(f"5,000-line {lang} block", [(f"## Big\n\n```\n{code}```\n", 1)], args.repeat)


if __name__ == "__main__":
    main()
