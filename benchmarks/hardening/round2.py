"""Issue 29's timing attacks, measured: robots.txt wildcards and rule counts, code-language
detection on blank lines and spaces, and the other regexes over untrusted text.

Each case runs in a child process with a time limit (a case that is still quadratic would
run for minutes) and prints the wall time of the measured call alone (imports and set-up
excluded). Run it on this tree, then on an older one to compare:

    python benchmarks/hardening/round2.py                      # the code on sys.path
    PYTHONPATH=/tmp/old-tree python benchmarks/hardening/round2.py --timeout 60

docs/hardening.md records the numbers.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path


def _timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def robots_wildcard() -> float:
    from doc4llm.ingest.scrape.robots import parse_robots

    rules = parse_robots("User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*b\n", "doc4llm")
    return _timed(lambda: rules.allowed("http://h/docs/" + "a" * 60))


def _per_url(text: str) -> float:
    from doc4llm.ingest.scrape.robots import parse_robots

    rules = parse_robots(text, "doc4llm")
    rules.allowed("https://h/")  # a parser may index its rules on first use
    t0 = time.perf_counter()
    for i in range(200):
        rules.allowed(f"https://h/docs/guide/getting-started/page{i}")
    return (time.perf_counter() - t0) / 200


def robots_200k_literal_rules() -> float:
    return _per_url("User-agent: *\n" + "".join(f"Disallow: /p{i}/\n" for i in range(200_000)))


def robots_200k_wildcard_rules() -> float:
    return _per_url("User-agent: *\n" + "".join(f"Disallow: /*a{i}z\n" for i in range(200_000)))


def langdetect_blank_lines() -> float:
    from doc4llm.code.langdetect import signal_scores

    return _timed(lambda: signal_scores(" \n" * 4000))


def langdetect_arrow_spaces() -> float:
    from doc4llm.code.langdetect import signal_scores

    return _timed(lambda: signal_scores("def f() -> " + " " * 19_000))


def index_page_with_blank_code_block() -> float:
    from doc4llm.corpus.writer import SetWriter
    from doc4llm.index.service import build_index

    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        w = SetWriter(docs, "Blank@1", origin="bench")
        w.write_page("Blank", "## Code\n\n```\n" + " \n" * 3000 + "x\n```\n", source="b.md", key="b.md")
        w.finish({})
        return _timed(lambda: build_index(docs, vectors=False))


def llms_txt_blank_lines() -> float:
    from doc4llm.ingest.scrape.discovery import parse_llms_txt

    return _timed(lambda: parse_llms_txt("\n" * 20_000 + "x"))


def front_matter_title_spaces() -> float:
    from doc4llm.ingest.scrape.markdown_page import convert_markdown

    return _timed(lambda: convert_markdown("---\ntitle: a" + " " * 20_000 + "b\n---\n# H\n", "https://h/x.md"))


def myst_role_title_spaces() -> float:
    from doc4llm.ingest.myst_roles import render_role

    return _timed(lambda: render_role("ref", "a" + " " * 20_000 + "x<target>"))


def heading_underscores() -> float:
    from doc4llm.ingest.scrape.html_to_md import escape_heading

    return _timed(lambda: escape_heading("a" + "_" * 20_000 + "b"))


CASES: dict[str, Callable[[], object]] = {
    "robots: /*a*a*a*a*a*a*a*a*b vs 60 a's (one URL)": robots_wildcard,
    "robots: 200k literal rules, per URL": robots_200k_literal_rules,
    "robots: 200k /*aN wildcard rules, per URL": robots_200k_wildcard_rules,
    "langdetect: signal_scores(' \\n' * 4000)": langdetect_blank_lines,
    "langdetect: 'def f() -> ' + 19,000 spaces": langdetect_arrow_spaces,
    "index: page with a 6 KB code block of blank lines": index_page_with_blank_code_block,
    "llms.txt: 20,000 blank lines": llms_txt_blank_lines,
    "front matter: title with 20,000 spaces": front_matter_title_spaces,
    "MyST role: title with 20,000 spaces": myst_role_title_spaces,
    "heading: 20,000 underscores": heading_underscores,
}


def _child(name: str, out) -> None:
    out.send(CASES[name]())  # seconds of the measured call (imports and set-up excluded)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds before a case is called hung")
    args = ap.parse_args()
    import doc4llm

    print(f"doc4llm from {Path(doc4llm.__file__).parent}")
    ctx = multiprocessing.get_context("fork")
    for name in CASES:
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(name, send))
        proc.start()
        if recv.poll(args.timeout):
            seconds = recv.recv()
            shown = f"{seconds * 1000:.3f} ms" if seconds < 1 else f"{seconds:.1f} s"
        else:
            proc.kill()
            shown = f"> {args.timeout:.0f} s (stopped)"
        proc.join()
        print(f"{name:55s} {shown}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
