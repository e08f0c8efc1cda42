"""Unit tests of the scraper's pure parts: URLs and scope, robots.txt, sitemap and
llms.txt parsing, decoding, HTML and markdown page conversion."""

from __future__ import annotations

import asyncio
import gzip
from types import SimpleNamespace

import pytest

from doc4llm.errors import InputError
from doc4llm.ingest.scrape.decode import decode_body
from doc4llm.ingest.scrape.discovery import parse_llms_txt, parse_sitemap
from doc4llm.ingest.scrape.fetch import HostThrottle
from doc4llm.ingest.scrape.html_to_md import convert_html, strip_site_suffix
from doc4llm.ingest.scrape.markdown_page import convert_markdown, looks_like_html
from doc4llm.ingest.scrape.robots import parse_robots
from doc4llm.ingest.scrape.urls import Scope, canonical_url, html_counterpart, same_page

UA = "doc4llm/0.1.0 (documentation indexer)"


@pytest.mark.parametrize("raw,expected", [
    ("HTTP://Docs.Example.COM:80/a/./b/../c?y=2&x=1#frag", "http://docs.example.com/a/c?x=1&y=2"),
    ("https://docs.example.com:443", "https://docs.example.com/"),
    ("https://docs.example.com/guide/?utm_source=x&page=2", "https://docs.example.com/guide/?page=2"),
    ("https://docs.example.com:8443/x", "https://docs.example.com:8443/x"),
    ("mailto:someone@example.com", None),
    ("javascript:void(0)", None),
])
def test_canonical_url(raw, expected):
    assert canonical_url(raw) == expected


def test_canonical_url_relative():
    assert canonical_url("../b#x", base="https://h/docs/a/page") == "https://h/docs/b"


def test_scope_prefix_allow_deny():
    scope = Scope("https://h.io/docs/intro.html")
    assert scope.prefix == "/docs/"
    assert scope.reason_excluded("https://h.io/docs/x") is None
    assert scope.reason_excluded("https://h.io/docsfoo") == "out of scope (outside path prefix)"
    assert scope.reason_excluded("https://other.io/docs/x") == "out of scope (other host)"
    assert Scope("https://h.io/docs").reason_excluded("https://h.io/docs/a") is None
    allowed = Scope("https://h.io/docs/", allow=[r"/api/"], deny=[r"/api/internal"])
    assert allowed.reason_excluded("https://h.io/api/x") is None
    assert allowed.reason_excluded("https://h.io/docs/x") == "out of scope (no --allow match)"
    assert allowed.reason_excluded("https://h.io/docs/") is None  # the start URL always
    assert allowed.reason_excluded("https://h.io/api/internal/y") == "denied by --deny"
    with pytest.raises(InputError):
        Scope("https://h.io/", deny=["("])
    with pytest.raises(InputError):
        Scope("ftp://h.io/")


def test_same_page_spellings():
    assert same_page("https://h/docs/a/", "https://h/docs/a/index.html")
    assert same_page("https://h/docs/a", "https://h/docs/a/?v=2")
    assert not same_page("https://h/docs/a", "https://h/")  # a canonical pointing home
    assert not same_page("https://h/v1/a", "https://h/latest/a")


def test_html_counterpart():
    assert html_counterpart("https://h/docs/page.md") == "https://h/docs/page"
    assert html_counterpart("https://h/docs/index.html.md") == "https://h/docs/"
    assert html_counterpart("https://h/docs/api/index.md") == "https://h/docs/api/"


def test_robots_rfc9309():
    text = """
User-agent: *
Disallow: /private/
Allow: /private/public-page
Disallow: /*.json$
Crawl-delay: 2
Sitemap: https://h/sitemap.xml

User-agent: otherbot
Disallow: /
"""
    rules = parse_robots(text, UA)
    assert not rules.allowed("https://h/private/x")
    assert rules.allowed("https://h/private/public-page")  # longer Allow wins
    assert not rules.allowed("https://h/data/file.json")
    assert rules.allowed("https://h/data/file.json?x=1")  # $ anchors the end
    assert rules.allowed("https://h/docs/")
    assert rules.crawl_delay == 2.0 and rules.sitemaps == ["https://h/sitemap.xml"]
    ours = parse_robots("User-agent: doc4llm\nDisallow: /no/\n\nUser-agent: *\nDisallow: /\n", UA)
    assert ours.allowed("https://h/docs/") and not ours.allowed("https://h/no/x")
    assert parse_robots("User-agent: *\nDisallow:\n", UA).allowed("https://h/anything")


def test_sitemap_index_and_gzip():
    urlset = (b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
              b"<url><loc> https://h/docs/a </loc></url><url><loc>https://h/docs/b</loc></url></urlset>")
    assert parse_sitemap(urlset) == (["https://h/docs/a", "https://h/docs/b"], [])
    assert parse_sitemap(gzip.compress(urlset))[0] == ["https://h/docs/a", "https://h/docs/b"]
    index = (b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
             b"<sitemap><loc>https://h/s1.xml</loc></sitemap></sitemapindex>")
    assert parse_sitemap(index) == ([], ["https://h/s1.xml"])
    assert parse_sitemap(b"<html>not xml") == ([], [])


def test_llms_txt_links_and_sources():
    text = "# P\n\n- [Intro](https://h/docs/intro.md): start\n- [API](/api.md \"t\")\n\nSource: https://h/docs/x\n"
    assert parse_llms_txt(text) == [("Intro", "https://h/docs/intro.md"), ("API", "/api.md"),
                                    ("", "https://h/docs/x")]


def test_decode_body():
    latin = "<meta charset=ISO-8859-1><p>café</p>".encode("latin-1")
    assert "café" in decode_body(latin)
    assert "café" in decode_body("<p>café</p>".encode("cp1252"), "windows-1252")
    assert decode_body("<p>naïve</p>".encode()) == "<p>naïve</p>"
    assert "naïve" in decode_body("naïve".encode("latin-1"))  # undeclared, not UTF-8
    assert decode_body(b"\xef\xbb\xbfhi") == "hi"
    assert "café" in decode_body("café".encode(), "no-such-codec")


@pytest.mark.parametrize("title,site,expected", [
    ("Configuration | Acme Docs", None, "Configuration"),
    ("Settings — Acme 1.0 documentation", None, "Settings"),
    ("Install - Setup - Acme", None, "Install - Setup"),
    ("Plain Title", None, "Plain Title"),
    ("A | B · Acme", "Acme", "A | B"),
])
def test_strip_site_suffix(title, site, expected):
    assert strip_site_suffix(title, site) == expected


def _convert(body: str, head: str = "", url: str = "https://h/docs/page/") -> object:
    return convert_html(f"<html><head>{head}</head><body>{body}</body></html>", url)


def test_title_from_head_when_no_h1():
    page = _convert("<main><p>Text long enough to be the main content of this page.</p></main>",
                    "<title>Quick Start | Acme</title>")
    assert page.title == "Quick Start" and "Quick Start" not in page.body


def test_code_blocks_languages_and_fences():
    page = _convert("""<main><h1>T</h1>
<div class="highlight-python notranslate"><div class="highlight"><pre>x = 1</pre></div></div>
<pre class="sourceCode rust"><code>fn main() {}</code></pre>
<pre><code class="hljs language-go">package main</code></pre>
<pre><code>no language</code></pre>
<pre><code class="language-md">```js
inner
```</code></pre>
<table class="highlighttable"><tr><td class="linenos"><pre>1
2</pre></td><td class="code"><div class="highlight"><pre>a = 1
b = 2</pre></div></td></tr></table></main>""")
    body = page.body
    assert "```python\nx = 1\n```" in body
    assert "```rust\nfn main() {}\n```" in body
    assert "```go\npackage main\n```" in body
    assert "```\nno language\n```" in body
    assert "````md\n```js\ninner\n```\n````" in body
    assert "```\na = 1\nb = 2\n```" in body and "1\n2" not in body


def test_headings_anchor_ids():
    page = _convert("""<main><h1>Page</h1>
<h2><a name="legacy"></a>Legacy anchor</h2>
<section id="from-section"><h2>From section</h2><p>x</p></section>
<h3 id="has space">Bad id</h3>
<h3 id="ok.id_1">Dotted</h3>
<h4>No id</h4></main>""")
    body = page.body
    assert "## Legacy anchor {#legacy}" in body
    assert "## From section {#from-section}" in body
    assert "### Bad id\n" in body and "{#has space}" not in body
    assert "### Dotted {#ok.id_1}" in body
    assert "#### No id\n" in body


def test_chrome_dropped_and_links_absolute():
    page = _convert("""<div class="cookie-consent">Accept cookies</div>
<header><a href="/">Logo</a></header><nav><a href="/docs/other">Other</a></nav>
<main><h1>Page</h1><p>See <a href="../x">x</a> and <img src="img/a.png" alt="A">.</p>
<aside>On this page</aside><div class="sr-only">Skip</div>
<ul><li>one<ul><li>nested</li></ul></li><li>two</li></ul></main>
<footer>Footer text</footer>""", '<base href="https://h/docs/base/">')
    body = page.body
    for chrome in ("Accept cookies", "Logo", "On this page", "Skip", "Footer text", "Other"):
        assert chrome not in body
    assert "[x](https://h/docs/x)" in body and "![A](https://h/docs/base/img/a.png)" in body
    assert "- one\n  - nested\n- two" in body
    assert "https://h/docs/other" in page.links  # nav links still feed the crawl


def test_page_metadata_links():
    page = _convert("<main><h1>X</h1><p>body text</p></main>",
                    '<link rel="canonical" href="/docs/x"><link rel="alternate" type="text/markdown" '
                    'href="x.md"><meta http-equiv="refresh" content="0; URL=\'/docs/new\'">')
    assert page.canonical == "https://h/docs/x"
    assert page.markdown_alternate == "https://h/docs/page/x.md"
    assert page.refresh == "https://h/docs/new"


def test_starlight_aside_and_admonition_kinds():
    page = _convert("""<main><h1>T</h1><aside class="starlight-aside starlight-aside--caution">
<p class="starlight-aside__title">Careful</p><p>Hot surface.</p></aside>
<div class="admonition danger"><p>No title given.</p></div></main>""")
    assert "> **Careful**\n>\n> Hot surface." in page.body
    assert "> **Danger**\n>\n> No title given." in page.body


def test_markdown_page_conversion():
    text = "---\ntitle: Front Title\nsidebar: 2\n---\n# Front Title\n\nSee [a](a.md) and ![i](i.png).\n\n```\n# not a heading [x](y)\n```\n"
    title, body, links = convert_markdown(text, "https://h/docs/p.md")
    assert title == "Front Title"
    assert not body.startswith("# ")
    assert "[a](https://h/docs/a.md)" in body and "![i](https://h/docs/i.png)" in body
    assert "# not a heading [x](y)" in body
    assert links == ["https://h/docs/a.md"]
    assert convert_markdown("no heading\n", "https://h/x.md", "Fallback")[0] == "Fallback"
    assert looks_like_html("  <!DOCTYPE html><html>") and not looks_like_html("# Title")


def test_host_throttle_spaces_requests_per_host(monkeypatch):
    """The sleeps the throttle asks for, on a stopped clock (no timing): 4 starts on host a
    at 0, 50, 100, 150 ms; host b not delayed (three sleeps in all)."""
    from doc4llm.ingest.scrape import fetch

    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(round(seconds, 6))

    monkeypatch.setattr(fetch, "time", SimpleNamespace(monotonic=lambda: 100.0))
    monkeypatch.setattr(fetch, "asyncio", SimpleNamespace(Lock=asyncio.Lock, sleep=sleep))
    throttle = HostThrottle(0.05)

    async def run() -> None:
        await asyncio.gather(*(throttle.wait("a") for _ in range(4)), throttle.wait("b"))

    asyncio.run(run())
    assert sorted(sleeps) == [0.05, 0.1, 0.15]


def test_tabs_unfolded_hidden_panels_kept():
    page = _convert("""<main><h1>T</h1>
<div class="tabs-container"><ul role="tablist" class="tabs"><li role="tab">npm</li><li role="tab">Yarn</li></ul>
<div><div role="tabpanel"><pre><code class="language-bash">npm i acme</code></pre></div>
<div role="tabpanel" hidden><pre><code class="language-bash">yarn add acme</code></pre></div></div></div>
<div class="tabbed-set"><input type="radio" id="t1"><div class="tabbed-labels"><label for="t1">Python</label>
<label for="t2">Rust</label></div><div class="tabbed-content"><div class="tabbed-block"><p>py text</p></div>
<div class="tabbed-block"><p>rs text</p></div></div></div>
<div class="vp-code-group"><div class="tabs"><input type="radio"><label>pnpm</label><label>bun</label></div>
<div class="blocks"><div class="language-sh active"><pre><code>pnpm add x</code></pre></div>
<div class="language-sh"><pre><code>bun add x</code></pre></div></div></div></main>""")
    body = page.body
    assert "**npm**\n\n```bash\nnpm i acme\n```" in body
    assert "**Yarn**\n\n```bash\nyarn add acme\n```" in body
    assert "**Python**\n\npy text" in body and "**Rust**\n\nrs text" in body
    assert "**pnpm**\n\n```sh\npnpm add x\n```" in body and "**bun**" in body
    assert body.count("npm i acme") == 1


def test_sphinx_api_entries_become_headings():
    page = _convert("""<div class="body" role="main"><section id="api"><h1>API</h1>
<section id="clients"><h2>Clients</h2>
<dl class="py class"><dt class="sig sig-object py" id="acme.Client"><em class="property">class </em>
<span class="sig-prename">acme.</span><span class="sig-name">Client</span>(<em>timeout=10</em>)</dt>
<dd><p>A client.</p><dl class="py method"><dt id="acme.Client.get"><span class="sig-name">get</span>(<em>path</em>)</dt>
<dd><p>GET a path.</p></dd></dl></dd></dl></section></section></div>""",
                    '<meta name="generator" content="Sphinx 7">')
    assert "### class acme.Client(timeout=10) {#acme.Client}\n\nA client." in page.body
    assert "#### get(path) {#acme.Client.get}\n\nGET a path." in page.body


def test_line_numbers_copy_buttons_and_math():
    page = _convert("""<main><h1>T</h1>
<pre class="language-js"><code><span class="token-line"><span class="codeLineNumber_x">1</span>let a = 1;<br></span><span class="token-line"><span class="codeLineNumber_x">2</span>let b = 2;</span></code><button>Copy</button></pre>
<p>Area is <span class="katex"><span class="katex-mathml"><math><semantics><mrow><mi>x</mi></mrow>
<annotation encoding="application/x-tex">\\pi r^2</annotation></semantics></math></span>
<span class="katex-html" aria-hidden="true">πr2</span></span> here.</p>
<p class="katex-display"><span class="katex"><span class="katex-mathml"><math><semantics>
<annotation encoding="application/x-tex">e=mc^2</annotation></semantics></math></span></span></p></main>""")
    assert "```js\nlet a = 1;\nlet b = 2;\n```" in page.body
    assert "Copy" not in page.body
    assert "Area is $\\pi r^2$ here." in page.body and "πr2" not in page.body
    assert "$$e=mc^2$$" in page.body
