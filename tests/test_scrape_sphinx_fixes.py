"""Scrape fixes found by scraping Jinja's Sphinx docs on loopback (issue 27 item 4):
generated pages skipped, internal links as doc4llm paths, typed parameters without link
noise, long signature headings cut, nav titles for pages without an H1."""

from __future__ import annotations

import functools
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from doc4llm.ingest.scrape import ScrapeOptions, scrape_site
from doc4llm.ingest.scrape.blocks import short_signature
from doc4llm.ingest.scrape.html_to_md import convert_html
from doc4llm.ingest.scrape.local_links import is_local_host

FIXTURE = Path(__file__).parent / "fixtures" / "sphinx_jinja" / "api.html"
GENERATED = ('<html><head><title>Index — Jinja</title></head><body><div class="documentwrapper">'
             '<div class="body" role="main"><h1>{title}</h1><p><a href="api.html#jinja2.Environment">'
             'Environment (class in jinja2)</a> and many more names listed here</p></div></div>'
             '<div class="sphinxsidebar" role="navigation"></div></body></html>')
INDEX = ('<html><head><title>Jinja</title></head><body><div class="documentwrapper"><div class="body" role="main">'
         '<h1>Jinja<a class="headerlink" href="#jinja">¶</a></h1><p>See <a href="api.html#basics">the API</a>, '
         '<a href="genindex.html">Index</a>, <a href="py-modindex.html">Modules</a>, <a href="search.html">Search'
         '</a> and <a href="https://palletsprojects.com/p/jinja/">the project</a>.</p></div></div>'
         '<div class="sphinxsidebar" role="navigation"></div></body></html>')


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def jinja_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    shutil.copy(FIXTURE, root / "api.html")
    (root / "index.html").write_text(INDEX)
    for name, title in (("genindex", "Index"), ("py-modindex", "Python Module Index"), ("search", "Search")):
        (root / f"{name}.html").write_text(GENERATED.format(title=title))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    docs = tmp_path_factory.mktemp("md")
    summary = scrape_site(base + "/index.html", docs, "jinja@3.1", ScrapeOptions(delay=0, robots=False))
    yield base, docs / "jinja@3.1", summary
    httpd.shutdown()
    httpd.server_close()


def test_sphinx_generated_pages_are_skipped(jinja_site):
    base, set_dir, summary = jinja_site
    pages = sorted(p.name for p in set_dir.iterdir() if p.is_dir())
    assert pages == ["API", "Jinja"]
    reasons = summary.reasons("skipped")
    for name in ("genindex", "py-modindex", "search"):
        assert f"Sphinx generated page ({name})" in reasons


def test_internal_links_become_doc4llm_paths_not_the_crawl_host(jinja_site):
    base, set_dir, _ = jinja_site
    index = (set_dir / "Jinja" / "docContent.md").read_text()
    api = (set_dir / "API" / "docContent.md").read_text()
    assert "[the API](<../API/docContent.md#basics>)" in index
    assert "[start page](<../Jinja/docContent.md>)" in api
    assert "(https://palletsprojects.com/p/jinja/)" in index  # other sites keep their URL
    for text in (index, api):
        body = text.split("\n---\n", 1)[1]
        assert f"]({base}/index.html" not in body and f"]({base}/api.html" not in body
    assert "/api.html#basics" in (set_dir / "API" / "docTOC.md").read_text()  # the anchor exists


def test_typed_parameters_read_as_code_without_link_noise(jinja_site):
    _, set_dir, _ = jinja_site
    api = (set_dir / "API" / "docContent.md").read_text()
    assert "**line_statement_prefix** (`Optional[str]`)" in api
    assert "**finalize** (`Optional[Callable[[...], Any]]`)" in api
    assert "**loader** (`Optional[BaseLoader]`)" in api
    assert "[*Optional*]" not in api and "docs.python.org" not in api


def test_very_long_signature_heading_is_cut_and_kept_whole_in_the_body(jinja_site):
    _, set_dir, _ = jinja_site
    api = (set_dir / "API" / "docContent.md").read_text()
    heading = next(ln for ln in api.splitlines() if ln.startswith("#") and "jinja2.Template(" in ln)
    assert len(heading) < 240 and ", ...)" in heading and heading.endswith("{#jinja2.Template}")
    full = api[api.index(heading):]
    assert full.split("\n")[2].startswith("```python")
    assert "class jinja2.Template(source, block_start_string='{%'" in full  # the full signature
    assert "enable_async=False)" in full.split("```")[1]  # down to its last parameter


def test_short_signature_rules():
    assert short_signature("f(a, b)") == "f(a, b)"
    sig = "f(" + ", ".join(f"p{i}=None" for i in range(60)) + ", **kw)"
    cut = short_signature(sig)
    assert len(cut) <= 200 and cut.startswith("f(p0=None, p1=None") and cut.endswith(", ..., **kw)")
    assert short_signature("x" * 300).endswith("...") and len(short_signature("x" * 300)) == 200


def test_page_without_h1_takes_its_nav_title():
    html = ('<html><head><title>Acme Docs</title></head><body><nav class="md-nav"><ul>'
            '<li><a class="md-nav__link" href="/docs/setup/">Setting things up</a></li></ul></nav>'
            '<article class="md-content__inner"><p>Text of a page with no heading at all, long enough.</p>'
            '</article></body></html>')
    page = convert_html(html, "http://127.0.0.1:9/docs/setup/")
    assert not page.title_from_h1
    assert page.nav_titles["http://127.0.0.1:9/docs/setup/"] == "Setting things up"


def test_local_hosts():
    assert is_local_host("http://127.0.0.1:8000/x") and is_local_host("http://localhost/")
    assert is_local_host("http://192.168.1.5/docs") and not is_local_host("https://jinja.palletsprojects.com/")


def test_markdown_page_without_h1_takes_the_nav_title(tmp_path):
    """A site that publishes markdown (llms.txt / .md links) next to its HTML: the .md page
    has no H1, the HTML nav names it; the set's page is titled by the nav, not `Setup`."""
    root = tmp_path / "site"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "index.html").write_text(
        '<html><head><title>Acme</title></head><body><nav class="md-nav"><ul><li>'
        '<a class="md-nav__link" href="setup.md">Setting things up</a></li></ul></nav>'
        '<article class="md-content__inner"><h1>Acme docs</h1><p>Welcome to the Acme documentation '
        'pages, read on.</p></article></body></html>')
    (root / "docs" / "setup.md").write_text("Install it with `pip install acme`, then run it.\n")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        scrape_site(base + "/docs/index.html", tmp_path / "md", "acme@1", ScrapeOptions(delay=0, robots=False,
                                                                                      concurrency=1))
    finally:
        httpd.shutdown()
        httpd.server_close()
    pages = sorted(p.name for p in (tmp_path / "md" / "acme@1").iterdir() if p.is_dir())
    assert "Setting things up" in pages, pages
