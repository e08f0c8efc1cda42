"""Done-when checks on the real corpora: the mdmem benchmark and the 82 upstream pages."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from conftest import MDMEM, UPSTREAM, run_cli

from doc4llm.corpus.model import list_sets
from doc4llm.corpus.sections import PREAMBLE
from doc4llm.reader import find_section, get_toc, read_section


def expected_paths() -> list[str]:
    dev = json.loads((MDMEM / "queries_dev.json").read_text())["dev"]
    out: set[str] = set()
    for queries in dev.values():
        for q in queries:
            if q.get("expected"):
                out.add(q["expected"])
            out.update((q.get("also_valid") or {}).keys())
    return sorted(out)


@pytest.fixture(scope="module")
def mdmem_docs(tmp_path_factory) -> Path:
    docs = tmp_path_factory.mktemp("mdmem") / "md_docs"
    proc = run_cli("import", MDMEM / "corpus", "--set", "Mdmem@dev", "--docs-dir", docs)
    assert proc.returncode == 0, proc.stderr
    return docs


def _heading(line: str) -> re.Match | None:
    return re.match(r"^(#{1,6})\s+(.*?)\s*$", line)


def original_section(file: Path, path: list[str]) -> list[str]:
    """The section's own lines in the original file, found without doc4llm's parser:
    each path component is the next heading with that title; the section ends at the next
    heading line (`##`+ anywhere, `#` outside fences; the corpus's fenced `#` lines are
    level-1 shell comments)."""
    lines = file.read_text().splitlines()
    in_fence, heads = False, []
    for i, line in enumerate(lines):
        if line.startswith("```"):
            in_fence = not in_fence
        m = _heading(line)
        if m and (len(m.group(1)) >= 2 or not in_fence):
            heads.append(i)
    if path == [PREAMBLE]:
        start = 0
        if lines[0] == "---":
            start = lines.index("---", 1) + 1
        return _trim(lines[start : heads[0]])
    pos = -1
    for part in path:
        pos = next(i for i in heads if i > pos and _heading(lines[i]).group(2) == part)
    end = next((i for i in heads if i > pos), len(lines))
    return _trim(lines[pos:end])


def _trim(lines: list[str]) -> list[str]:
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


# one per file (and each path form) goes through the subprocess CLI
VIA_CLI = {
    "Changelog > 2.1.0 > Fixed", "Deployment Guide > Kubernetes", "Orbit Gateway",
    "Helios Configuration Reference > Environment Variables > Storage",
    "Ingest Pipeline Architecture > Stages > Deduplicator", "configuration.md::[Overview / Preamble]",
    "Troubleshooting > Slow Queries After Upgrade", "markdown-memory", "orbit.md::[Overview / Preamble]",
}


def test_cli_subset_is_in_the_labels():
    assert VIA_CLI <= set(expected_paths())


@pytest.mark.parametrize("expected", expected_paths())
def test_every_expected_mdmem_section_reads_its_own_text(mdmem_docs, expected):
    meta = yaml.safe_load((mdmem_docs / "Mdmem@dev" / "doc4llm-set.yaml").read_text())
    by_file = {Path(r["source"]).name: r for r in meta["pages"].values()}
    by_title = {r["folder"]: r for r in meta["pages"].values()}
    if "::" in expected:
        file_name, section = expected.split("::")
        record = by_file[file_name]
    else:
        section = expected
        record = by_title[expected.split(" > ")[0]]
    if expected in VIA_CLI:
        proc = run_cli("read", record["folder"], "--section", section, "--docs-dir", mdmem_docs, "--json")
        assert proc.returncode == 0, proc.stderr
        data = json.loads(proc.stdout)
    else:  # the same library call, in-process for speed
        data = read_section(mdmem_docs, record["folder"], section=section)
    assert data["heading_path"] == section.split(" > ")
    got = data["text"].splitlines()
    want = original_section(MDMEM / "corpus" / record["source"], section.split(" > "))
    if data["lines"][0] == 1:  # the page's header H1: the source line and rule sit in between
        got = [ln for ln in got if not ln.startswith("> **Source**:") and ln != "---"]
        assert [ln for ln in got if ln.strip()] == [ln for ln in want if ln.strip()]
    else:
        assert got == want


def test_troubleshooting_unclosed_fence_sections(mdmem_docs):
    data = read_section(mdmem_docs, "Troubleshooting", section="Out Of Memory Kills")
    assert "# list the largest recent batches" in data["text"]
    assert "Slow Queries" not in data["text"]
    toc = get_toc(mdmem_docs, "Troubleshooting")
    titles = [s["title"] for s in toc["sections"]]
    assert "Slow Queries After Upgrade" in titles and "list the largest recent batches" not in titles


def upstream_pages():
    return [p for s in list_sets(UPSTREAM) for p in s.pages()]


def test_toc_and_read_work_on_every_upstream_page():
    pages = upstream_pages()
    assert len(pages) == 82
    names = {p.name for p in pages}
    assert any("·" in n for n in names)
    n_sections = 0
    for page in pages:
        set_name = page.doc_set.name
        toc = get_toc(UPSTREAM, page.name, set_name)
        lines = page.lines()
        assert toc["sections"], page.name
        assert toc["title"] and toc["source"].startswith("https://")
        whole = read_section(UPSTREAM, page.name, set_name=set_name)
        assert whole["lines"][0] == 1 and whole["text"].startswith("# ")
        for k, sec in enumerate(toc["sections"]):
            a, b = sec["lines"]
            # every address finds its own section; the full read path runs on a sample
            assert find_section(page, sec["address"]).index == k, (page.name, sec["address"])
            if k in (0, len(toc["sections"]) - 1) or k % 10 == 5:
                got = read_section(UPSTREAM, page.name, set_name=set_name, section=sec["address"])
                assert got["lines"] == [a, b], (page.name, sec["address"])
                assert got["text"] == "\n".join(lines[a - 1 : b])
            if sec["level"]:
                assert lines[a - 1].lstrip().startswith("#"), (page.name, sec["address"])
            n_sections += 1
    assert n_sections > 1500


@pytest.mark.parametrize("page", [
    "Hooks reference",
    "claude-codeCHANGELOG.md at main · anthropicsclaude-code · GitHub",
    "Troubleshooting",
])
def test_upstream_pages_via_cli(page):
    args = ("--docs-dir", UPSTREAM, "--json")
    if page == "Troubleshooting":  # exists in both sets
        amb = run_cli("toc", page, *args)
        assert amb.returncode == 1 and len(json.loads(amb.stdout)["candidates"]) == 2
        args = (*args, "--set", "OpenCode_Docs@latest")
    toc = run_cli("toc", page, *args)
    assert toc.returncode == 0, toc.stderr
    data = json.loads(toc.stdout)
    last = data["sections"][-1]
    read = run_cli("read", page, "--section", last["address"], *args)
    assert read.returncode == 0, read.stderr
    got = json.loads(read.stdout)
    assert got["lines"] == last["lines"] and got["heading_path"] == last["heading_path"]
    if page == "Hooks reference":
        cfg = run_cli("read", page, "--section", "Configuration > Structure", *args)
        out = json.loads(cfg.stdout)
        assert out["url"] == "https://code.claude.com/docs/en/hooks#structure"
        assert out["text"].startswith("### Structure")


def test_folder_name_stands_in_for_a_different_h1():
    # folder "Claude Code GitLab CICD" (the '/' stripped), H1 "Claude Code GitLab CI/CD"
    for query in ("Claude Code GitLab CICD > How it works", "claude code gitlab ci/cd > how it works"):
        data = read_section(UPSTREAM, "Claude Code GitLab CICD", section=query)
        assert data["heading_path"] == ["Claude Code GitLab CI/CD", "How it works"]
