"""Docs that are not in the archive, on the real registries: for packages whose archives
ship no docs, which repository tag archives and docs-site URLs `add` would fetch (from the
release's own metadata), what happens when it tries, and what the set then holds.

    python benchmarks/ingest/upstream_bench.py [--out benchmarks/ingest/baselines/upstream_bench.json]

Per package: (1) resolve on the registry, download and extract the archive, read its
metadata and print the plan (`upstream_plan`: repositories, tag names and archive URLs in
the order tried, the docs site's versioned candidates); (2) `add_package` online into a
fresh docs dir: the holdings line, the warning, seconds, and each place looked at with its
result; (3) the same with offline=True. On a machine that reaches only the registries,
step 2 records the failures (DNS) honestly; with internet it records the docs found.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from doc4llm.ingest.packages import archive as archives  # noqa: E402
from doc4llm.ingest.packages import npm as npm_registry  # noqa: E402
from doc4llm.ingest.packages import pypi  # noqa: E402
from doc4llm.ingest.packages.collect import read_npm_metadata, read_python_metadata  # noqa: E402
from doc4llm.ingest.packages.holdings import holdings_line  # noqa: E402
from doc4llm.ingest.packages.http import Http  # noqa: E402
from doc4llm.ingest.packages.package_docs import add_package  # noqa: E402
from doc4llm.ingest.packages.spec import parse_source  # noqa: E402
from doc4llm.ingest.packages.upstream import upstream_plan  # noqa: E402

PACKAGES = ["pypi:pydantic==2.7.4", "pypi:httpx==0.27.0", "pypi:rich==13.7.1", "pypi:requests==2.32.3",
            "pypi:starlette==0.27.0", "pypi:starlette==0.37.2", "npm:axios@1.7.2"]


def plan_for(spec: str, http: Http, work: Path) -> dict:
    ref = parse_source(spec)
    release = pypi.resolve(http, ref) if ref.ecosystem == "pypi" else npm_registry.resolve(http, ref)
    path, _ = archives.download(http, release, work)
    root = archives.extract(path, work / "x").root
    meta = read_python_metadata(root) if ref.ecosystem == "pypi" else read_npm_metadata(root)
    return {"archive": release.filename, **upstream_plan(root, release, meta)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "ingest" / "baselines" / "upstream_bench.json"))
    ap.add_argument("packages", nargs="*", default=PACKAGES)
    args = ap.parse_args()
    rows = []
    with Http() as http:
        for spec in args.packages:
            with tempfile.TemporaryDirectory() as tmp:
                tmp = Path(tmp)
                (tmp / "w").mkdir()
                plan = plan_for(spec, http, tmp / "w")
                runs = {}
                for mode, offline in (("online", False), ("offline", True)):
                    t0 = time.monotonic()
                    r = add_package(parse_source(spec), tmp / mode, http=http, offline=offline)
                    runs[mode] = {"line": holdings_line(r.set_name, r.holds), "missing": r.missing,
                                  "looked_at": r.looked_at, "seconds": round(time.monotonic() - t0, 2)}
            rows.append({"package": spec, "plan": plan, **runs})
            print(f"## {spec}  ({plan['archive']})")
            for repo in plan["repos"]:
                print(f"- repository {repo['repo']}" + (f" (folder {repo['subdir']})" if repo["subdir"] else "")
                      + f": tags {', '.join(repo['tags'])}; first URL {repo['urls'][0] if repo['urls'] else '-'}")
            for site in plan["sites"]:
                print(f"- docs site {site['site']}: {', '.join(site['candidates'])}")
            for mode in ("online", "offline"):
                print(f"- {mode} ({runs[mode]['seconds']}s): {runs[mode]['line']}")
                for m in runs[mode]["missing"]:
                    print(f"  - warning: {m}")
            print()
    Path(args.out).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
