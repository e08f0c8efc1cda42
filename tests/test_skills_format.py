"""The skills follow the Agent Skills rules, the plugin manifests parse, and
`doc4llm skills install` puts the skills where Claude Code looks for them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from conftest import copy_indexed, run_cli

import doc4llm

REPO = Path(__file__).resolve().parents[1]
SKILLS = REPO / "skills"
SKILL_NAMES = ["md-doc-searcher", "md-doc-reader"]
NAME_RULE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MACHINE_PATHS = re.compile(r"(/work/|/home/|/root/|/Users/|/tmp/|~/|C:\\|conda run)")


def split_skill(path: Path) -> tuple[dict, str]:
    text = path.read_text(encoding="utf-8")
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.S)
    assert match, f"{path} must start with a --- YAML frontmatter block ---"
    return yaml.safe_load(match.group(1)), match.group(2)


@pytest.mark.parametrize("name", SKILL_NAMES)
def test_frontmatter_follows_agent_skills_rules(name: str) -> None:
    meta, body = split_skill(SKILLS / name / "SKILL.md")
    assert meta["name"] == name
    assert NAME_RULE.match(meta["name"]) and len(meta["name"]) <= 64
    desc = meta["description"]
    assert isinstance(desc, str) and 50 < len(desc) <= 1024
    assert "Use it" in desc, "the description must say when to use the skill"
    tools = [t.strip() for t in meta["allowed-tools"].split(",")]
    assert "Bash(doc4llm:*)" in tools
    assert not any(t == "Bash" for t in tools), "Bash must be scoped, not allowed wholesale"
    assert len(body.splitlines()) < 500
    assert set(meta) <= {"name", "description", "allowed-tools"}


@pytest.mark.parametrize("path", sorted(SKILLS.rglob("*.md")), ids=lambda p: str(p.relative_to(SKILLS)))
def test_no_machine_specific_paths(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert not MACHINE_PATHS.search(text), MACHINE_PATHS.search(text)
    # the grep fallbacks name the docs root the way that works wherever the skill is installed
    assert '"${DOC4LLM_DOCS_DIR:-md_docs}' in text
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.splitlines():
            if not line.startswith("doc4llm "):
                assert not re.search(r"(?<![-{:])\bmd_docs\b", line), f"bare md_docs in: {line}"


def test_searcher_links_its_fallback_reference() -> None:
    _, body = split_skill(SKILLS / "md-doc-searcher" / "SKILL.md")
    links = re.findall(r"\]\(([^)#]+\.md)\)", body)
    assert "reference/progressive-fallback.md" in links
    for link in links:
        assert (SKILLS / "md-doc-searcher" / link).is_file(), link
    reference = (SKILLS / "md-doc-searcher" / "reference" / "progressive-fallback.md").read_text()
    for level in ("L1", "L2", "L3.1", "L3.2", "cascade"):
        assert f"`--strategy {level}`" in reference


def test_plugin_manifests() -> None:
    plugin = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    assert plugin["name"] == "doc4llm" and plugin["version"] == doc4llm.__version__
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    assert market["owner"]["name"]
    entry = next(p for p in market["plugins"] if p["name"] == plugin["name"])
    assert (REPO / entry["source"] / ".claude-plugin" / "plugin.json").is_file()
    mcp = json.loads((REPO / ".mcp.json").read_text())
    server = mcp["mcpServers"]["doc4llm"]
    # the plugin's own launcher (tests/test_plugin.py starts it), not a doc4llm on PATH
    assert [server["command"], *server["args"]] == ["${CLAUDE_PLUGIN_ROOT:-.}/scripts/doc4llm", "serve"]


def _installed(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in root.rglob("*") if p.is_file()}


def test_install_project_then_unchanged_then_force(tmp_path: Path) -> None:
    proc = run_cli("skills", "install", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["scope"] == "project"
    assert [s["status"] for s in report["skills"]] == ["installed", "installed"]
    target = tmp_path / ".claude" / "skills"
    assert _installed(target) == _installed(SKILLS)
    assert (target / "md-doc-searcher" / "SKILL.md").stat().st_mode & 0o777 == 0o644

    again = json.loads(run_cli("skills", "install", "--project", "--json", cwd=tmp_path).stdout)
    assert [s["status"] for s in again["skills"]] == ["unchanged", "unchanged"]

    edited = target / "md-doc-reader" / "SKILL.md"
    edited.write_text("local edit\n", encoding="utf-8")
    refused = run_cli("skills", "install", cwd=tmp_path)
    assert refused.returncode == 2 and "--force" in refused.stderr
    assert edited.read_text() == "local edit\n"
    forced = run_cli("skills", "install", "--force", cwd=tmp_path)
    assert forced.returncode == 0 and "updated" in forced.stdout
    assert _installed(target) == _installed(SKILLS)


def test_install_user_scope_goes_to_home(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    cwd.mkdir()
    proc = run_cli("skills", "install", "--user", cwd=cwd, env={"HOME": str(home)})
    assert proc.returncode == 0, proc.stderr
    assert (home / ".claude" / "skills" / "md-doc-searcher" / "reference" / "progressive-fallback.md").is_file()
    assert not (cwd / ".claude").exists()


def test_skills_source_falls_back_to_packaged_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wheel has no skills/ next to the package: the copy under doc4llm/skills_data is used."""
    import shutil

    from doc4llm.cli.agent_cmds import skills_source
    from doc4llm.errors import NotFoundError

    pkg = tmp_path / "site-packages" / "doc4llm"
    pkg.mkdir(parents=True)
    monkeypatch.setattr(doc4llm, "__file__", str(pkg / "__init__.py"))
    with pytest.raises(NotFoundError):
        skills_source()
    shutil.copytree(SKILLS, pkg / "skills_data")
    assert skills_source() == (pkg / "skills_data").resolve()


def _bands_in(text: str) -> set[int]:
    """Confidence thresholds a skill file states: `confidence >= N`, `>= N,`, `< N`, `N-M`."""
    found = set()
    for m in re.finditer(r"confidence (?:>= ?|< ?)(\d+)|\((?:>= ?)(\d+),|confidence (\d+)-(\d+)", text):
        nums = [int(g) for g in m.groups() if g]
        if m.group(4):  # a range N-M: its bounds are N and M+1
            nums = [nums[0], nums[1] + 1]
        found.update(nums)
    return found


def test_confidence_bands_come_from_the_code() -> None:
    """One source of truth: the abstention threshold (calibration.ABSTAIN_BELOW) and the
    score at which the top result is `[high]` (confidence.HIGH_AT) are the only bands
    the skills and the fallback reference state."""
    from doc4llm.search.calibration import ABSTAIN_BELOW
    from doc4llm.search.confidence import HIGH_AT

    bands = {ABSTAIN_BELOW, round(HIGH_AT * 100)}
    for path in (SKILLS / "md-doc-searcher" / "SKILL.md",
                 SKILLS / "md-doc-searcher" / "reference" / "progressive-fallback.md"):
        stated = _bands_in(path.read_text(encoding="utf-8"))
        assert stated, f"{path.name} states no confidence band"
        assert stated <= bands, f"{path.name} states {sorted(stated)}; the code uses {sorted(bands)}"


def test_skill_example_output_is_what_the_cli_prints(tmp_path: Path, indexed_bundled: Path) -> None:
    """The searcher's example result: same first result line (set, page, heading path,
    line range, tokens) and the confidence in the same band as the real output."""

    from doc4llm.search.calibration import ABSTAIN_BELOW
    from doc4llm.search.confidence import HIGH_AT

    _, body = split_skill(SKILLS / "md-doc-searcher" / "SKILL.md")
    example = [ln.strip() for ln in
               re.search(r"```text\n(\s*confidence .*?)```", body, re.S).group(1).splitlines()]
    command = re.search(r"```bash\n\s*(doc4llm search [^\n]+)\n\s*```", body).group(1)
    docs = copy_indexed(indexed_bundled, tmp_path / "md_docs")
    import shlex

    proc = run_cli(*shlex.split(command)[1:], "--docs-dir", docs, env={"DOC4LLM_EMBEDDER": "none"})
    assert proc.returncode == 0, proc.stderr
    real = proc.stdout.splitlines()

    def band(line: str) -> int:
        conf = int(re.match(r"confidence (\d+)/100", line).group(1))
        return 0 if conf < ABSTAIN_BELOW else 2 if conf >= HIGH_AT * 100 else 1

    assert band(example[0]) == band(real[0]), (example[0], real[0])
    assert example[1] == real[1]  # result 1: set, page, line range, tokens, heading path
