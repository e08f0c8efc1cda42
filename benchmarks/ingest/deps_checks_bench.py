"""What lands in the sets `doc4llm sync` builds for a fixed real project (issue 36's checks).

    python benchmarks/ingest/deps_checks_bench.py [--docs DIR] [--jobs 4] [--out results.json]
                                                  [--skip-sync]

Syncs `benchmarks/ingest/deps_project/` (15 PyPI + 4 npm packages pinned at fixed
versions) from the real registries into a fresh docs dir, then, with the CLI only (what
an agent sees), checks:

- per set: pages by origin (docs / api / readme / changelog), API sections, what `sync`
  said it holds;
- narrative docs found wherever the archive keeps them (sqlalchemy `doc/build`, Django's
  `.txt` reStructuredText), translations left out (fastapi), noise trees left out of the API
  (numpy's vendored meson and tests, celery's `t.unit`), complete API names (numpy
  `isclose`/`trapz`, zod `ZodString`/`ZodObject`/`ZodType`, Django `django.db.models`/
  `django.urls`), Sphinx object and autodoc directives resolved (Flask's config keys,
  pytest's `pytest.raises`), docstrings without reST roles (marshmallow, jinja2), deprecated
  members marked and ranked below their replacements (pydantic `BaseModel.dict`);
- first use: the first search after the sync (wall seconds, stderr lines), from inside
  the project;
- versions: with pydantic 1.10.13 beside 2.7.4 and sqlalchemy 2.0.30 beside 1.4.52, every
  result of a question that names a version comes from that version's set.

Needs the network to PyPI and npm. Prints a table of checks (PASS / FAIL with the
measured value); `--out` writes them as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
PROJECT = Path(__file__).resolve().parent / "deps_project"
ROLE = re.compile(r":(?:meth|class|func|attr|mod|exc|data|obj):`")
VERSION_QUESTIONS = [
    ("our project is on pydantic 1.10: how do I validate two fields together", "pydantic@1.10.13"),
    ("sqlalchemy 2.0 declarative base class", "sqlalchemy@2.0.30"),
]


def cli(*args: str, cwd: Path | None = None, timeout: int = 3600) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "doc4llm", *args], capture_output=True, text=True,
                          cwd=cwd or REPO, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    return proc, time.monotonic() - t0


def set_meta(docs: Path, name: str) -> dict:
    path = docs / name / "doc4llm-set.yaml"
    if not path.is_file():
        return {}
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def pages(docs: Path, name: str) -> list[dict]:
    """[{folder, source, from, kind, ...}] of a set, from its metadata."""
    out = []
    for key, rec in (set_meta(docs, name).get("pages") or {}).items():
        extra = rec.get("extra") or {}
        out.append({"key": key, "folder": rec.get("folder", ""), "source": rec.get("source") or "",
                    "from": extra.get("from", ""), "kind": extra.get("kind", ""),
                    "origin": extra.get("origin", "")})
    return out


def body(docs: Path, name: str, folder: str) -> str:
    path = docs / name / folder / "docContent.md"
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""


def headings(docs: Path, name: str, origin: str = "api") -> list[str]:
    out = []
    for p in pages(docs, name):
        if origin and p["from"] != origin:
            continue
        out += [ln.lstrip("#").strip() for ln in body(docs, name, p["folder"]).split("\n")
                if ln.startswith("#")]
    return out


def has_heading(heads: list[str], name: str) -> bool:
    word = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
    return any(word.search(h) for h in heads)


def set_for(docs: Path, package: str) -> str | None:
    want = package.lower().replace("_", "-")
    for d in sorted(docs.iterdir()):
        if d.is_dir() and "@" in d.name and d.name.rsplit("@", 1)[0].lower().replace("_", "-") == want:
            return d.name
    return None


class Checks:
    def __init__(self) -> None:
        self.rows: list[dict] = []

    def add(self, name: str, ok: bool, value: object) -> None:
        self.rows.append({"check": name, "ok": bool(ok), "value": value})
        print(f"{'PASS' if ok else 'FAIL'}  {name}: {value}", flush=True)


def content_checks(docs: Path, c: Checks) -> None:
    sa = "sqlalchemy@1.4.52"
    sa_docs = [p for p in pages(docs, sa) if p["from"] == "docs" and p["source"].startswith("doc/build/")]
    tutorial = [p["folder"] for p in sa_docs if "tutorial" in p["source"]]
    c.add("sqlalchemy 1.4.52: >= 150 narrative pages from doc/build, ORM tutorial among them",
          len(sa_docs) >= 150 and any("orm/tutorial" in p["source"] for p in sa_docs),
          f"{len(sa_docs)} pages; tutorial pages: {tutorial[:4]}")
    dj = "django@5.0.9"
    dj_docs = [p for p in pages(docs, dj) if p["from"] == "docs" and p["source"].startswith("docs/")]
    dj_api = {p["folder"] for p in pages(docs, dj) if p["from"] == "api"}
    c.add("django 5.0.9: >= 300 narrative pages from docs/", len(dj_docs) >= 300, f"{len(dj_docs)} pages")
    want = ["django.db.models (API)", "django.urls (API)"]
    c.add("django 5.0.9: API pages for django.db.models and django.urls", all(w in dj_api for w in want),
          {w: w in dj_api for w in want})
    fa = pages(docs, "fastapi@0.95.2")
    lang = re.compile(r"^docs/([a-z]{2}(?:-[a-z]{2,4})?)/", re.I)
    foreign = [p["source"] for p in fa if (m := lang.match(p["source"])) and m.group(1).lower() != "en"]
    c.add("fastapi 0.95.2: no translated page by default", not foreign and len(fa) > 50,
          f"{len(fa)} pages, {len(foreign)} translated {foreign[:3]}")
    np_ = "numpy@1.26.4"
    np_heads = headings(docs, np_)
    c.add("numpy 1.26.4: API entries for isclose and trapz",
          has_heading(np_heads, "isclose") and has_heading(np_heads, "trapz"),
          {n: has_heading(np_heads, n) for n in ("isclose", "trapz")})
    noise = [p["folder"] for p in pages(docs, np_) if p["from"] == "api"
             and re.search(r"vendored|mesonbuild|(^|[./])tests?([./ ]|$)", p["folder"] + " " + p["source"])]
    c.add("numpy 1.26.4: no API page from vendored-meson or a test package", not noise,
          f"{len(noise)} {noise[:3]}")
    ce = [p["folder"] for p in pages(docs, "celery@5.4.0") if p["from"] == "api"
          and re.match(r"t\.(unit|integration)\b", p["folder"])]
    c.add("celery 5.4.0: no t.unit / t.integration API pages", not ce, f"{len(ce)} {ce[:3]}")
    zod_heads = headings(docs, "zod@3.23.8")
    zod = {n: has_heading(zod_heads, n) for n in ("ZodString", "ZodObject", "ZodType")}
    c.add("zod 3.23.8: ZodString, ZodObject, ZodType API headings", all(zod.values()), zod)
    for key in ("SECRET_KEY", "MAX_CONTENT_LENGTH"):
        proc, _ = cli("grep", "-w", key, "--set", "flask@3.0.3", "--docs-dir", str(docs), "--json")
        hits = json.loads(proc.stdout or "{}").get("matches", []) if proc.returncode == 0 else []
        conf = [h for h in hits if "onfiguration" in h["page"]]
        named = [h for h in conf if key in (h["heading_path"] or [""])[-1]]
        c.add(f"flask 3.0.3: grep -w {key} finds it in the configuration page's section for it",
              bool(named), [" > ".join(h["heading_path"][-2:]) for h in conf[:3]])
    py = "pytest@8.2.2"
    ref = [p for p in pages(docs, py) if p["from"] == "docs" and p["source"].endswith("reference/reference.rst")]
    raises_tokens = 0
    if ref:
        proc, _ = cli("toc", ref[0]["folder"], "--set", py, "--docs-dir", str(docs), "--json")
        toc = json.loads(proc.stdout or "{}") if proc.returncode == 0 else {}
        for s in toc.get("sections", []):
            if "pytest.raises" in s.get("title", ""):
                raises_tokens = max(raises_tokens, int(s.get("tokens") or 0))
    c.add("pytest 8.2.2: API Reference's pytest.raises section holds its docstring (> 100 tokens)",
          raises_tokens > 100, f"{raises_tokens} tokens")
    for s in ("marshmallow@3.21.3", "jinja2@3.1.4"):
        n = sum(len(ROLE.findall(body(docs, s, p["folder"]))) for p in pages(docs, s) if p["from"] == "api")
        c.add(f"{s}: no :meth:/:class:/:func: roles left in API pages", n == 0, f"{n} roles")
    pd = "pydantic@2.7.4"
    dict_dep = False
    for p in pages(docs, pd):
        if p["from"] != "api":
            continue
        text = body(docs, pd, p["folder"])
        m = re.search(r"^#+ [^\n]*BaseModel\.dict\b[^\n]*\n(.{0,600})", text, re.M | re.S)
        if m and "deprecat" in (m.group(0).lower()):
            dict_dep = True
    c.add("pydantic 2.7.4: BaseModel.dict marked deprecated", dict_dep, dict_dep)
    proc, _ = cli("search", "convert a model to a dict", "--set", pd, "-k", "10", "--json",
                  "--docs-dir", str(docs))
    res = json.loads(proc.stdout or "{}").get("results", []) if proc.returncode == 0 else []

    def rank(pred) -> int:
        return next((r["rank"] for r in res if pred((r.get("heading_path") or [""])[-1])), 99)

    r_dump = rank(lambda h: "model_dump" in h and "json" not in h)
    r_dict = rank(lambda h: re.search(r"(?<![\w_])dict\b", h) is not None and "model_dump" not in h)
    c.add("pydantic 2.7.4: 'convert a model to a dict' ranks model_dump above BaseModel.dict",
          r_dump < r_dict, f"model_dump #{r_dump}, dict #{r_dict}")


def version_checks(docs: Path, c: Checks) -> None:
    for spec in ("pypi:pydantic==1.10.13", "pypi:sqlalchemy==2.0.30"):
        proc, secs = cli("add", spec, "--docs-dir", str(docs))
        print(f"  add {spec}: exit {proc.returncode}, {secs:.1f} s", flush=True)
    for question, want in VERSION_QUESTIONS:
        proc, _ = cli("search", question, "--json", "--docs-dir", str(docs))
        res = json.loads(proc.stdout or "{}").get("results", []) if proc.returncode == 0 else []
        sets = [r["doc_set"] for r in res]
        c.add(f"version: every result of {question!r} from {want}", bool(sets) and all(s == want for s in sets),
              sets)


def first_use(docs: Path, project: Path, c: Checks) -> None:
    proc, secs = cli("search", "how do I define a model with a custom validator", "--docs-dir", str(docs),
                     cwd=project)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    c.add("first search after sync answers in < 2 s", secs < 2.0 and proc.returncode == 0,
          f"{secs:.2f} s, exit {proc.returncode}")
    c.add("first search: at most one stderr line", len(lines) <= 1, f"{len(lines)} lines {lines[:2]}")
    proc, secs = cli("search", "declare a many-to-many relationship", "--docs-dir", str(docs), cwd=project)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    c.add("second search while vectors build: at most one stderr line", len(lines) <= 1,
          f"{len(lines)} lines, {secs:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=Path, help="docs dir to build in (default: a new temp dir)")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--skip-sync", action="store_true", help="check an already synced --docs dir")
    args = ap.parse_args()
    docs = (args.docs or Path(tempfile.mkdtemp(prefix="deps-checks-"))).resolve()
    work = Path(tempfile.mkdtemp(prefix="deps-project-"))
    project = work / "project"
    shutil.copytree(PROJECT, project)
    c = Checks()
    summary: dict = {"docs": str(docs)}
    if not args.skip_sync:
        proc, secs = cli("sync", str(project), "--docs-dir", str(docs), "--jobs", str(args.jobs), "--json",
                         timeout=7200)
        summary["sync_seconds"] = round(secs, 1)
        summary["sync_exit"] = proc.returncode
        print(f"sync: exit {proc.returncode}, {secs:.0f} s", flush=True)
        try:
            summary["sync_report"] = json.loads(proc.stdout)
        except ValueError:
            summary["sync_report"] = proc.stdout[-2000:]
        first_use(docs, project, c)
    table = []
    for d in sorted(docs.iterdir()):
        if d.is_dir() and "@" in d.name:
            ps = pages(docs, d.name)
            by: dict[str, int] = {}
            for p in ps:
                by[p["from"]] = by.get(p["from"], 0) + 1
            pkg = set_meta(docs, d.name).get("package") or {}
            table.append({"set": d.name, "pages": len(ps), "from": by, "api_sections": pkg.get("api_sections")})
            print(f"  {d.name:28} {len(ps):5} pages  {by}  api sections {pkg.get('api_sections')}")
    summary["sets"] = table
    content_checks(docs, c)
    version_checks(docs, c)
    summary["checks"] = c.rows
    print(f"\n{sum(r['ok'] for r in c.rows)}/{len(c.rows)} checks pass")
    if args.out:
        args.out.write_text(json.dumps(summary, indent=1, default=str) + "\n", encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
