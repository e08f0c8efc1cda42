"""Page structure on real inputs: Sphinx API reference pages scraped over loopback, MkDocs
sources imported, and the section scanner's invariants over every real corpus at hand.

Fixtures (tests/fixtures/sphinx, tests/fixtures/mkdocs) are trimmed copies of real pages:
Python 3.11's json and subprocess reference (Sphinx 5 HTML from Debian's python3.11-doc),
a Pydantic and a uv docs page (MkDocs Material sources).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import serve_directory

from doc4llm.code.blocks import find_code_blocks
from doc4llm.corpus.sections import parse_page, parse_sections, plain_title
from doc4llm.corpus.toc import parse_toc
from doc4llm.corpus.writer import SetWriter
from doc4llm.ingest.importer import import_path
from doc4llm.ingest.mkdocs_blocks import rewrite_mkdocs_blocks
from doc4llm.ingest.scrape import ScrapeOptions, scrape_site
from doc4llm.ingest.scrape.html_to_md import convert_html, escape_heading

FIXTURES = Path(__file__).parent / "fixtures"
SPHINX = FIXTURES / "sphinx"
MKDOCS = FIXTURES / "mkdocs"
SHARED = Path(__file__).resolve().parents[2] / "shared"




@pytest.fixture(scope="module")
def sphinx_set(tmp_path_factory):
    """The two Sphinx fixture pages scraped from a loopback server, as a doc set folder."""
    site = tmp_path_factory.mktemp("site")
    (site / "library").mkdir()
    for page in SPHINX.glob("*.html"):
        (site / "library" / page.name).write_bytes(page.read_bytes())
    links = "".join(f'<a href="{p.name}">{p.stem}</a>' for p in SPHINX.glob("*.html"))
    (site / "library" / "index.html").write_text(
        f'<html><head><meta name="generator" content="Sphinx"></head><body><div class="body" '
        f'role="main"><h1>The Library</h1><p>Modules of the standard library.</p>{links}</div></body></html>')
    docs = tmp_path_factory.mktemp("docs")
    with serve_directory(site) as base:
        opts = ScrapeOptions(concurrency=2, delay=0.0, timeout=5.0, retries=0)
        scrape_site(f"{base}/library/index.html", docs, "Py@3.11", opts)
    return docs / "Py@3.11"


def _entries(set_dir: Path, page: str):
    return parse_toc((set_dir / page / "docTOC.md").read_text(encoding="utf-8"))[2]


def _ids(html_file: Path) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', html_file.read_text(encoding="utf-8")))


def test_sphinx_api_entries_are_siblings_under_their_section(sphinx_set):
    entries = _entries(sphinx_set, "json — JSON encoder and decoder")
    shape = [(e.level, e.title.split("(")[0]) for e in entries if e.level and e.level > 1]
    assert shape[:14] == [
        (2, "Basic Usage"), (3, "json.dump"), (3, "json.dumps"), (3, "json.load"), (3, "json.loads"),
        (2, "Encoders and Decoders"), (3, "class json.JSONDecoder"), (4, "decode"), (4, "raw_decode"),
        (3, "class json.JSONEncoder"), (4, "default"), (4, "encode"), (4, "iterencode"),
        (2, "Exceptions"),
    ]
    assert shape[14:] == [(3, "exception json.JSONDecodeError")] + [
        (4, name) for name in ("msg", "doc", "pos", "lineno", "colno")]
    page = parse_page((sphinx_set / "json — JSON encoder and decoder" / "docContent.md").read_text())
    dumps = next(s for s in page.sections if s.title.startswith("json.dumps("))
    assert dumps.heading_path[1:] == ["Basic Usage", dumps.title]
    decode = next(s for s in page.sections if s.title == "decode(s)")
    assert [p.split("(")[0] for p in decode.heading_path[1:]] == [
        "Encoders and Decoders", "class json.JSONDecoder", "decode"]


def test_sphinx_signatures_keep_stars_and_defaults_escaped_in_the_page(sphinx_set):
    folder = sphinx_set / "json — JSON encoder and decoder"
    entries = {e.title.split("(")[0]: e for e in _entries(sphinx_set, folder.name)}
    dump = entries["json.dump"]
    assert dump.title == ("json.dump(obj, fp, *, skipkeys=False, ensure_ascii=True, check_circular=True, "
                          "allow_nan=True, cls=None, indent=None, separators=None, default=None, "
                          "sort_keys=False, **kw)")
    content = folder.joinpath("docContent.md").read_text(encoding="utf-8")
    line = next(ln for ln in content.splitlines() if ln.startswith("### json.dump("))
    assert line.startswith(r"### json.dump(obj, fp, \*, skipkeys=False,") and line.endswith(r"\*\*kw) {#json.dump}")
    assert plain_title(line[4:].rsplit(" {#", 1)[0]) == dump.title


def test_sphinx_anchors_are_the_real_ids_never_invented(sphinx_set):
    urls = 0
    for name, page in (("json.html", "json — JSON encoder and decoder"),
                       ("subprocess.html", "subprocess — Subprocess management")):
        ids = _ids(SPHINX / name)
        for entry in _entries(sphinx_set, page):
            if entry.url and "#" in entry.url:
                urls += 1
                assert entry.url.split("#", 1)[1] in ids, entry.url
    assert urls >= 30
    entries = {e.title.split("(")[0]: e for e in _entries(sphinx_set, "json — JSON encoder and decoder")}
    assert entries["json.dumps"].url.endswith("/library/json.html#json.dumps")
    assert entries["decode"].url.endswith("#json.JSONDecoder.decode")
    intro = next(e for e in _entries(sphinx_set, "json — JSON encoder and decoder") if e.level == 1)
    assert intro.url.endswith("/library/json.html")  # the page itself, not a guessed slug


def test_sphinx_heading_links_become_plain_text(sphinx_set):
    folder = sphinx_set / "subprocess — Subprocess management"
    entries = _entries(sphinx_set, folder.name)
    using = next(e for e in entries if e.level == 2)
    assert using.title == "Using the subprocess Module"
    assert using.url.endswith("#using-the-subprocess-module")  # not the link's #module-subprocess
    content = folder.joinpath("docContent.md").read_text(encoding="utf-8")
    assert "## Using the subprocess Module {#using-the-subprocess-module}" in content
    for set_page in sphinx_set.iterdir():
        if not set_page.is_dir():
            continue
        text = (set_page / "docContent.md").read_text(encoding="utf-8")
        for line in text.splitlines():
            if line.startswith("#"):
                assert "](" not in line and "`" not in line, line
        for entry in _entries(sphinx_set, set_page.name):
            assert "](" not in entry.title and "{#" not in entry.title
    run = next(e for e in entries if e.title.startswith("subprocess.run("))
    assert "capture_output=False" in run.title and "**other_popen_kwargs" in run.title


def test_sphinx_extra_signatures_are_body_lines_and_no_id_means_no_anchor(tmp_path):
    page = convert_html("""<html><head><meta name="generator" content="Sphinx"></head><body>
<div class="body" role="main"><section id="types"><h1>Types</h1>
<section id="ranges"><span id="typesseq-range"></span><h2>Ranges</h2>
<dl class="py class"><dt class="sig sig-object py" id="range"><em class="property">class </em>
<span class="sig-name descname">range</span>(<em>stop</em>)<a class="headerlink" href="#range">¶</a></dt>
<dt class="sig sig-object py"><em class="property">class </em><span class="sig-name">range</span>(<em>start</em>,
<em>stop</em><span class="optional">[</span>, <em>step</em><span class="optional">]</span>)</dt>
<dd><p>Immutable sequences of numbers.</p></dd></dl>
<dl class="py data"><dt class="sig sig-object py"><span class="sig-name">NO_ID</span></dt><dd><p>x</p></dd></dl>
<dl class="py function"><dt class="sig sig-object py" id="f"><span class="sig-name">f</span>(<em>*args</em>)
<a class="reference internal" href="../_modules/m.html#f"><span class="viewcode-link">[source]</span></a></dt>
<dd><p>y</p></dd></dl></section></section></div></body></html>""", "https://d.example/library/stdtypes.html")
    body = page.body
    assert "## Ranges {#ranges}" in body
    assert "### class range(stop) {#range}\n\n`class range(start, stop[, step])`\n\nImmutable" in body
    assert "### NO_ID\n" in body and r"### f(\*args) {#f}" in body and "[source]" not in body
    writer = SetWriter(tmp_path, "T@1", origin="test")
    writer.write_page(page.title, body, source="https://d.example/library/stdtypes.html", key="k",
                      url="https://d.example/library/stdtypes.html", slug_anchors=False)
    toc = (tmp_path / "T@1" / "Types" / "docTOC.md").read_text(encoding="utf-8")
    assert "### 1.2. NO_ID · L" in toc
    no_id = next(ln for ln in toc.splitlines() if "NO_ID" in ln)
    assert no_id.endswith("· https://d.example/library/stdtypes.html")  # no guessed #no_id


@pytest.mark.parametrize("text", [
    "json.dump(obj, fp, *, skipkeys=False, **kw)", "object.__init__(self[, ...])",
    "__name__ == '__main__'", "snake_case a__b", "Using #", "C#", "x {#id}", "dict {}",
    "<T> & &amp; `x` [a](b) ![i](s) ~~s~~", "back\\slash \\* C:\\path", "_private", "#include <stdio.h>",
    "a_", "**", "{: #x .y }", "Option<Vec<T>>",
])
def test_escaped_heading_reads_back_as_the_same_text(text):
    sections = parse_sections(f"## {escape_heading(text)}\n")
    assert [s.title for s in sections] == [text]
    assert not sections[0].explicit_anchor


@pytest.mark.parametrize("raw, title, anchor", [
    ("Type hints {#type-hints}", "Type hints", "type-hints"),
    ("Spaced { #spaced-id }", "Spaced", "spaced-id"),
    ("Kramdown {: #kd .wide data-x=\"1\" }", "Kramdown", "kd"),
    ("Class only {.big}", "Class only", "class-only"),
    ("Set literal {1, 2}", "Set literal {1, 2}", "set-literal-1-2"),
    (r"Escaped \{#not-an-id}", "Escaped {#not-an-id}", "escaped-not-an-id"),
    ("Using the [`subprocess`](http://x/sub.html#module-subprocess \"t\") Module",
     "Using the subprocess Module", "using-the-subprocess-module"),
    ("The `a*b` [link](u) ![badge](b.svg) **bold** `[x](y)`", "The a*b link bold [x](y)", None),
    ("[Nested (paren)](https://e.x/a_(b)) done", "Nested (paren) done", None),
    ("Mixed `__init__` and __bold__", "Mixed __init__ and bold", None),
    ("Features (extras) ### {: #features }", "Features (extras)", "features"),  # hatch: closing hashes
    ("Name (*required*) ## {: #name }", "Name (required)", "name"),
    ("C# {#csharp}", "C#", "csharp"),  # a hash that is part of a word stays
    ("platform {: #platform cmd-line env-var }", "platform", "platform"),  # cibuildwheel: bare words
    ("environment-pass {: #environment-pass env-var=\"CIBW_X\" toml}", "environment-pass", "environment-pass"),
    ("Android {: android}", "Android", "android"),  # `{:` opens an attribute list
    ("Braces {word other}", "Braces {word other}", "braces-word-other"),  # no `{:`, no id: text
])
def test_scanner_titles_are_plain_and_attribute_lists_give_anchors(raw, title, anchor):
    [sec] = parse_sections(f"## {raw}\n\ntext\n")
    assert sec.title == title and sec.heading_path == [title]
    if anchor:
        assert sec.anchor == anchor


def test_admonitions_and_tabs_become_readable_line_for_line():
    src = (
        '!!! note "Heads up"\n    First line.\n\n    Second paragraph.\n'
        '    ??? tip\n        Nested tip.\n\n'
        '=== "pip"\n\n    ```bash\n    pip install x\n    ```\n\n'
        '=== "uv"\n\n    ```bash\n    uv add x\n    ```\n\n'
        '```text\n!!! note "inside a fence"\n    stays\n```\nafter\n'
        '\n--8<-- "docs/snippet.md"\n\n## Next\n'
    )
    out = rewrite_mkdocs_blocks(src)
    assert out.count("\n") == src.count("\n")
    assert out.split("\n")[:7] == ["> **Heads up**", "> First line.", ">", "> Second paragraph.",
                                   "> > **Tip**", "> > Nested tip.", ""]
    assert "**pip**\n\n```bash\npip install x\n```\n\n**uv**\n\n```bash\nuv add x\n```" in out
    assert '```text\n!!! note "inside a fence"\n    stays\n```\nafter' in out
    assert [b.code.strip() for b in find_code_blocks(out)] == ["pip install x", "uv add x",
                                                               '!!! note "inside a fence"\n    stays']
    assert '\n--8<-- "docs/snippet.md"\n' in out  # a snippet include stays a readable text line
    assert [s.title for s in parse_sections(out)] == ["[Overview / Preamble]", "Next"]


def test_imported_mkdocs_pages_keep_admonitions_as_text_and_attribute_anchors(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for page in MKDOCS.glob("*.md"):
        (src / page.name).write_bytes(page.read_bytes())
    (src / "why.md").write_text("# Why\n\n## Type hints powering schema validation {#type-hints}\n\n"
                                "Text.\n\n## Strict mode { #strict-lax }\n\n!!! warning\n    Careful.\n")
    docs = tmp_path / "docs"
    import_path(src, docs, "Mk@1")
    content = (docs / "Mk@1" / "pydantic_strict_mode" / "docContent.md").read_text(encoding="utf-8")
    assert "> **API Documentation**\n> [`pydantic.types.Strict`][pydantic.types.Strict]<br>" in content
    code = "\n".join(b.code for b in find_code_blocks(content))
    assert "pydantic.types.Strict" not in code  # the admonition body is text, not code
    assert "class MyModel(BaseModel):" in code  # real code blocks still are
    jfrog = (docs / "Mk@1" / "JFrog Artifactory" / "docContent.md").read_text(encoding="utf-8")
    assert "> **Important**\n>\n> If you use `--token" in jfrog
    why = parse_page((docs / "Mk@1" / "Why" / "docContent.md").read_text(encoding="utf-8"))
    secs = {s.title: s for s in why.sections}
    assert secs["Type hints powering schema validation"].anchor == "type-hints"
    assert secs["Strict mode"].anchor == "strict-lax"
    toc = (docs / "Mk@1" / "Why" / "docTOC.md").read_text(encoding="utf-8")
    assert "{#" not in toc and "## 2. Strict mode · L" in toc


def _corpus_pages():
    """Every markdown page of the real corpora at hand: the fixtures always, the shared
    benchmark corpora when this checkout sits beside them."""
    roots = [FIXTURES, Path(__file__).resolve().parents[1] / "md_docs"]
    roots += [SHARED / "benchmarks" / "realdocs-dev", SHARED / "corpora" / "upstream_md_docs",
              SHARED / "benchmarks" / "mdmem"]
    seen = []
    for root in roots:
        if root.is_dir():
            seen += sorted(root.rglob("*.md"))
    return seen


def test_scanner_invariants_on_real_corpora():
    pages = _corpus_pages()
    assert len(pages) >= 20
    checked = 0
    for path in pages:
        text = path.read_text(encoding="utf-8", errors="replace")
        for variant in (text, rewrite_mkdocs_blocks(text)):
            sections = parse_page(variant).sections
            open_: list = []  # the chain of ancestors of the current section
            for sec in sections:
                if sec.level == 0:
                    assert sec.index == 0 and sec.heading_path == ["[Overview / Preamble]"]
                    continue
                while open_ and open_[-1].level >= sec.level:
                    open_.pop()
                assert sec.heading_path == [a.title for a in open_] + [sec.title], path
                assert len(sec.heading_path) <= sec.level  # a path never runs deeper than its level
                for ancestor in open_:
                    assert ancestor.start < sec.start <= ancestor.subtree_end, path
                    assert sec.subtree_end <= ancestor.subtree_end
                assert sec.start <= sec.end and sec.title == sec.title.strip() and sec.title
                assert "](" not in sec.title and "{#" not in sec.title, (path, sec.title)
                open_.append(sec)
                checked += 1
    assert checked >= 200


def test_scraped_sphinx_levels_never_skip(sphinx_set):
    for folder in sphinx_set.iterdir():
        if not folder.is_dir():
            continue
        previous = 1
        for sec in parse_page((folder / "docContent.md").read_text(encoding="utf-8")).sections:
            if sec.level:
                assert sec.level <= previous + 1, (folder.name, sec.title)
                previous = sec.level


def test_scraped_mkdocs_material_page_keeps_admonitions_tabs_and_real_anchors(tmp_path):
    html_file = MKDOCS / "uv_installation.html"
    url = "http://127.0.0.1:8766/getting-started/installation/"
    page = convert_html(html_file.read_text(encoding="utf-8"), url)
    assert page.title == "Installing uv" and page.generator == "mkdocs"
    body = page.body
    assert "> **Tip**\n>\n> The installation script may be inspected before use:" in body
    assert "**macOS and Linux**\n\nUse `curl` to download the script" in body and "**Windows**" in body
    writer = SetWriter(tmp_path, "uv@site", origin="test")
    writer.write_page(page.title, body, source=url, key=url, url=url, slug_anchors=False)
    ids = _ids(html_file)
    entries = _entries(tmp_path / "uv@site", "Installing uv")
    assert [e.title for e in entries if e.level == 3][:3] == ["Standalone installer", "PyPI", "Homebrew"]
    anchored = [e.url.split("#", 1)[1] for e in entries if e.url and "#" in e.url]
    assert len(anchored) >= 9 and set(anchored) <= ids


def test_old_sphinx_entries_without_a_domain_class_and_furo_article():
    page = convert_html("""<html><head><meta name="generator" content="sphinx-5.0.2, furo 2022.06.21">
</head><body><div class="page"><aside class="sidebar-drawer"><p>Navigation links here</p></aside>
<article role="main"><div class="section" id="reference"><h1>Reference</h1>
<div class="section" id="api"><h2>API</h2>
<dl class="function"><dt id="acme.connect"><code class="descname">connect</code>(<em>url</em>, <em>**opts</em>)</dt>
<dd><p>Open a connection.</p></dd></dl>
<dl class="function"><dt id="acme.close"><code class="descname">close</code>()</dt><dd><p>Close it.</p></dd></dl>
<dl class="simple"><dt>term</dt><dd><p>not an API entry</p></dd></dl>
</div></div></article></div></body></html>""", "https://acme.example/reference.html")
    assert page.title == "Reference" and "Navigation links" not in page.body
    assert r"### connect(url, \*\*opts) {#acme.connect}" in page.body
    assert "### close() {#acme.close}" in page.body and "### term" not in page.body
