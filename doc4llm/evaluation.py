"""`doc4llm eval`: score a labelled query file.

Two formats:
- mdmem (`../shared/benchmarks/mdmem/queries_dev.json`): {split: {kind: [{query,
  expected: "A > B" | "file.md::A > B", also_valid: {path: grade}}]}}; `no_answer`
  queries have no expected answer.
- set-aware: [{query, kind, expected: [{set, page, section}], also_valid: [{..., grade}]}]
  (a list, or {"queries": [...]}).
- corpus-aware (`../shared/benchmarks/realdocs-dev/queries.json`): {"corpora": {name:
  folder}, "queries": [{query, kind, corpus, expected: [{file, heading}], also_valid}]};
  `file` is the source file relative to the corpus folder, `heading` the section's own
  heading text (null: the text before the page's first heading). A corpus is found as
  the doc set named `<corpus>@...` (or imported from a folder of that name).

Metrics per kind: Top-1/3/5 (a grade-2 answer in the first k), MRR, nDCG@5 (graded),
abstention on no_answer and on answerable queries, the confidence's ROC AUC for
"Top-1 is right" vs not, and latency (in-process, warm) median and p95.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import time
from pathlib import Path

from doc4llm.errors import InputError
from doc4llm.search.engine import Searcher

PREAMBLE = "[overview / preamble]"


def norm_heading(text: str) -> str:
    t = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    t = re.sub(r"!?\[([^\][]*)\]\([^)(]*\)", r"\1", t)
    t = re.sub(r"\\(.)", r"\1", t)
    t = re.sub(r"[`*_]", "", t)
    return " ".join(t.split()).casefold()


def _path_list(path: str) -> list[str]:
    return [norm_heading(p) for p in path.split(" > ") if p.strip()]


class Label:
    """One acceptable answer with its grade (2 = correct, 1 = partial).

    `heading_only`: the label names the section by its own heading (the last element of
    the result's heading path) within `file`; `path == []` then means the page intro."""

    def __init__(self, path: str | None, grade: int, file: str | None = None, set_name: str | None = None,
                 page: str | None = None, corpus: str | None = None, heading_only: bool = False):
        self.path = _path_list(path) if path else []
        self.grade = grade
        self.file = file
        self.set_name = set_name
        self.page = page
        self.corpus = corpus
        self.heading_only = heading_only

    def matches(self, r: dict) -> bool:
        got = [norm_heading(h) for h in r["heading_path"]]
        if self.set_name and r["doc_set"] != self.set_name:
            return False
        if self.corpus and not _set_is_corpus(r["doc_set"], self.corpus):
            return False
        if self.page and norm_heading(r["page"]) != norm_heading(self.page):
            return False
        if self.file and not _same_file(str(r.get("source") or ""), self.file):
            return False
        if self.heading_only:
            if not self.path:  # text before the first heading: the page intro
                return len(got) <= 1 or got == [PREAMBLE]
            return bool(got) and got[-1] == self.path[-1]
        if got == self.path:
            return True
        return len(got) > 1 and got[1:] == self.path and (self.page is not None or self.file is not None)


def _same_file(source: str, file: str) -> bool:
    source = source.replace("\\", "/")
    return source == file or source.endswith("/" + file)


def _set_is_corpus(set_name: str, corpus: str) -> bool:
    return set_name.split("@")[0].casefold() == corpus.casefold()


def bind_corpora(queries: list[dict], docs_dir: Path) -> dict[str, str | None]:
    """Which doc set holds each corpus of a corpus-aware file: the set named `<corpus>@...`,
    else the set imported from a folder named like the corpus (its metadata's origins),
    else none (labels then match by file and heading in any set). Returns the mapping and
    rewrites the labels to name the set."""
    from doc4llm.corpus.model import list_sets

    sets = list_sets(docs_dir)
    mapping: dict[str, str | None] = {}
    for q in queries:
        corpus = q.get("corpus")
        if not corpus or corpus in mapping:
            continue
        names = {corpus.casefold(), str(q.get("corpus_folder") or "").rstrip("/").split("/")[-1].casefold()}
        found = next((s.name for s in sets if s.name.split("@")[0].casefold() == corpus.casefold()), None)
        if found is None:
            for s in sets:
                origins = {str(rec.get("origin") or "") for rec in (s.metadata.get("pages") or {}).values()
                           if isinstance(rec, dict)}
                if any(o.rstrip("/").split("/")[-1].casefold() in names for o in origins if o):
                    found = s.name
                    break
        mapping[corpus] = found
    for q in queries:
        for lab in q["labels"]:
            if lab.corpus:
                lab.set_name, lab.corpus = mapping.get(lab.corpus), None
    return mapping


def _mdmem_label(spec: str, grade: int) -> Label:
    if "::" in spec:
        file, path = spec.split("::", 1)
        return Label(path, grade, file=file)
    return Label(spec, grade)


def load_queries(path: str | Path) -> list[dict]:
    """The queries of a labelled file in either format; a malformed file is an InputError."""
    try:
        out = _parse_queries(json.loads(Path(path).read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"{path} is not a labelled query file ({type(exc).__name__}: {exc})",
                         hint="see `doc4llm eval --help` and the formats in doc4llm/evaluation.py") from None
    if not out:
        raise InputError(f"{path} holds no queries")
    return out


def _parse_queries(data) -> list[dict]:
    out: list[dict] = []
    if isinstance(data, dict) and "queries" not in data:
        for split, kinds in data.items():
            if split.startswith("_") or not isinstance(kinds, dict):
                continue
            for kind, items in kinds.items():
                for q in items:
                    labels = []
                    if q.get("expected"):
                        labels.append(_mdmem_label(q["expected"], 2))
                    for spec, grade in (q.get("also_valid") or {}).items():
                        labels.append(_mdmem_label(spec, int(grade)))
                    out.append({"query": q["query"], "kind": kind, "labels": labels})
        return out
    items = data["queries"] if isinstance(data, dict) else data
    if isinstance(data, dict) and "corpora" in data:
        folders = data.get("corpora") or {}
        for q in items:
            corpus = q.get("corpus")
            # a label may name another corpus of the file (`"corpus": ...`): docs overlap
            labels = [Label(e.get("heading"), 2, file=e["file"], corpus=e.get("corpus") or corpus,
                            heading_only=True) for e in q.get("expected") or []]
            labels += [Label(e.get("heading"), int(e.get("grade", 1)), file=e["file"],
                             corpus=e.get("corpus") or corpus, heading_only=True)
                       for e in q.get("also_valid") or []]
            kind = q.get("kind") or ("no_answer" if not labels else "general")
            out.append({"query": q["query"], "kind": kind, "labels": labels, "corpus": corpus,
                        "corpus_folder": folders.get(corpus) if isinstance(folders, dict) else None,
                        "id": q.get("id")})
        return out
    for q in items:
        labels = [Label(e["section"], 2, set_name=e.get("set"), page=e.get("page")) for e in q.get("expected") or []]
        labels += [Label(e["section"], int(e.get("grade", 1)), set_name=e.get("set"), page=e.get("page"))
                   for e in q.get("also_valid") or []]
        kind = q.get("kind") or ("no_answer" if not labels else "general")
        out.append({"query": q["query"], "kind": kind, "labels": labels})
    return out


def _grade(results: list[dict], labels: list[Label]) -> list[int]:
    grades = []
    for r in results:
        # a result stands for the sections with the same text it collapsed (`also_in`)
        same = [r, *(r.get("also_in") or [])]
        g = max((lab.grade for lab in labels if any(lab.matches(x) for x in same)), default=0)
        grades.append(g)
    return grades


def _ndcg(grades: list[int], labels: list[Label], k: int = 5) -> float:
    dcg = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(grades[:k]))
    ideal = sorted((lab.grade for lab in labels), reverse=True)[:k]
    idcg = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def roc_auc(pos: list[float], neg: list[float]) -> float | None:
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def run_eval(path: str | Path, *, docs_dir: Path, sets: list[str] | None = None, k: int = 5,
             strategy: str = "auto", embedder: str | None = None) -> dict:
    queries = load_queries(path)
    bind_corpora(queries, Path(docs_dir))
    if (embedder or "").lower() != "none":
        # the numbers must not depend on how far an earlier run got with the vectors
        import sys

        from doc4llm.index.service import build_index

        build_index(Path(docs_dir), sets, embedder=embedder,
                    progress=lambda m: print(f"doc4llm: {m}", file=sys.stderr))
    searcher = Searcher(docs_dir, embedder=embedder, quiet=True)
    searcher.search("warm up", sets=sets, k=1)  # index build and model load are not query latency
    rows = []
    for q in queries:
        t = time.perf_counter()
        res = searcher.search(q["query"], sets=sets, k=k, strategy=strategy)
        ms = (time.perf_counter() - t) * 1000
        grades = _grade(res["results"], q["labels"])
        first_right = next((i for i, g in enumerate(grades) if g == 2), None)
        rows.append({
            "query": q["query"], "kind": q["kind"], "ms": ms, "confidence": res["confidence"],
            "abstained": res["abstained"] or not res["results"], "answerable": bool(q["labels"]),
            "top1": first_right == 0, "top3": first_right is not None and first_right < 3,
            "top5": first_right is not None and first_right < 5,
            "rr": 1.0 / (first_right + 1) if first_right is not None else 0.0,
            "ndcg5": _ndcg(grades, q["labels"]) if q["labels"] else 0.0,
            "got": [" > ".join(r["heading_path"]) + f"  [{r['doc_set']}/{r.get('source') or r['page']}]" for r in res["results"][:3]],
            "query_type": res["query_type"], "corpus": q.get("corpus"), "id": q.get("id"),
            # the words no section holds: what abstention keys on, for tuning it
            "absent_from_docs": (res.get("coverage") or {}).get("absent_from_docs", []),
        })
    searcher.close()
    return summarize(rows, path, strategy)


def summarize(rows: list[dict], path, strategy: str) -> dict:
    by_kind: dict[str, dict] = {}
    for kind in sorted({r["kind"] for r in rows}):
        rs = [r for r in rows if r["kind"] == kind]
        if rs[0]["answerable"]:
            by_kind[kind] = {
                "n": len(rs),
                "top1": round(sum(r["top1"] for r in rs) / len(rs), 3),
                "top3": round(sum(r["top3"] for r in rs) / len(rs), 3),
                "top5": round(sum(r["top5"] for r in rs) / len(rs), 3),
                "mrr": round(sum(r["rr"] for r in rs) / len(rs), 3),
                "ndcg5": round(sum(r["ndcg5"] for r in rs) / len(rs), 3),
                "abstained": round(sum(r["abstained"] for r in rs) / len(rs), 3),
            }
        else:
            by_kind[kind] = {"n": len(rs), "abstention": round(sum(r["abstained"] for r in rs) / len(rs), 3)}
    overall = _overall(rows)
    by_corpus = {c: _overall([r for r in rows if r.get("corpus") == c])
                 for c in sorted({r["corpus"] for r in rows if r.get("corpus")})}
    out = {"file": str(path), "strategy": strategy, "overall": overall, "by_kind": by_kind}
    if by_corpus:
        out["by_corpus"] = by_corpus
    out["queries"] = rows
    return out


def _overall(rows: list[dict]) -> dict:
    """Answerable metrics, abstention both ways, confidence AUCs and latency of some rows."""
    ans = [r for r in rows if r["answerable"]]
    noans = [r for r in rows if not r["answerable"]]
    ms = sorted(r["ms"] for r in rows)
    right = [r["confidence"] for r in ans if r["top1"]]
    wrong = [r["confidence"] for r in ans if not r["top1"]]
    na = [r["confidence"] for r in noans]
    auc_all = roc_auc(right, wrong + na)

    def share(rs: list[dict], key: str) -> float | None:
        return round(sum(r[key] for r in rs) / len(rs), 3) if rs else None

    return {
        "n": len(rows),
        "top1": share(ans, "top1"),
        "top3": share(ans, "top3"),
        "mrr": share(ans, "rr"),
        "ndcg5": share(ans, "ndcg5"),
        "answerable_abstained": share(ans, "abstained"),
        "no_answer_abstention": share(noans, "abstained"),
        "confidence_auc": round(auc_all, 3) if auc_all is not None else None,
        "confidence_auc_vs_no_answer": (round(a, 3) if (a := roc_auc(right, na)) is not None else None),
        "confidence_auc_vs_wrong": (round(a, 3) if (a := roc_auc(right, wrong)) is not None else None),
        "latency_ms_p50": round(statistics.median(ms), 1) if ms else None,
        "latency_ms_p95": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 1) if ms else None,
    }


def format_report(report: dict, failures: bool = False) -> str:
    o = report["overall"]
    lines = [f"{report['file']}  strategy={report['strategy']}  n={o['n']}",
             f"{'kind':<14} {'n':>3} {'top1':>6} {'top3':>6} {'top5':>6} {'mrr':>6} {'ndcg5':>6} {'abst':>6}"]
    for kind, m in report["by_kind"].items():
        if "top1" in m:
            lines.append(f"{kind:<14} {m['n']:>3} {m['top1']:>6} {m['top3']:>6} {m['top5']:>6} {m['mrr']:>6} {m['ndcg5']:>6} {m['abstained']:>6}")
        else:
            lines.append(f"{kind:<14} {m['n']:>3} {'':>6} {'':>6} {'':>6} {'':>6} {'':>6} {m['abstention']:>6}")
    lines.append(f"overall top1={o['top1']} top3={o['top3']} mrr={o['mrr']} ndcg5={o['ndcg5']} "
                 f"no_answer abstention={o['no_answer_abstention']} answerable abstained={o['answerable_abstained']}")
    lines.append(f"confidence AUC={o['confidence_auc']} (vs wrong {o['confidence_auc_vs_wrong']}, "
                 f"vs no_answer {o['confidence_auc_vs_no_answer']})  latency p50={o['latency_ms_p50']}ms p95={o['latency_ms_p95']}ms")
    for corpus, c in (report.get("by_corpus") or {}).items():
        lines.append(f"corpus {corpus:<10} n={c['n']} top1={c['top1']} top3={c['top3']} mrr={c['mrr']} "
                     f"no_answer abstention={c['no_answer_abstention']} "
                     f"answerable abstained={c['answerable_abstained']}")
    if failures:
        for r in report["queries"]:
            bad = (r["answerable"] and not r["top1"]) or (not r["answerable"] and not r["abstained"]) \
                or (r["answerable"] and r["abstained"])
            if bad:
                lines.append(f"  x [{r['kind']}/{r['query_type']}] {r['query']!r} conf={r['confidence']} abst={r['abstained']}")
                for g in r["got"]:
                    lines.append(f"      {g}")
    return "\n".join(lines)


def compare_reports(base: dict, new: dict, tolerance: float) -> list[str]:
    out = []
    for kind, m in base.get("by_kind", {}).items():
        n = new["by_kind"].get(kind)
        if not n:
            continue
        for metric in ("top1", "mrr", "ndcg5", "abstention"):
            if metric in m and metric in n and n[metric] < m[metric] - tolerance:
                out.append(f"{kind} {metric} {m[metric]} -> {n[metric]}")
    return out
