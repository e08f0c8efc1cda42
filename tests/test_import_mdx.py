"""MDX pages (Docusaurus, Nextra, Mintlify...) import as markdown: ESM statements and
component tags out, their prose and code kept, line for line."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli
from growth import assert_linear

from doc4llm.ingest.mdx_blocks import rewrite_mdx

FIXTURE = Path(__file__).parent / "fixtures" / "mdx"


def test_rewrite_keeps_prose_and_code_and_line_count():
    src = (FIXTURE / "intro.mdx").read_text(encoding="utf-8")
    out = rewrite_mdx(src)
    assert len(out.split("\n")) == len(src.split("\n"))
    assert "import Tabs" not in out and "authors" not in out and "hidden editor note" not in out
    assert "<TabItem" not in out and "</Tabs>" not in out and "<Note>" not in out
    assert "**npm**" in out and "**Yarn**" in out and "**Node version**" in out
    assert "npm install widgetry" in out and "thirty seconds" in out
    theming = rewrite_mdx((FIXTURE / "guides" / "theming.mdx").read_text(encoding="utf-8"))
    assert "export default function App()" in theming  # inside a fence: code, untouched
    assert "<Steps>" not in theming and "theme.palette" in theming


def test_lower_case_html_and_inline_jsx_stay():
    text = "<details>\n<summary>More</summary>\nBody with <Kbd>Ctrl</Kbd> keys.\n</details>"
    assert rewrite_mdx(text) == text


def test_hostile_tag_lines_are_linear():
    def page(n: int) -> str:  # n = 10000: 30k-attribute tag lines and a 20k-line open export
        line = "<A" + " x" * (3 * n) + " <" * (3 * n // 10)
        return "\n".join([line] * 5 + ["export const a = {"] + ["{"] * (2 * n))

    assert_linear(rewrite_mdx, page, 2500)


def test_import_and_search_an_mdx_folder(tmp_path):
    docs = tmp_path / "md_docs"
    r = run_cli("import", FIXTURE, "--set", "Widgetry@1", "--docs-dir", docs, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counts"]["created"] == 2
    page = docs / "Widgetry@1" / "Getting started" / "docContent.md"
    content = page.read_text(encoding="utf-8")
    assert "import TabItem" not in content and "**Yarn**" in content
    r = run_cli("search", "minimum Node version for widgetry", "--docs-dir", docs, "--embedder", "none",
                "--json")
    assert r.returncode == 0, r.stderr
    top = json.loads(r.stdout)["results"][0]
    assert top["heading_path"][-1] == "Install" and top["source"].endswith("intro.mdx")
