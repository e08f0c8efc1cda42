"""HTML comment blocks (Node.js's `<!-- YAML` version history, linter pragmas) are not
searched, embedded or quoted; fenced code keeps its comments; line numbers stay."""

from __future__ import annotations

import json
import time

from conftest import run_cli

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
    text = "<!--\n" * 50000 + "-->\n" + "<!-- a\n" * 50000
    t = time.process_time()
    blank_html_comments(text)
    assert time.process_time() - t < 2.0


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
