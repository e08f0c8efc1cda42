"""What one `ask` costs per scenario: LLM calls, tokens, and the loop's own overhead.

Runs the scenarios of tests/fakes_llm.py (well documented, partial, undocumented/web,
malformed evaluator JSON, 429 then success, iteration cap) against the loopback
OpenAI- and Tavily-compatible fakes, through the real openai / tavily-python clients and
(by default) the real search engine over a small docs set, and prints a markdown table.

"overhead" is the wall time of the loop minus the time inside model calls and web calls:
search, reading sections, prompts, parsing and bookkeeping ("of which search" splits out
the search engine). Model time on the fakes is near zero, so overhead is the cost doc4llm
adds on top of a model's own latency. "client setup" is building the openai and tavily
clients (once per `ask` process), outside the loop.

    python benchmarks/ask/ask_bench.py [--runs 5] [--stub-search]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))  # the loopback fakes

from fakes_llm import SCENARIOS, FakeOpenAI, FakeTavily, fake_env, make_docs, stub_search  # noqa: E402

from doc4llm.answer.config import load_answer_config  # noqa: E402
from doc4llm.answer.llm import LLMClient  # noqa: E402
from doc4llm.answer.loop import AskDeps, run_ask  # noqa: E402
from doc4llm.answer.websearch import WebSearch  # noqa: E402


def run_once(docs: Path, name: str, search_fn) -> dict:
    llm, tav = FakeOpenAI(), FakeTavily()
    try:
        os.environ.update(fake_env(llm, tav))
        scenario = SCENARIOS[name](llm, tav)
        config = dataclasses.replace(load_answer_config(docs / "none.yaml"),
                                     **scenario.get("config", {}))
        start = time.perf_counter()
        deps = AskDeps(search_fn=search_fn, docs_dir=docs, llm=LLMClient.from_env(config),
                       web=WebSearch.from_env(config), config=config, k=2)
        setup_ms = (time.perf_counter() - start) * 1000
        trace = run_ask(scenario["question"], deps).trace.to_dict()
        trace["totals"]["setup_ms"] = setup_ms
        trace["totals"]["search_ms"] = sum(s["duration_ms"] for s in trace["steps"]
                                           if s["kind"] in ("search", "doc_query"))
        trace["evaluations"] = sum(1 for s in trace["steps"] if s["kind"] == "evaluation")
        return trace
    finally:
        llm.close()
        tav.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per scenario (median times)")
    parser.add_argument("--stub-search", action="store_true",
                        help="use the tests' word-overlap search instead of the real engine")
    args = parser.parse_args()
    os.environ.setdefault("DOC4LLM_EMBEDDER", "none")
    docs = make_docs(Path(tempfile.mkdtemp(prefix="ask_bench_")))
    if args.stub_search:
        search_fn, engine = stub_search(docs), "stub search"
    else:
        from doc4llm.search.engine import Searcher

        searcher = Searcher(docs, quiet=True)
        search_fn = lambda q: searcher.search(q, k=4)  # noqa: E731 (what `ask -k 2` asks for)
        search_fn("warm up the index")
        engine = f"real engine (embedder {os.environ['DOC4LLM_EMBEDDER']})"
    run_once(docs, "well documented", search_fn)  # warm up imports and connections
    print(f"ask scenarios on loopback fakes, {engine}, median of {args.runs} runs\n")
    print("| scenario | evaluations | LLM calls | retries | prompt tok | completion tok "
          "| total tok | ask ms | LLM ms | web ms | overhead ms | of which search ms "
          "| client setup ms | final |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in SCENARIOS:
        runs = [run_once(docs, name, search_fn) for _ in range(args.runs)]
        t = runs[0]["totals"]

        def med(key: str, runs=runs) -> float:
            return statistics.median(r["totals"][key] for r in runs)

        print(f"| {name} | {runs[0]['evaluations']} | {t['llm_calls']} | {t['retries']} "
              f"| {t['prompt_tokens']} | {t['completion_tokens']} | {t['total_tokens']} "
              f"| {med('duration_ms'):.1f} | {med('llm_ms'):.1f} | {med('web_ms'):.1f} "
              f"| {med('overhead_ms'):.1f} | {med('search_ms'):.1f} | {med('setup_ms'):.1f} "
              f"| {runs[0]['finalAction']} |")
    print("\ntokens are counted by the fake server as characters/4 of the real prompts; "
          "LLM ms includes retry waits (429 scenario: Retry-After 0.05 s).")


if __name__ == "__main__":
    main()
