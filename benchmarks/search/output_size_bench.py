"""What one `doc4llm search` call hands an agent, over a labelled benchmark folder of the
realdocs shape (queries.json + corpus folders, as ../shared/agent-study reads them).

    python benchmarks/search/output_size_bench.py ROOT DOCS_DIR [--k 3] [--json OUT]

DOCS_DIR holds the corpora imported as `<corpus>@<anything>` and indexed. Reports the size
of the default text output (characters and ~tokens: median, mean, max), and how often the
answer is result 1 / among the results shown, as the study's grader judges a hit (same
corpus, same source file, same heading), plus abstention on the unanswerable questions
and abstention over a right first result (which the agent-first issue forbids).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path


def norm(h: str | None) -> str | None:
    if h is None:
        return None
    h = re.sub(r"\s*\{[:\s]*#[^}]*\}\s*$", "", h)
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h)
    h = re.sub(r"<[^>]+>", "", h)
    h = h.replace("`", "").replace("**", "").replace("*", "").replace("\\", "").lstrip("# ")
    return " ".join(h.split()).lower()


def hit(r: dict, q: dict) -> bool:
    for e in q.get("expected", []) + (q.get("also_valid") or []):
        if r["doc_set"].split("@")[0] != q["corpus"] or (r.get("source") or "") != e["file"]:
            continue
        if e["heading"] is None and r["heading_path"][0].startswith("["):
            return True
        if norm(r["heading_path"][-1]) == norm(e["heading"]):
            return True
    return False


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("docs_dir")
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from doc4llm.search.engine import Searcher
    from doc4llm.search.render import render_text

    spec = json.loads((Path(a.root) / "queries.json").read_text(encoding="utf-8"))
    searcher = Searcher(a.docs_dir, quiet=True)
    sizes, top1, shown, na_abst, over_right = [], [], [], [], 0
    for q in spec["queries"]:
        res = searcher.search(q["query"], k=a.k)
        sizes.append(len(render_text(res)))
        rs = res["results"]
        if q["kind"] == "no_answer":
            na_abst.append(res["abstained"])
            continue
        top1.append(bool(rs) and hit(rs[0], q))
        shown.append(any(hit(r, q) for r in rs))
        over_right += bool(res["abstained"] and rs and hit(rs[0], q))
    report = {
        "queries": len(spec["queries"]),
        "text_chars": {"median": statistics.median(sizes), "mean": round(statistics.mean(sizes)),
                       "max": max(sizes)},
        "text_tokens_median": round(statistics.median(sizes) / 4),
        "top1": round(sum(top1) / len(top1), 3),
        f"in_first_{a.k}": round(sum(shown) / len(shown), 3),
        "no_answer_abstention": f"{sum(na_abst)}/{len(na_abst)}",
        "abstained_over_right_top1": over_right,
    }
    print(json.dumps(report, indent=1))
    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
