"""What of a section's markdown counts as its own text (indexed words, embedded words).

Its own module because both the lexical build (build.py) and the vectors (vectors.py)
need it, and vectors must not import build (build -> vectors only: no cycle).
"""

from __future__ import annotations

import re

_HEADER_LINE = re.compile(r"^\s*(>\s*\*\*(Source|原文链接)\*\*\s*[:：].*|-{3,}\s*|提取的锚点数量.*)$")
# `- [Fastify Error Codes](#fastify-error-codes)`: a line of a hand-written or generated
# table of contents, a link to a heading of the same page
_TOC_LINE = re.compile(r"^\s*+(?:[-*+]|\d+\.)\s++\[[^\]\n]{1,300}\]\(#[^)\s]{0,300}\)\s*+$")
TOC_MIN_LINES = 3


def own_text(text: str) -> str:
    """A section's text without its heading line, the page header lines, HTML comment
    blocks (invisible to readers; see corpus/comments.py), the anchors that end it (they
    belong to the next heading) and an in-page table of contents: its links repeat the
    page's headings, so a page's intro would otherwise match every name the page
    documents (Fastify's error-code list) and outrank the section that explains it."""
    from doc4llm.corpus.comments import blank_html_comments, is_anchor_line

    lines = blank_html_comments(text).split("\n")
    if lines and lines[0].lstrip().startswith("#"):
        lines = lines[1:]
    lines = [ln for ln in lines if not _HEADER_LINE.match(ln)]
    while lines and (not lines[-1].strip() or is_anchor_line(lines[-1])):
        lines.pop()  # `<a id="opt-mixin"></a>` before the next heading is that heading's
    if "](#" in text:
        toc = [bool(_TOC_LINE.match(ln)) for ln in lines]
        if sum(toc) >= TOC_MIN_LINES:
            lines = [ln for ln, is_toc in zip(lines, toc, strict=True) if not is_toc]
    return "\n".join(lines)
