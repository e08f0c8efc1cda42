"""A page without a title of its own (no front matter title, no heading: MkDocs pages whose
name lives in the nav) is named by its file, and its opening lines have no heading. Search,
read and toc say `(page opening, no heading)` there instead of showing the file name as if
it were one (agents cited `type_adapter` as the heading of such an opening)."""

from __future__ import annotations

import json

from conftest import run_cli

from doc4llm.corpus.model import NO_HEADING
from doc4llm.ingest.importer import titled_page

UNTITLED = """You may have types that are not models that you want to validate data against.
A frobnicator adapter validates a list of widgets without a wrapper model.

## Parsing data into a specified type

Use the frobnicator adapter's validate method on the raw widget list.
"""

TITLED = """# Widget basics

A widget is the frobnicator's unit of work.

## Widget fields

Fields of a widget.
"""

FRONT = """---
title: Gadget guide
---

Gadgets hold widgets.
"""


def _docs(tmp_path):
    src = tmp_path / "src"
    (src / "concepts").mkdir(parents=True)
    (src / "concepts" / "frob_adapter.md").write_text(UNTITLED)
    (src / "widgets.md").write_text(TITLED)
    (src / "gadgets.md").write_text(FRONT)
    docs = tmp_path / "docs"
    r = run_cli("import", src, "--set", "demo@1", "--docs-dir", docs, env={"DOC4LLM_EMBEDDER": "none"})
    assert r.returncode == 0, r.stderr
    return docs


def test_titled_page_tells_a_file_name_from_a_title():
    assert titled_page(UNTITLED, "frob_adapter")[0::2] == ("frob_adapter", False)
    assert titled_page(TITLED, "widgets")[0::2] == ("Widget basics", True)
    assert titled_page(FRONT, "gadgets")[0::2] == ("Gadget guide", True)


def test_search_read_and_toc_name_a_headingless_opening(tmp_path):
    docs = _docs(tmp_path)
    env = {"DOC4LLM_EMBEDDER": "none"}
    r = run_cli("search", "frobnicator adapter validates a list of widgets without a wrapper model",
                "--docs-dir", docs, "--json", env=env)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)["results"]
    opening = next(x for x in res if x["source"] == "concepts/frob_adapter.md" and x["lines"][0] == 1)
    assert opening["no_heading"] is True
    assert opening["heading_path"] == ["frob_adapter"]  # the contract's path is kept
    assert not any(x.get("no_heading") for x in res if x is not opening)

    text = run_cli("search", "frobnicator adapter validates a list of widgets without a wrapper model",
                   "--docs-dir", docs, env=env).stdout
    line = next(ln for ln in text.splitlines() if "concepts/frob_adapter.md:1-" in ln)
    assert line.endswith(NO_HEADING) and "frob_adapter" not in line.split("  ", 1)[1]

    toc = run_cli("toc", "concepts/frob_adapter.md", "--docs-dir", docs, env=env).stdout.splitlines()
    assert toc[2].startswith(NO_HEADING) and toc[3].strip().startswith("Parsing data into a specified type")
    read = run_cli("read", "concepts/frob_adapter.md", "--lines", "5:6", "--docs-dir", docs, env=env)
    assert read.stdout.startswith(f"[demo@1 / {NO_HEADING}  ")
    data = json.loads(run_cli("read", "concepts/frob_adapter.md", "--lines", "5:6", "--docs-dir", docs,
                              "--json", env=env).stdout)
    assert data["no_heading"] is True
    # grep names it the same way
    grep = run_cli("grep", "frobnicator adapter validates", "--docs-dir", docs, env=env).stdout
    assert f"concepts/frob_adapter.md  {NO_HEADING}  L1-" in grep
    # the opening can be read by the name search and toc give it
    named = json.loads(run_cli("read", "concepts/frob_adapter.md", "--section", NO_HEADING, "--docs-dir", docs,
                               "--json", env=env).stdout)
    assert named["lines"][0] == 1 and named["no_heading"] is True
    # a section below the opening keeps its heading
    sub = json.loads(run_cli("read", "concepts/frob_adapter.md", "--section", "Parsing data into a specified type",
                             "--docs-dir", docs, "--json", env=env).stdout)
    assert "no_heading" not in sub


def test_a_page_with_a_title_keeps_its_opening_heading(tmp_path):
    docs = _docs(tmp_path)
    env = {"DOC4LLM_EMBEDDER": "none"}
    for page, title in (("widgets.md", "Widget basics"), ("gadgets.md", "Gadget guide")):
        toc = run_cli("toc", page, "--docs-dir", docs, env=env).stdout.splitlines()
        assert toc[2].startswith(title), toc
        data = json.loads(run_cli("read", page, "--lines", "5:6", "--docs-dir", docs, "--json", env=env).stdout)
        assert "no_heading" not in data and data["heading_path"] == [title]


def test_mcp_toc_and_read_say_the_opening_has_no_heading(tmp_path):
    """Over the real MCP client: get_toc marks the entry (its address stays usable) and
    read_section's result carries `no_heading`. Both take the page by its source file, as
    search_docs's read hint names it (they refused any '/' before); a source no page
    records is a plain not-found, a '..' still refused."""
    import os
    import sys

    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    docs = _docs(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "DOC4LLM_DOCS_DIR"} | {"DOC4LLM_EMBEDDER": "none"}
    params = StdioServerParameters(command=sys.executable, env=env,
                                   args=["-m", "doc4llm", "serve", "--docs-dir", str(docs)])

    async def calls() -> tuple[dict, dict]:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as streams, ClientSession(*streams) as session:
                await session.initialize()
                toc = await session.call_tool("get_toc", {"page": "concepts/frob_adapter.md"})
                read = await session.call_tool("read_section", {"page": "concepts/frob_adapter.md", "lines": "5:6"})
                assert not toc.is_error and not read.is_error, (toc.content, read.content)
                missing = await session.call_tool("read_section", {"page": "concepts/nope.md"})
                assert missing.is_error and "no page whose source file is 'concepts/nope.md'" in missing.content[0].text
                up = await session.call_tool("read_section", {"page": "../concepts/frob_adapter.md"})
                assert up.is_error and "refused" in up.content[0].text
                return toc.structured_content, read.structured_content

    toc, read = anyio.run(calls)
    first, second = toc["sections"][:2]
    assert first["no_heading"] is True and first["address"] == "frob_adapter"
    assert "no_heading" not in second
    assert read["no_heading"] is True
