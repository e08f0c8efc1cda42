"""Evidence an agent can trust (issue 34), measured over labelled query files: what
`doc4llm search` says is absent, when it abstains, and what the MCP tools cost an agent.

    python benchmarks/search/evidence_bench.py NAME=QUERIES.json=DOCS_DIR ... \
        [--embedder none] [--code OTHER_CHECKOUT] [--json OUT.json] [--show]

DOCS_DIR holds the query file's corpora imported as `<corpus>@<anything>` (realdocs
shape) or its sets (set-aware shape), e.g. the folders `benchmarks/search/realdocs_bench.py`
imports. `--code` imports doc4llm from another checkout (the code before a change), so
both sides run on one machine at one load.

Per set it reports:
- Top-1 / Top-3 (the eval's labels), confidence, abstention on answerable questions and
  **abstention over a right first result** (must be 0), no-answer abstention;
- the words the text output reports as absent ("not in these docs: ...", "absent from
  these docs: ..."): **flags on a user's own value** (the `values` a check-set question
  labels: names the user chose, paths, URLs, spelling variants; must be 0), flags over a
  right first result (to read), and for no-answer questions whether the absent topic is
  named (labels: the question's `absent`, else benchmarks/search/queries/absent_topics_dev.json);
- the MCP replies' size as Claude Code shows them to the model (`JSON.stringify` of the
  structuredContent) over the CLI's text output for the same query: `search_docs` vs
  `doc4llm search`, and `grep_docs` vs `doc4llm grep` on the question's most specific
  word (its first named term, else its longest keyword), fixed and case-insensitive.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
HERE = Path(__file__).resolve().parent
ABSENT_LINE = re.compile(r"^(?:not in these docs|absent from these docs|no (?:\S+ )?section contains)[^:]*:\s*(.+)$")


def flagged_words(text: str) -> list[str]:
    """The words the text output reports as absent, as printed (one list per line)."""
    out: list[str] = []
    for line in text.split("\n"):
        m = ABSENT_LINE.match(line.strip())
        if m:
            body = re.sub(r"\s*\([^)]*\)\s*$", "", m.group(1))  # a trailing "(the question's subject)"
            out += [w.strip().rstrip("…") for w in re.split(r",\s*", body) if w.strip()]
    return out


def _words(s: str) -> str:
    return " " + " ".join(re.findall(r"[\w.+/$~{}:-]+", s.casefold())) + " "


def same_topic(flag: str, label: str) -> bool:
    """Equal (case-folded), or one holds the other as whole words; a printed word cut
    short ("UV_HTTP_TIM…") matches the label it starts."""
    f, lab = flag.casefold().strip(), label.casefold().strip()
    if not f or not lab:
        return False
    if f == lab or lab.startswith(f) and len(f) >= 8:
        return True
    return f" {f} " in _words(lab) or f" {lab} " in _words(flag)


def is_value(flag: str, values: list[str]) -> bool:
    """A flag names one of the user's own values: equal, or part of one (`backup_db` of
    `./scripts/backup_db.py`), or holding one."""
    f = flag.casefold().strip().strip("`'\"")
    for v in values:
        v = v.casefold()
        if f == v or (len(f) >= 3 and f in v) or (len(v) >= 3 and v in f):
            return True
    return False


def grep_pattern(query: str, analysis: dict) -> str:
    terms = [t for t in analysis.get("terms") or [] if len(t) >= 3]
    if terms:
        return terms[0]
    words = sorted(analysis.get("keywords") or re.findall(r"\w+", query), key=lambda w: (-len(w), w))
    return words[0] if words else query.split()[0]


def mcp_size(model, data: dict) -> int:
    """Characters of JSON.stringify(structuredContent), as the server sends it."""
    try:
        from doc4llm.mcp.server import reply_parts
    except ImportError:  # the code before issue 34
        from doc4llm.secrets import redact_data

        body = redact_data(model.model_validate(data).model_dump(mode="json"))
    else:
        body = reply_parts(model, data)[0]
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":")))


def run_set(name: str, queries_path: Path, docs_dir: Path, embedder: str | None, show: bool) -> dict:
    from doc4llm.evaluation import _grade, bind_corpora, load_queries
    from doc4llm.search.grep import grep_docs, render_grep
    from doc4llm.search.render import render_text

    try:
        from doc4llm.mcp.schemas import GrepResult, SearchResult
        from doc4llm.mcp.server import DocsService
    except ImportError:  # before the MCP modules became a package
        from doc4llm.mcp.schemas import GrepResult, SearchResult
        from doc4llm.mcp.server import DocsService

    raw = json.loads(queries_path.read_text(encoding="utf-8"))
    raw_items = raw["queries"] if isinstance(raw, dict) else raw
    dev_absent = json.loads((HERE / "queries" / "absent_topics_dev.json").read_text(encoding="utf-8"))
    queries = load_queries(queries_path)
    bind_corpora(queries, docs_dir)
    if embedder:
        os.environ["DOC4LLM_EMBEDDER"] = embedder
    service = DocsService(docs_dir, embedder=embedder)
    searcher = service.searcher
    rows = []
    for q, item in zip(queries, raw_items, strict=True):
        res = searcher.search(q["query"], k=3)
        text = render_text(res)
        grades = _grade(res["results"], q["labels"])
        answerable = bool(q["labels"])
        top1 = bool(grades) and grades[0] == 2
        flags = flagged_words(text)
        values = item.get("values") or []
        absent = item.get("absent") or dev_absent.get(item.get("id") or "", [])
        mcp = service.search_docs(q["query"], k=3, follow_up=False)
        pattern = grep_pattern(q["query"], res.get("analysis") or {})
        try:
            g = grep_docs(docs_dir, pattern, fixed=True, ignore_case=True)
            grep_text = render_grep(g)
            grep_mcp = mcp_size(GrepResult, service.grep_docs(pattern, ignore_case=True, fixed=True))
        except Exception as exc:  # noqa: BLE001 - a pattern the CLI refuses is reported, not fatal
            grep_text, grep_mcp = "", 0
            print(f"{name}: grep {pattern!r}: {exc}", file=sys.stderr)
        row = {
            "id": item.get("id"), "query": q["query"], "kind": q["kind"], "answerable": answerable,
            "top1": top1, "top3": any(g == 2 for g in grades[:3]), "confidence": res["confidence"],
            "abstained": bool(res["abstained"] or not res["results"]),
            "explanation": res.get("confidence_explanation", ""),
            "flags": flags, "value_flags": [f for f in flags if is_value(f, values)],
            "absent_labels": absent,
            "absent_named": any(same_topic(f, a) for f in flags for a in absent) if not answerable else None,
            "text_chars": len(text), "mcp_chars": mcp_size(SearchResult, mcp),
            "grep_pattern": pattern, "grep_text_chars": len(grep_text), "grep_mcp_chars": grep_mcp,
            "got": [" > ".join(r["heading_path"]) + f"  [{r.get('source') or r['page']}]" for r in res["results"][:3]],
        }
        rows.append(row)
        if show:
            print(f"--- {name} {row['id']} [{q['kind']}] top1={top1} conf={res['confidence']} "
                  f"abst={row['abstained']} flags={flags}\n{text}\n", file=sys.stderr)
    service.close()
    return summarize(name, rows)


def _ratio(rows: list[dict], a: str, b: str) -> dict:
    rs = [r[a] / r[b] for r in rows if r[b] and r[a]]
    if not rs:
        return {}
    return {"median": round(statistics.median(rs), 3), "mean": round(statistics.mean(rs), 3),
            "max": round(max(rs), 3), "over_1.1": sum(x > 1.1 for x in rs), "n": len(rs),
            "total": round(sum(r[a] for r in rows) / max(1, sum(r[b] for r in rows if r[a])), 3)}


def summarize(name: str, rows: list[dict]) -> dict:
    ans = [r for r in rows if r["answerable"]]
    na = [r for r in rows if not r["answerable"]]
    labelled_values = [r for r in rows if r["value_flags"] is not None]
    return {
        "set": name, "n": len(rows), "answerable": len(ans), "no_answer": len(na),
        "top1": round(sum(r["top1"] for r in ans) / len(ans), 3) if ans else None,
        "top3": round(sum(r["top3"] for r in ans) / len(ans), 3) if ans else None,
        "answerable_abstained": sum(r["abstained"] for r in ans),
        "abstained_over_right_top1": sum(r["abstained"] and r["top1"] for r in ans),
        "no_answer_abstained": sum(r["abstained"] for r in na),
        "no_answer_named": sum(bool(r["absent_named"]) for r in na),
        "no_answer_flagged_any": sum(bool(r["flags"]) for r in na),
        "value_flags": sum(len(r["value_flags"]) for r in labelled_values),
        "value_flag_questions": [f"{r['id']}: {', '.join(r['value_flags'])}" for r in rows if r["value_flags"]],
        "flags_over_right_top1": [f"{r['id']}: {', '.join(r['flags'])}" for r in ans if r["top1"] and r["flags"]],
        "no_answer_unnamed": [f"{r['id']}: flags {r['flags']}" for r in na if not r["absent_named"]],
        "abstained_over_right": [r["id"] for r in ans if r["abstained"] and r["top1"]],
        "text_chars_median": statistics.median(r["text_chars"] for r in rows),
        "mcp_search_over_text": _ratio(rows, "mcp_chars", "text_chars"),
        "mcp_grep_over_text": _ratio(rows, "grep_mcp_chars", "grep_text_chars"),
        "rows": rows,
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("entries", nargs="+", help="NAME=QUERIES.json=DOCS_DIR")
    ap.add_argument("--embedder", default=None)
    ap.add_argument("--code", help="import doc4llm from this checkout (e.g. the code before a change)")
    ap.add_argument("--json", dest="json_out")
    ap.add_argument("--show", action="store_true", help="print each text output on stderr")
    a = ap.parse_args()
    sys.path.insert(0, str(Path(a.code).resolve() if a.code else HERE.parents[1]))
    reports = []
    for entry in a.entries:
        name, queries, docs = entry.split("=", 2)
        rep = run_set(name, Path(queries), Path(docs), a.embedder, a.show)
        reports.append(rep)
        print(json.dumps({k: v for k, v in rep.items() if k != "rows"}, indent=1, ensure_ascii=False))
    if a.json_out:
        Path(a.json_out).write_text(json.dumps(reports, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
