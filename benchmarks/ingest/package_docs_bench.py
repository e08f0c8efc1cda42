"""What lands in package sets (issue 36 items 1 and 5), on the real registries.

For each package: `doc4llm add pypi:NAME==VER` in a subprocess (wall seconds, and the CPU
seconds of doc4llm plus its pandoc children), then the set's pages by origin and kind,
and the issue's done-when checks where one applies:

- sqlalchemy 1.4.52: >= 150 narrative pages from `doc/build`, the ORM tutorial among them;
- django 5.0.9: >= 300 docs pages from `docs/` (`.txt` sources);
- fastapi 0.95.2: no translated page by default; `--lang es` adds the Spanish ones;
- flask 3.0.3: `grep -w SECRET_KEY` / `MAX_CONTENT_LENGTH` hit a configuration section
  named for the key;
- pytest 8.2.2: the API Reference's `pytest.raises` section holds its docstring (> 100 tokens).

    python benchmarks/ingest/package_docs_bench.py [--docs-dir DIR] [--only NAME] [--json OUT]
"""

from __future__ import annotations

import argparse
import collections
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import yaml

PACKAGES = ["sqlalchemy==1.4.52", "django==5.0.9", "fastapi==0.95.2", "flask==3.0.3", "pytest==8.2.2",
            # depdev (shared/benchmarks/depdev/BUILD.sh) and the README-only sets
            "django==4.2.16", "black==24.8.0", "pluggy==1.5.0", "itsdangerous==2.2.0", "coverage==7.6.1",
            "setuptools==72.1.0", "pip==24.2", "sphinx==7.4.7", "alembic==1.13.2", "tox==4.16.0", "mkdocs==1.6.0"]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "doc4llm", *args], capture_output=True, text=True)


def add(spec: str, docs: Path, *extra: str) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    r = cli("add", f"pypi:{spec}", "--docs-dir", str(docs), "--json", "--force", *extra)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    try:
        out = json.loads(r.stdout)
    except ValueError:
        return {"spec": spec, "error": r.stderr.strip()[-300:], "wall_s": round(wall, 1)}
    return {"spec": spec, "set": out.get("set_name"), "path": out.get("path"), "wall_s": round(wall, 1),
            "cpu_s": round(cpu, 1), "pages": out.get("pages"), "sources": out.get("sources"),
            "warnings": out.get("warnings")}


def kinds(set_dir: Path) -> dict:
    meta = yaml.safe_load((set_dir / "doc4llm-set.yaml").read_text())
    recs = [r for r in meta["pages"].values() if isinstance(r, dict)]
    out = collections.Counter(r["extra"].get("kind") or r["extra"]["from"] for r in recs)
    roots = collections.Counter(r["source"].rsplit("/", 1)[0].split("/")[0:2][-1] if "/" in r["source"] else "."
                                for r in recs if r["extra"]["from"] == "docs")
    return {"by_kind": dict(out), "docs_folders": dict(roots.most_common(4)), "records": recs}


def checks(name: str, set_dir: Path, info: dict, docs: Path) -> dict:
    recs = info.pop("records")
    docs_pages = [r for r in recs if r["extra"]["from"] == "docs"]
    out: dict = {}
    if name == "sqlalchemy":
        from_build = [r for r in docs_pages if r["source"].startswith("doc/build/")]
        out["docs_from_doc_build"] = len(from_build)
        out["orm_tutorial"] = any("tutorial" in r["source"] and "orm" in r["title"].lower() for r in from_build)
        out["ok"] = len(from_build) >= 150 and out["orm_tutorial"]
    elif name == "django":
        txt = [r for r in docs_pages if r["source"].endswith(".txt")]
        out["docs_txt_pages"] = len(txt)
        out["ok"] = len(txt) >= 300
    elif name == "fastapi":
        out["translations_default"] = sum(1 for r in recs if r["extra"].get("kind") == "translation")
        es = add("fastapi==0.95.2", docs, "--lang", "es")
        meta = yaml.safe_load((set_dir / "doc4llm-set.yaml").read_text())
        out["translations_lang_es"] = sum(1 for r in meta["pages"].values() if r["extra"].get("lang") == "es")
        out["lang_es_wall_s"] = es.get("wall_s")
        out["ok"] = out["translations_default"] == 0 and out["translations_lang_es"] > 0
        add("fastapi==0.95.2", docs)  # back to the default set
    elif name == "flask":
        for key in ("SECRET_KEY", "MAX_CONTENT_LENGTH"):
            r = cli("grep", "-w", key, "--docs-dir", str(docs), "--set", set_dir.name, "--json")
            hits = json.loads(r.stdout).get("matches", [])
            out[key] = [" > ".join(h["heading_path"]) for h in hits if h["heading_path"][-1] == key][:2]
        out["ok"] = all(out[k] and any("Configuration" in p for p in out[k]) for k in ("SECRET_KEY", "MAX_CONTENT_LENGTH"))
    elif name == "pytest":
        r = cli("grep", "-w", "-F", "pytest.raises", "--docs-dir", str(docs), "--set", set_dir.name, "--json")
        hits = [h for h in json.loads(r.stdout).get("matches", [])
                if h["page"] == "API Reference" and h["heading_path"][-1] == "pytest.raises"]
        out["raises_tokens"] = hits[0]["tokens"] if hits else 0
        out["ok"] = out["raises_tokens"] > 100
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs-dir", type=Path, default=Path("/tmp/doc4llm-package-docs-bench"))
    ap.add_argument("--only", default="")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = []
    for spec in PACKAGES:
        name = spec.split("==")[0]
        if args.only and name not in args.only.split(","):
            continue
        row = add(spec, args.docs_dir)
        if "error" not in row:
            set_dir = Path(row["path"])
            info = kinds(set_dir)
            row["checks"] = checks(name, set_dir, info, args.docs_dir)
            row.update(info)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print("\n| package | pages | docs | by kind | API | s (wall) | CPU s | check |")
    print("|---|---:|---:|---|---:|---:|---:|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['spec']} | error: {r['error'][:80]} |")
            continue
        src = r["sources"] or {}
        kinds_ = ", ".join(f"{k} {v}" for k, v in sorted(r["by_kind"].items()) if k not in ("docs", "api", "readme"))
        ok = r["checks"].get("ok")
        print(f"| {r['spec']} | {r['pages']} | {src.get('docs', 0)} | {kinds_ or '-'} | {src.get('api', 0)} | "
              f"{r['wall_s']} | {r['cpu_s']} | {'' if ok is None else ('met' if ok else 'NOT met')} |")


if __name__ == "__main__":
    main()
