"""Issue 33 items 15 and 21 on the API readers: hostile or broken source in a package.

    python benchmarks/hardening/api_inputs.py            # this tree
    PYTHONPATH=/tmp/old python benchmarks/hardening/api_inputs.py   # another tree

15: a `.d.ts` of N nested `export namespace A {` (5,000 and 50,000), read by
    typescript_api_pages: seconds, peak RSS of the child, what came out.
21: a package whose `__init__.py` griffe cannot parse (Python 2 `print "x"`), beside 20
    good modules and one more broken module: pages written and warnings.
Each case runs in a child process (a RecursionError or a crash is a result, not the end).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r'''
import json, resource, sys, time
from pathlib import Path
case, root = sys.argv[1], Path(sys.argv[2])
t0 = time.process_time()
warnings = []
try:
    if case == "dts":
        from doc4llm.ingest.packages.api_typescript import typescript_api_pages
        pages = typescript_api_pages(root, warnings)
    else:
        from doc4llm.ingest.packages.api_python import python_api_pages
        pages = python_api_pages(root, "pkg", warnings)
    out = {"pages": len(pages), "sections": sum(p.body.count("\n## ") + p.body.startswith("## ") for p in pages)}
except BaseException as exc:
    out = {"error": type(exc).__name__}
out["cpu_s"] = round(time.process_time() - t0, 2)
out["rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
out["warnings"] = warnings
print(json.dumps(out))
'''


def run(case: str, root: Path) -> dict:
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", CHILD, case, str(root)], capture_output=True, text=True,
                          timeout=600)
    try:
        out = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        out = {"error": (proc.stderr.strip().splitlines() or ["no output"])[-1][:120]}
    out["wall_s"] = round(time.monotonic() - t0, 2)
    return out


def main() -> None:
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in (5000, 50000):
            d = Path(tmp) / f"dts{n}"
            d.mkdir()
            (d / "index.d.ts").write_text("export namespace A {\n" * n + "export const x = 1;\n" + "}\n" * n)
            rows[f"15: {n} nested namespaces"] = run("dts", d)
        d = Path(tmp) / "py"
        (d / "pkg").mkdir(parents=True)
        (d / "pkg" / "__init__.py").write_text("print 'python 2'\n")
        (d / "pkg" / "broken.py").write_text("def f(:\n")
        for i in range(20):
            (d / "pkg" / f"mod{i}.py").write_text(f"def f{i}(x):\n    '''Function {i}.'''\n")
        rows["21: unreadable __init__ + 1 broken + 20 good modules"] = run("py", d)
    for k, v in rows.items():
        print(f"{k}: {json.dumps(v)}")


if __name__ == "__main__":
    main()
