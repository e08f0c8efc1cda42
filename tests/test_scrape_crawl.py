"""The scraper against a documentation site served on 127.0.0.1 with one trap per page.

The site (built below, served by a threaded http.server on port 0) has pages shaped like
several generators, a sitemap-only page, an llms.txt pointing at a markdown version, a
robots.txt disallow, out-of-scope links, a redirect loop, a 500, a slow page, binary
files, a Latin-1 page, a very large page and duplicate titles.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from doc4llm.ingest.scrape import ScrapeOptions, scrape_site

SLOW_SECONDS = 1.5
TIMEOUT = 0.5


def _page(title: str, body: str, *, generator: str = "", head: str = "", chrome: bool = True) -> str:
    meta = f'<meta name="generator" content="{generator}">' if generator else ""
    nav = ('<nav class="sidebar"><a href="/docs/">Home</a><a href="/docs/guide">Guide</a></nav>'
           if chrome else "")
    cookie = ('<div id="cookie-banner">We use cookies to improve your experience. Accept all?</div>'
              if chrome else "")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title} | Acme Docs</title>"
            f"{meta}{head}</head><body>{cookie}<header><a href='/'>Acme</a></header>{nav}"
            f"{body}<footer>Copyright Acme 2026. All rights reserved.</footer></body></html>")


DOCUSAURUS = _page("Getting Started", """
<div id="__docusaurus"><div class="main-wrapper"><main><div class="container"><article>
<nav class="theme-doc-breadcrumbs" aria-label="Breadcrumbs"><a href="/docs/">Docs</a></nav>
<div class="theme-doc-markdown markdown"><header><h1>Getting Started</h1></header>
<p>Install the <code>acme_client</code> package, then configure it.</p>
<h2 class="anchor" id="install">Install<a href="#install" class="hash-link" aria-label="Direct link to Install">\u200b</a></h2>
<div class="language-bash codeBlockContainer"><pre class="prism-code language-bash"><code><span class="token-line">pip install acme</span><br><span class="token-line">acme --version</span><br></code></pre><button class="copy">Copy</button></div>
<div class="theme-admonition theme-admonition-warning admonition alert alert--warning"><div class="admonitionHeading_x">Heads up</div><div class="admonitionContent_y"><p>Python 3.10 or later is required.</p></div></div>
<h2 class="anchor" id="options-table">Options</h2>
<table><thead><tr><th>Name</th><th>Meaning</th></tr></thead><tbody><tr><td>timeout</td><td>seconds | none</td></tr></tbody></table>
<p>See <a href="guide">the guide</a>, <a href="https://elsewhere.example.org/x">an external site</a>,
<a href="/blog/post">the blog</a>, <a href="private/secret">internal notes</a>,
<a href="loop-a">loop</a>, <a href="broken">broken</a>, <a href="slow">slow</a>, <a href="file.pdf">pdf</a>,
<a href="download">download</a>, <a href="latin1">latin</a>, <a href="big">big</a>, <a href="dup-1">d1</a>,
<a href="dup-2">d2</a>, <a href="moved">moved</a>, <a href="away">away</a>, <a href="mkdocs">m</a>,
<a href="sphinx/config.html">s</a>, <a href="vitepress">v</a>, <a href="mintlify">mi</a>,
<a href="gitbook">g</a>, <a href="md-page">md</a>, <a href="guide?utm_source=x#top">guide again</a>,
<a href="alt">alt</a>, <a href="old-name">old</a>, <a href="own">own</a>, <a href="requirements">req</a>, <a href="hop0">hops</a>, <a href="guide/index.html">guide index</a>, <a href="flaky">flaky</a>.</p>
</div><footer class="theme-doc-footer"><a href="https://github.com/acme/edit">Edit this page</a></footer>
<nav class="pagination-nav"><a href="guide">Next</a></nav></article></div></main></div></div>""",
                   generator="Docusaurus v3.1.0")

MKDOCS = _page("Configuration", """
<div class="md-container"><main class="md-main"><div class="md-content" data-md-component="content">
<article class="md-content__inner md-typeset">
<a href="https://github.com/acme/edit/main/docs/mkdocs.md" title="Edit this page" class="md-content__button md-icon">edit</a>
<h1 id="configuration">Configuration</h1>
<p>The configuration file is <code>acme.yaml</code>.</p>
<h2 id="proxy-settings">Proxy settings<a class="headerlink" href="#proxy-settings" title="Permanent link">&para;</a></h2>
<div class="admonition note"><p class="admonition-title">Note</p><p>Proxies need a restart.</p></div>
<div class="language-yaml highlight"><pre><span></span><code>proxy:
  url: http://proxy:3128
</code></pre></div>
<details class="tip"><summary>Pro tip</summary><p>Use environment variables.</p></details>
</article></div></main></div>""", generator="mkdocs-1.5.3, mkdocs-material-9.5.3")

SPHINX = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Settings &#8212; Acme 1.0 documentation</title>
<meta name="generator" content="Sphinx 7.2"></head><body>
<div class="related" role="navigation"><a href="../genindex.html">index</a></div>
<div class="document"><div class="documentwrapper"><div class="bodywrapper"><div class="body" role="main">
<section id="settings"><h1>Settings<a class="headerlink" href="#settings" title="Link to this heading">¶</a></h1>
<p>All settings live in <em>settings.py</em>.</p>
<section id="database-url"><h2>Database URL<a class="headerlink" href="#database-url">¶</a></h2>
<div class="highlight-python notranslate"><div class="highlight"><pre><span></span><span class="n">DATABASE_URL</span> <span class="o">=</span> <span class="s2">"sqlite://"</span>
</pre></div></div>
<div class="admonition warning"><p class="admonition-title">Warning</p><p>Never commit secrets.</p></div>
</section></section></div></div></div>
<div class="sphinxsidebar" role="navigation"><h3>Navigation</h3><a href="../guide">Guide</a></div></div>
<div class="footer">&copy; Acme.</div></body></html>"""

VITEPRESS = _page("Routing", """
<div id="app"><div class="VPContent" id="VPContent"><div class="VPDoc"><div class="content">
<main class="main"><div class="vp-doc _docs_vitepress">
<h1 id="routing" tabindex="-1">Routing <a class="header-anchor" href="#routing" aria-label="Permalink">\u200b</a></h1>
<p>Routes map files to URLs.</p>
<h2 id="dynamic-routes" tabindex="-1">Dynamic routes <a class="header-anchor" href="#dynamic-routes">\u200b</a></h2>
<div class="language-ts vp-adaptive-theme"><button title="Copy Code" class="copy"></button><span class="lang">ts</span><pre class="shiki"><code><span class="line"><span>export default {</span></span>
<span class="line"><span>  paths: ['a', 'b']</span></span>
<span class="line"><span>}</span></span></code></pre></div>
<div class="tip custom-block"><p class="custom-block-title">TIP</p><p>Params come from the file name.</p></div>
</div></main><footer class="VPDocFooter"><div class="edit-link"><a href="https://github.com/x">Edit</a></div></footer>
</div></div></div></div>""", generator="VitePress v1.0.0")

MINTLIFY = _page("Authentication", """
<div id="content-area"><header id="header"><div class="eyebrow">API</div><h1 id="page-title">Authentication</h1></header>
<div class="mdx-content prose" id="content">
<p>Send your key in the <code>Authorization</code> header.</p>
<h2 id="bearer-tokens"><a href="#bearer-tokens" class="anchor"></a><span>Bearer tokens</span></h2>
<div class="code-block"><div class="code-block-header">cURL</div><pre data-language="shell"><code>curl -H "Authorization: Bearer $KEY" https://api.acme.test</code></pre></div>
<div class="callout" data-callout-type="warning"><p>Keys are secret.</p></div>
</div><div id="pagination"><a href="/docs/guide">Next: Guide</a></div></div>""",
                  head='<script src="https://cdn.mintlify.com/app.js"></script>')

GITBOOK = _page("Webhooks", """
<div class="gitbook-root" data-gitbook="1"><main><header><h1>Webhooks</h1></header>
<p>Webhooks notify you of events.</p><h2 id="retries">Retries</h2><p>We retry five times.</p>
<div class="hint" data-type="info"><p>Respond within 10 seconds.</p></div>
</main></div>""", generator="GitBook")

GUIDE = _page("Guide", "<main><h1>Guide</h1><p>The guide explains the whole workflow in detail.</p>"
              "<h2 id='step-one'>Step one</h2><p>Do the first thing.</p></main>")
ORPHAN = _page("Orphan Page", "<main><h1>Orphan Page</h1><p>Only the sitemap lists this page.</p></main>")
MD_PAGE_HTML = _page("Markdown Page", "<main><h1>Markdown Page</h1><p>HTML VERSION</p></main>")
MD_PAGE_MD = "# Markdown Page\n\nThe markdown version with `code`.\n\n## Details\n\nSee [guide](guide).\n"
DUP1 = _page("Overview", "<main><h1>Overview</h1><p>First overview page with its own text.</p></main>")
DUP2 = _page("Overview", "<main><h1>Overview</h1><p>Second overview page, different text.</p></main>")
LATIN1 = ("<html><head><meta charset='iso-8859-1'><title>Caf\xe9 Guide</title></head><body><main>"
          "<h1>Caf\xe9 r\xe9sum\xe9</h1><p>Cr\xe8me br\xfbl\xe9e and na\xefve settings for the caf\xe9.</p>"
          "</main></body></html>").encode("latin-1")
BIG_SECTIONS = 2000
BIG = _page("Big Reference", "<main><h1>Big Reference</h1>" + "".join(
    f"<h2 id='item-{i}'>Item {i}</h2><p>Item {i} does thing number {i} with a long explanation "
    f"that pads this paragraph to a realistic length for a reference page.</p>"
    for i in range(BIG_SECTIONS)) + "</main>")
ALT_HTML = _page("Alt Page", "<main><h1>Alt Page</h1><p>ALT HTML</p></main>",
                 head='<link rel="alternate" type="text/markdown" href="/docs/alt.md">')
ALT_MD = "---\ntitle: Alternate Page\n---\n\n# Alternate Page\n\nFrom the markdown alternate.\n"
REFRESH = ('<html><head><meta http-equiv="refresh" content="0; url=guide"><title>Moved</title></head>'
           "<body><p>This page moved.</p></body></html>")
GUIDE_INDEX = _page("Guide", "<main><h1>Guide</h1><p>Same guide, another URL.</p></main>",
                    head='<link rel="canonical" href="/docs/guide">')
# a misconfigured canonical pointing at the home page must not make this page a duplicate
HOME_CANONICAL = _page("Own Page", "<main><h1>Own Page</h1><p>Real content of its own.</p></main>",
                       head='<link rel="canonical" href="/docs/">')
FLAKY = _page("Flaky", "<main><h1>Flaky</h1><p>Works on the second try.</p></main>")
ROBOTS = "User-agent: *\nDisallow: /docs/private/\nSitemap: /sitemap.xml\n"
LLMS = "# Acme\n\n> Acme docs for LLMs\n\n## Docs\n\n- [Markdown Page](/docs/md-page.md): a page\n"


def _sitemap(base: str) -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<url><loc>{base}/docs/orphan</loc></url><url><loc>{base}/docs/guide</loc></url></urlset>")


class Site:
    """Routes of the test site; tests may change them between two scrapes."""

    def __init__(self):
        html = "text/html; charset=utf-8"
        self.routes: dict[str, tuple[int, dict, bytes | str]] = {
            "/docs/": (200, {"Content-Type": html}, DOCUSAURUS),
            "/docs/guide": (200, {"Content-Type": html}, GUIDE),
            "/docs/mkdocs": (200, {"Content-Type": html}, MKDOCS),
            "/docs/sphinx/config.html": (200, {"Content-Type": html}, SPHINX),
            "/docs/vitepress": (200, {"Content-Type": html}, VITEPRESS),
            "/docs/mintlify": (200, {"Content-Type": html}, MINTLIFY),
            "/docs/gitbook": (200, {"Content-Type": html}, GITBOOK),
            "/docs/orphan": (200, {"Content-Type": html}, ORPHAN),
            "/docs/md-page": (200, {"Content-Type": html}, MD_PAGE_HTML),
            "/docs/md-page.md": (200, {"Content-Type": "text/markdown; charset=utf-8"}, MD_PAGE_MD),
            "/docs/dup-1": (200, {"Content-Type": html}, DUP1),
            "/docs/dup-2": (200, {"Content-Type": html}, DUP2),
            "/docs/latin1": (200, {"Content-Type": "text/html"}, LATIN1),
            "/docs/big": (200, {"Content-Type": html}, BIG),
            "/docs/private/secret": (200, {"Content-Type": html}, GUIDE),
            "/docs/alt": (200, {"Content-Type": html}, ALT_HTML),
            "/docs/alt.md": (200, {"Content-Type": "text/markdown"}, ALT_MD),
            "/docs/old-name": (200, {"Content-Type": html}, REFRESH),
            "/docs/guide/index.html": (200, {"Content-Type": html}, GUIDE_INDEX),
            "/docs/own": (200, {"Content-Type": html}, HOME_CANONICAL),
            "/docs/loop-a": (302, {"Location": "/docs/loop-b"}, ""),
            "/docs/loop-b": (302, {"Location": "/docs/loop-a"}, ""),
            "/docs/moved": (301, {"Location": "/docs/guide"}, ""),
            "/start": (301, {"Location": "/docs/"}, ""),
            **{f"/docs/hop{i}": (302, {"Location": f"/docs/hop{i + 1}"}, "") for i in range(12)},
            "/docs/away": (302, {"Location": "/blog/elsewhere"}, ""),
            "/docs/broken": (500, {"Content-Type": html}, "oops"),
            "/docs/download": (200, {"Content-Type": "application/octet-stream"}, b"\x00\x01binary"),
            "/docs/file.pdf": (200, {"Content-Type": "application/pdf"}, b"%PDF-1.4\x00"),
            "/docs/requirements": (200, {"Content-Type": "text/plain"}, "acme==1.0\n"),
            "/blog/post": (200, {"Content-Type": html}, GUIDE),
            "/robots.txt": (200, {"Content-Type": "text/plain"}, ROBOTS),
            "/llms.txt": (200, {"Content-Type": "text/plain"}, LLMS),
        }
        self.slow = {"/docs/slow"}
        self.hits: list[str] = []
        self.lock = threading.Lock()

    def count(self, path: str) -> int:
        with self.lock:
            return self.hits.count(path)


def _handler(site: Site):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # keep test output clean
            pass

        def do_GET(self):
            path = self.path.split("?", 1)[0]
            with site.lock:
                site.hits.append(path)
            if path in site.slow:
                time.sleep(SLOW_SECONDS)
                self._send(200, {"Content-Type": "text/html"}, _page("Slow", "<main><h1>Slow</h1></main>"))
                return
            if path == "/docs/flaky":
                with site.lock:
                    first = site.hits.count(path) == 1
                if first:
                    self._send(503, {"Retry-After": "0", "Content-Type": "text/plain"}, "busy")
                else:
                    self._send(200, {"Content-Type": "text/html"}, FLAKY)
                return
            if path == "/sitemap.xml":
                host = self.headers.get("Host")
                self._send(200, {"Content-Type": "application/xml"}, _sitemap(f"http://{host}"))
                return
            status, headers, body = site.routes.get(path, (404, {"Content-Type": "text/html"}, "nope"))
            data = body.encode("utf-8") if isinstance(body, str) else body
            headers = dict(headers)
            if status == 200:
                etag = '"' + hashlib.md5(data).hexdigest() + '"'
                headers["ETag"] = etag
                if self.headers.get("If-None-Match") == etag:
                    self._send(304, {"ETag": etag}, b"")
                    return
            self._send(status, headers, data)

        def _send(self, status, headers, body):
            data = body.encode("utf-8") if isinstance(body, str) else body
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if status != 304:
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the scraper gave up on a slow page: expected

    return Handler


@contextlib.contextmanager
def _serve():
    s = Site()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(s))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    s.base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield s
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def site():
    """A fresh site per test, for tests that change it."""
    with _serve() as s:
        yield s


def _options(**kw) -> ScrapeOptions:
    base = dict(concurrency=4, delay=0.0, timeout=TIMEOUT, retries=1, retry_backoff=0.01)
    base.update(kw)
    return ScrapeOptions(**base)


def _by_url(summary) -> dict:
    return {o.url: o for o in summary.outcomes}


@pytest.fixture(scope="module")
def scraped(tmp_path_factory):
    """One scrape of the site, shared by the tests that only read its result."""
    with _serve() as site:
        docs = tmp_path_factory.mktemp("scraped") / "md_docs"
        summary = scrape_site(f"{site.base}/docs/", docs, "Acme@latest", _options())
        yield site, docs, summary


def _content(docs: Path, page: str) -> str:
    return (docs / "Acme@latest" / page / "docContent.md").read_text(encoding="utf-8")


def _toc(docs: Path, page: str) -> str:
    return (docs / "Acme@latest" / page / "docTOC.md").read_text(encoding="utf-8")


def test_generator_pages_become_clean_markdown(scraped):
    site, docs, summary = scraped
    text = _content(docs, "Getting Started")
    assert text.startswith("# Getting Started\n")
    assert f"> **Source**: {site.base}/docs/" in text
    assert "```bash\npip install acme\nacme --version\n```" in text
    assert "## Install {#install}" in text
    assert "> **Heads up**" in text and "> Python 3.10 or later is required." in text
    assert "| timeout | seconds \\| none |" in text
    assert "acme_client" in text  # underscores not escaped
    # a link to a page of the set, crawled on loopback: its doc4llm path, not 127.0.0.1
    assert "[the guide](<../Guide/docContent.md>)" in text and f"]({site.base}/docs/guide)" not in text
    for chrome in ("cookies", "Copyright", "Edit this page", "Breadcrumbs", "Next", "Copy"):
        assert chrome not in text, chrome
    toc = _toc(docs, "Getting Started")
    assert f"{site.base}/docs/#install" in toc and f"{site.base}/docs/#options-table" in toc

    mk = _content(docs, "Configuration")
    assert "## Proxy settings {#proxy-settings}" in mk and "¶" not in mk
    assert "```yaml\nproxy:\n  url: http://proxy:3128\n```" in mk
    assert "> **Note**" in mk and "> **Pro tip**" in mk and "Edit this page" not in mk

    sp = _content(docs, "Settings")
    assert "## Database URL {#database-url}" in sp
    assert '```python\nDATABASE_URL = "sqlite://"\n```' in sp
    assert "> **Warning**" in sp and "Navigation" not in sp and "index" not in sp.split("---", 1)[1]

    vp = _content(docs, "Routing")
    assert "## Dynamic routes {#dynamic-routes}" in vp
    assert "```ts\nexport default {\n  paths: ['a', 'b']\n}\n```" in vp
    assert "> **TIP**" in vp and "Edit" not in vp

    mi = _content(docs, "Authentication")
    assert "## Bearer tokens {#bearer-tokens}" in mi and "```shell\ncurl" in mi
    assert "> **Warning**" in mi and "Next: Guide" not in mi and "\nAPI\n" not in mi

    gb = _content(docs, "Webhooks")
    assert "## Retries {#retries}" in gb and "> **Info**" in gb

    gens = {o.url: o for o in summary.outcomes}
    assert gens[f"{site.base}/docs/"].change == "created"
    assert summary.generator in {"docusaurus", "generic", "mkdocs", "sphinx", "vitepress", "mintlify", "gitbook"}


def test_traps_each_handled(scraped):
    site, docs, summary = scraped
    by = _by_url(summary)
    b = site.base
    assert by[f"{b}/docs/orphan"].status == "written"  # sitemap-only page
    assert by[f"{b}/docs/private/secret"].reason == "disallowed by robots.txt"
    assert site.count("/docs/private/secret") == 0
    assert by["https://elsewhere.example.org/x"].reason == "out of scope (other host)"
    assert by[f"{b}/blog/post"].reason == "out of scope (outside path prefix)"
    assert site.count("/blog/post") == 0
    assert by[f"{b}/docs/loop-a"].status == "failed" and by[f"{b}/docs/loop-a"].reason == "redirect loop"
    assert site.count("/docs/loop-a") == 1 and site.count("/docs/loop-b") == 1
    assert by[f"{b}/docs/hop0"].reason == "more than 10 redirects" and site.count("/docs/hop11") == 0
    assert by[f"{b}/docs/broken"].status == "failed" and by[f"{b}/docs/broken"].reason == "HTTP 500"
    assert site.count("/docs/broken") == 2  # one retry
    assert by[f"{b}/docs/slow"].status == "failed" and "timeout" in by[f"{b}/docs/slow"].reason
    assert by[f"{b}/docs/file.pdf"].reason == "not a page (.pdf)" and site.count("/docs/file.pdf") == 0
    assert by[f"{b}/docs/download"].reason == "not a page (application/octet-stream)"
    assert by[f"{b}/docs/requirements"].reason == "not a page (text/plain)"
    assert by[f"{b}/docs/away"].status == "skipped" and by[f"{b}/docs/away"].reason == "redirect target out of scope (outside path prefix)"
    assert site.count("/blog/elsewhere") == 0
    assert "already crawled" in by[f"{b}/docs/moved"].reason or by[f"{b}/docs/moved"].status == "skipped"
    # the tracking-parameter/fragment spelling of the guide is the same page
    assert site.count("/docs/guide") == 1
    assert site.count("/docs/") == 1  # the start page: fetched once, by discovery
    assert by[f"{b}/docs/genindex.html"].reason == "HTTP 404"  # a dead link on the Sphinx page
    assert summary.to_dict()["counts"]["failed"] == 5
    assert by[f"{b}/docs/flaky"].status == "written" and site.count("/docs/flaky") == 2  # 503 retried
    assert by[f"{b}/docs/old-name"].reason == f"moved (meta refresh to {b}/docs/guide)"
    assert "rel=canonical" in by[f"{b}/docs/guide/index.html"].reason or \
        "already crawled" in by[f"{b}/docs/guide/index.html"].reason
    assert not (docs / "Acme@latest" / "Guide (2)").exists()
    assert by[f"{b}/docs/own"].status == "written" and "Real content" in _content(docs, "Own Page")


def test_markdown_alternate_link_preferred(scraped):
    site, docs, summary = scraped
    text = _content(docs, "Alternate Page")
    assert "From the markdown alternate." in text and "ALT HTML" not in text
    assert f"> **Source**: {site.base}/docs/alt" in text
    assert site.count("/docs/alt.md") == 1


def test_start_url_redirect_moves_the_scope(site, tmp_path):
    summary = scrape_site(f"{site.base}/start", tmp_path / "md", "Acme@latest", _options())
    assert summary.root_url == f"{site.base}/docs/"
    assert summary.discovery["redirected_from"] == f"{site.base}/start"
    assert summary.count("written") > 10


def test_start_from_llms_txt(site, tmp_path):
    docs = tmp_path / "md"
    summary = scrape_site(f"{site.base}/llms.txt", docs, "Acme@latest", _options(max_pages=4))
    assert summary.root_url == f"{site.base}/"
    assert summary.discovery["llms_txt"] == f"{site.base}/llms.txt"
    assert "The markdown version" in (docs / "Acme@latest" / "Markdown Page" / "docContent.md").read_text()
    assert not (docs / "Acme@latest" / "llms.txt").exists()


def test_robots_txt_server_error_means_disallow_all(site, tmp_path):
    site.routes["/robots.txt"] = (503, {"Content-Type": "text/plain"}, "down")
    summary = scrape_site(f"{site.base}/docs/", tmp_path / "md", "Acme@latest", _options(retries=0))
    assert not summary.usable
    assert set(summary.reasons("skipped")) == {"disallowed by robots.txt"}
    assert site.count("/docs/") <= 1 and site.count("/docs/guide") == 0
    assert not (tmp_path / "md" / "Acme@latest").exists()
    ignored = scrape_site(f"{site.base}/docs/", tmp_path / "md", "Acme@latest",
                          _options(retries=0, robots=False, max_pages=2))
    assert ignored.usable
    again = scrape_site(f"{site.base}/docs/", tmp_path / "md", "Acme@latest",
                        _options(retries=0, prune=True))
    assert again.pruned == []  # robots.txt being down says nothing about pages being gone
    assert len(list((tmp_path / "md" / "Acme@latest").glob("*/docContent.md"))) == 2


def test_too_large_page_skipped_not_truncated(site, tmp_path):
    summary = scrape_site(f"{site.base}/docs/big", tmp_path / "md", "Big@1",
                          _options(max_bytes=100_000))
    outcome = _by_url(summary)[f"{site.base}/docs/big"]
    assert outcome.status == "skipped" and outcome.reason.startswith("too large")
    assert not summary.usable


def test_llms_txt_markdown_preferred_over_html(scraped):
    site, docs, summary = scraped
    text = _content(docs, "Markdown Page")
    assert "The markdown version with `code`." in text and "HTML VERSION" not in text
    assert text.count("# Markdown Page") == 1
    assert "[guide](<../Guide/docContent.md>)" in text
    assert site.count("/docs/md-page") == 0 and site.count("/docs/md-page.md") == 1
    assert summary.discovery["llms_txt"].endswith("/llms.txt")
    assert f"{site.base}/docs/md-page#details" in _toc(docs, "Markdown Page")


def test_latin1_big_and_duplicate_titles(scraped):
    site, docs, summary = scraped
    latin = _content(docs, "Café résumé")
    assert "Crème brûlée and naïve settings" in latin and "\ufffd" not in latin
    big = _content(docs, "Big Reference")
    assert f"## Item {BIG_SECTIONS - 1} {{#item-{BIG_SECTIONS - 1}}}" in big
    assert (docs / "Acme@latest" / "Overview").is_dir() and (docs / "Acme@latest" / "Overview (2)").is_dir()
    texts = {_content(docs, "Overview"), _content(docs, "Overview (2)")}
    assert any("First overview" in t for t in texts) and any("Second overview" in t for t in texts)


def test_set_metadata(scraped):
    import yaml

    site, docs, summary = scraped
    meta = yaml.safe_load((docs / "Acme@latest" / "doc4llm-set.yaml").read_text())
    scrape = meta["origins"]["scrape"]
    assert scrape["source"] == f"{site.base}/docs/"
    assert scrape["pages_written"] == summary.count("written") > 10
    assert scrape["scraped_at"]


def test_rescrape_is_incremental_and_prune(site, tmp_path):
    docs = tmp_path / "md_docs"
    first = scrape_site(f"{site.base}/docs/", docs, "Acme@latest", _options())
    guide = docs / "Acme@latest" / "Guide" / "docContent.md"
    mtime = guide.stat().st_mtime_ns
    time.sleep(0.01)
    # change one page, break one page, remove one page
    site.routes["/docs/gitbook"] = (200, {"Content-Type": "text/html"},
                                    GITBOOK.replace("five times", "seven times"))
    site.routes["/docs/mintlify"] = (500, {"Content-Type": "text/html"}, "down")
    del site.routes["/docs/orphan"]
    second = scrape_site(f"{site.base}/docs/", docs, "Acme@latest", _options(prune=True))
    by = _by_url(second)
    assert guide.stat().st_mtime_ns == mtime  # not even rewritten
    assert by[f"{site.base}/docs/guide"].status == "unchanged"
    assert by[f"{site.base}/docs/guide"].reason == "not modified (304)"
    assert by[f"{site.base}/docs/"].reason == "not modified (304)"
    assert by[f"{site.base}/docs/gitbook"].change == "updated"
    assert "seven times" in _content(docs, "Webhooks")
    assert by[f"{site.base}/docs/mintlify"].status == "failed"
    assert "Bearer tokens" in _content(docs, "Authentication")  # failed fetch kept the old copy
    assert second.pruned == ["Orphan Page"]
    assert not (docs / "Acme@latest" / "Orphan Page").exists()
    assert second.count("written") == 1
    assert second.count("unchanged") == first.count("written") - 3


def test_limits_and_patterns(site, tmp_path):
    docs = tmp_path / "md_docs"
    summary = scrape_site(f"{site.base}/docs/", docs, "Acme@latest",
                          _options(max_pages=3, deny=[r"/docs/big$"], robots=False))
    by = _by_url(summary)
    assert by[f"{site.base}/docs/big"].reason == "denied by --deny"
    assert summary.count("written") + summary.count("failed") <= 3
    assert any(o.reason == "over --max-pages 3" for o in summary.outcomes)

    shallow = scrape_site(f"{site.base}/docs/", tmp_path / "d2", "Acme@latest",
                          _options(max_depth=0))
    written = {o.url for o in shallow.outcomes if o.status == "written"}
    assert f"{site.base}/docs/" in written and f"{site.base}/docs/orphan" in written
    assert f"{site.base}/docs/mkdocs" not in written

    allowed = scrape_site(f"{site.base}/docs/", tmp_path / "d3", "Acme@latest",
                          _options(allow=[r"/docs/(guide|mkdocs)$"]))
    written = {o.url.rsplit("/", 1)[-1] for o in allowed.outcomes if o.status == "written"}
    assert written == {"", "guide", "mkdocs"}


def test_cli_json_and_search(site, tmp_path):
    docs = tmp_path / "md_docs"
    run = subprocess.run(
        [sys.executable, "-m", "doc4llm", "scrape", f"{site.base}/docs/", "--set", "Acme@latest",
         "--docs-dir", str(docs), "--json", "--delay", "0", "--timeout", str(TIMEOUT), "--retries", "0",
         "--concurrency", "8"],
        capture_output=True, text=True, timeout=60,
    )
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["ok"] is True and data["counts"]["fetched"] > 10 and data["counts"]["failed"] == 6  # --retries 0: the flaky 503 too
    assert data["failed_reasons"]["redirect loop"] == 1 and data["failed_reasons"]["HTTP 503"] == 1
    assert "created" in run.stderr  # progress on stderr
    search = subprocess.run(  # lexical: what is checked is the scraped pages, not the embedder
        [sys.executable, "-m", "doc4llm", "search", "proxy settings restart", "--docs-dir", str(docs),
         "--json", "--embedder", "none"], capture_output=True, text=True, timeout=120,
    )
    if search.returncode == 2 and "No such command" in search.stderr:
        pytest.skip("search command not built yet")
    assert search.returncode == 0, search.stderr
    pages = [r["page"] for r in json.loads(search.stdout)["results"]]
    assert "Configuration" in pages


def test_cli_nothing_usable_exits_non_zero(site, tmp_path):
    docs = tmp_path / "md_docs"
    run = subprocess.run(
        [sys.executable, "-m", "doc4llm", "scrape", f"{site.base}/docs/broken", "--set", "X@1",
         "--docs-dir", str(docs), "--delay", "0", "--retries", "0", "-q"],
        capture_output=True, text=True, timeout=60,
    )
    assert run.returncode == 3
    assert "nothing usable" in run.stderr and "HTTP 500" in run.stderr
    assert not (docs / "X@1").exists()
    as_json = subprocess.run(
        [sys.executable, "-m", "doc4llm", "scrape", f"{site.base}/docs/broken", "--set", "X@1",
         "--docs-dir", str(docs), "--delay", "0", "--retries", "0", "-q", "--json"],
        capture_output=True, text=True, timeout=60,
    )
    assert as_json.returncode == 3
    data = json.loads(as_json.stdout)
    assert data["ok"] is False and data["failed"] == [
        {"url": f"{site.base}/docs/broken", "status": "failed", "reason": "HTTP 500"}]
    bad = subprocess.run(
        [sys.executable, "-m", "doc4llm", "scrape", f"{site.base}/docs/", "--set", "no-version",
         "--docs-dir", str(docs)], capture_output=True, text=True, timeout=60,
    )
    assert bad.returncode == 2
