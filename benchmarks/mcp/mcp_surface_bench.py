"""What an MCP client pays before its first search: `initialize` time and `tools/list` size.

Starts `doc4llm serve` over stdio on the bundled md_docs with the real MCP client,
`--runs` times, and prints the median time from spawning the server to the end of
`initialize` (the process start and the imports are in it: that is what an agent
waits for), the `tools/list` reply size in bytes as sent on the wire (compact JSON of
the result, as the server serialises it), and its split into descriptions, input and
output schemas.

    python benchmarks/mcp/mcp_surface_bench.py [--runs 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parents[2]


def _size(data: object) -> int:
    return len(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode())


async def one_run(docs: Path) -> dict:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "DOC4LLM_DOCS_DIR")}
    params = StdioServerParameters(command=sys.executable, env=env,
                                   args=["-m", "doc4llm", "serve", "--docs-dir", str(docs)])
    with open(os.devnull, "w") as errlog:
        start = time.perf_counter()
        async with stdio_client(params, errlog=errlog) as streams, ClientSession(*streams) as session:
            await session.initialize()
            init_ms = (time.perf_counter() - start) * 1000
            listed = await session.list_tools()
    tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]
    return {
        "initialize_ms": init_ms,
        "tools_list_bytes": _size({"tools": tools}),
        "description_bytes": sum(len(t.get("description", "").encode()) for t in tools),
        "input_schema_bytes": sum(_size(t["inputSchema"]) for t in tools),
        "output_schema_bytes": sum(_size(t.get("outputSchema", {})) for t in tools),
        "tools": len(tools),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--docs-dir", default=str(REPO / "md_docs"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    runs = [anyio.run(one_run, Path(args.docs_dir)) for _ in range(args.runs)]
    out = {**runs[-1], "initialize_ms": round(statistics.median(r["initialize_ms"] for r in runs)),
           "initialize_ms_all": [round(r["initialize_ms"]) for r in runs],
           "load_average": [round(x, 2) for x in os.getloadavg()]}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    for key, value in out.items():
        print(f"{key:22} {value}")


if __name__ == "__main__":
    main()
