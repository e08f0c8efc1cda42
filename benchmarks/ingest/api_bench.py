"""The API reference alone, on real releases: pages, sections, seconds per package, and the
issue-36 done-when checks that are about API pages.

    python benchmarks/ingest/api_bench.py [SPEC ...] [--dump DIR] [--json OUT] [--cache DIR]

Each SPEC (`pypi:numpy==1.26.4`, `npm:zod@3.23.8`; default: the list below) is resolved on
the real registry, downloaded once into the cache (hash checked as `add` does), extracted
with the same caps, and only its API pages are generated (no docs, no pandoc): the time is
the API generation alone (CPU-bound: on a shared machine compare runs made together).
`--dump DIR` writes each page as markdown for reading. `DOC4LLM_TREE=/tmp/old` runs another
checkout's doc4llm (`git archive <rev> doc4llm | tar -x -C /tmp/old`) for before/after.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# DOC4LLM_TREE=/tmp/old: another checkout's doc4llm (`git archive <rev> doc4llm | tar -x -C /tmp/old`),
# to compare before/after in one session
sys.path.insert(0, os.environ.get("DOC4LLM_TREE") or str(REPO))

from doc4llm.ingest.packages import archive as archives  # noqa: E402
from doc4llm.ingest.packages.http import Http  # noqa: E402
from doc4llm.ingest.packages.spec import parse_source  # noqa: E402

DEFAULT = ["pypi:numpy==1.26.4", "pypi:celery==5.4.0", "pypi:django==5.0.9", "pypi:marshmallow==3.21.3",
           "pypi:jinja2==3.1.4", "pypi:pydantic==2.7.4", "pypi:requests==2.32.3", "pypi:httpx==0.27.0",
           "pypi:attrs==23.2.0", "pypi:click==8.1.7", "pypi:sqlalchemy==2.0.30", "pypi:django==4.2.16",
           "pypi:black==24.8.0", "pypi:pluggy==1.5.0", "pypi:itsdangerous==2.2.0", "pypi:coverage==7.6.1",
           "pypi:setuptools==72.1.0", "pypi:pip==24.2", "pypi:sphinx==7.4.7",
           "npm:zod@3.23.8", "npm:axios@1.7.2", "npm:vite@5.4.0"]
ROLE = re.compile(r":(?:py:)?(?:meth|class|func|attr|exc|data|mod|obj|ref):`")


def api_pages(spec: str, cache: Path, work: Path) -> tuple[list, list[str], float]:
    from doc4llm.ingest.packages import npm as npm_registry
    from doc4llm.ingest.packages import pypi
    from doc4llm.ingest.packages.api_python import python_api_pages
    from doc4llm.ingest.packages.api_typescript import typescript_api_pages

    ref = parse_source(spec)
    with Http() as http:
        release = pypi.resolve(http, ref) if ref.ecosystem == "pypi" else npm_registry.resolve(http, ref)
        cache.mkdir(parents=True, exist_ok=True)
        path = cache / release.filename
        if not path.is_file():
            tmp = cache / ".partial"
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir()
            got, _ = archives.download(http, release, tmp)
            got.rename(path)
    shutil.rmtree(work, ignore_errors=True)
    root = archives.extract(path, work).root
    warnings: list[str] = []
    t0 = time.monotonic()
    if ref.ecosystem == "pypi":
        try:
            pages = python_api_pages(root, release.name, warnings, release.version)
        except TypeError:  # a tree from before the `version` argument
            pages = python_api_pages(root, release.name, warnings)
    else:
        pages = typescript_api_pages(root, warnings)
    return pages, warnings, time.monotonic() - t0


def checks(spec: str, pages: list) -> dict[str, bool]:
    titles = {p.title for p in pages}
    heads = {ln[3:].strip() for p in pages for ln in p.body.split("\n") if ln.startswith("## ")}
    out: dict[str, bool] = {}
    if spec.startswith("pypi:numpy"):
        bodies = "\n".join(p.body for p in pages)
        out["numpy.isclose entry"] = "## isclose" in bodies
        out["numpy.trapz entry"] = "## trapz" in bodies
        out["no vendored-meson/test page"] = not any(
            "mesonbuild" in t or re.search(r"\.tests?\b", t) or "vendored" in p.source
            for p in pages for t in [p.title])
    if spec.startswith("pypi:celery"):
        out["no t.unit/t.integration page"] = not any(t.startswith(("t.", "t (")) for t in titles)
    if spec.startswith("pypi:django=="):
        out["django.db.models page"] = "django.db.models (API)" in titles
        out["django.urls page"] = "django.urls (API)" in titles
    if spec.startswith(("pypi:marshmallow", "pypi:jinja2")):
        out["no :meth:/:class:/:func: roles"] = not any(ROLE.search(p.body) for p in pages)
    if spec.startswith("pypi:pydantic"):
        out["BaseModel.dict deprecated"] = any(
            re.search(r"^### BaseModel\.dict\b.*\n(?:.*\n){0,12}?\*\*Deprecated", p.body, re.M)
            or re.search(r"^### BaseModel\.dict \(deprecated\)", p.body, re.M) for p in pages)
    if spec.startswith("npm:zod"):
        for name in ("ZodString", "ZodObject", "ZodType"):
            out[f"{name} heading"] = name in heads
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("specs", nargs="*")
    ap.add_argument("--cache", default="/tmp/doc4llm-api-bench-cache")
    ap.add_argument("--dump")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for spec in args.specs or DEFAULT:
        work = Path(args.cache) / ".work"
        try:
            pages, warnings, seconds = api_pages(spec, Path(args.cache), work)
        except Exception as exc:  # noqa: BLE001 - one failing package is a row, not the end
            rows.append({"spec": spec, "error": f"{type(exc).__name__}: {exc}"})
            print(f"{spec}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        sections = sum(1 for p in pages for ln in p.body.split("\n") if ln.startswith(("## ", "### ")))
        roles = sum(len(ROLE.findall(p.body)) for p in pages)
        row = {"spec": spec, "pages": len(pages), "sections": sections, "seconds": round(seconds, 1),
               "roles": roles, "warnings": warnings[:5], "checks": checks(spec, pages)}
        rows.append(row)
        print(json.dumps(row), flush=True)
        if args.dump:
            out = Path(args.dump) / spec.split(":", 1)[1].replace("/", "_")
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
            for i, p in enumerate(pages):
                name = re.sub(r"[^\w.@-]+", "_", p.title)[:120]
                (out / f"{i:04d}-{name}.md").write_text(f"# {p.title}\n\n{p.body}\n", encoding="utf-8")
        shutil.rmtree(work, ignore_errors=True)
    print("\n| package | API pages | sections | roles left | s | checks |\n|---|---:|---:|---:|---:|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['spec']} | error: {r['error'][:80]} | | | | |")
            continue
        ck = ", ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in r["checks"].items())
        print(f"| {r['spec'].split(':', 1)[1]} | {r['pages']} | {r['sections']} | {r['roles']} | {r['seconds']} | {ck} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
