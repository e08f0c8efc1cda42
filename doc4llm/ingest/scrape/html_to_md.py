"""HTML page -> (title, markdown body, links): main content only, in clean markdown.

beautifulsoup4 on the lxml parser does the DOM work (lxml is fast and repairs broken
HTML the way browsers do), markdownify turns the cleaned tree into markdown; a subclass
fixes what docs need: fenced code with its language, heading anchors as ` {#id}`, pipes
escaped in table cells, no escaping of `_` (snake_case identifiers must stay greppable).
The presets' selectors are matched by selectors.py, the block rewrites live in blocks.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from doc4llm.ingest.scrape.blocks import (
    HEADINGS,
    absolutize,
    api_entries_to_headings,
    classes,
    is_admonition,
    prepare_admonitions,
    prepare_code,
    prepare_headings,
    prepare_math,
    unfold_tabs,
    unlink_type_annotations,
)
from doc4llm.ingest.scrape.presets import GENERIC_CONTENT, GENERIC_DROP, Preset, compiled, detect
from doc4llm.ingest.scrape.selectors import first_matches, iter_tags, select_all
from doc4llm.ingest.scrape.urls import canonical_url

_TITLE_SEPARATORS = (" | ", " — ", " – ", " - ", " · ", " :: ", " » ")
_MARKDOWN_TYPES = ("text/markdown", "text/x-markdown")
_MIN_CONTENT_CHARS = 40


@dataclass
class ConvertedPage:
    title: str
    body: str
    links: list[str] = field(default_factory=list)  # absolute, canonical, in page order
    canonical: str | None = None  # <link rel=canonical>
    markdown_alternate: str | None = None  # <link rel=alternate type=text/markdown>
    generator: str | None = None
    refresh: str | None = None  # <meta http-equiv=refresh> target: a moved-page stub
    title_from_h1: bool = False  # False: the title came from <title> (or nowhere)
    nav_titles: dict[str, str] = field(default_factory=dict)  # URL -> its label in the site's nav


def strip_site_suffix(title: str, site_name: str | None = None) -> str:
    """'Configuration | Acme Docs' -> 'Configuration' (drop the part after the last separator)."""
    title = " ".join(title.split())
    if site_name:
        for sep in _TITLE_SEPARATORS:
            if title.endswith(sep + site_name):
                return title[: -len(sep + site_name)].strip()
    for sep in _TITLE_SEPARATORS:
        if sep in title:
            head = title.rsplit(sep, 1)[0].strip()
            if head:
                return head
    return title


_HEADING_ESCAPES = re.compile(
    r"\\(?=[!-/:-@\[-`{-~])"  # a backslash that would escape the next character
    r"|[`*\[\]]"  # code spans, emphasis, links
    r"|<(?=[A-Za-z/!?])"  # an HTML tag or autolink
    r"|&(?=#?\w+;)"  # an entity
    r"|~(?=~)|(?<=~)~"  # strikethrough
    r"|(?<!\w)_++|(?<!_)_++(?!\w)"  # `_` runs at a word edge (`__init__`), not snake_case;
    # each run is tried from its first `_` only: from every one, a long run cost n^2
    r"|\{(?=[^{}]*\}\s*$)"  # a trailing `{...}` read as an attribute list
    r"|(?<=\s)#+\s*$"  # a trailing `#` run, read as a closing sequence
)


def escape_heading(text: str) -> str:
    """Heading text as plain markdown: whitespace collapsed, every character that would
    start inline markup escaped, so the section scanner reads back exactly `text`."""
    text = " ".join(text.split())
    if not text.strip("#"):
        return ""
    return _HEADING_ESCAPES.sub(lambda m: "".join("\\" + c for c in m.group()), text)


def _make_converter():
    from markdownify import ATX, MarkdownConverter

    class DocsConverter(MarkdownConverter):
        """markdownify, adjusted for documentation pages."""

        def __init__(self):
            super().__init__(heading_style=ATX, bullets="-", escape_underscores=False,
                             escape_asterisks=False, strong_em_symbol="*", code_language="")

        def convert_hN(self, n, el, text, parent_tags):
            if "_inline" in parent_tags:
                return text
            text = escape_heading(el.get_text())
            if not text:
                return ""
            anchor = el.get("data-anchor")
            suffix = f" {{#{anchor}}}" if anchor else ""
            return f"\n\n{'#' * max(1, min(6, n))} {text}{suffix}\n\n"

        def convert_pre(self, el, text, parent_tags):
            code = el.get_text()
            code = code.strip("\n")
            if not code.strip():
                return ""
            longest = max((len(m) for m in re.findall(r"`{3,}", code)), default=2)
            fence = "`" * max(3, longest + 1)
            return f"\n\n{fence}{el.get('data-lang', '')}\n{code}\n{fence}\n\n"

        def convert_td(self, el, text, parent_tags):
            return super().convert_td(el, text.replace("|", "\\|"), parent_tags)

        def convert_th(self, el, text, parent_tags):
            return super().convert_th(el, text.replace("|", "\\|"), parent_tags)

    return DocsConverter()


_converter = None


def _to_markdown(element) -> str:
    global _converter
    if _converter is None:
        _converter = _make_converter()
    text = _converter.convert_soup(element)
    text = re.sub(r"[ \t]+\n", "\n", text)
    # collapse runs of blank lines outside code fences
    out, in_fence, blank = [], False, 0
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        if not in_fence and not line.strip():
            blank += 1
            if blank > 1:
                continue
        else:
            blank = 0
        out.append(line)
    return "\n".join(out).strip() + "\n"


def _choose_main(soup, preset: Preset | None):
    selectors = (preset.content if preset else ()) + GENERIC_CONTENT
    fallback = None
    for el in first_matches(soup, compiled(selectors)):
        if el is None:
            continue
        if len(el.get_text(" ", strip=True)) >= _MIN_CONTENT_CHARS or el.find("h1"):
            return el
        fallback = fallback or el
    return fallback or soup


def _drop_chrome(root, preset: Preset | None) -> None:
    selectors = compiled(GENERIC_DROP + (preset.drop if preset else ()))
    # Starlight-style callouts are <aside>: kept, they are content
    for el in select_all(root, selectors, keep=lambda el: el.name == "aside" and is_admonition(el)):
        el.decompose()
    for header in root.find_all("header"):
        if header.find(["h1", "h2"]) is None:
            header.decompose()


MAX_HTML_DEPTH = 120  # real pages nest < 40 elements; markdownify recurses ~2 frames a level


def flatten_deep(soup, max_depth: int = MAX_HTML_DEPTH) -> int:
    """Replace what lies deeper than `max_depth` elements by its text; return how many
    elements kept such text.

    markdownify converts by recursion, so 5,000 nested `<div>`s raised RecursionError (the
    page lost), and passes that look at every heading's or code block's text went
    quadratic on nesting (20,000 `<h1>`s in one another: 35 s). One explicit-stack walk;
    each flattened subtree's text is read once (`get_text` is iterative)."""
    from bs4 import NavigableString, Tag

    flattened = 0
    stack = [(child, 1) for child in reversed(soup.contents) if isinstance(child, Tag)]
    while stack:
        tag, depth = stack.pop()
        children = [c for c in tag.contents if isinstance(c, Tag)]
        if not children:
            continue
        if depth >= max_depth:
            text = tag.get_text()
            tag.clear()
            tag.append(NavigableString(text))
            flattened += 1
            continue
        stack.extend((c, depth + 1) for c in reversed(children))
    return flattened


def convert_html(html: str, url: str) -> ConvertedPage:
    """Convert one HTML page fetched from `url`."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "lxml")
    flatten_deep(soup)
    base = url
    canonical = markdown_alt = refresh = site_name = None
    generator = head_title = ""
    links: list[str] = []
    seen: set[str] = set()
    nav_titles: dict[str, str] = {}
    tab_sets: list = []
    for el in iter_tags(soup):  # one pass for everything outside the content
        name = el.name
        if name == "base" and el.get("href"):
            base = canonical_url(el["href"], base=url) or url
        elif name == "title" and not head_title:
            head_title = el.get_text(" ", strip=True)
        elif name == "a":
            target = canonical_url(el.get("href") or "", base=base) if el.get("href") else None
            if target and target not in seen:
                seen.add(target)
                links.append(target)
            if target and target not in nav_titles and "#" not in (el.get("href") or "") and _in_nav(el):
                label = " ".join(el.get_text(" ", strip=True).split())
                if 0 < len(label) <= 200:
                    nav_titles[target] = label
        elif name == "link" and el.get("href"):
            rel = [r.lower() for r in (el.get("rel") or [])]
            if "canonical" in rel:
                canonical = canonical_url(el["href"], base=base)
            elif "alternate" in rel and (el.get("type") or "").lower() in _MARKDOWN_TYPES:
                markdown_alt = canonical_url(el["href"], base=base)
        elif name == "meta" and (el.get("http-equiv") or "").lower() == "refresh":
            match = re.search(r"url\s*=\s*['\"]?([^'\";]+)", el.get("content") or "", re.IGNORECASE)
            if match:
                refresh = canonical_url(match.group(1).strip(), base=base)
        elif el.get("role") == "tablist" or (
                name == "div" and {"tabbed-set", "vp-code-group"} & set(classes(el))):
            tab_sets.append(el)
        elif name == "meta" and el.get("name") == "generator":
            generator = (el.get("content") or "").lower()
        elif name == "meta" and el.get("property") == "og:site_name":
            site_name = (el.get("content") or "").strip() or None

    preset = detect(soup, generator)
    unfold_tabs(soup, tab_sets)
    if soup.body is not None:
        _drop_chrome(soup.body, preset)
    main = _choose_main(soup, preset)
    if preset is not None and preset.name == "sphinx":
        unlink_type_annotations(main)
        api_entries_to_headings(soup, main)
    found: dict[str, list] = {"table": [], "pre": [], "heading": [], "link": [], "box": [],
                              "math": []}
    for el in iter_tags(main):
        name = el.name
        if name == "pre":
            found["pre"].append(el)
        elif name in HEADINGS:
            found["heading"].append(el)
        elif name in ("a", "img"):
            found["link"].append(el)
        elif name == "table" and {"highlighttable", "codehilitetable"} & set(classes(el)):
            found["table"].append(el)
        elif is_admonition(el):
            found["box"].append(el)
        elif name == "span" and "katex" in classes(el):
            found["math"].append(el)
    prepare_code(found["table"], found["pre"])
    prepare_math(found["math"])
    prepare_headings(found["heading"])
    prepare_admonitions(soup, found["box"])
    absolutize(found["link"], base)

    title = ""
    h1 = main.find("h1")
    if h1 is not None:
        title = " ".join(h1.get_text(" ", strip=True).split())
        if title:
            h1.decompose()  # the writer puts `# Title` on top
    title_from_h1 = bool(title)
    if not title:
        title = strip_site_suffix(head_title, site_name) if head_title else ""
    body = _to_markdown(main)
    return ConvertedPage(title=title, body=body, links=links, canonical=canonical,
                         markdown_alternate=markdown_alt, generator=preset.name if preset else None,
                         refresh=refresh, title_from_h1=title_from_h1, nav_titles=nav_titles)


_NAV_CLASSES = {"md-nav", "wy-menu", "sphinxsidebar", "toctree-wrapper", "bd-sidebar", "bd-docs-nav",
                "sidebar-tree", "menu", "nav", "navigation", "toc"}


def _in_nav(el, max_up: int = 12) -> bool:
    """An <a> inside the site's navigation (MkDocs `nav`, Sphinx sidebars and toctrees):
    its text is the page's title as the site names it."""
    for parent in el.parents:
        max_up -= 1
        if max_up < 0 or parent.name in ("body", "html", "[document]"):
            return False
        if parent.name == "nav" or parent.get("role") == "navigation" \
                or _NAV_CLASSES & set(classes(parent)):
            return True
    return False
