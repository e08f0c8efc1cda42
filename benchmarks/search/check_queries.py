#!/usr/bin/env python3
"""Validate a labelled query file against an md_docs corpus.

Usage:
    python benchmarks/search/check_queries.py [QUERIES.json] [--docs-dir DIR] [--show]

Checks, for every query:
  * the object shape (query, kind, expected, optional also_valid with grade 1|2);
  * kind is one of howto|error|concept|code_lookup|api_reference|general|no_answer;
  * no_answer queries have expected == [] and no also_valid; other kinds have >= 1 expected;
  * every labelled set/page folder exists and has a docContent.md;
  * every labelled section ("H1 > H2 > ...") is the heading chain of a real heading
    in that page's docContent.md (a path that occurs more than once is a warning);
  * no duplicate query strings.

Headings are lines starting with 1-6 '#' followed by a space, ignoring lines inside
fenced code blocks (``` or ~~~, up to 3 spaces of indent) and 4-space/tab indented
code. The heading path of a heading is the chain of enclosing headings actually
present (pages that skip levels produce shorter chains; a second H1 replaces the
first one). Heading texts are compared exactly as written in docContent.md.

--show prints the first lines of each expected section, for eyeballing labels.
Exit status: 0 when every label is valid, 1 otherwise.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys

KINDS = {"howto", "error", "concept", "code_lookup", "api_reference", "general", "no_answer"}
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_QUERIES = os.path.join(HERE, "queries", "upstream_queries.json")
DEFAULT_DOCS = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "corpora", "upstream_md_docs"))


def parse_headings(path: str) -> list[tuple[int, int, str]]:
    """Return (line_no, level, text) for each heading outside code."""
    out: list[tuple[int, int, str]] = []
    fence: str | None = None
    with open(path, encoding="utf-8") as f:
        for no, raw in enumerate(f, 1):
            line = raw.rstrip("\n").rstrip("\r")
            if fence is not None:
                m = FENCE.match(line)
                if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2).strip():
                    fence = None
                continue
            m = FENCE.match(line)
            if m:
                fence = m.group(1)
                continue
            if line.startswith("    ") or line.startswith("\t"):
                continue
            h = HEADING.match(line)
            if h:
                out.append((no, len(h.group(1)), h.group(2).strip()))
    return out


def heading_paths(headings: list[tuple[int, int, str]]) -> list[tuple[int, str]]:
    """Return (line_no, 'A > B > C') for every heading."""
    stack: list[tuple[int, str]] = []
    paths = []
    for no, level, text in headings:
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, text))
        paths.append((no, " > ".join(t for _, t in stack)))
    return paths


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("queries", nargs="?", default=DEFAULT_QUERIES)
    ap.add_argument("--docs-dir", default=DEFAULT_DOCS)
    ap.add_argument("--show", action="store_true", help="print the start of each expected section")
    args = ap.parse_args()

    with open(args.queries, encoding="utf-8") as f:
        data = json.load(f)
    errors: list[str] = []
    warnings: list[str] = []
    if not isinstance(data, dict) or not isinstance(data.get("queries"), list):
        print("FAIL: top level must be an object with a 'queries' list")
        return 1

    cache: dict[tuple[str, str], dict[str, list[int]] | None] = {}

    def section_lines(set_name: str, page: str) -> dict[str, list[int]] | None:
        key = (set_name, page)
        if key not in cache:
            p = os.path.join(args.docs_dir, set_name, page, "docContent.md")
            if not os.path.isfile(p):
                cache[key] = None
            else:
                idx: dict[str, list[int]] = {}
                for no, path in heading_paths(parse_headings(p)):
                    idx.setdefault(path, []).append(no)
                cache[key] = idx
        return cache[key]

    def check_label(qi: int, lab: dict, field: str) -> None:
        where = f"query #{qi} {field}"
        if not isinstance(lab, dict):
            errors.append(f"{where}: label must be an object")
            return
        for k in ("set", "page", "section"):
            if not isinstance(lab.get(k), str) or not lab.get(k):
                errors.append(f"{where}: missing or empty '{k}'")
                return
        if field == "also_valid" and lab.get("grade") not in (1, 2):
            errors.append(f"{where}: grade must be 1 or 2 ({lab})")
        idx = section_lines(lab["set"], lab["page"])
        if idx is None:
            errors.append(f"{where}: no page {lab['set']}/{lab['page']}/docContent.md")
            return
        hits = idx.get(lab["section"])
        if not hits:
            errors.append(f"{where}: section not found in {lab['set']}/{lab['page']}: {lab['section']!r}")
        elif len(hits) > 1:
            # Same heading path at several places (e.g. OpenCode pages repeat their H1 on
            # line 7; one page repeats "Prerequisites" under one parent). Any section with
            # that path counts as a hit in eval, so this is a warning, not an error.
            warnings.append(f"{where}: section path occurs {len(hits)} times (lines {hits}): {lab['section']!r}")

    seen: set[str] = set()
    counts: dict[str, int] = {}
    for qi, q in enumerate(data["queries"]):
        if not isinstance(q, dict) or not isinstance(q.get("query"), str) or not q["query"].strip():
            errors.append(f"query #{qi}: missing query text")
            continue
        text = q["query"].strip()
        if text.lower() in seen:
            errors.append(f"query #{qi}: duplicate query {text!r}")
        seen.add(text.lower())
        kind = q.get("kind")
        if kind not in KINDS:
            errors.append(f"query #{qi}: bad kind {kind!r}")
        counts[kind] = counts.get(kind, 0) + 1
        exp = q.get("expected")
        if not isinstance(exp, list):
            errors.append(f"query #{qi}: 'expected' must be a list")
            continue
        also = q.get("also_valid", [])
        if not isinstance(also, list):
            errors.append(f"query #{qi}: 'also_valid' must be a list")
            also = []
        if kind == "no_answer":
            if exp or also:
                errors.append(f"query #{qi}: no_answer must have expected == [] and no also_valid")
            continue
        if not exp:
            errors.append(f"query #{qi}: answerable query without expected labels")
        for lab in exp:
            check_label(qi, lab, "expected")
        for lab in also:
            check_label(qi, lab, "also_valid")
        if args.show:
            for lab in exp:
                idx = section_lines(lab.get("set", ""), lab.get("page", "")) or {}
                hits = idx.get(lab.get("section", ""))
                print(f"\n[{qi}] {kind}: {text}\n    -> {lab.get('page')} :: {lab.get('section')}")
                if hits and len(hits) == 1:
                    p = os.path.join(args.docs_dir, lab["set"], lab["page"], "docContent.md")
                    with open(p, encoding="utf-8") as f:
                        lines = f.read().splitlines()
                    body = [ln for ln in lines[hits[0]:hits[0] + 12] if ln.strip()][:4]
                    for ln in body:
                        print("       | " + ln[:150])

    total = len(data["queries"])
    print(f"{total} queries: " + ", ".join(f"{k}={counts.get(k, 0)}" for k in sorted(KINDS)))
    for w in warnings:
        print("  warning: " + w)
    if errors:
        print(f"FAIL: {len(errors)} problem(s)")
        for e in errors:
            print("  - " + e)
        return 1
    print("OK: every expected/also_valid page and section path exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
