"""Index build speed on the upstream corpus: cold lexical, vectors on a subset, no-change re-index.

Works on tmp copies of md_docs (never writes into the repo's md_docs). Each build is a
new `python -m doc4llm index` process, timed by wall clock and by its own CPU time
(the machine is shared; CPU time is the load-independent number).

    python benchmarks/index/index_bench.py
    python benchmarks/index/index_bench.py --vec-sections 300 --vector-docs /tmp/lat_copy   # + no-change
                                                      # re-index of a copy that already has vectors
    python benchmarks/index/index_bench.py --profile        # cProfile of the cold lexical build
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import re
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))  # bench_common, the shared helpers
from bench_common import child_env, copy_sets, load, pct, run_timed, table  # noqa: E402

LEX = child_env(DOC4LLM_EMBEDDER="none")
VEC = {k: v for k, v in child_env().items() if k != "DOC4LLM_EMBEDDER"}


def index(docs: Path, env: dict, *extra: str, prof: Path | None = None):
    pre = [sys.executable, "-m", "cProfile", "-o", str(prof)] if prof else [sys.executable]
    r = run_timed([*pre, "-m", "doc4llm", "index", "--docs-dir", str(docs), "--json", *extra], env=env)
    rep = json.loads(r.stdout) if r.rc == 0 and r.stdout.strip().startswith("{") else {}
    if r.rc != 0:
        print(f"<!-- index failed rc={r.rc}: {r.stderr[-400:]!r} -->", file=sys.stderr)
    return r, rep


def subset(src_set: Path, dst_docs: Path, want_sections: int) -> tuple[int, int]:
    """Copy whole pages of one set until about `want_sections` sections (by '#' lines)."""
    out = dst_docs / src_set.name
    out.mkdir(parents=True)
    pages = secs = 0
    for p in sorted(src_set.iterdir()):
        c = p / "docContent.md"
        if not c.is_file():
            continue
        n, fence = 0, False
        for line in c.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lstrip().startswith("```"):
                fence = not fence
            elif not fence and re.match(r"#{1,6} ", line):
                n += 1
        shutil.copytree(p, out / p.name)
        pages, secs = pages + 1, secs + n
        if secs >= want_sections:
            break
    return pages, secs


def profile_rows(prof: Path, top: int = 18) -> list[list]:
    st = pstats.Stats(str(prof))
    rows = []
    for (file, line, fn), (_cc, nc, tt, ct, _) in st.stats.items():
        short = re.sub(r".*/site-packages/", "", file.replace(str(REPO) + "/", ""))
        short = re.sub(r".*/lib/python3\.\d+/", "stdlib/", short)
        rows.append([f"{short}:{line}({fn})", nc, tt * 1000, ct * 1000])
    own = sorted((r for r in rows if r[0].startswith("doc4llm/")), key=lambda r: -r[3])[:top]
    return own + [["-- by own time --", "", "", ""]] + sorted(rows, key=lambda r: -r[2])[:top]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", type=Path, default=REPO / "md_docs")
    ap.add_argument("--vec-set", default="OpenCode_Docs@latest", help="Set the vector subset is cut from.")
    ap.add_argument("--vec-sections", type=int, default=120, help="Size of the vector subset (0: skip).")
    ap.add_argument("--reps", type=int, default=5, help="No-change re-index repetitions.")
    ap.add_argument("--vector-docs", type=Path, default=None,
                    help="A docs COPY that already has vectors: time its no-change `doc4llm index`.")
    ap.add_argument("--profile", action="store_true", help="cProfile the cold lexical build.")
    args = ap.parse_args()

    print(f"# doc4llm index benchmark\n\nsource {args.src}; python {sys.version.split()[0]}; {os.cpu_count()} cores; "
          f"start {load()}\n")
    rows = []
    with tempfile.TemporaryDirectory(prefix="d4l_index_") as td:
        docs = Path(td) / "md_docs"
        sets = copy_sets(args.src, docs)
        pages = sum(1 for _ in docs.glob("*@*/*/docContent.md"))
        t_load = load()
        r, rep = index(docs, LEX, "--no-vectors")
        n = rep.get("lexical", {}).get("sections", 0)
        rows.append([f"cold lexical, {len(sets)} sets / {pages} pages", n, r.wall_ms / 1000, r.cpu_ms / 1000,
                     n / (r.wall_ms / 1000), n / (r.cpu_ms / 1000), r.maxrss_mb, t_load])
        size = sum(f.stat().st_size for f in (docs / ".doc4llm").rglob("*") if f.is_file())

        runs = [index(docs, LEX, "--no-vectors")[0] for _ in range(args.reps)]
        t_load = load()
        rows.append([f"no-change re-index, lexical (p50 of {args.reps})", 0, pct([x.wall_ms for x in runs], 50) / 1000,
                     pct([x.cpu_ms for x in runs], 50) / 1000, "", "", max(x.maxrss_mb for x in runs), t_load])

        page = next(docs.glob("*@*/*/docContent.md"))
        page.write_text(page.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
        r, rep = index(docs, LEX, "--no-vectors")
        rows.append(["one page edited, lexical", rep.get("lexical", {}).get("sections", 0), r.wall_ms / 1000,
                     r.cpu_ms / 1000, "", "", r.maxrss_mb, load()])

        if args.profile:
            pdocs = Path(td) / "prof_docs"
            copy_sets(args.src, pdocs)
            prof = Path(td) / "index.prof"
            index(pdocs, LEX, "--no-vectors", prof=prof)
            prof_rows = profile_rows(prof)

        if args.vec_sections:
            vdocs = Path(td) / "vec_docs"
            vp, vs = subset(args.src / args.vec_set, vdocs, args.vec_sections)
            t_load = load()
            r, rep = index(vdocs, VEC)
            n = sum(rep.get("vectors", {}).values())
            rows.append([f"cold lexical + vectors ({rep.get('embedder', '?')}), {vp} pages of {args.vec_set}", n,
                         r.wall_ms / 1000, r.cpu_ms / 1000, n / (r.wall_ms / 1000), n / (r.cpu_ms / 1000),
                         r.maxrss_mb, t_load])
            runs = [index(vdocs, VEC)[0] for _ in range(args.reps)]
            rows.append([f"no-change re-index with vectors, that subset (p50 of {args.reps})", 0,
                         pct([x.wall_ms for x in runs], 50) / 1000, pct([x.cpu_ms for x in runs], 50) / 1000, "", "",
                         max(x.maxrss_mb for x in runs), load()])

    if args.vector_docs:
        runs = [index(args.vector_docs, VEC)[0] for _ in range(args.reps)]
        rows.append([f"no-change re-index with vectors, {args.vector_docs} (p50 of {args.reps})", 0,
                     pct([x.wall_ms for x in runs], 50) / 1000, pct([x.cpu_ms for x in runs], 50) / 1000, "", "",
                     max(x.maxrss_mb for x in runs), load()])

    print(table(["build", "sections", "wall s", "cpu s", "sections/s (wall)", "sections/s (cpu)", "peak RSS MB",
                 "load at start"], rows) + "\n")
    print(f"index size on disk (lexical, upstream copy): {size / 1e6:.1f} MB\n")
    print("Target: no-change re-index <= 1 s.\n")
    if args.profile:
        print("## cProfile of the cold lexical build\n")
        print(table(["function", "calls", "own ms", "cumulative ms"], prof_rows) + "\n")
    print(f"end {load()}")


if __name__ == "__main__":
    main()
