"""docTOC.md: write doc4llm's clean format, read it and the upstream crawler's format.

Our format (one line per heading, greppable, never split on ':'):

    # Hooks reference

    > **Source**: https://code.claude.com/docs/en/hooks
    > **Page**: L1-L420 · ~5200 tok · 67 sections

    ## 1. Configuration · L12-L40 · ~320 tok · https://code.claude.com/docs/en/hooks#configuration
    ### 1.1. Structure · L15-L30 · ~120 tok · https://code.claude.com/docs/en/hooks#structure

Each entry keeps the heading's own markdown level; the number is its depth under the page
title (`1.`, `1.1.`, ...); `L<start>-L<end>` is the section's own text in docContent.md;
the URL is present when the page has one. The preamble is a list line `- [Overview /
Preamble] · L5-L9 · ~40 tok`. Extra H1s after the page title are `# N. Title ...` lines.

The upstream format (`## 1. Configuration：https://...#configuration`, a `原文链接:` source
line, a `提取的锚点数量:` count line, h5+ as list lines, `0.1.` numbering) is read too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from doc4llm.corpus.sections import PREAMBLE, Section

# Linear in the line: `parse_toc` matches these against the line with its whitespace
# collapsed (one space between words, none at the ends), so no two whitespace runs can
# share spaces, and possessive quantifiers never give back what they took. The upstream
# line's URL is its last "：" part, found with rfind.
_OURS = re.compile(
    r"(?:(#{1,6})|-) (?:(?:\d++\.)++ )?(.*?) · L(\d++)-L(\d++) · ~(\d++) tok(?: · (\S++))?"
)
_UPSTREAM_HEAD = re.compile(r"(?:(#{1,6})|[-*]) (?:(?:\d++\.)++ ?)?(.*)")
_UPSTREAM_URL = re.compile(r"(?:[A-Za-z][\w+.-]*+://|[/#])\S*+")
_UPSTREAM_NOURL = re.compile(r"(#{2,6}) (?:(?:\d++\.)++ ?)?(.+)")
_SOURCE = re.compile(r">? ?\**(?:Source|原文链接)\**+ ?[:：] ?(\S+)")


def _upstream(line: str) -> tuple[int, str, str] | None:
    """An upstream entry `#### 1.2. Title：URL` (or `- Title：URL`): (level, title, url)."""
    colon = line.rfind("：")
    if colon < 0:
        return None
    url = line[colon + 1:].strip()
    head = _UPSTREAM_HEAD.fullmatch(line[:colon].rstrip())
    if not head or not _UPSTREAM_URL.fullmatch(url):
        return None
    return (len(head.group(1)) if head.group(1) else 5), head.group(2).strip(), url


@dataclass
class TocEntry:
    title: str
    level: int | None
    url: str | None = None
    start: int | None = None
    end: int | None = None
    tokens: int | None = None


def render_toc(title: str, source: str | None, sections: list[Section], page_url: str | None,
               total_lines: int, *, slug_anchors: bool = True) -> str:
    """Render our docTOC.md for a page's parsed sections.

    A section's URL is `page_url#anchor`; the page intro links the page itself. With
    `slug_anchors=False` (pages converted from HTML, whose real ids are all written as
    `{#id}`) a heading without an explicit anchor links the page, never a guessed slug."""
    out = [f"# {title}", ""]
    if source:
        out.append(f"> **Source**: {source}")
    total_tokens = sum(s.tokens for s in sections)
    out.append(f"> **Page**: L1-L{max(total_lines, 1)} · ~{total_tokens} tok · {len(sections)} sections")
    out.append("")
    counters: list[int] = []
    seen_title_h1 = False
    under_title = False  # numbering counts depth below the page title H1, else from 1
    for sec in sections:
        anchored = sec.anchor and (slug_anchors or sec.explicit_anchor) and not (
            sec.level == 1 and len(sec.heading_path) == 1 and not seen_title_h1
            and not sec.explicit_anchor)
        url = f"{page_url}#{sec.anchor}" if page_url and anchored else page_url
        tail = f" · L{sec.start}-L{sec.end} · ~{sec.tokens} tok" + (f" · {url}" if url else "")
        if sec.level == 0:
            out.append(f"- {PREAMBLE}{tail}")
            continue
        if len(sec.heading_path) == 1:
            under_title = sec.level == 1 and not seen_title_h1
            if under_title:
                seen_title_h1 = True
                out.append(f"- {sec.title} (page intro){tail}")
                continue
        depth = len(sec.heading_path) - (1 if under_title else 0)
        while len(counters) < depth:
            counters.append(0)
        del counters[depth:]
        counters[depth - 1] += 1
        number = ".".join(str(c) for c in counters) + "."
        out.append(f"{'#' * sec.level} {number} {sec.title}{tail}")
    return "\n".join(out) + "\n"


def parse_toc(text: str) -> tuple[str | None, str | None, list[TocEntry]]:
    """Parse either format: (title, source url, entries in order)."""
    title = source = None
    entries: list[TocEntry] = []
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if not line:
            continue
        if title is None and line.startswith("# ") and not _OURS.fullmatch(line) \
                and not _upstream(line):
            title = line[2:].strip()
            continue
        m = _SOURCE.match(line)
        if m:
            source = m.group(1)
            continue
        if line.startswith(">") or line.startswith("提取的锚点数量"):
            continue
        m = _OURS.fullmatch(line)
        if m:
            name = m.group(2)
            if name.endswith(" (page intro)"):
                name = name[: -len(" (page intro)")]
                level = 1
            else:
                level = len(m.group(1)) if m.group(1) else (0 if name == PREAMBLE else None)
            entries.append(TocEntry(name, level, m.group(6), int(m.group(3)), int(m.group(4)), int(m.group(5))))
            continue
        upstream = _upstream(line)
        if upstream:
            level, name, url = upstream
            entries.append(TocEntry(name, level, url))
            continue
        m = _UPSTREAM_NOURL.fullmatch(line)
        if m:
            entries.append(TocEntry(m.group(2).strip(), len(m.group(1))))
    return title, source, entries


def _norm(s: str) -> str:
    return re.sub(r"[^\w]+", "", s.casefold())


def attach_urls(sections: list[Section], entries: list[TocEntry], page_url: str | None) -> dict[int, str]:
    """Map section index -> URL, matching TOC entries to sections in order by title."""
    urls: dict[int, str] = {}
    j = 0
    for sec in sections:
        if sec.level == 0:
            continue
        key = _norm(sec.title)
        for k in range(j, min(len(entries), j + 25)):
            if entries[k].url and _norm(entries[k].title) == key:
                urls[sec.index] = entries[k].url
                j = k + 1
                break
    if page_url and page_url.startswith(("http://", "https://")):
        for sec in sections:
            if sec.index not in urls and sec.level:
                top = len(sec.heading_path) == 1
                urls[sec.index] = page_url if top else f"{page_url}#{sec.anchor}"
    return urls
