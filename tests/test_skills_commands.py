"""Every command the skills document runs, as written, on a copy of the bundled md_docs.

A skill's ```bash blocks hold only ready-to-run commands (templates live in ```text
blocks), so an agent that copies one gets a working command. They run from a project
folder whose md_docs/ is a copy of the bundled docs (the upstream TOC format) plus one
imported set (doc4llm's own TOC format), with no embedder, so nothing is written into
the repository and the run stays fast.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from conftest import copy_indexed, run_cli

REPO = Path(__file__).resolve().parents[1]
SKILLS = REPO / "skills"
FENCE = re.compile(r"```bash\n(.*?)```", re.S)


def documented_commands() -> list[tuple[str, str]]:
    """(file relative to skills/, command) for each line of each ```bash block."""
    out = []
    for path in sorted(SKILLS.rglob("*.md")):
        for block in FENCE.findall(path.read_text(encoding="utf-8")):
            for line in block.splitlines():
                if line.strip() and not line.lstrip().startswith("#"):
                    out.append((str(path.relative_to(SKILLS)), line.strip()))
    return out


COMMANDS = documented_commands()


def allowed_prefixes(skill_md: Path) -> list[str]:
    meta = skill_md.read_text(encoding="utf-8").split("---")[1]
    tools = re.search(r"^allowed-tools:\s*(.+)$", meta, re.M).group(1)
    return [m.rstrip(":*") for m in re.findall(r"Bash\(([^)]*)\)", tools)]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, indexed_bundled: Path) -> Path:
    root = tmp_path_factory.mktemp("project")
    copy_indexed(indexed_bundled, root / "md_docs")
    page = root / "demo.md"
    page.write_text("# Demo\n\nIntro.\n\n## Hooks\n\nUse hooks to run commands.\n\n"
                    "### Hook timeout\n\nThe default is 60 seconds.\n", encoding="utf-8")
    proc = run_cli("import", str(page), "--set", "Demo_Docs@1", cwd=root, env=_env())
    assert proc.returncode == 0, proc.stderr
    return root


def _env() -> dict[str, str]:
    return {"DOC4LLM_EMBEDDER": "none", "DOC4LLM_DOCS_DIR": None, "OPENAI_API_KEY": None,
            "TAVILY_API_KEY": None, "DOC4LLM_SESSION": None}


def run_documented(command: str, cwd: Path, **extra_env: str) -> subprocess.CompletedProcess:
    if command.startswith("doc4llm "):
        return run_cli(*shlex.split(command)[1:], cwd=cwd, env=_env())
    env = {**os.environ, "LC_ALL": "C.UTF-8", **extra_env}
    env.pop("DOC4LLM_DOCS_DIR", None)
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=30)


def test_skills_document_commands_for_every_route() -> None:
    programs = {cmd.split()[0] for _, cmd in COMMANDS}
    assert programs <= {"doc4llm", "grep", "find", "sed", "awk"}, programs
    verbs = {shlex.split(cmd)[1] for _, cmd in COMMANDS if cmd.startswith("doc4llm ")}
    assert {"where", "sets", "search", "toc", "read"} <= verbs
    strategies = {m for _, cmd in COMMANDS for m in re.findall(r"--strategy (\S+)", cmd)}
    assert {"L1", "L2", "L3.1", "L3.2"} <= strategies
    assert sum(cmd.startswith("grep ") for _, cmd in COMMANDS) >= 6


@pytest.mark.parametrize(("where", "command"), COMMANDS, ids=[f"{w}: {c[:60]}" for w, c in COMMANDS])
def test_command_is_allowed_and_runs(where: str, command: str, project: Path) -> None:
    skill = SKILLS / where.split("/")[0] / "SKILL.md"
    assert any(command.startswith(p) for p in allowed_prefixes(skill)), \
        f"{command!r} is not covered by allowed-tools of {skill.parent.name}"
    proc = run_documented(command, project)
    assert proc.returncode == 0, f"{command}\nstdout: {proc.stdout[-500:]}\nstderr: {proc.stderr[-500:]}"
    assert proc.stdout.strip(), f"{command} printed nothing"


def test_toc_grep_reads_both_toc_formats(project: Path) -> None:
    grep = next(c for _, c in COMMANDS if c.startswith("grep ") and c.endswith(' "${DOC4LLM_DOCS_DIR:-md_docs}/"'))
    for locale in ("C.UTF-8", "C"):
        out = run_documented(grep, project, LC_ALL=locale).stdout.splitlines()
        demo = [ln for ln in out if ln.startswith("md_docs/Demo_Docs@1/")]
        upstream = [ln for ln in out if ln.startswith("md_docs/Claude_Code_Docs@latest/")]
        assert any("· L9-L11 ·" in ln for ln in demo), (locale, demo)
        assert any("：https://" in ln for ln in upstream), locale
        # a hit in the URL part alone is not a heading hit
        assert not any("原文链接" in ln for ln in out)


def test_fallback_traceback_finds_the_section(project: Path) -> None:
    """The body grep's line number, fed to the awk traceback, names the enclosing heading,
    and the outline + sed read the section the CLI search reports."""
    body = next(c for _, c in COMMANDS if "--include=docContent.md" in c)
    hit = run_documented(body, project).stdout.splitlines()[0]
    line_no = int(hit.split(":")[1])
    awk = next(c for _, c in COMMANDS if c.startswith("awk "))
    awk = re.sub(r"-v n=\d+", f"-v n={line_no}", awk)
    assert run_documented(awk, project).stdout.strip().endswith("## Hook Execution Details")
    sed = next(c for _, c in COMMANDS if c.startswith("sed ") and "hooks/docContent.md" in c)
    assert run_documented(sed, project).stdout.startswith("### Step 3: Add the hook")



def test_every_flag_the_skills_mention_exists() -> None:
    """Prose and tables mention flags too (`--session NAME`, `--with-subsections`): each
    must be an option of the doc4llm command the skill drives (or of grep)."""
    import click

    from doc4llm.cli import main

    ctx = click.Context(main)
    for skill in ("md-doc-searcher", "md-doc-reader"):
        text = "\n".join(p.read_text(encoding="utf-8") for p in (SKILLS / skill).rglob("*.md"))
        verbs = set(re.findall(r"\bdoc4llm ([a-z][a-z-]+)", text)) - {"is"}  # "when doc4llm is not installed"
        known = {"--include"}  # grep's
        for verb in verbs:
            command = main.get_command(ctx, verb)
            assert command is not None, f"{skill} mentions `doc4llm {verb}`, which does not exist"
            known |= {opt for param in command.params for opt in param.opts}
        mentioned = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", text))
        assert mentioned <= known, f"{skill}: unknown flags {sorted(mentioned - known)}"
