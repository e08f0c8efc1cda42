"""The built wheel works on its own: skills inside it, commands of the installed skills
runnable against a docs dir elsewhere.

The wheel is built from a copy of the sources (no stale build/ can leak into it) and
installed with --no-deps into a fresh venv; the dependencies come from this test run's
environment through a .pth file, so the test needs no package index and stays fast.
doc4llm itself is imported from the wheel (checked), never from the checkout.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from conftest import copy_indexed

REPO = Path(__file__).resolve().parents[1]
BUILD_INPUTS = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "doc4llm", "skills")
FENCE = re.compile(r"```bash\n(.*?)```", re.S)


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    assert proc.returncode == 0, f"{cmd}\nstdout: {proc.stdout[-800:]}\nstderr: {proc.stderr[-1500:]}"
    return proc


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the doc4llm wheel installed (deps borrowed from this env)."""
    root = tmp_path_factory.mktemp("wheel")
    src = root / "src"
    for name in BUILD_INPUTS:
        item = REPO / name
        if item.is_dir():
            shutil.copytree(item, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy2(item, src / name)
    dist = root / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
          "-w", str(dist), str(src)])
    wheel = next(dist.glob("doc4llm-*.whl"))
    env_dir = root / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)])
    python = env_dir / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
          "--no-index", str(wheel)])
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
                .stdout.strip())
    paths = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (site / "zz_borrowed_deps.pth").write_text("\n".join(paths) + "\n")
    return env_dir


def _env(venv: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in {"DOC4LLM_DOCS_DIR", "DOC4LLM_CONFIG", "PYTHONPATH", "OPENAI_API_KEY",
                        "TAVILY_API_KEY", "DOC4LLM_SESSION", "VIRTUAL_ENV"}}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return {**env, "DOC4LLM_EMBEDDER": "none", "LC_ALL": "C.UTF-8", **extra}


def test_wheel_ships_the_skills_and_runs_from_its_own_install(venv: Path, tmp_path: Path) -> None:
    out = _run([str(venv / "bin" / "python"), "-c",
                "import doc4llm, pathlib; print(pathlib.Path(doc4llm.__file__).resolve())"],
               env=_env(venv), cwd=tmp_path).stdout.strip()
    assert Path(out).is_relative_to(venv.resolve()), f"doc4llm imported from {out}, not the wheel"
    shipped = sorted(p.relative_to(Path(out).parent / "skills_data").as_posix()
                     for p in (Path(out).parent / "skills_data").rglob("*.md"))
    assert shipped == sorted(p.relative_to(REPO / "skills").as_posix()
                             for p in (REPO / "skills").rglob("*.md"))


def test_installed_skills_run_against_docs_elsewhere(venv: Path, tmp_path: Path, indexed_bundled: Path) -> None:
    """`doc4llm skills install --project` in an empty project, then every command the
    installed skills document runs with exit 0 against a docs dir outside the project."""
    project = tmp_path / "project"
    project.mkdir()
    docs = copy_indexed(indexed_bundled, tmp_path / "elsewhere" / "docs")
    proc = _run([str(venv / "bin" / "doc4llm"), "skills", "install", "--project"], cwd=project,
                env=_env(venv))
    assert len(re.findall(r"^installed ", proc.stdout, re.M)) == 2, proc.stdout
    installed = project / ".claude" / "skills"
    commands = [line.strip() for path in sorted(installed.rglob("*.md"))
                for block in FENCE.findall(path.read_text(encoding="utf-8"))
                for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert len(commands) >= 20 and any(c.startswith("doc4llm search") for c in commands)
    env = _env(venv, DOC4LLM_DOCS_DIR=str(docs))
    for command in commands:
        proc = subprocess.run(["bash", "-c", command], cwd=project, env=env, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, f"{command}\nstdout: {proc.stdout[-400:]}\nstderr: {proc.stderr[-800:]}"
        assert proc.stdout.strip(), f"{command} printed nothing"
    where = _run([str(venv / "bin" / "doc4llm"), "where"], cwd=project, env=env).stdout.strip()
    assert Path(where) == docs.resolve()
    assert not (project / "md_docs").exists()
