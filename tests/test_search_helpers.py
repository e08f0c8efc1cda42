"""Helpers shared by the search/index/eval tests (no tests here).

Doc sets are built in tmp dirs from the real corpora: the mdmem benchmark corpus and a
few pages of the upstream Claude Code / OpenCode docs. Embedding is slow on the test
machine, so everything runs with DOC4LLM_EMBEDDER=none unless a test says otherwise.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import MDMEM, run_cli

from doc4llm.ingest.importer import import_path

MDMEM_SET = "mdmem@dev"
REPO_DOCS = Path(__file__).resolve().parents[1] / "md_docs"
CLAUDE = "Claude_Code_Docs@latest"
OPENCODE = "OpenCode_Docs@latest"
UPSTREAM_PAGES = {
    CLAUDE: ["Troubleshooting", "Get started with Claude Code hooks", "Model configuration"],
    OPENCODE: ["Troubleshooting", "Plugins", "Models", "Keybinds"],
}
NO_EMBED = {"DOC4LLM_EMBEDDER": "none"}


def make_mdmem(docs_dir: Path, set_name: str = MDMEM_SET) -> Path:
    """Import the mdmem corpus into `docs_dir` as one doc set."""
    import_path(MDMEM / "corpus", docs_dir, set_name)
    return docs_dir


def make_upstream(docs_dir: Path) -> Path:
    """Copy a few real upstream pages of both sets (never writes into the repo)."""
    for set_name, pages in UPSTREAM_PAGES.items():
        for page in pages:
            shutil.copytree(REPO_DOCS / set_name / page, docs_dir / set_name / page)
    return docs_dir


def search_json(docs_dir: Path, query: str, *args: str, env: dict | None = None) -> dict:
    """`doc4llm search --json` through the real CLI; asserts exit 0 and JSON on stdout."""
    proc = run_cli("search", "--docs-dir", docs_dir, "--json", *args, "--", query, env={**NO_EMBED, **(env or {})})
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout)


def lines_of(result: dict) -> list[str]:
    """The docContent.md lines a result points at."""
    text = Path(result["content_path"]).resolve().read_text(encoding="utf-8").split("\n")
    a, b = result["lines"]
    return text[a - 1 : b]
