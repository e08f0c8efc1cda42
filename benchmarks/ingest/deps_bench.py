"""`doc4llm sync` / `add` against the real registries (PyPI, npm): what a project's
dependencies yield, per package, and whether a synced set answers version questions.

    python benchmarks/ingest/deps_bench.py [--out results.json] [--jobs 4] [--skip-python] [--skip-js]

1. This project's own direct dependencies (its pyproject.toml, ranges resolved to the
   newest matching release) and a JavaScript app's package.json (vite, react, zod,
   p-limit), each synced into a fresh docs dir: per package, where the pages came from
   (readme / docs / changelog / api), pages, API sections, seconds; and the share of direct
   dependencies whose set has an API reference (target: >= 90%).
2. The issue's done-when checks: click@8.1.7 has docs pages and API headings CliRunner,
   Choice, option; p-limit@5.0.0 has its readme and pLimit / LimitFunction; a second sync
   rewrites nothing.
3. Version questions: API names present in one release and not the other (click 8.0.4 vs
   8.1.7, zod 3.20.0 vs 3.23.8, found by diffing the two sets' API headings); for each,
   `doc4llm search NAME --set <each version>`: a top-3 result whose heading holds the
   name must come only from the release that has it (text hits are shown beside).
Needs the network to PyPI and npm; prints markdown tables.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from doc4llm.ingest.packages.package_docs import add_package  # noqa: E402
from doc4llm.ingest.packages.spec import parse_source  # noqa: E402
from doc4llm.ingest.packages.sync import sync_project  # noqa: E402

JS_APP = {"name": "js-app", "private": True,
          "dependencies": {"react": "^18.3.1", "zod": "^3.23.8", "p-limit": "^5.0.0"},
          "devDependencies": {"vite": "^5.4.0"}}


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "doc4llm", *args], capture_output=True, text=True,
                          cwd=REPO, env={**__import__("os").environ, "PYTHONPATH": str(REPO)}, timeout=600)


def sync_table(project: Path, docs: Path, jobs: int) -> dict:
    t0 = time.monotonic()
    report = sync_project(project, docs, jobs=jobs)
    seconds = time.monotonic() - t0
    rows = []
    for item in report.items:
        d = item.detail
        rows.append({"package": item.label(), "set": item.set_name, "action": item.action,
                     "sources": d.get("sources") or {}, "pages": d.get("pages", 0),
                     "api_sections": d.get("api_sections", 0), "seconds": d.get("seconds", 0.0),
                     "error": item.error})
    with_api = sum(1 for r in rows if (r["sources"] or {}).get("api"))
    t1 = time.monotonic()
    again = sync_project(project, docs, jobs=jobs)
    rerun = {"seconds": round(time.monotonic() - t1, 2), "counts": again.to_dict()["counts"]}
    return {"project": str(project), "files": report.files, "seconds": round(seconds, 1), "rows": rows,
            "with_api": with_api, "total": len(rows), "not_synced": report.skipped, "second_run": rerun}


def print_sync(title: str, res: dict) -> None:
    print(f"\n### {title}: {res['total']} direct dependencies from {', '.join(res['files'])}, "
          f"{res['seconds']}s wall ({res['with_api']}/{res['total']} with an API reference)\n")
    print("| package | set | pages | from | API sections | s |")
    print("|---|---|---:|---|---:|---:|")
    for r in sorted(res["rows"], key=lambda r: r["package"]):
        src = ", ".join(f"{k} {n}" for k, n in sorted(r["sources"].items())) or (r["error"] or "")[:60]
        print(f"| {r['package']} | {r['set'] or '-'} | {r['pages']} | {src} | {r['api_sections']} | {r['seconds']:.1f} |")
    print(f"\nsecond run: {res['second_run']}")


def api_headings(set_dir: Path) -> set[str]:
    names = set()
    for page in set_dir.iterdir():
        content = page / "docContent.md"
        if not content.is_file() or "(API)" not in page.name and " API)" not in page.name:
            continue
        for line in content.read_text(encoding="utf-8").splitlines():
            if line.startswith(("## ", "### ")):
                names.add(line.split(" ", 1)[1].strip())
    return names


def version_questions(docs: Path, old: str, new: str, limit: int = 5) -> list[dict]:
    results = []
    sets = {}
    for source in (old, new):
        r = add_package(parse_source(source), docs)
        sets[source] = r.set_name
    a, b = (api_headings(docs / sets[s]) for s in (old, new))
    def meaningful(n: str) -> bool:  # a function, class or method, not a TypeVar such as `P`
        last = n.rsplit(".", 1)[-1]
        return len(last) >= 4 and any(c.islower() for c in last) and not n.startswith("Names ")

    added = sorted(n for n in b - a if meaningful(n))
    removed = sorted(n for n in a - b if meaningful(n))
    print(f"\n{old} -> {new}: {len(b - a)} API headings added, {len(a - b)} removed", file=sys.stderr)
    picks = [(n, new) for n in added[:limit]] + [(n, old) for n in removed[:2]]
    for name, owner in picks:
        hits, top = {}, {}
        for source in (old, new):
            set_dir = docs / sets[source]
            hits[source] = sum(p.read_text(encoding="utf-8").count(name.rsplit(".", 1)[-1])
                               for p in set_dir.glob("*/docContent.md"))
            r = _cli("search", name, "--set", sets[source], "-k", "3", "--json", "--docs-dir", str(docs))
            try:
                found = json.loads(r.stdout).get("results") or []
            except ValueError:
                found = []
            top[source] = any(name in " > ".join(x.get("heading_path") or []) for x in found)
        other = old if owner == new else new
        results.append({"name": name, "in": owner, "grep_hits": hits, "search_top3": top,
                        "right": top[owner] and not top[other]})
    return results


def done_when(docs: Path) -> dict:
    out = {}
    r = add_package(parse_source("pypi:click==8.1.7"), docs)
    heads = api_headings(docs / r.set_name)
    out["click@8.1.7"] = {"docs_pages": r.sources.get("docs", 0),
                          "headings": {h: h in heads for h in ("CliRunner", "Choice", "option")}}
    r = add_package(parse_source("npm:p-limit@5.0.0"), docs)
    heads = api_headings(docs / r.set_name)
    out["p-limit@5.0.0"] = {"readme": r.sources.get("readme", 0),
                            "headings": {h: h in heads for h in ("pLimit", "LimitFunction")}}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--skip-python", action="store_true")
    ap.add_argument("--skip-js", action="store_true")
    args = ap.parse_args()
    results: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if not args.skip_python:
            proj = tmp / "self"
            proj.mkdir()
            (proj / "pyproject.toml").write_text((REPO / "pyproject.toml").read_text())
            results["python"] = res = sync_table(proj, tmp / "md-py", args.jobs)
            print_sync("doc4llm's own dependencies (pyproject.toml, extras and dev included)", res)
            import tomllib

            from packaging.requirements import Requirement

            runtime = {Requirement(r).name.lower().replace("_", "-") for r in
                       tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
                       if Requirement(r).marker is None or Requirement(r).marker.evaluate()}
            rows = [r for r in res["rows"] if r["package"].split(":", 1)[1].split("@")[0] in runtime]
            with_api = sum(1 for r in rows if (r["sources"] or {}).get("api"))
            res["runtime"] = {"total": len(rows), "with_api": with_api}
            print(f"\nruntime dependencies ([project].dependencies): {with_api}/{len(rows)} with an API reference")
        if not args.skip_js:
            proj = tmp / "js-app"
            proj.mkdir()
            (proj / "package.json").write_text(json.dumps(JS_APP, indent=2))
            results["js"] = sync_table(proj, tmp / "md-js", args.jobs)
            print_sync("a JavaScript app (package.json)", results["js"])
        results["done_when"] = done_when(tmp / "md-dw")
        print("\n### done-when\n")
        print(json.dumps(results["done_when"], indent=2))
        results["versions"] = {}
        for old, new in (("pypi:click==8.0.4", "pypi:click==8.1.7"), ("npm:zod@3.20.0", "npm:zod@3.23.8")):
            res = version_questions(tmp / "md-v", old, new)
            results["versions"][f"{old} vs {new}"] = res
            print(f"\n### version questions: {old} vs {new}\n")
            print("| name | exists in | text hits old / new | heading in search top-3 old / new | right set only |")
            print("|---|---|---|---|---|")
            for q in res:
                g, t = q["grep_hits"], q["search_top3"]
                print(f"| `{q['name']}` | {q['in']} | {g[old]} / {g[new]} | {t[old]} / {t[new]} | "
                      f"{'yes' if q['right'] else 'NO'} |")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
