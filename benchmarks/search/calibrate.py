"""Fit the confidence model (doc4llm/search/calibration.py) with leave-one-corpus-out validation.

    python benchmarks/search/calibrate.py NAME=QUERIES.json=DOCS_DIR[=CORPUS[=EMBEDDER]] ... [--write]

Each NAME is one dev corpus (CORPUS picks one corpus of a corpus-aware query file such
as realdocs-dev; EMBEDDER `none` collects lexical-only searches; the same corpus may be
given twice, once per embedder, under the same NAME). For every query it records the
confidence features of the full search's top result and whether that result is right
(no_answer queries count as "not right"), then:

1. for each corpus in turn, fits an L2-regularised logistic regression on the others,
   picks the abstention threshold on those others (the highest that keeps their
   answerable-query abstention at or under --max-answerable-abstain, default 0.03), and scores the
   held-out corpus: its no_answer abstention, false abstention and ROC AUC. These
   cross-validated numbers are the ones to trust on documentation nobody fitted on;
2. fits on everything and (with --write) stores the coefficients and the threshold.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from doc4llm.evaluation import _grade, load_queries, roc_auc  # noqa: E402
from doc4llm.search.engine import Searcher  # noqa: E402

OUT = REPO / "doc4llm" / "search" / "calibration.py"


def collect(specs: list[list[str]]) -> list[dict]:
    rows = []
    for spec in specs:
        name, qfile, docs = spec[0], spec[1], spec[2]
        corpus = spec[3] if len(spec) > 3 and spec[3] else None
        embedder = spec[4] if len(spec) > 4 else None
        searcher = Searcher(docs, quiet=True, embedder=embedder)
        for q in load_queries(qfile):
            if corpus and q.get("corpus") != corpus:
                continue
            res = searcher.search(q["query"], k=5, explain=True)
            feats = res.get("confidence_features") or {}
            cov = res.get("coverage") or {}
            grades = _grade(res["results"], q["labels"])
            rows.append({"corpus": name, "embedder": embedder or "default", "query": q["query"],
                         "kind": q["kind"], "answerable": bool(q["labels"]),
                         "right": bool(grades and grades[0] == 2), "features": feats,
                         "capped": bool(cov.get("strong_absent") or cov.get("single_anchor")
                                                   or cov.get("absent_names") or cov.get("off_domain"))})
        searcher.close()
        print(f"collected {name} ({embedder or 'default'})", file=sys.stderr)
    return rows


def fit(rows: list[dict], l2: float, steps: int = 3000, lr: float = 0.1) -> tuple[float, dict]:
    import numpy as np

    names = sorted({k for r in rows for k in r["features"] if not k.startswith("_")})
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
    return min(c, 0.5) if row["capped"] else c  # capped searches always abstain


def threshold(rows: list[dict], conf: list[float], max_abstain: float) -> int:
    """The highest threshold whose answerable abstention stays within max_abstain."""
    ans = [c for c, r in zip(conf, rows, strict=True) if r["answerable"]]
    best = 1
    for t in range(1, 100):
        if ans and sum(c < t for c in ans) / len(ans) <= max_abstain:
            best = t
    return best


def report(rows: list[dict], conf: list[float], t: int) -> dict:
    right = [c for c, r in zip(conf, rows, strict=True) if r["right"]]
    wrong = [c for c, r in zip(conf, rows, strict=True) if r["answerable"] and not r["right"]]
    noans = [c for c, r in zip(conf, rows, strict=True) if not r["answerable"]]
    ans = [c for c, r in zip(conf, rows, strict=True) if r["answerable"]]
    return {"n": len(rows), "auc": roc_auc(right, wrong + noans), "auc_noans": roc_auc(ans, noans),
            "noans_abst": sum(c < t for c in noans) / len(noans) if noans else None,
            "false_abst": sum(c < t for c in ans) / len(ans) if ans else None,
            "n_noans": len(noans), "n_ans": len(ans), "threshold": t}


def _fmt(x) -> str:
    return "  -  " if x is None else f"{x:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("specs", nargs="+", help="NAME=QUERIES.json=DOCS_DIR[=CORPUS[=EMBEDDER]]")
    ap.add_argument("--l2", type=float, default=0.05)
    # the target is <= 0.05 false abstention on docs nobody fitted on; a threshold chosen
    # at 0.05 on the fitting corpora came out at 0.069 on the corpus held out (0.037 when
    # chosen at 0.03, with the same no_answer abstention: the capping rules, not the
    # threshold, do most of the abstaining), so the threshold is chosen with a margin
    ap.add_argument("--max-answerable-abstain", type=float, default=0.03)
    ap.add_argument("--cache", help="rows cache (JSON): reuse instead of searching again")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    if args.cache and Path(args.cache).exists():
        rows = json.loads(Path(args.cache).read_text())
    else:
        rows = collect([s.split("=") for s in args.specs])
        if args.cache:
            Path(args.cache).write_text(json.dumps(rows))
    corpora = sorted({r["corpus"] for r in rows})
    print(f"{'held out':<10} {'n':>4} {'thr':>4} {'AUC':>6} {'AUC ans/na':>10} {'no_answer abst':>15} {'false abst':>11}")
    pooled_conf, pooled_rows, pooled_t = [], [], []
    for held in corpora:
        train = [r for r in rows if r["corpus"] != held]
        test = [r for r in rows if r["corpus"] == held]
        bias, coef = fit(train, args.l2)
        t = threshold(train, [confidence(r, bias, coef) for r in train], args.max_answerable_abstain)
        conf = [confidence(r, bias, coef) for r in test]
        m = report(test, conf, t)
        print(f"{held:<10} {m['n']:>4} {t:>4} {_fmt(m['auc']):>6} {_fmt(m['auc_noans']):>10} "
              f"{_fmt(m['noans_abst']):>15} {_fmt(m['false_abst']):>11}")
        pooled_conf += conf
        pooled_rows += test
        pooled_t += [t] * len(test)
    noans = [(c, t) for c, r, t in zip(pooled_conf, pooled_rows, pooled_t, strict=True) if not r["answerable"]]
    ans = [(c, t) for c, r, t in zip(pooled_conf, pooled_rows, pooled_t, strict=True) if r["answerable"]]
    right = [c for c, r in zip(pooled_conf, pooled_rows, strict=True) if r["right"]]
    rest = [c for c, r in zip(pooled_conf, pooled_rows, strict=True) if not r["right"]]
    print(f"{'all (LOCO)':<10} {len(pooled_rows):>4} {'':>4} {_fmt(roc_auc(right, rest)):>6} "
          f"{_fmt(roc_auc([c for c, _ in ans], [c for c, _ in noans])):>10} "
          f"{_fmt(sum(c < t for c, t in noans) / max(1, len(noans))):>15} "
          f"{_fmt(sum(c < t for c, t in ans) / max(1, len(ans))):>11}")
    bias, coef = fit(rows, args.l2)
    conf = [confidence(r, bias, coef) for r in rows]
    t = threshold(rows, conf, args.max_answerable_abstain)
    m = report(rows, conf, t)
    print(f"fit on all: threshold {t}, no_answer abstention {_fmt(m['noans_abst'])}, "
          f"false abstention {_fmt(m['false_abst'])} (in-sample)")
    print("coefficients:", json.dumps({k: round(v, 3) for k, v in coef.items()}), "bias", round(bias, 3))
    if args.write:
        body = ",\n".join(f'    "{k}": {v:.4f}' for k, v in sorted(coef.items()))
        OUT.write_text(
            '"""Coefficients of the confidence model (see confidence.py).\n\n'
            'Written by `python benchmarks/search/calibrate.py --write`; do not edit by hand.\n"""\n\n'
            f"BIAS = {bias:.4f}\nCOEFFICIENTS = {{\n{body},\n}}\nABSTAIN_BELOW = {t}\n")
        print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
