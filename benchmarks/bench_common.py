"""Shared helpers of the speed/scale benchmarks: timed child processes, percentiles, tables.

Why wall AND cpu time: the benchmark machine is shared (2 cores, load often > 5), so a
child's wall time mostly measures the queue for a core. The child's own user+sys CPU
time (from os.wait4) is the load-independent number; both are reported.

It stays at the top of benchmarks/ because several groups use it. A script in a group
folder imports it the same way everywhere:

    REPO = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(REPO / "benchmarks"))  # bench_common, the shared helpers
    from bench_common import run_timed, table  # noqa: E402
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


@dataclass
class Run:
    wall_ms: float
    cpu_ms: float
    maxrss_mb: float
    rc: int
    stdout: str
    stderr: str


def run_timed(cmd: list[str], env: dict | None = None, cwd: str | Path | None = None,
               stdin_devnull: bool = True) -> Run:
    """Run a child; wall time, its own user+sys CPU time and peak RSS (reaped with os.wait4).

    Output goes to temp files (no pipe deadlock, no reader thread competing for the CPU)."""
    with tempfile.TemporaryFile("w+") as fo, tempfile.TemporaryFile("w+") as fe:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env if env is not None else child_env(), cwd=cwd, stdout=fo, stderr=fe,
                                stdin=subprocess.DEVNULL if stdin_devnull else None)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = (time.perf_counter() - t0) * 1000
        proc.returncode = os.waitstatus_to_exitcode(status)
        fo.seek(0)
        fe.seek(0)
        return Run(wall, (ru.ru_utime + ru.ru_stime) * 1000, ru.ru_maxrss / 1024, proc.returncode,
                   fo.read(), fe.read())


def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of a non-empty list."""
    v = sorted(values)
    if not v:
        return float("nan")
    k = max(0, min(len(v) - 1, int(round(p / 100 * len(v) + 0.5)) - 1))
    return v[k]


def load() -> str:
    """Load average and CPU pressure (PSI 'some' avg10), to print next to each measurement."""
    la = os.getloadavg()
    psi = ""
    try:
        line = Path("/proc/pressure/cpu").read_text().splitlines()[0]
        psi = " cpu-psi " + line.split()[1].split("=")[1] + "%"
    except (OSError, IndexError):
        pass
    return f"load {la[0]:.2f}/{la[1]:.2f}/{la[2]:.2f}{psi}"


def table(headers: list[str], rows: list[list]) -> str:
    def fmt(x) -> str:
        if isinstance(x, float):
            return f"{x:,.1f}" if abs(x) < 100 else f"{x:,.0f}"
        return str(x)

    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(fmt(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def copy_sets(src: Path, dst: Path, sets: list[str] | None = None) -> list[str]:
    """Copy the doc sets (folders with '@') of src into dst, writable; never the index."""
    dst.mkdir(parents=True, exist_ok=True)
    names = []
    for p in sorted(Path(src).iterdir()):
        if "@" in p.name and p.is_dir() and (not sets or p.name in sets):
            shutil.copytree(p, dst / p.name, dirs_exist_ok=True)
            names.append(p.name)
    for root, dirs, files in os.walk(dst):
        for n in dirs + files:
            os.chmod(os.path.join(root, n), 0o755 if n in dirs else 0o644)
    return names


def doc4llm_cmds() -> dict[str, list[str]]:
    """The ways an agent starts doc4llm: `python -m`, the real console script, the PATH one."""
    cmds = {"python -m doc4llm": [sys.executable, "-m", "doc4llm"]}
    real = Path(sys.executable).parent / "doc4llm"
    if real.is_file():
        cmds["console script (venv bin)"] = [str(real)]
    on_path = shutil.which("doc4llm")
    if on_path and Path(on_path).resolve() != real.resolve():
        cmds[f"doc4llm on PATH ({on_path})"] = [on_path]
    return cmds


def du_bytes(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


PYCACHE = Path(tempfile.gettempdir()) / "doc4llm_bench_pycache"


def child_env(**kw: str) -> dict:
    """The children's environment: bytecode caching ON, in a tmp prefix (not the repo).

    Why: this sandbox sets PYTHONDONTWRITEBYTECODE=1, so every module edited since its
    last .pyc would be recompiled in every process (~100+ ms); a pip-installed doc4llm
    has its .pyc files, so that is not what users see."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    env.update(kw)
    return env
