"""Shared test helpers. `from conftest import run_cli` runs the real CLI as a subprocess."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

# Corpora the tests read, all inside the repository (a fresh clone has no ../shared):
# the mdmem benchmark corpus + dev labels (tests/fixtures/mdmem) and the 82 upstream-format
# pages bundled as the repository's md_docs/ (read or copied, never written).
REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
MDMEM = FIXTURES / "mdmem"
UPSTREAM = REPO / "md_docs"

# A search that finds sections without vectors starts a detached embedding job
# (doc4llm/index/background.py). Tests search throwaway docs dirs, so by default they start
# none (a job would outlive its test and its temp dir); tests/test_background_embed.py and
# the tests that exercise the job remove this variable.
os.environ.setdefault("DOC4LLM_BACKGROUND_EMBED", "0")


def run_cli(*args: str, cwd: str | Path | None = None, env: dict | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess:
    """Run `python -m doc4llm ARGS...`; returns the CompletedProcess (text, not checked).

    `env` entries are added to the current environment (None values remove a variable).
    """
    full_env = dict(os.environ)
    full_env.pop("DOC4LLM_DOCS_DIR", None)
    for key, value in (env or {}).items():
        if value is None:
            full_env.pop(key, None)
        else:
            full_env[key] = value
    return subprocess.run([sys.executable, "-m", "doc4llm", *map(str, args)], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write `{relative path: text}` under `root` (folders made); returns `root`."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def import_tree(files: dict[str, str], src: Path, docs: Path, set_name: str) -> Path:
    """Write the files under `src` and import them as `set_name` with the real CLI; the docs dir."""
    write_tree(src, files)
    proc = run_cli("import", src, "--set", set_name, "--docs-dir", docs)
    assert proc.returncode == 0, proc.stderr
    return docs


@pytest.fixture(scope="session")
def indexed_bundled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled md_docs sets copied once per session with their lexical index built
    once (~1 s of CPU); tests take their own copy with `copy_indexed`, never this one."""
    from doc4llm.index.service import build_index

    docs = tmp_path_factory.mktemp("bundled") / "md_docs"
    for set_dir in UPSTREAM.iterdir():
        if "@" in set_dir.name and set_dir.is_dir():
            shutil.copytree(set_dir, docs / set_dir.name)
    build_index(docs, vectors=False)
    return docs


def copy_indexed(indexed: Path, dest: Path) -> Path:
    """A private copy of `indexed_bundled` at `dest`, index included: copytree keeps the
    files' times, so the copied index is current and a search reuses it (82 pages
    unchanged) instead of indexing again."""
    shutil.copytree(indexed, dest)
    return dest


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # the test output stays clean
        pass


@contextlib.contextmanager
def serve_directory(root: Path):
    """A static HTTP server for `root` on 127.0.0.1 (a free port); yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()

