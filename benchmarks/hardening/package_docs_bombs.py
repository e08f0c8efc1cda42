"""Issue 33 items 1, 2, 4, 5 and 12: hostile docs in a package archive, 10x the issue's size.

Builds each sdist locally, runs `doc4llm add ARCHIVE` in a fresh process group and samples
the whole group's RSS (the CLI and its pandoc children) every 0.2 s; the run is stopped at
`--timeout` seconds or `--rss-cap` MB, whichever comes first (the "before" code grows
without bound). Prints one row per item: wall seconds, peak RSS, exit code, what the
build said.

    python benchmarks/hardening/package_docs_bombs.py            # this checkout
    cd /tmp && PYTHONPATH=DIR python .../package_docs_bombs.py --code DIR
                                    # another checkout (git archive; not from a checkout's folder,
                                    # where `python -m doc4llm` would import that checkout)
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path


def sdist(name: str, files: dict[str, str | bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        members = {"PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n\n", **files}
        for path, text in members.items():
            data = text.encode() if isinstance(text, str) else text
            info = tarfile.TarInfo(f"{name}-1.0/{path}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def alias_bomb(levels: int, width: int) -> str:
    lines = ["site_name: bomb", "x0: &x0 [{Home: index.md}]"]
    for i in range(1, levels + 1):
        lines.append(f"x{i}: &x{i} [" + ", ".join([f"*x{i - 1}"] * width) + "]")
    lines.append(f"nav: *x{levels}")
    return "\n".join(lines) + "\n"


def nested_quotes(depth: int) -> str:
    return "T\n=\n\n" + "\n\n".join(" " * i + "q" for i in range(depth)) + "\n"


CASES = {
    # item 1: `.. include:: bomb.rst` x120 in bomb.rst (issue), here x1200
    "1 rst include bomb": {"docs/bomb.rst": ".. include:: bomb.rst\n" * 1200,
                           "docs/other.rst": "Other\n=====\n\ntext\n"},
    # item 1: MkDocs snippets, `--8<-- "docs/bomb.md"` x1200
    "1 mkdocs snippet bomb": {"docs/bomb.md": '--8<-- "docs/bomb.md"\n' * 1200,
                              "docs/other.md": "# Other\n"},
    # item 2: a substitution pandoc expands: |a| x200,000 replaced by "b " x10,000 (issue: x1,000)
    "2 pandoc memory": {"docs/index.rst": "T\n=\n\n" + "|a| " * 200_000 + "\n\n.. |a| replace:: " + "b " * 10_000,
                        "docs/other.rst": "Other\n=====\n\ntext\n"},
    # item 4: billion laughs in mkdocs.yml nav, 10 levels of 9 (issue: 9 levels of 9)
    "4 mkdocs.yml alias bomb": {"mkdocs.yml": alias_bomb(10, 9), "docs/index.md": "# Home\n\ntext\n"},
    # item 5: pages of 1,500 nested block quotes: 40 of them (issue: 4)
    "5 slow pages": {**{f"docs/p{i:02d}.rst": nested_quotes(1500) for i in range(40)}},
    # item 12: docs_dir / nav outside the archive, recursive nav alias
    "12 mkdocs.yml paths": {"mkdocs.yml": "docs_dir: /etc\nnav: [{Home: /etc/passwd}]\n",
                            "docs/index.md": "# Home\n"},
    "12 mkdocs.yml recursive alias": {"mkdocs.yml": "nav: &a [{Home: index.md}, *a]\n",
                                      "docs/index.md": "# Home\n"},
}


def group_rss_mb(pgid: int) -> float:
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            if int(fields[2]) != pgid:  # field 5 (pgrp), after the command name
                continue
            with open(f"/proc/{pid}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return total / 1024


def run(archive: Path, docs: Path, code: Path | None, timeout: float, rss_cap: float) -> dict:
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    argv = [sys.executable, "-m", "doc4llm", "add", str(archive), "--docs-dir", str(docs), "--json"]
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    peak, stopped = 0.0, ""
    while proc.poll() is None:
        peak = max(peak, group_rss_mb(proc.pid))
        elapsed = time.monotonic() - t0
        if elapsed > timeout or peak > rss_cap:
            stopped = f"stopped at {elapsed:.0f} s" if elapsed > timeout else f"stopped at {peak:.0f} MB"
            os.killpg(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.2)
    out, err = proc.communicate()
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # pandoc children left behind by a stopped run
    except ProcessLookupError:
        pass
    wall = time.monotonic() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the CLI and the pandocs it waited for
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    said = ""
    try:
        data = json.loads(out)
        said = f"{data.get('pages')} pages; " + " | ".join(data.get("warnings") or [])[:300]
    except ValueError:
        said = err.decode("utf-8", "replace").strip().splitlines()[-1][:300] if err.strip() else ""
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1) if not stopped else None, "peak_rss_mb": round(peak), "exit": proc.returncode, "stopped": stopped,
            "said": said}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--code", type=Path, help="a checkout to run instead of the installed doc4llm")
    ap.add_argument("--timeout", type=float, default=90)
    ap.add_argument("--rss-cap", type=float, default=3000)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name, files in CASES.items():
            if args.only and args.only not in name:
                continue
            archive = Path(tmp) / f"bomb{len(name)}-1.0.tar.gz"
            archive.write_bytes(sdist(f"bomb{len(name)}", files))
            r = run(archive, Path(tmp) / "md", args.code, args.timeout, args.rss_cap)
            print(json.dumps({"case": name, "archive_bytes": archive.stat().st_size, **r}), flush=True)


if __name__ == "__main__":
    main()
