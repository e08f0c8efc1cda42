"""MyST pages (Sphinx sites written in markdown: pip, Jupyter Book) import as markdown:
prose directives become quotes, code directives fences, line for line."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

from doc4llm.ingest.myst_blocks import rewrite_myst_blocks

FIXTURE = Path(__file__).parent / "fixtures" / "myst"


def test_rewrite_keeps_lines_and_turns_prose_directives_into_quotes():
    src = (FIXTURE / "caching.md").read_text(encoding="utf-8")
    out = rewrite_myst_blocks(src)
    lines = out.split("\n")
    assert len(lines) == len(src.split("\n"))
    assert "> **New in 6.0**" in lines and "> **Changed in 20.0**" in lines
    assert "> pip now caches wheels when building from an immutable Git reference." in lines
    assert "> **Note**" in lines and ":class: tip" not in out
    assert "> ```python" in lines and "> # not a heading: code inside the note" in lines
    assert "> **Unix**" in lines and "{tab-set}" not in out and "{tab-item}" not in out
    assert "```python" in lines and ":caption: in a script" not in out  # code-block: a fence
    assert "```{pip-cli}" in lines  # a site's own directive stays as written
    assert rewrite_myst_blocks("plain text\n```python\nx = 1\n```\n") == "plain text\n```python\nx = 1\n```\n"
    assert rewrite_myst_blocks("```{doctest}\n>>> 1 + 1\n2\n```\n") == "```pycon\n>>> 1 + 1\n2\n```\n"
    assert rewrite_myst_blocks("```{rubric} Footnotes\n```\n") == "> **Footnotes**\n\n"


def test_imported_myst_page_has_prose_sections_and_targets_stay_out_of_the_index(tmp_path):
    docs = tmp_path / "md_docs"
    r = run_cli("import", FIXTURE, "--set", "pip@23", "--docs-dir", docs)
    assert r.returncode == 0, r.stderr
    toc = (docs / "pip@23" / "Caching" / "docTOC.md").read_text(encoding="utf-8")
    assert "not a heading" not in toc and "Avoiding caching" in toc
    r = run_cli("search", "wheel cache keyed by the requirement hash", "--docs-dir", docs,
                "--embedder", "none", "--json")
    top = json.loads(r.stdout)["results"][0]
    assert top["heading_path"][-1] == "Locally built wheels"
    assert top["content_type"] == "prose"  # the note is text, not a code block
    assert "avoiding" not in top["snippet"].casefold()
    r = run_cli("search", "avoiding caching", "--docs-dir", docs, "--embedder", "none", "--json")
    assert json.loads(r.stdout)["results"][0]["heading_path"][-1] == "Avoiding caching"


def test_hostile_nesting_stays_linear():
    from growth import assert_linear

    def page(n: int) -> str:
        return "```{note}\n" * n + "text\n" + "```\n" * n

    assert_linear(rewrite_myst_blocks, page, 5000)
    text = page(20_000)
    out = rewrite_myst_blocks(text)
    assert len(out) < 4 * len(text) and out.count("\n") == text.count("\n")


def test_roles_read_as_the_built_site_shows_them():
    from doc4llm.ingest.myst_roles import rewrite_myst_roles

    src = ("Use {func}`structlog.configure` with {py:func}`~structlog.contextvars.merge_contextvars`.\n"
           "See {doc}`the API <api>`, {ref}`stdlib-config`, {pep}`8` and {term}`bound loggers <bound-logger>`.\n"
           "Written as ``{func}`x` `` it stays an example; so does ```{func}`y` ``` in a fence:\n"
           "```md\n{func}`z`\n```\n"
           "{class}`!Foo` {kbd}`Ctrl+C` {func}`unclosed")
    out = rewrite_myst_roles(src)
    assert out.split("\n") == [
        "Use `structlog.configure` with `structlog.contextvars.merge_contextvars`.",
        "See the API, stdlib-config, PEP 8 and bound loggers.",
        "Written as ``{func}`x` `` it stays an example; so does ```{func}`y` ``` in a fence:",
        "```md", "{func}`z`", "```",
        "`Foo` `Ctrl+C` {func}`unclosed"]
    assert rewrite_myst_roles("no roles here `x`") == "no roles here `x`"


def test_testsetup_is_hidden_and_testcode_is_code():
    src = "```{testsetup}\nimport structlog\n```\n\n```{testcode}\nlog.info('hi')\n```\n```{testoutput}\nhi\n```\n"
    assert rewrite_myst_blocks(src).split("\n") == [
        "", "", "", "", "```python", "log.info('hi')", "```", "```text", "hi", "```", ""]


def test_target_above_the_title_does_not_double_the_title(tmp_path):
    """structlog's pages open with `(contextvars)=` above `# Context Variables`: one title,
    no stray preamble section, and a role in a heading is plain text."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "contextvars.md").write_text(
        "(contextvars)=\n\n# Context Variables\n\nThe {mod}`contextvars` module keeps a context.\n\n"
        "## The {mod}`structlog.contextvars` API\n\nBind values with {func}`bind_contextvars`.\n",
        encoding="utf-8")
    docs = tmp_path / "md_docs"
    r = run_cli("import", src, "--set", "structlog@26", "--docs-dir", docs)
    assert r.returncode == 0, r.stderr
    page = docs / "structlog@26" / "Context Variables"
    content = (page / "docContent.md").read_text(encoding="utf-8")
    toc = (page / "docTOC.md").read_text(encoding="utf-8")
    assert content.count("# Context Variables") == 1 and "Preamble" not in toc
    assert "The `contextvars` module" in content and "{mod}" not in content
    assert "The structlog.contextvars API" in toc


def test_many_roles_and_backtick_runs_stay_linear():
    from growth import assert_linear

    from doc4llm.ingest.myst_roles import rewrite_myst_roles

    for name, make, small in (("roles", lambda n: "{func}`a` " * n, 5000),
                              ("role runs", lambda n: "`" + "{x}``" * n, 5000),
                              ("backticks", lambda n: "``" * n + "{f}`x`", 7500),
                              ("braces", lambda n: "{" * n + "}`x`", 15000)):
        assert_linear(rewrite_myst_roles, make, small, what=name)


def test_docusaurus_and_vitepress_admonitions_become_quotes():
    """`:::tip` ... `:::` (Docusaurus, VitePress) reads as the box the site draws; an
    mkdocstrings stub (`::: griffe.parse`, `::: mkdocstrings`) and a box never closed stay
    as written, so the rest of a page is never swallowed into a quote."""
    src = ("# Page\n\n:::tip\nUse the **cache**.\n:::\n\n:::note[Heads up]\nBody\n:::\n\n"
           "::: details Click me\nhidden text\n:::\n\n::: code-group\n```sh [npm]\nnpm i x\n```\n:::\n\n"
           "::: griffe.parse\n    options:\n      x: 1\n\n::: mkdocstrings\n\n:::warning never closed\ntext after\n")
    out = rewrite_myst_blocks(src)
    lines = out.split("\n")
    assert len(lines) == len(src.split("\n"))
    assert lines[2:5] == ["> **Tip**", "> Use the **cache**.", ""]
    assert "> **Heads up**" in lines and "> **Click me**" in lines and "> hidden text" in lines
    assert "```sh [npm]" in lines and "::: code-group" not in out  # a code group is its code
    assert "::: griffe.parse" in lines and "::: mkdocstrings" in lines
    assert ":::warning never closed" in lines and "text after" in lines
