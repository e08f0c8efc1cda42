"""Two doc4llm checkouts side by side, same machine, same run, interleaved: what a search
costs as a new process (`doc4llm search`) and in a warm process (one Searcher, as the MCP
server holds), p50 and p95 of wall time and of the child's CPU time.

Written for issue 28 (onnxruntime runs the queries; the numpy ONNX interpreter was
removed): docs/indexing.md has the numbers. Each checkout searches its own copy of the
docs (indexed beforehand with its own `doc4llm index`), so neither reads the other's index.

    python benchmarks/search/runtime_trade_bench.py --tree before=/work/wt-28-before:/tmp/d/before \\
        --tree after=/work/wt-28:/tmp/d/after --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

# children run in a neutral folder: `python -m` and `-c` put the working directory first on
# sys.path, so a run started inside a checkout would import that checkout for every tree
NEUTRAL_CWD = tempfile.gettempdir()

QUERIES = [
    "how do I add a hook", "configure MCP servers", "what does the /compact command do",
    "set the default model", "permissions for bash commands", "custom slash commands",
    "share a session", "keybindings", "run in headless mode", "environment variables",
]

WARM = r"""
import json, sys, time
from doc4llm.search.engine import Searcher
queries = json.loads(sys.argv[2])
s = Searcher(sys.argv[1], quiet=True)
s.search(queries[0], k=5)  # the first query pays the loads, as an MCP server's first call does
out = []
for q in queries:
    t = time.perf_counter()
    res = s.search(q, k=5)
    out.append({"ms": (time.perf_counter() - t) * 1000, "embed_query": res["timing_ms"].get("embed_query")})
print(json.dumps(out))
"""


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def new_process(tree: str, docs: str, query: str, env: dict) -> tuple[float, float, float]:
    """(wall ms, CPU ms, the search's own embed_query ms) of one `python -m doc4llm search`
    process."""
    cpu0, t0 = _child_cpu(), time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "doc4llm", "search", query, "--docs-dir", docs, "--json",
                          "--explain"],  # --explain: the `semantic` field (main after 203af8d)
                         capture_output=True, text=True, env={**env, "PYTHONPATH": tree}, timeout=300,
                         cwd=NEUTRAL_CWD)
    wall, cpu = (time.perf_counter() - t0) * 1000, (_child_cpu() - cpu0) * 1000
    if out.returncode not in (0, 1):
        raise SystemExit(f"{tree}: search failed: {out.stderr[-500:]}")
    res = json.loads(out.stdout)
    if any(v.get("tier") != "full" for v in res.get("semantic", {}).values()) or not res.get("semantic"):
        print(f"warning: {tree} answered {query!r} without full vectors", file=sys.stderr)
    return wall, cpu, res["timing_ms"].get("embed_query") or 0.0


def warm(tree: str, docs: str, env: dict) -> list[tuple[float, float]]:
    out = subprocess.run([sys.executable, "-c", WARM, docs, json.dumps(QUERIES)], capture_output=True,
                         text=True, env={**env, "PYTHONPATH": tree}, timeout=600, cwd=NEUTRAL_CWD)
    if out.returncode:
        raise SystemExit(f"{tree}: warm run failed: {out.stderr[-500:]}")
    return [(r["ms"], r["embed_query"] or 0.0) for r in json.loads(out.stdout)]


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", action="append", required=True, help="label=checkout:docs_dir")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warm-env", action="append", default=[],
                    help="label:VAR=value, an extra variable for one tree's warm runs (e.g. the "
                         "MCP server's DOC4LLM_QUERY_RUNTIME=onnxruntime); also run as label+VAR")
    args = ap.parse_args()
    trees = {}
    for spec in args.tree:
        label, _, rest = spec.partition("=")
        tree, _, docs = rest.partition(":")
        trees[label] = (tree, docs)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOC4LLM_")}
    for label, (tree, _) in trees.items():  # each tree runs its own code
        where = subprocess.run([sys.executable, "-c", "import doc4llm; print(doc4llm.__file__)"], text=True,
                               capture_output=True, env={**env, "PYTHONPATH": tree}, cwd=NEUTRAL_CWD).stdout
        if not where.startswith(os.path.realpath(tree)):
            raise SystemExit(f"{label}: doc4llm comes from {where.strip()}, not {tree}")
    variants = [(label, label, {}) for label in trees]
    for spec in args.warm_env:
        label, _, assign = spec.partition(":")
        var, _, value = assign.partition("=")
        variants.append((f"{label}+{var}={value}", label, {var: value}))
    cold: dict[str, list[tuple[float, float, float]]] = {label: [] for label in trees}
    hot: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in variants}
    for rnd in range(args.rounds):
        for q in QUERIES:
            for label in (list(trees) if rnd % 2 == 0 else list(trees)[::-1]):
                cold[label].append(new_process(*trees[label], q, env))
        for name, label, extra in (variants if rnd % 2 == 0 else variants[::-1]):
            hot[name].extend(warm(*trees[label], {**env, **extra}))
        print(f"round {rnd + 1}/{args.rounds} done, load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    print("| checkout | new process p50 wall (ms) | p95 wall | p50 CPU (ms) | p50 embed_query (ms) | n |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, xs in cold.items():
        walls, cpus, emb = [x[0] for x in xs], [x[1] for x in xs], [x[2] for x in xs]
        print(f"| {label} | {statistics.median(walls):.0f} | {pct(walls, 0.95):.0f} | "
              f"{statistics.median(cpus):.0f} | {statistics.median(emb):.0f} | {len(xs)} |")
    print()
    print("| checkout | warm in-process p50 (ms) | p95 | p50 embed_query (ms) | n |")
    print("|---|---:|---:|---:|---:|")
    for name, xs in hot.items():
        ms, emb = [x[0] for x in xs], [x[1] for x in xs]
        print(f"| {name} | {statistics.median(ms):.1f} | {pct(ms, 0.95):.1f} | {statistics.median(emb):.1f} | {len(xs)} |")
    print(f"\nload average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
