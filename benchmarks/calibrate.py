"""Fit the confidence model (doc4llm/search/calibration.py) on labelled dev query files.

    python benchmarks/calibrate.py QUERIES.json=DOCS_DIR [...] [--write]

For every query it records the confidence features of the top result and whether the
top result is right (no_answer queries count as "not right"), fits an L2-regularised
logistic regression, reports ROC AUC, and picks the abstention threshold: the highest
confidence that keeps answerable-query abstention at or under --max-answerable-abstain.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from doc4llm.evaluation import _grade, load_queries, roc_auc  # noqa: E402
from doc4llm.search.engine import Searcher  # noqa: E402


def collect(pairs: list[list[str]]) -> list[dict]:
    rows = []
    for spec in pairs:
        qfile, docs = spec[0], spec[1]
        searcher = Searcher(docs, quiet=True, embedder=spec[2] if len(spec) > 2 else None)
        for q in load_queries(qfile):
            res = searcher.search(q["query"], k=5, explain=True)
            feats = res.get("confidence_features") or {}
            grades = _grade(res["results"], q["labels"])
            rows.append({"file": Path(qfile).name, "query": q["query"], "kind": q["kind"],
                         "answerable": bool(q["labels"]), "right": bool(grades and grades[0] == 2),
                         "features": feats, "capped": bool(res.get("coverage", {}).get("strong_absent"))})
        searcher.close()
    return rows


def fit(rows: list[dict], l2: float, steps: int = 4000, lr: float = 0.1) -> tuple[float, dict]:
    import numpy as np

    names = sorted({k for r in rows for k in r["features"]})
    X = np.array([[r["features"].get(k, 0.0) for k in names] for r in rows], dtype=float)
    y = np.array([1.0 if r["right"] else 0.0 for r in rows])
    mu, sd = X.mean(0), X.std(0) + 1e-9
    Z = (X - mu) / sd
    w = np.zeros(len(names))
    b = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(Z @ w + b)))
        g = Z.T @ (p - y) / len(y) + l2 * w
        w -= lr * g
        b -= lr * float((p - y).mean())
    coef = {k: float(w[i] / sd[i]) for i, k in enumerate(names)}
    bias = float(b - sum(w[i] * mu[i] / sd[i] for i in range(len(names))))
    return bias, coef


def confidence(row: dict, bias: float, coef: dict) -> float:
    z = bias + sum(coef.get(k, 0.0) * v for k, v in row["features"].items())
    c = 100 / (1 + math.exp(-max(-30, min(30, z))))
    return min(c, 10.0) if row["capped"] else c


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("pairs", nargs="+", help="QUERIES.json=DOCS_DIR[=EMBEDDER] (EMBEDDER none: lexical-only rows)")
    ap.add_argument("--l2", type=float, default=0.05)
    ap.add_argument("--max-answerable-abstain", type=float, default=0.05)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--dump", help="save the collected rows as JSON")
    args = ap.parse_args()
    rows = collect([p.split("=", 2) for p in args.pairs])
    if args.dump:
        Path(args.dump).write_text(json.dumps(rows, indent=1))
    bias, coef = fit(rows, args.l2)
    conf = [confidence(r, bias, coef) for r in rows]
    right = [c for c, r in zip(conf, rows, strict=True) if r["right"]]
    wrong = [c for c, r in zip(conf, rows, strict=True) if r["answerable"] and not r["right"]]
    noans = [c for c, r in zip(conf, rows, strict=True) if not r["answerable"]]
    ans = [c for c, r in zip(conf, rows, strict=True) if r["answerable"]]
    print(f"n={len(rows)} right={len(right)} wrong={len(wrong)} no_answer={len(noans)}")
    print(f"AUC right vs rest={roc_auc(right, wrong + noans):.3f}  vs wrong={roc_auc(right, wrong):.3f}"
          f"  vs no_answer={roc_auc(right, noans):.3f}  answerable vs no_answer={roc_auc(ans, noans):.3f}")
    best = 1
    for t in range(1, 100):
        if sum(c < t for c in ans) / len(ans) <= args.max_answerable_abstain:
            best = t
    print(f"threshold {best}: answerable abstain={sum(c < best for c in ans) / len(ans):.3f} "
          f"no_answer abstain={sum(c < best for c in noans) / max(1, len(noans)):.3f}")
    print("coefficients:", json.dumps({k: round(v, 3) for k, v in coef.items()}), "bias", round(bias, 3))
    if args.write:
        out = Path(__file__).resolve().parents[1] / "doc4llm" / "search" / "calibration.py"
        body = ",\n".join(f'    "{k}": {v:.4f}' for k, v in sorted(coef.items()))
        out.write_text(
            '"""Coefficients of the confidence model (see confidence.py).\n\n'
            'Written by `python benchmarks/calibrate.py`; do not edit by hand.\n"""\n\n'
            f"BIAS = {bias:.4f}\nCOEFFICIENTS = {{\n{body},\n}}\nABSTAIN_BELOW = {best}\n")
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
