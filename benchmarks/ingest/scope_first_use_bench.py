"""Project scope, version questions and first use (issue 36 items 6-7), on the real registries.

    python benchmarks/ingest/scope_first_use_bench.py [--code DIR] [--work DIR]
        [--versions-dir D] [--depdev-dir D] [--skip-first-use] [--out results.json]

`--code DIR` runs another doc4llm checkout (its folder goes first on PYTHONPATH): run once
with the baseline and once with this tree for a before/after. Docs dirs given that exist
are reused (they take minutes to build); missing ones are built with `doc4llm add` by the
checkout under test.

1. Versions: pydantic 1.10.13 and 2.7.4, sqlalchemy 1.4.52 and 2.0.30 in one docs dir.
   For each question that names a version, every result (-k 10) must come from the set of
   the version it names. Then a project pinning pydantic 1.10.13 and sqlalchemy 2.0.30 is
   synced into that docs dir (a sync record; nothing fetched) and questions naming no
   version are asked outside it: how many results come from the pinned versions.
2. depdev version questions (../shared/benchmarks/depdev, or $DOC4LLM_SHARED/benchmarks/depdev; kind "version": Django 4.2.16
   and 5.0.9 side by side, plus 7 other packages): is result 1 from the right version (and
   is it the labelled section)?
3. First use: a project pinning 15 PyPI + 4 npm packages synced into a fresh docs dir
   (`sync` wall/CPU, the part spent indexing), then the first and a second search: wall
   time, stderr lines and bytes (the background embedding job they start is stopped after
   the measurement). A 2-package project too: what indexing adds to a small sync.

Wall times on this shared 2-core machine mostly measure the queue for a core: the load is
printed beside them, and CPU times too.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))  # bench_common, the shared helpers
from bench_common import load, run_timed  # noqa: E402

DEPDEV = Path(os.environ.get("DOC4LLM_SHARED") or REPO.parent / "shared") / "benchmarks" / "depdev"
VERSION_SPECS = ("pydantic==1.10.13", "pydantic==2.7.4", "sqlalchemy==1.4.52", "sqlalchemy==2.0.30")
VERSION_QUESTIONS = (
    ("our project is on pydantic 1.10: how do I validate two fields together", "pydantic@1.10.13"),
    ("sqlalchemy 2.0 declarative base class", "sqlalchemy@2.0.30"),
    ("pydantic 2.7: how do I validate two fields together", "pydantic@2.7.4"),
    ("SQLAlchemy 1.4 declarative base class", "sqlalchemy@1.4.52"),
)
PROJECT_REQUIREMENTS = """\
django==5.0.9
sqlalchemy==1.4.52
alembic==1.13.1
pydantic==2.7.4
fastapi==0.95.2
starlette==0.27.0
httpx==0.27.0
requests==2.32.3
rich==13.7.1
flask==3.0.3
celery==5.4.0
numpy==1.26.4
pytest==8.2.2
tox==4.15.1
mkdocs==1.6.0
"""
PROJECT_PACKAGE_JSON = {"name": "app", "private": True,
                        "dependencies": {"axios": "1.7.2", "zod": "3.23.8", "p-limit": "5.0.0", "react": "18.3.1"}}
SMALL_REQUIREMENTS = "click==8.1.7\nitsdangerous==2.2.0\n"
QUERIES = ("how do I declare a one to many relationship", "validate a request body with a model")


def env_for(code: Path, **extra: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code), "OMP_NUM_THREADS": "1"}
    env.pop("DOC4LLM_DOCS_DIR", None)
    env.update(extra)
    return env


def cli(code: Path, *args: str, env: dict | None = None, cwd: Path | None = None):
    return run_timed([sys.executable, "-m", "doc4llm", *map(str, args)], env=env or env_for(code), cwd=cwd or "/tmp")


def ensure_versions(code: Path, docs: Path) -> None:
    for spec in VERSION_SPECS:
        name, ver = spec.split("==")
        if not (docs / f"{name}@{ver}").is_dir():
            r = cli(code, "add", f"pypi:{spec}", "--docs-dir", docs)
            if r.rc:
                raise SystemExit(f"add {spec} failed: {r.stderr}")


def versions_check(code: Path, docs: Path) -> dict:
    ensure_versions(code, docs)
    rows = []
    for query, want in VERSION_QUESTIONS:
        r = cli(code, "search", query, "--docs-dir", docs, "--json", "-k", "10",
                env=env_for(code, DOC4LLM_BACKGROUND_EMBED="0"))
        res = json.loads(r.stdout)
        got = [x["doc_set"] for x in res["results"]]
        rows.append({"query": query, "want": want, "results": got,
                     "top": [f"{x['doc_set']} {x.get('source') or x['page']} > {x['heading_path'][-1]}"
                             for x in res["results"][:3]],
                     "all_right": bool(got) and all(g == want for g in got), "scope": res.get("scope"),
                     "tiers": sorted({v["tier"] for v in (res.get("semantic") or {}).values()})})
    return {"rows": rows, "all_right": sum(r["all_right"] for r in rows), "of": len(rows)}


PIN_QUESTIONS = ("how do I validate two fields together", "declarative base class",
                 "convert a model to a dict", "create an engine and a session")


def pins_check(code: Path, docs: Path, work: Path) -> dict:
    """A project pinning pydantic 1.10.13 and sqlalchemy 2.0.30 synced into the versions
    docs dir (both sets exist: nothing is fetched); questions naming no version, asked
    outside the project: the share of results from the pinned versions."""
    project = work / "pinned-project"
    project.mkdir(parents=True, exist_ok=True)
    (project / "requirements.txt").write_text("pydantic==1.10.13\nsqlalchemy==2.0.30\n")
    r = cli(code, "sync", project, "--docs-dir", docs, "-q")
    if r.rc:
        raise SystemExit(f"sync of the pinned project failed: {r.stderr}")
    pinned = {"pydantic@1.10.13", "sqlalchemy@2.0.30"}
    rows = []
    for query in PIN_QUESTIONS:
        r = cli(code, "search", query, "--docs-dir", docs, "--json", "-k", "5",
                env=env_for(code, DOC4LLM_BACKGROUND_EMBED="0"))
        got = [x["doc_set"] for x in json.loads(r.stdout)["results"]]
        rows.append({"query": query, "results": got, "first_pinned": bool(got) and got[0] in pinned,
                     "pinned_share": round(sum(g in pinned for g in got) / len(got), 2) if got else 0.0})
    return {"rows": rows, "first_pinned": sum(r["first_pinned"] for r in rows), "of": len(rows),
            "results_pinned": sum(sum(g in pinned for g in r["results"]) for r in rows),
            "results": sum(len(r["results"]) for r in rows)}


def depdev_check(code: Path, docs: Path) -> dict:
    if not docs.is_dir():
        subprocess.run(["bash", str(DEPDEV / "BUILD.sh"), str(docs)], env=env_for(code), check=True,
                       cwd="/tmp")
    questions = [q for q in json.loads((DEPDEV / "questions.json").read_text())["queries"] if q["kind"] == "version"]
    rows = []
    for q in questions:
        r = cli(code, "search", q["query"], "--docs-dir", docs, "--json", "-k", "5",
                env=env_for(code, DOC4LLM_BACKGROUND_EMBED="0"))
        res = json.loads(r.stdout)["results"]
        top = res[0] if res else {}
        right = top.get("doc_set") == q["corpus"]
        section = right and top.get("page") == q["section"]["page"] and q["section"]["heading"] in top.get(
            "heading_path", [])
        rows.append({"id": q["id"], "want": q["corpus"], "results": [x["doc_set"] for x in res],
                     "top1": f"{top.get('page')} > {(top.get('heading_path') or [''])[-1]}",
                     "right_version": right, "labelled_section": section})
    return {"rows": rows, "right_version": sum(r["right_version"] for r in rows),
            "labelled_section": sum(r["labelled_section"] for r in rows), "of": len(rows)}


def stop_background_job(docs: Path) -> None:
    """The embedding job the searches started (this benchmark started it: stopped by pid)."""
    state = docs / ".doc4llm" / "embed.json"
    try:
        pid = int(json.loads(state.read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass


def first_use(code: Path, work: Path, name: str, requirements: str, package_json: dict | None) -> dict:
    project, docs = work / f"{name}-project", work / f"{name}-md"
    project.mkdir(parents=True, exist_ok=True)
    (project / "requirements.txt").write_text(requirements)
    if package_json:
        (project / "package.json").write_text(json.dumps(package_json))
    env = env_for(code)
    sync = cli(code, "sync", project, "--docs-dir", docs, "--json", "-q", env=env)
    if sync.rc not in (0, 3):
        raise SystemExit(f"sync failed: {sync.stderr}")
    report = json.loads(sync.stdout)
    pages = sum(i.get("pages") or 0 for i in report["items"])
    out = {"packages": len(report["items"]), "counts": report["counts"], "pages": pages,
           "sync_wall_s": round(sync.wall_ms / 1000, 1), "sync_cpu_s": round(sync.cpu_ms / 1000, 1),
           "index_s": (report.get("index") or {}).get("seconds"), "load": load(), "searches": []}
    try:
        for i, query in enumerate(QUERIES * 2):  # first, second, then the same again
            r = cli(code, "search", query, "--docs-dir", docs, env=env, cwd=project)
            out["searches"].append({"n": i + 1, "query": query, "wall_s": round(r.wall_ms / 1000, 2),
                                    "cpu_s": round(r.cpu_ms / 1000, 2), "stderr_lines": len(r.stderr.splitlines()),
                                    "stderr_bytes": len(r.stderr.encode()), "stderr": r.stderr[:400],
                                    "scope": next((ln for ln in r.stdout.splitlines() if ln.startswith("scope:")), None)})
    finally:
        stop_background_job(docs)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--code", type=Path, default=REPO, help="doc4llm checkout to run (default: this one)")
    ap.add_argument("--work", type=Path, default=None, help="folder for the docs dirs built here")
    ap.add_argument("--versions-dir", type=Path, default=None)
    ap.add_argument("--depdev-dir", type=Path, default=None)
    ap.add_argument("--skip-first-use", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="scope-bench-"))
    code = args.code.resolve()
    results: dict = {"code": str(code), "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    results["versions"] = versions_check(code, args.versions_dir or work / "versions-md")
    print(f"versions: {results['versions']['all_right']}/{results['versions']['of']} questions with every "
          "result from the named version")
    for r in results["versions"]["rows"]:
        print(f"  {'ok ' if r['all_right'] else 'BAD'} {r['query']!r}: {r['results']}  top: {r['top'][:1]}")
    results["pins"] = p = pins_check(code, args.versions_dir or work / "versions-md", work)
    print(f"pinned versions, questions naming no version, outside the project: result 1 pinned "
          f"{p['first_pinned']}/{p['of']}, results from the pinned versions {p['results_pinned']}/{p['results']}")
    for r in p["rows"]:
        print(f"  {r['query']!r}: {r['results']}")
    results["depdev"] = depdev_check(code, args.depdev_dir or work / "depdev-md")
    d = results["depdev"]
    print(f"depdev version questions: result 1 from the right version {d['right_version']}/{d['of']}, "
          f"the labelled section {d['labelled_section']}/{d['of']}")
    for r in d["rows"]:
        print(f"  {r['id']} {r['want']}: {r['results']}  top: {r['top1']}")
    if not args.skip_first_use:
        for name, req, pkg in (("big", PROJECT_REQUIREMENTS, PROJECT_PACKAGE_JSON), ("small", SMALL_REQUIREMENTS, None)):
            f = results[f"first_use_{name}"] = first_use(code, work, name, req, pkg)
            print(f"first use ({name}: {f['packages']} packages, {f['pages']} pages): sync {f['sync_wall_s']} s wall "
                  f"/ {f['sync_cpu_s']} s CPU, of which indexing {f['index_s']} s; load {f['load']}")
            for s in f["searches"]:
                print(f"  search {s['n']}: {s['wall_s']} s wall, {s['cpu_s']} s CPU, stderr {s['stderr_lines']} lines "
                      f"/ {s['stderr_bytes']} B {s['scope'] or ''}")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
