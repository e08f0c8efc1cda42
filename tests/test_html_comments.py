"""HTML comment blocks (Node.js's `<!-- YAML` version history, linter pragmas) are not
searched, embedded or quoted; fenced code keeps its comments; line numbers stay."""

from __future__ import annotations

import json

from conftest import run_cli
from growth import assert_linear

from doc4llm.corpus.comments import blank_html_comments
from doc4llm.index.build import own_text

PAGE = """# File system

Intro to the module.

## Callback API

### `fs.readFile(path[, options], callback)`

<!-- YAML
added: v0.1.29
changes:
  - version: v18.0.0
    description: Passing an invalid callback now throws zanzibarquux.
-->

Asynchronously reads the entire contents of a file.

```html
<!-- kept: an example of a comment -->
```

#### File descriptors

Reading through a file descriptor starts at the current position of the file.
"""


def test_blanks_blocks_not_code_not_inline_not_unclosed():
    out = blank_html_comments(PAGE)
    assert len(out.split("\n")) == len(PAGE.split("\n"))
    assert "zanzibarquux" not in out and "added: v0.1.29" not in out
    assert "<!-- kept: an example of a comment -->" in out
    assert "Asynchronously reads" in out
    assert blank_html_comments("a <!-- inline --> b") == "a <!-- inline --> b"
    assert blank_html_comments("<!-- never closed\ntext") == "<!-- never closed\ntext"
    assert blank_html_comments("<!-- x --> after") == "after"
    assert "zanzibarquux" not in own_text(PAGE)


def test_linear_on_many_openings():
    assert_linear(blank_html_comments, lambda n: "<!--\n" * n + "-->\n" + "<!-- a\n" * n, 12500)


def test_search_ignores_comment_text_and_finds_the_entry_itself(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "fs.md").write_text(PAGE, encoding="utf-8")
    docs = tmp_path / "md_docs"
    assert run_cli("import", src, "--set", "node@test", "--docs-dir", docs).returncode == 0
    r = run_cli("search", "zanzibarquux", "--docs-dir", docs, "--embedder", "none", "--json")
    assert r.returncode == 0, r.stderr
    assert all("zanzibarquux" not in (x.get("snippet") or "") for x in json.loads(r.stdout)["results"])
    r = run_cli("search", "fs.readFile", "--docs-dir", docs, "--embedder", "none", "--json")
    top = json.loads(r.stdout)["results"][0]
    # the entry whose own heading names it, not its sub-section that inherits the name
    assert top["heading_path"][-1] == "fs.readFile(path[, options], callback)"
    assert "YAML" not in top["snippet"]


def test_named_entry_and_own_heading_features():
    """`fs.readFile` names the entry itself; its sub-section only inherits the name."""
    from doc4llm.search.analyze import analyze
    from doc4llm.search.features import candidate_features
    from doc4llm.search.fusion import Candidate

    qa = analyze("fs.readFile", [("node@test", None)])
    assert qa.identifier_only

    def row(title: str, path: list[str]) -> dict:
        return {"title": title, "heading_path": path, "text": f"### {title}\n\nReads `fs.readFile` data.",
                "tok_title": "", "tok_path": "", "tok_body": "", "words": 20, "level": len(path),
                "content_type": "prose"}

    entry = row("fs.readFile(path[, options], callback)", ["File system", "fs.readFile(path[, options], callback)"])
    sub = row("File descriptors", [*entry["heading_path"], "File descriptors"])
    idf = {"fs_readfile": 5.0}
    fe = candidate_features(qa, Candidate(1), entry, None, None, False, "", idf)
    fs = candidate_features(qa, Candidate(2), sub, None, None, False, "", idf)
    assert fe["named_entry"] == 1.0 and fs["named_entry"] == 0.0
    assert fe["own_head"] > fs["own_head"] == 0.0
    assert fe["wheading"] == fs["wheading"]  # the whole heading path names both
    long_q = analyze("how does fs.readFile handle file descriptors", [("node@test", None)])
    assert candidate_features(long_q, Candidate(1), entry, None, None, False, "", idf)["named_entry"] == 0.0


def test_anchor_only_lines_are_invisible_text():
    """pino puts `<a id="opt-mixin"></a>` before each option's heading, at the end of the
    previous section: neither indexed there nor quoted as its snippet. An anchor right
    under its heading stays in the indexed text (it repeats the heading's words)."""
    from doc4llm.corpus.comments import is_anchor_line
    from doc4llm.index.build import own_text
    from doc4llm.search.results import best_passage

    assert is_anchor_line('<a id="opt-mixin"></a>') and is_anchor_line('<a name="x"/> <span id="y"></span>')
    assert not is_anchor_line('<a id="x">a visible link</a>') and not is_anchor_line('see <a id="x"></a>')
    section = "#### `edgeLimit` (Number)\n\nDefault: `100`\n\nLimits the edges.\n\n<a id=\"opt-mixin\"></a>\n"
    assert "mixin" not in own_text(section)
    assert "prefixing" in own_text('### Route Prefixing\n<a id="route-prefixing"></a>\n\nText.\n')
    text, _ = best_passage(section, 1, ["opt", "mixin"], [])
    assert "<a" not in text
