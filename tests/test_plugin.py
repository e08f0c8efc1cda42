"""The Claude Code plugin: manifests Claude Code's validator accepts, and the MCP server
started exactly the way `.mcp.json` says, from the plugin's own directory.

The launcher (`scripts/doc4llm`) creates a venv in the plugin root on first run. Here the
venv is prepared beforehand (doc4llm from this checkout, dependencies from this test
environment, via .pth files) so that no package index is needed; the first-run install
itself is exercised up to pip, with the index switched off, to check that it fails with a
clear message and leaves stdout (JSON-RPC) untouched.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import anyio
import pytest

REPO = Path(__file__).resolve().parents[1]
PLUGIN = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
MARKET = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
SERVER = json.loads((REPO / ".mcp.json").read_text())["mcpServers"]["doc4llm"]
VERSION = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)


def expand(value: str, root: Path) -> str:
    """Claude Code's ${VAR} / ${VAR:-default} expansion in .mcp.json, for the plugin root."""
    env = {"CLAUDE_PLUGIN_ROOT": str(root)}
    return re.sub(r"\$\{(\w+)(?::-([^}]*))?\}", lambda m: env.get(m.group(1), m.group(2) or ""), value)


def test_manifests_carry_what_the_validator_asks_for() -> None:
    assert PLUGIN["name"] == "doc4llm" and re.match(r"^[a-z0-9-]+$", PLUGIN["name"])
    assert PLUGIN["version"] == VERSION
    assert len(PLUGIN["description"]) > 40 and "pip install doc4llm" not in PLUGIN["description"]
    assert PLUGIN["author"]["name"]
    entry = next(p for p in MARKET["plugins"] if p["name"] == PLUGIN["name"])
    assert entry["version"] == VERSION and entry["source"] == "./"
    assert MARKET["owner"]["name"]
    for skill in ("md-doc-searcher", "md-doc-reader"):
        assert (REPO / "skills" / skill / "SKILL.md").is_file()


def test_mcp_config_starts_from_the_plugin_root() -> None:
    assert SERVER["command"].startswith("${CLAUDE_PLUGIN_ROOT")
    # without a plugin root (this repository opened as a project) it runs from "."
    assert expand(SERVER["command"], REPO).startswith(str(REPO))
    launcher = Path(expand(SERVER["command"], REPO))
    assert launcher.is_file() and os.access(launcher, os.X_OK)
    assert SERVER["args"] == ["serve"]
    mode = subprocess.run(["git", "ls-files", "-s", str(launcher.relative_to(REPO))], cwd=REPO,
                          capture_output=True, text=True).stdout
    assert not mode or mode.startswith("100755"), "git must record the launcher as executable"


def _ready_venv(root: Path) -> Path:
    """A venv the launcher accepts as installed: doc4llm from this checkout, deps from here."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    paths = [str(REPO), *dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))]
    (site / "zz_doc4llm_test.pth").write_text("\n".join(paths) + "\n")
    with open(REPO / "pyproject.toml", "rb") as f:  # the launcher's stamp: POSIX cksum of it
        stamp = subprocess.run(["cksum"], stdin=f, capture_output=True, text=True,
                               check=True).stdout.split()[0]
    (venv / ".doc4llm-plugin-stamp").write_text(stamp + "\n")
    return venv


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in {"DOC4LLM_DOCS_DIR", "DOC4LLM_CONFIG", "VIRTUAL_ENV", "PYTHONPATH",
                        "OPENAI_API_KEY", "TAVILY_API_KEY"}}
    return {**env, "DOC4LLM_EMBEDDER": "none", **extra}


def test_server_starts_the_way_the_manifest_says(tmp_path: Path) -> None:
    venv = _ready_venv(tmp_path)
    project = tmp_path / "project"
    for page in ("Agent Skills", "Plugins reference"):
        shutil.copytree(REPO / "md_docs" / "Claude_Code_Docs@latest" / page,
                        project / "md_docs" / "Claude_Code_Docs@latest" / page)

    async def session() -> tuple[list[str], dict]:
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=expand(SERVER["command"], REPO), args=[expand(a, REPO) for a in SERVER["args"]],
            env=_env(DOC4LLM_PLUGIN_VENV=str(venv)), cwd=str(project))
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as streams, ClientSession(*streams) as s:
                await s.initialize()
                names = [t.name for t in (await s.list_tools()).tools]
                result = await s.call_tool("search_docs", {"query": "plugin manifest schema", "k": 2, "detail": True})
                return names, result.structured_content

    names, found = anyio.run(session)
    assert {"search_docs", "read_section", "get_toc"} <= set(names)
    assert found["results"][0]["page"] == "Plugins reference"
    assert Path(found["results"][0]["content_path"]).is_relative_to(project)


@pytest.mark.skipif(shutil.which("python3") is None, reason="the launcher creates its venv with python3")
def test_first_run_install_failure_is_clear_and_keeps_stdout_clean(tmp_path: Path) -> None:
    venv = tmp_path / "fresh-venv"
    proc = subprocess.run([expand(SERVER["command"], REPO), "--version"], cwd=tmp_path,
                          env=_env(DOC4LLM_PLUGIN_VENV=str(venv), PIP_NO_INDEX="1",
                                   PIP_FIND_LINKS="", PIP_INDEX_URL="http://127.0.0.1:9/simple"),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 3
    assert proc.stdout == ""
    assert "first run: installing doc4llm from" in proc.stderr
    assert "installing doc4llm failed" in proc.stderr and "pip install" in proc.stderr
    assert not (venv / ".doc4llm-plugin-stamp").exists()
    assert not Path(f"{venv}.lock").exists()
