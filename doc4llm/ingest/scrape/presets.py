"""Where the content is on pages of common documentation generators, and what to drop.

A preset is data: how to recognise the generator, CSS selectors of the main content (first
match wins) and of the chrome inside it (breadcrumbs, edit links, prev/next). Pages that
match no preset get the generic rules, which are also applied after every preset.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from doc4llm.ingest.scrape.selectors import Selector, compile_selector, first_matches


@dataclass(frozen=True)
class Preset:
    name: str
    generator_words: tuple[str, ...]  # matched in <meta name="generator">
    markers: tuple[str, ...]  # CSS selectors that betray the generator
    content: tuple[str, ...]
    drop: tuple[str, ...] = ()


PRESETS: tuple[Preset, ...] = (
    Preset(
        "docusaurus", ("docusaurus",), ("#__docusaurus", ".theme-doc-markdown"),
        ("article .theme-doc-markdown", ".theme-doc-markdown", "main article", "main"),
        (".theme-doc-breadcrumbs", ".theme-doc-footer", ".pagination-nav", ".theme-doc-toc-mobile",
         ".theme-doc-version-badge", ".theme-doc-version-banner", ".hash-link"),
    ),
    Preset(
        "mkdocs", ("mkdocs",), (".md-content", "div.rst-content", "#mkdocs-search-modal"),
        ("article.md-content__inner", ".md-content", "div[role=main]", "main"),
        (".md-source-file", ".md-content__button", ".md-feedback", ".md-footer", ".md-sidebar",
         ".md-header", ".md-tags"),
    ),
    Preset(
        "sphinx", ("sphinx",), ("div.sphinxsidebar", "div.documentwrapper", "a.headerlink"),
        ("article.bd-article", "article[role=main]", "div[itemprop=articleBody]", "div.body[role=main]", "div[role=main]",
         "div.body", "div.document", "main"),
        (".sphinxsidebar", ".related", ".prev-next-area", ".bd-sidebar", ".rst-footer-buttons",
         ".wy-breadcrumbs", ".footer", ".bd-header-article"),
    ),
    Preset(
        "vitepress", ("vitepress",), ("#VPContent", ".vp-doc"),
        (".vp-doc", "main"),
        (".edit-link", ".prev-next", ".VPDocFooter", ".VPDocAside", ".VPLocalNav", "span.lang"),
    ),
    Preset(
        "mintlify", ("mintlify",), ("#content-area", "script[src*=mintlify]", "link[href*=mintlify]"),
        ("#content-area", ".mdx-content", "article", "main"),
        ("#pagination", "#footer", "#table-of-contents", ".feedback-toolbar", ".eyebrow",
         "[data-testid=feedback]"),
    ),
    Preset(
        "gitbook", ("gitbook",), ("html.gitbook-root", "[data-gitbook]", "script[src*=gitbook]"),
        ("main",),
        ("[aria-label=Breadcrumb]", "[aria-label=Breadcrumbs]", "[data-testid=page-footer]"),
    ),
)

# Chrome removed from every page, before the main content is chosen.
GENERIC_DROP: tuple[str, ...] = (
    "script", "style", "noscript", "template", "iframe", "svg", "canvas", "form", "button",
    "input", "select", "textarea", "dialog", "nav", "aside", "footer", "[role=navigation]",
    "[role=contentinfo]", "[role=search]", "[role=banner]", "[role=dialog]", "[hidden]",
    "[aria-label*=breadcrumb i]", ".breadcrumb", ".breadcrumbs",
    "[id*=cookie i]", "[class*=cookie i]", "[id*=consent i]", "[class*=consent i]",
    "[class*=gdpr i]", ".skip-link", ".skip-to-content", "a[href='#content']",
    "a[href='#main-content']", ".sr-only", ".visually-hidden", ".screen-reader-text",
    ".headerlink", ".header-anchor", ".anchor-link", ".table-of-contents", "#toc", ".toc",
    ".edit-this-page", ".edit-page", ".edit-link", ".page-feedback", ".feedback",
    ".pagination", ".linenos", ".lineno", ".line-numbers-rows", ".copy-button",
    ".copybtn", "link", "meta",
)

# Main-content candidates when no preset matched (first one with enough text wins).
GENERIC_CONTENT: tuple[str, ...] = (
    "main article", "article", "[role=main]", "main", "#content", "#main-content", ".content",
    ".markdown-body", ".markdown", ".document", "body",
)


@lru_cache(maxsize=64)
def compiled(selectors: tuple[str, ...]) -> list[Selector]:
    return [compile_selector(s) for s in selectors]


def detect(soup, generator: str = "") -> Preset | None:
    """The preset whose generator (from <meta name=generator>, lower-case) or marker
    matches this page."""
    for preset in PRESETS:
        if generator and any(w in generator for w in preset.generator_words):
            return preset
    markers = tuple(m for p in PRESETS for m in p.markers)
    hits = first_matches(soup, compiled(markers))
    i = 0
    for preset in PRESETS:
        if any(hits[i:i + len(preset.markers)]):
            return preset
        i += len(preset.markers)
    return None
