"""Scale: how index time, disk size, memory and query latency grow with the corpus.

Generates a deterministic corpus of realistic markdown pages (20 sections each: H1 with
an intro, H2/H3 headings, prose drawn Zipf-like from the upstream corpus vocabulary,
fenced code blocks with identifiers, bullet lists, tables, error strings), written in
the md_docs layout with the writer's own render functions (docContent.md + docTOC.md;
no set metadata file). Sets hold --pages-per-set pages, like real doc sites. For each
size, the docs dir is a hard-linked view of the first pages of one generated pool, so
the pages are generated once.

Per size: cold lexical index (new process: wall, cpu, peak RSS), index size on disk, a
no-change re-index, query p50/p95 in-process (one warm Searcher) and as a new process
(lexical-only). Vectors: their build rate is measured on a --vec-sample section sample
and extrapolated (said so); `--vectors SIZE` builds the default embedder's vectors for one
size for real (`doc4llm index`, progress in docs_SIZE.vectors.log) and times searches
that use them, warm in-process and in new processes.

    python benchmarks/index/scale_bench.py                          # 10k, 30k, 100k sections
    python benchmarks/index/scale_bench.py --sizes 2000,10000 --vec-sample 0
    python benchmarks/index/scale_bench.py --sizes 100000 --keep DIR --reuse-index --vectors 100000
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))  # bench_common, the shared helpers
from bench_common import child_env, du_bytes, load, pct, run_timed, table  # noqa: E402

SECTIONS_PER_PAGE = 20  # H1 + 19 headings
LEX = child_env(DOC4LLM_EMBEDDER="none")
VEC = {k: v for k, v in child_env().items() if k != "DOC4LLM_EMBEDDER"}
LANGS = ("python", "javascript", "bash", "json", "yaml", "go")


class Gen:
    """Deterministic text from the upstream vocabulary (Zipf-like: real word frequencies)."""

    def __init__(self, src: Path, seed: int):
        words: Counter = Counter()
        for f in src.glob("*@*/*/docContent.md"):
            words.update(w.lower() for w in re.findall(r"\b[A-Za-z][a-z]{2,11}\b", f.read_text(errors="replace")))
        self.words = [w for w, _ in words.most_common(6000)]
        self.cum = list(itertools.accumulate(c for _, c in words.most_common(6000)))
        self.rare = self.words[300:]  # content words for headings and identifiers
        self.rng = random.Random(seed)

    def w(self, k: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cum, k=k)

    def content(self, k: int) -> list[str]:
        return self.rng.choices(self.rare, k=k)

    def ident(self) -> str:
        a, b, c = self.content(3)
        return self.rng.choice([f"{a}{b.title()}{c.title()}", f"{a}_{b}_{c}", f"{a}.{b}.{c}()",
                                f"--{a}-{b}", f"{a.upper()}_{b.upper()}", f"{a.title()}{b.title()}Error"])

    def sentence(self) -> str:
        ws = self.w(self.rng.randint(8, 22))
        if self.rng.random() < 0.3:
            ws[self.rng.randrange(len(ws))] = f"`{self.ident()}`"
        return " ".join(ws).capitalize() + "."

    def para(self) -> str:
        return " ".join(self.sentence() for _ in range(self.rng.randint(2, 5)))

    def heading(self) -> str:
        return " ".join(x.title() for x in self.content(self.rng.randint(2, 5)))

    def code(self) -> str:
        lang = self.rng.choice(LANGS)
        ids = [self.ident().strip("-().") for _ in range(self.rng.randint(2, 5))]
        if lang == "json":
            body = "{\n" + ",\n".join(f'  "{i}": "{self.w(1)[0]}"' for i in ids) + "\n}"
        elif lang == "bash":
            body = "\n".join(f"{self.content(1)[0]} --{i.replace('_', '-').lower()} {self.w(1)[0]}" for i in ids)
        else:
            body = "\n".join(f"{i} = {self.content(1)[0]}({', '.join(self.w(2))})" for i in ids)
        return f"```{lang}\n{body}\n```"

    def section_body(self) -> str:
        parts = [self.para()]
        r = self.rng.random()
        if r < 0.35:
            parts.append(self.code())
        elif r < 0.55:
            parts.append("\n".join(f"- `{self.ident()}`: {self.sentence()}" for _ in range(self.rng.randint(2, 5))))
        elif r < 0.62:
            rows = [f"| `{self.ident()}` | {' '.join(self.w(5))} |" for _ in range(self.rng.randint(2, 4))]
            parts.append("| Name | Description |\n|---|---|\n" + "\n".join(rows))
        elif r < 0.7:
            parts.append(f"```\nError: {self.content(1)[0].upper()}_{self.content(1)[0].upper()}: "
                         f"{' '.join(self.w(6))}\n```")
        if self.rng.random() < 0.5:
            parts.append(self.para())
        return "\n\n".join(parts)

    def page(self, n: int) -> tuple[str, str, list[str]]:
        """(title, body markdown, its headings) with 19 headings below the H1."""
        title = f"{self.heading()} {n}"
        out, heads = [self.para()], []
        h2 = 0
        while len(heads) < SECTIONS_PER_PAGE - 1:
            level = 2 if h2 == 0 or self.rng.random() < 0.4 else 3
            h2 += level == 2
            h = self.heading()
            heads.append(h)
            out.append(f"{'#' * level} {h}\n\n{self.section_body()}")
        return title, "\n\n".join(out), heads


def generate(pool: Path, src: Path, pages: int, per_set: int, seed: int) -> list[tuple[Path, list[str]]]:
    """Write `pages` pages into pool/<Set>/<Page>/; return page dirs in order with headings."""
    from doc4llm.corpus.sections import parse_page
    from doc4llm.corpus.toc import render_toc
    from doc4llm.corpus.writer import render_content

    g = Gen(src, seed)
    out = []
    for n in range(pages):
        set_dir = pool / f"Scale_Docs_{n // per_set:02d}@1.0"
        title, body, heads = g.page(n)
        source = f"https://docs.example.com/{set_dir.name.split('@')[0].lower()}/page-{n}"
        content = render_content(title, source, body)
        parsed = parse_page(content)
        toc = render_toc(title, source, parsed.sections, source, parsed.line_count)
        d = set_dir / title
        d.mkdir(parents=True, exist_ok=True)
        (d / "docContent.md").write_text(content, encoding="utf-8")
        (d / "docTOC.md").write_text(toc, encoding="utf-8")
        out.append((d, [title, *heads]))
    return out


def view(pool_pages: list, docs: Path, pages: int) -> None:
    """docs/<Set>/<Page>/ hard links to the first `pages` pool pages (no regeneration)."""
    for d, _ in pool_pages[:pages]:
        dst = docs / d.parent.name / d.name
        dst.mkdir(parents=True, exist_ok=True)
        for f in ("docContent.md", "docTOC.md"):
            os.link(d / f, dst / f)


def make_queries(pool_pages: list, pages: int, n: int, seed: int) -> list[str]:
    """Heading phrases, identifiers and questions drawn from pages present at every size."""
    rng = random.Random(seed)
    qs = []
    for i in range(n):
        d, heads = pool_pages[rng.randrange(pages)]
        kind = i % 3
        if kind == 0:
            qs.append(f"how do I {rng.choice(heads[1:]).lower()}")
        elif kind == 1:
            text = (d / "docContent.md").read_text(encoding="utf-8")
            ids = re.findall(r"`([A-Za-z][A-Za-z0-9_.]{6,})`", text)
            qs.append(rng.choice(ids) if ids else heads[0])
        else:
            words = " ".join(heads[rng.randrange(1, len(heads))].split()[:2]).lower()
            qs.append(f"what does {words} do when {heads[0].split()[0].lower()} fails")
    return qs


def in_process(docs: Path, queries: list[str], reps: int, embedder: str = "none",
               env: dict | None = None) -> tuple[float, list[float], list[float], float]:
    """Run in a child process so each size's memory and caches start clean."""
    code = (
        "import json,sys,time\nfrom doc4llm.search.engine import Searcher\n"
        f"qs=json.loads(sys.argv[2]);t=time.perf_counter();s=Searcher(sys.argv[1],embedder={embedder!r},quiet=True)\n"
        "s.search(qs[0]);first=(time.perf_counter()-t)*1000;ts=[];cs=[]\n"
        f"for _ in range({reps}):\n"
        "  for q in qs:\n    t=time.perf_counter();c=time.process_time();s.search(q)\n"
        "    ts.append((time.perf_counter()-t)*1000);cs.append((time.process_time()-c)*1000)\n"
        "print(json.dumps([first,ts,cs]))\n")
    r = run_timed([sys.executable, "-c", code, str(docs), json.dumps(queries)], env=env or LEX)
    if r.rc != 0:
        print(f"<!-- in-process failed: {r.stderr[-400:]!r} -->", file=sys.stderr)
        return float("nan"), [float("nan")], [float("nan")], r.maxrss_mb
    first, ts, cs = json.loads(r.stdout)
    return first, ts, cs, r.maxrss_mb


def vector_build(docs: Path, queries: list[str], reps: int, proc_queries: int) -> None:
    """Build the default embedder's vectors for an indexed docs dir (progress to a log next
    to it), then time searches that use them: warm in-process and new process."""
    log = docs.parent / f"{docs.name}.vectors.log"
    t_load = load()
    with open(log, "w") as err, tempfile.TemporaryFile("w+") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "doc4llm", "index", "--docs-dir", str(docs), "--json"],
                                env=VEC, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        _, status, ru = os.wait4(proc.pid, 0)  # CPU of the workers too: they are reaped by the child
        wall = time.perf_counter() - t0
        out.seek(0)
        rep = json.loads(out.read() or "{}") if os.waitstatus_to_exitcode(status) == 0 else {}
    n = sum(rep.get("vectors", {}).values())
    cpu = ru.ru_utime + ru.ru_stime
    print(f"## Vectors ({docs.name}, measured)\n\n`doc4llm index` embedded {n:,} sections ({rep.get('embedder')}) "
          f"in {wall / 60:.1f} min wall / {cpu / 60:.1f} min CPU (peak RSS {ru.ru_maxrss / 1024:.0f} MB; start "
          f"{t_load}, end {load()}; progress in {log}): {n / wall:.0f} sections/s wall, {n / cpu:.0f} per CPU-second"
          f"{' (0: the vectors were built by an earlier run)' if not n else ''}.\n")
    if not rep:
        print(f"<!-- vector build failed, see {log} -->", file=sys.stderr)
        return
    t_load = load()
    first, ts, cs, rss = in_process(docs, queries, reps, embedder="minilm", env=VEC)
    procs = [run_timed([sys.executable, "-m", "doc4llm", "search", "--docs-dir", str(docs), "--", q], env=VEC)
             for q in queries[:proc_queries]]
    print(table(["sections", "in-proc first query ms", "in-proc wall p50 ms", "in-proc wall p95 ms",
                 "in-proc cpu p50 ms", "in-proc cpu p95 ms", "in-proc peak RSS MB", "new proc wall p50 ms",
                 "new proc cpu p50 ms", "load at start"],
                [[docs.name.split("_")[-1], first, pct(ts, 50), pct(ts, 95), pct(cs, 50), pct(cs, 95), rss,
                  pct([p.wall_ms for p in procs], 50), pct([p.cpu_ms for p in procs], 50), t_load]]) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,30000,100000", help="Section counts, comma-separated.")
    ap.add_argument("--pages-per-set", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=8)
    ap.add_argument("--reps", type=int, default=1, help="In-process passes over the queries.")
    ap.add_argument("--proc-queries", type=int, default=4, help="New-process searches per size.")
    ap.add_argument("--vec-sample", type=int, default=100, help="Sections embedded to estimate the vector rate.")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--src", type=Path, default=REPO / "md_docs", help="Vocabulary source.")
    ap.add_argument("--keep", type=Path, default=None, help="Work in this folder and keep it.")
    ap.add_argument("--reuse-index", action="store_true",
                    help="With --keep: query the docs dirs indexed by an earlier run (no re-index).")
    ap.add_argument("--vectors", type=int, default=0, metavar="SIZE",
                    help="After the lexical runs: build the default embedder's vectors for this size "
                         "(one of --sizes) with `doc4llm index` and time searches with them.")
    args = ap.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    max_pages = -(-sizes[-1] // SECTIONS_PER_PAGE)

    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="d4l_scale_")
    work = args.keep or Path(tmp.name)
    work.mkdir(parents=True, exist_ok=True)
    print(f"# doc4llm scale benchmark\n\npython {sys.version.split()[0]}; {os.cpu_count()} cores; "
          f"start {load()}\n")
    t = time.perf_counter()
    marker = work / "pool" / f".done-{max_pages}-{args.pages_per_set}-{args.seed}"
    if marker.is_file():  # --keep: reuse the generated pages
        pool = [(Path(d), h) for d, h in json.loads(marker.read_text())]
    else:
        pool = generate(work / "pool", args.src, max_pages, args.pages_per_set, args.seed)
        marker.write_text(json.dumps([(str(d), h) for d, h in pool]))
    gen_s = time.perf_counter() - t
    pool_bytes = du_bytes(work / "pool")
    print(f"generated {max_pages} pages x {SECTIONS_PER_PAGE} sections, {pool_bytes / 1e6:.0f} MB of markdown, "
          f"in {gen_s:.0f} s ({load()})\n")
    first_pages = min(-(-s // SECTIONS_PER_PAGE) for s in sizes)
    queries = make_queries(pool, first_pages, args.queries, args.seed)
    print("queries: " + "; ".join(f"`{q}`" for q in queries) + "\n")

    rows, qrows = [], []
    for size in sizes:
        pages = -(-size // SECTIONS_PER_PAGE)
        docs = work / f"docs_{size}"
        reuse = args.reuse_index and (docs / ".doc4llm" / "index.sqlite").is_file()
        if docs.exists() and not reuse:
            shutil.rmtree(docs)
        if not reuse:
            view(pool, docs, pages)
        corpus = du_bytes(docs) - du_bytes(docs / ".doc4llm")
        t_load = load()
        r = run_timed([sys.executable, "-m", "doc4llm", "index", "--no-vectors", "--docs-dir", str(docs), "--json"],
                      env=LEX)  # with --reuse-index this is a no-change run: its numbers say so
        rep = json.loads(r.stdout) if r.rc == 0 else {}
        if r.rc != 0:
            print(f"<!-- index {size} failed: {r.stderr[-400:]!r} -->", file=sys.stderr)
        lex = rep.get("lexical", {})
        secs = lex.get("sections", 0) or (lex.get("pages_unchanged", 0) * SECTIONS_PER_PAGE if reuse else 0)
        idx_bytes = du_bytes(docs / ".doc4llm")
        r2 = run_timed([sys.executable, "-m", "doc4llm", "index", "--no-vectors", "--docs-dir", str(docs), "--json"],
                       env=LEX)
        rows.append([size, secs if r.rc == 0 else f"FAILED rc={r.rc} (rerun this size)", pages, len({d.parent.name for d, _ in pool[:pages]}), r.wall_ms / 1000,
                     r.cpu_ms / 1000, secs / (r.cpu_ms / 1000) if r.cpu_ms else 0, r.maxrss_mb,
                     corpus / 1e6, idx_bytes / 1e6, r2.wall_ms / 1000, r2.cpu_ms / 1000, t_load])
        t_load = load()
        first, ts, cs, ip_rss = in_process(docs, queries, args.reps)
        proc = [run_timed([sys.executable, "-m", "doc4llm", "search", "--docs-dir", str(docs), "--", q], env=LEX)
                for q in queries[: args.proc_queries]]
        # the same searches when each one also re-scans every page (freshness window 0):
        # what the first search after FRESH_SECONDS of quiet pays
        scan = [run_timed([sys.executable, "-m", "doc4llm", "search", "--docs-dir", str(docs), "--", q],
                          env={**LEX, "DOC4LLM_FRESH_SECONDS": "0"}) for q in queries[: args.proc_queries]]
        bad = [p for p in proc if p.rc != 0]
        if bad:
            print(f"<!-- search failed at {size}: {bad[0].stderr[-400:]!r} -->", file=sys.stderr)
        qrows.append([size, first, pct(ts, 50), pct(ts, 95), pct(cs, 50), pct(cs, 95), ip_rss, pct([p.wall_ms for p in proc], 50),
                      pct([p.wall_ms for p in proc], 95), pct([p.cpu_ms for p in proc], 50),
                      pct([p.cpu_ms for p in proc], 95), max(p.maxrss_mb for p in proc),
                      pct([p.wall_ms for p in scan], 50), pct([p.cpu_ms for p in scan], 50), t_load])
        print(f"<!-- size {size} done {load()} -->", file=sys.stderr)

    print("## Lexical index (cold, new process `doc4llm index --no-vectors`)\n")
    print(table(["target sections", "sections indexed", "pages", "sets", "wall s", "cpu s", "sections/s (cpu)",
                 "peak RSS MB", "markdown MB", "index MB", "no-change re-index wall s", "no-change cpu s",
                 "load at start"], rows) + "\n")
    print("## Query latency, lexical-only\n")
    print(table(["sections", "in-proc first query ms", "in-proc wall p50 ms", "in-proc wall p95 ms",
                 "in-proc cpu p50 ms", "in-proc cpu p95 ms", "in-proc peak RSS MB",
                 "new proc wall p50 ms", "new proc wall p95 ms", "new proc cpu p50 ms", "new proc cpu p95 ms",
                 "new proc peak RSS MB", "new proc + full page scan wall p50 ms", "new proc + full page scan cpu p50 ms",
                 "load at start"], qrows) + "\n")
    good = [i for i, row in enumerate(rows) if isinstance(row[1], int) and row[1]]
    if len(good) > 1:
        a, b = rows[good[0]], rows[good[-1]]
        qa, qb = qrows[good[0]], qrows[good[-1]]
        f = b[1] / a[1] if a[1] else float("nan")
        print(f"Growth {a[0]} -> {b[0]} sections (x{f:.1f}): index cpu x{b[5] / a[5]:.1f}, index MB "
              f"x{b[9] / a[9]:.1f}, index peak RSS x{b[7] / a[7]:.1f}, no-change re-index cpu x{b[11] / a[11]:.1f}, "
              f"in-proc query cpu p50 x{qb[4] / qa[4]:.1f}, new-process cpu p50 x{qb[9] / qa[9]:.1f}, "
              f"search peak RSS x{qb[11] / qa[11]:.1f}. (x1 = flat, x{f:.1f} = linear.)\n")

    if args.vectors:
        vector_build(work / f"docs_{args.vectors}", queries, args.reps, args.proc_queries)

    if args.vec_sample:
        docs = work / "vec_sample"
        if docs.exists():
            shutil.rmtree(docs)
        view(pool, docs, -(-args.vec_sample // SECTIONS_PER_PAGE))
        t_load = load()
        r = run_timed([sys.executable, "-m", "doc4llm", "index", "--docs-dir", str(docs), "--json"], env=VEC)
        rep = json.loads(r.stdout) if r.rc == 0 else {}
        n = sum(rep.get("vectors", {}).values())
        if n:
            rate_wall, rate_cpu = n / (r.wall_ms / 1000), n / (r.cpu_ms / 1000)
            print(f"## Vectors (extrapolated)\n\nembedded a sample of {n} sections ({rep.get('embedder')}) in "
                  f"{r.wall_ms / 1000:.0f} s wall / {r.cpu_ms / 1000:.0f} s cpu (peak RSS {r.maxrss_mb:.0f} MB; "
                  f"{t_load}): {rate_wall:.1f} sections/s wall, {rate_cpu:.1f} sections/s per core-second. "
                  f"Extrapolated, NOT measured: " + ", ".join(
                      f"{s:,} sections = {s / rate_cpu / 3600:.1f} core-hours" for s in sizes) +
                  " (one core busy; about half that on 2 idle cores if the embedder used both).\n")
        else:
            print(f"<!-- vector sample failed: {r.stderr[-400:]!r} -->", file=sys.stderr)
    print(f"end {load()}")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
