"""SQLite vs the Qdrant backend (qdrant-client's local mode) read by a STATELESS reader.

    python benchmarks/index/qdrant_bench.py QUERIES.json --docs-dir DIR [--embedder none|minilm]
        [--work DIR] [--json OUT.json]

1. `doc4llm index` the docs dir (lexical, and vectors unless --embedder none), then run
   every query against SQLite (+ usearch);
2. publish the index into a fresh local-mode Qdrant (`DOC4LLM_QDRANT_PATH`);
3. copy the markdown WITHOUT `.doc4llm/` to a reader folder (the labels of a corpus-aware
   query file name files; nothing is indexed there) and run the queries again: every
   level, row, count and vector now comes from Qdrant.

Reports Top-1 / Top-3 / MRR of both, how many queries gave the same top-3 and the same
full JSON (minus timings and absolute paths), and the per-query latency of each (local
mode is a pure-Python brute-force engine: its latency says nothing about a server).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def _contract(res: dict) -> dict:
    out = {k: v for k, v in res.items() if k != "timing_ms"}
    out["results"] = [{k: v for k, v in r.items() if k not in ("toc_path", "content_path")} for r in res["results"]]
    return out


def run_pass(docs: Path, path: str, embedder: str) -> tuple[dict, list[dict]]:
    """(eval summary, contract JSON per query) of one reader."""
    from doc4llm.evaluation import _grade, bind_corpora, load_queries, summarize
    from doc4llm.search.engine import Searcher

    queries = load_queries(path)
    bind_corpora(queries, docs)
    s = Searcher(docs, embedder=embedder, quiet=True, auto_index=False)
    s.search("warm up", k=1)
    rows, outs = [], []
    for q in queries:
        t = time.perf_counter()
        res = s.search(q["query"], k=5)
        ms = (time.perf_counter() - t) * 1000
        grades = _grade(res["results"], q["labels"])
        first = next((i for i, g in enumerate(grades) if g == 2), None)
        rows.append({"query": q["query"], "kind": q["kind"], "ms": ms, "confidence": res["confidence"],
                     "abstained": res["abstained"] or not res["results"], "answerable": bool(q["labels"]),
                     "top1": first == 0, "top3": first is not None and first < 3,
                     "top5": first is not None and first < 5, "rr": 1.0 / (first + 1) if first is not None else 0.0,
                     "ndcg5": 0.0, "corpus": q.get("corpus"),
                     "got": [r["heading_path"] + [r["doc_set"], r["page"]] for r in res["results"][:3]]})
        outs.append(_contract(res))
    stateless = s._conn is None
    s.close()
    summary = summarize(rows, path, "auto")
    summary["stateless"] = stateless
    return summary, outs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("queries")
    ap.add_argument("--docs-dir", required=True, type=Path)
    ap.add_argument("--embedder", default="none")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    from doc4llm.index import qdrant_store
    from doc4llm.index.service import build_index

    for var in ("DOC4LLM_QDRANT_PATH", "DOC4LLM_QDRANT_URL"):
        os.environ.pop(var, None)
    work = a.work or Path(tempfile.mkdtemp(prefix="qdrant-bench-"))
    docs = a.docs_dir.resolve()
    build_index(docs, embedder=a.embedder, vectors=a.embedder != "none")
    lite, lite_out = run_pass(docs, a.queries, a.embedder)

    qpath = work / "qdrant"
    shutil.rmtree(qpath, ignore_errors=True)
    os.environ["DOC4LLM_QDRANT_PATH"] = str(qpath)
    t = time.perf_counter()
    published = build_index(docs, embedder=a.embedder, vectors=a.embedder != "none")["qdrant"]
    publish_s = time.perf_counter() - t
    reader = work / "reader"
    shutil.rmtree(reader, ignore_errors=True)
    shutil.copytree(docs, reader, ignore=shutil.ignore_patterns(".doc4llm"))
    qd, qd_out = run_pass(reader, a.queries, a.embedder)
    qdrant_store.close_all()
    assert qd["stateless"] and not (reader / ".doc4llm").exists(), "the reader was not stateless"

    same3 = sum(1 for x, y in zip(lite["queries"], qd["queries"], strict=True) if x["got"] == y["got"])
    same_json = sum(1 for x, y in zip(lite_out, qd_out, strict=True) if x == y)
    ms = {name: statistics.median(r["ms"] for r in rep["queries"]) for name, rep in (("sqlite", lite), ("qdrant", qd))}
    report = {"queries": a.queries, "embedder": a.embedder, "n": len(lite_out),
              "sqlite": {k: lite["overall"][k] for k in ("top1", "top3", "mrr")},
              "qdrant": {k: qd["overall"][k] for k in ("top1", "top3", "mrr")},
              "same_top3": same3, "same_json": same_json, "points_published": published,
              "publish_s": round(publish_s, 1), "p50_ms": {k: round(v, 1) for k, v in ms.items()},
              "differs": [x["query"] for x, y in zip(lite_out, qd_out, strict=True) if x != y]}
    print(json.dumps(report, indent=2))
    if a.json:
        a.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
