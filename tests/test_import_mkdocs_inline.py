"""Material for MkDocs inline markup (icons, attribute lists, key caps) imports as the
built site shows it: no icon names or CSS classes in a section's words or snippet."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

from doc4llm.ingest.mkdocs_inline import rewrite_mkdocs_inline

FIXTURE = Path(__file__).parent / "fixtures" / "mkdocs_material"


def test_icons_attribute_lists_and_keys_read_as_rendered():
    src = (FIXTURE / "guide.md").read_text(encoding="utf-8")
    out = rewrite_mkdocs_inline(src)
    lines = out.split("\n")
    assert len(lines) == len(src.split("\n"))
    assert "Welcome to the guide and thanks for reading " in lines
    assert "- **Loading**" in lines
    assert "    [Learn how to load data](loading.md)" in lines
    assert "Click the **Run** button, or hit Ctrl+Enter to run the code." in lines
    assert "[Get started](start.md)" in lines
    assert "## Running the playground { #playground }" in lines  # the section scanner's anchor
    assert "## :material-x: Icons { #x }" in lines  # headings stay as written
    assert "Write `:material-check:` or `{ .md-button }` in your own pages to get these." in lines
    assert "[Link](x.md){ .md-button }" in lines  # fenced code is an example
    for plain in ("a dict {x: 1}", "{name} and {.5}", "price: 5:30: later", "a ++ b ++ c", "c++ and ++i"):
        assert rewrite_mkdocs_inline(plain) == plain


def test_imported_page_keeps_no_icon_words(tmp_path):
    docs = tmp_path / "md_docs"
    r = run_cli("import", FIXTURE, "--set", "griffe@2", "--docs-dir", docs)
    assert r.returncode == 0, r.stderr
    content = (docs / "griffe@2" / "User guide" / "docContent.md").read_text(encoding="utf-8")
    assert "material" not in content.replace("`:material-check:`", "").replace(":material-x: Icons", "")
    assert "octicons" not in content and ".lg" not in content
    r = run_cli("search", "keyboard shortcut to run the code in the playground", "--docs-dir", docs,
                "--embedder", "none", "--json")
    top = json.loads(r.stdout)["results"][0]
    assert top["heading_path"][-1] == "Running the playground"
    toc = (docs / "griffe@2" / "User guide" / "docTOC.md").read_text(encoding="utf-8")
    assert "Running the playground" in toc and "{" not in toc
    assert "Ctrl+Enter" in top["snippet"] and "++" not in top["snippet"]
