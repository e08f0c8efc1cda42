"""docTOC.md: our format round-trips; the upstream crawler's format is read."""

from __future__ import annotations

import re
import shutil

import pytest
from conftest import UPSTREAM

from doc4llm.corpus.model import list_sets
from doc4llm.corpus.sections import PREAMBLE, parse_page
from doc4llm.corpus.toc import parse_toc, render_toc
from doc4llm.corpus.writer import SetWriter
from doc4llm.reader import get_toc

BODY = """Intro before any heading.

## Install: the `pip` way

text

### From source · fast

#### Deep

##### Deeper still

## Install: the `pip` way

again
"""


def test_our_format_round_trips(tmp_path):
    writer = SetWriter(tmp_path, "Rt@1", origin="test")
    folder = writer.write_page("Round Trip", BODY, source="https://ex.com/rt", key="rt",
                               url="https://ex.com/rt").folder
    page_dir = tmp_path / "Rt@1" / folder
    content = (page_dir / "docContent.md").read_text()
    toc = (page_dir / "docTOC.md").read_text()
    parsed = parse_page(content)
    title, source, entries = parse_toc(toc)
    assert (title, source) == ("Round Trip", "https://ex.com/rt")
    assert len(entries) == len(parsed.sections)
    for entry, sec in zip(entries, parsed.sections, strict=True):
        assert entry.title == sec.title
        assert (entry.start, entry.end, entry.tokens) == (sec.start, sec.end, sec.tokens)
        assert entry.level == sec.level
    # anchors are unique and match the section anchors
    urls = [e.url for e in entries if e.level]
    assert urls[1] == "https://ex.com/rt#install-the-pip-way"
    assert urls[-1] == "https://ex.com/rt#install-the-pip-way-1"
    # every line range in the TOC is the section's own text in docContent.md
    lines = content.splitlines()
    for entry in entries:
        if entry.level and entry.level > 1:
            assert lines[entry.start - 1].lstrip("#").strip().startswith(entry.title.split(":")[0])
    # greppable: one line per heading, never needs splitting on ':'
    assert re.search(r"^##### 1\.1\.1\.1\. Deeper still · L\d+-L\d+ · ~\d+ tok · https://ex\.com/rt#deeper-still$",
                     toc, re.M)


def test_render_without_url_and_parse_back():
    page = parse_page("# T\n\n> **Source**: docs/a.md\n\n---\n\npre\n\n# T\n\n## A\n")
    toc = render_toc("T", "docs/a.md", page.sections, None, page.line_count)
    title, source, entries = parse_toc(toc)
    assert (title, source) == ("T", "docs/a.md")
    assert [(e.title, e.level, e.url) for e in entries] == [(PREAMBLE, 0, None), ("T", 1, None), ("A", 2, None)]


UPSTREAM_TOC = """# Config：overview · part

原文链接: https://x.dev/config

提取的锚点数量: 5

## 0.1. Before：https://x.dev/config#before

## 1. Options: the file：https://x.dev/config#options

### 1.1. Sub：https://x.dev/config#sub

- 1.1.1.1.1. Deep one：https://x.dev/config#deep-one
  - Deeper：https://x.dev/config#deeper
"""


def test_upstream_format_is_read():
    title, source, entries = parse_toc(UPSTREAM_TOC)
    assert title == "Config：overview · part"
    assert source == "https://x.dev/config"
    assert [(e.title, e.level, e.url) for e in entries] == [
        ("Before", 2, "https://x.dev/config#before"),
        ("Options: the file", 2, "https://x.dev/config#options"),
        ("Sub", 3, "https://x.dev/config#sub"),
        ("Deep one", 5, "https://x.dev/config#deep-one"),
        ("Deeper", 5, "https://x.dev/config#deeper"),
    ]


@pytest.mark.parametrize("toc_path", sorted(UPSTREAM.glob("*/*/docTOC.md")), ids=lambda p: p.parent.name)
def test_every_upstream_toc_parses_fully(toc_path):
    text = toc_path.read_text()
    title, source, entries = parse_toc(text)
    count = int(re.search(r"提取的锚点数量[:：]\s*(\d+)", text).group(1))
    assert title and source.startswith("https://")
    assert len(entries) == count
    assert all(e.url and e.url.startswith(source.split("#")[0]) for e in entries)


def test_upstream_urls_attach_to_sections():
    page = next(p for s in list_sets(UPSTREAM) for p in s.pages() if p.name == "Hooks reference")
    urls = [page.url_for(s) for s in page.sections()]
    config = [page.url_for(s) for s in page.sections() if s.title == "Configuration"]
    # the upstream TOC's own anchors win (it numbers duplicates from -2)
    assert config == ["https://code.claude.com/docs/en/hooks#configuration",
                      "https://code.claude.com/docs/en/hooks#configuration-2"]
    assert sum(u is not None for u in urls) >= len(urls) - 1


def test_page_without_toc_derives_it_from_content(tmp_path):
    src = UPSTREAM / "Claude_Code_Docs@latest"
    no_toc = [p for p in src.iterdir() if p.is_dir() and not (p / "docTOC.md").exists()]
    assert len(no_toc) == 1 and "·" in no_toc[0].name
    dest = tmp_path / "Claude_Code_Docs@latest" / no_toc[0].name
    shutil.copytree(no_toc[0], dest)
    toc = get_toc(tmp_path, no_toc[0].name)
    assert toc["toc_path"] is None
    assert toc["title"].startswith("claude-code/CHANGELOG.md at main")
    assert toc["source"] == "https://code.claude.com/docs/en/changelog"
    assert toc["sections"][0]["level"] == 1
    lines = (dest / "docContent.md").read_text().splitlines()
    for sec in toc["sections"]:
        if sec["level"]:
            assert lines[sec["lines"][0] - 1].lstrip().startswith("#")


def test_explicit_anchor_ids_give_clean_titles_and_urls(tmp_path):
    writer = SetWriter(tmp_path, "Ex@1", origin="test")
    writer.write_page("Anchors", "## Set up the hooks {#setup-hooks}\n\ntext\n\n## Plain\n",
                      source="https://ex.com/a", key="a", url="https://ex.com/a")
    toc = (tmp_path / "Ex@1" / "Anchors" / "docTOC.md").read_text()
    assert "## 1. Set up the hooks · L" in toc and "{#" not in toc
    assert "https://ex.com/a#setup-hooks" in toc and "https://ex.com/a#plain" in toc
    data = get_toc(tmp_path, "Anchors")
    urls = {s["title"]: s["url"] for s in data["sections"]}
    assert urls["Set up the hooks"] == "https://ex.com/a#setup-hooks"


def test_plain_upstream_source_line_in_content():
    page = parse_page("# Share\n\n原文链接: https://opencode.ai/docs/share\n\n转换失败，请查看原网页。\n")
    assert page.source == "https://opencode.ai/docs/share"
    assert page.title == "Share"


def test_numbering_follows_the_heading_tree():
    page = parse_page("# FM\n\n> **Source**: x\n\n---\n\n## Pre\n\n# Other\n\n## Sub\n\n#### Deep\n\n# Third\n")
    toc = render_toc("FM", "x", page.sections, None, page.line_count)
    numbered = [ln.split(" · ")[0] for ln in toc.splitlines() if ln.startswith(("#", "-")) and " · L" in ln]
    assert numbered == ["- FM (page intro)", "## 1. Pre", "# 2. Other", "## 2.1. Sub", "#### 2.1.1. Deep",
                        "# 3. Third"]
    without_h1 = parse_page("## A\n\n### B\n\n## C\n")
    toc = render_toc("X", None, without_h1.sections, None, without_h1.line_count)
    assert [ln.split(" · ")[0] for ln in toc.splitlines()[4:]] == ["## 1. A", "### 1.1. B", "## 2. C"]
