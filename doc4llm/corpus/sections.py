"""Split a markdown page into sections: heading path, level, 1-based line range, anchor.

markdown-it-py finds the headings (so `#` lines in fenced or indented code, setext
headings and inline markup are handled as CommonMark says). Three repairs happen first,
each keeping line numbers unchanged:

- YAML front matter at the top is blanked (it is metadata, not a heading).
- An unclosed code fence is closed just before the first later line that is an ATX
  heading of level >= 2 preceded by a blank line (a runbook pasted with a missing
  closing fence must not swallow the rest of the page; `# comment` lines in shell code
  stay code).
- The doc4llm page header (`# Title`, source line, `---`) is recognised: when the body
  repeats the title as its own H1, the text between the header and that H1 becomes the
  `[Overview / Preamble]` section instead of a duplicate page section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

PREAMBLE = "[Overview / Preamble]"

_FENCE_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$")
_EXPLICIT_ANCHOR = re.compile(r"\s*\{#([A-Za-z0-9_:.\-]+)\}\s*$")
_SOURCE_LINE = re.compile(r"^>\s*\*\*(Source|原文链接)\*\*\s*[:：]\s*(.*)$")
_FRONT_MATTER_END = re.compile(r"^(---|\.\.\.)\s*$")


@dataclass
class Section:
    """One heading's own text (up to the next heading of any level)."""

    title: str
    level: int  # 0 for the preamble
    heading_path: list[str]
    start: int  # 1-based inclusive line numbers in the page file
    end: int
    anchor: str = ""
    tokens: int = 0
    index: int = 0  # position in the page
    subtree_end: int = 0  # last line including subsections
    address: str = ""  # unique within the page: heading path, duplicates suffixed " (2)"
    explicit_anchor: bool = False
    children: list[int] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "title": self.title,
            "level": self.level,
            "heading_path": self.heading_path,
            "lines": [self.start, self.end],
            "subtree_lines": [self.start, self.subtree_end],
            "tokens": self.tokens,
            "anchor": self.anchor,
            "address": self.address,
        }


@dataclass
class ParsedPage:
    sections: list[Section]
    title: str | None  # the page title (header H1, else first H1, else front matter title)
    source: str | None  # from the `> **Source**:` line, when present
    front_matter: dict
    line_count: int


def estimate_tokens(text: str) -> int:
    """~4 characters per token: cheap, monotone, good enough for budgets."""
    return max(1, (len(text) + 3) // 4) if text.strip() else 0


def slugify(text: str) -> str:
    """GitHub-style anchor: lowercase, punctuation dropped, spaces to hyphens."""
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text, flags=re.UNICODE)
    return re.sub(r" ", "-", text)


@lru_cache(maxsize=1)
def _markdown_parser():
    from markdown_it import MarkdownIt

    # Block structure is what matters; inline parsing runs only on heading text.
    return MarkdownIt("commonmark", {"html": True})


def _front_matter(lines: list[str]) -> tuple[int, dict]:
    """Return (number of front-matter lines, parsed mapping)."""
    if not lines or lines[0].strip() != "---":
        return 0, {}
    for i in range(1, min(len(lines), 400)):
        if _FRONT_MATTER_END.match(lines[i]):
            import yaml

            try:
                data = yaml.safe_load("\n".join(lines[1:i])) or {}
            except yaml.YAMLError:
                data = {}
            if not isinstance(data, dict):
                return 0, {}
            return i + 1, data
    return 0, {}


def _close_unclosed_fences(lines: list[str]) -> list[str]:
    """Return lines where an unclosed fence is closed before the next heading (see module doc)."""
    out = list(lines)
    i, n = 0, len(out)
    while i < n:
        m = _FENCE_OPEN.match(out[i])
        if not m or (m.group(2)[0] == "`" and "`" in m.group(3)):
            i += 1
            continue
        marker = m.group(2)
        closer = re.compile(r"^ {0,3}" + re.escape(marker[0]) + "{" + str(len(marker)) + r",}\s*$")
        j = i + 1
        while j < n and not closer.match(out[j]):
            j += 1
        if j < n:
            i = j + 1
            continue
        # Unclosed: find the first blank-line-preceded ATX heading of level >= 2.
        for k in range(i + 2, n):
            h = _ATX.match(out[k])
            if h and len(h.group(1)) >= 2 and h.group(2) and not out[k - 1].strip():
                out[k - 1] = marker[0] * len(marker)
                i = k
                break
        else:
            return out
    return out


def _heading_text(inline_token) -> str:
    parts: list[str] = []
    for child in inline_token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(child.content)
    return re.sub(r"\s+", " ", "".join(parts)).strip()


def _detect_header(lines: list[str], first_heading_line: int | None) -> int:
    """If the page starts with the doc4llm header, return the line index of its `---`."""
    if first_heading_line is None or first_heading_line > 2:
        return -1
    for i in range(first_heading_line + 1, min(len(lines), first_heading_line + 8)):
        s = lines[i].strip()
        if not s:
            continue
        if _SOURCE_LINE.match(s):
            for j in range(i + 1, min(len(lines), i + 5)):
                t = lines[j].strip()
                if not t:
                    continue
                return j if re.fullmatch(r"-{3,}", t) else -1
            return -1
        return -1
    return -1


def parse_page(text: str) -> ParsedPage:
    """Parse markdown text into sections with heading paths and line ranges."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    n_lines = len(lines)
    fm_len, front = _front_matter(lines)
    work = [""] * fm_len + lines[fm_len:]
    work = _close_unclosed_fences(work)

    tokens = _markdown_parser().parse("\n".join(work))
    headings: list[tuple[int, int, str]] = []  # (line index 0-based, level, raw text)
    for idx, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map:
            text_ = _heading_text(tokens[idx + 1])
            headings.append((tok.map[0], int(tok.tag[1]), text_))

    source = None
    for line in lines[fm_len : fm_len + 12]:
        m = _SOURCE_LINE.match(line.strip())
        if m:
            source = m.group(2).strip() or None
            break

    header_end = _detect_header(lines, headings[0][0] if headings else None)
    page_title: str | None = None
    body_start = fm_len
    skip_first = False
    if header_end >= 0 and headings and headings[0][1] == 1:
        page_title = _EXPLICIT_ANCHOR.sub("", headings[0][2])
        later = [h for h in headings[1:] if h[0] > header_end]
        if later and later[0][1] == 1 and _EXPLICIT_ANCHOR.sub("", later[0][2]).casefold() == page_title.casefold():
            skip_first = True  # the body repeats the title: the header is only a header
            body_start = header_end + 1
    if skip_first:
        headings = headings[1:]
    if page_title is None:
        h1 = next((h for h in headings if h[1] == 1), None)
        if h1:
            page_title = _EXPLICIT_ANCHOR.sub("", h1[2])
        elif isinstance(front.get("title"), str) and front["title"].strip():
            page_title = front["title"].strip()

    sections: list[Section] = []
    first_heading = headings[0][0] if headings else n_lines
    pre_lines = lines[body_start:first_heading]
    if any(s.strip() for s in pre_lines):
        start = body_start + next(i for i, s in enumerate(pre_lines) if s.strip())
        sections.append(Section(PREAMBLE, 0, [PREAMBLE], start + 1, first_heading))

    stack: list[tuple[int, str]] = []
    for i, (line_idx, level, raw) in enumerate(headings):
        explicit = _EXPLICIT_ANCHOR.search(raw)
        title = _EXPLICIT_ANCHOR.sub("", raw) if explicit else raw
        title = title or f"(untitled h{level})"
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        end = headings[i + 1][0] if i + 1 < len(headings) else n_lines
        sec = Section(title, level, [t for _, t in stack], line_idx + 1, end)
        if explicit:
            sec.anchor, sec.explicit_anchor = explicit.group(1), True
        sections.append(sec)

    _finish(sections, lines)
    return ParsedPage(sections, page_title, source, front, n_lines)


def _finish(sections: list[Section], lines: list[str]) -> None:
    """Trim trailing blank lines, compute subtree ends, tokens, unique anchors/addresses."""
    slug_counts: dict[str, int] = {}
    addr_counts: dict[str, int] = {}
    for i, sec in enumerate(sections):
        sec.index = i
        while sec.end > sec.start and not lines[sec.end - 1].strip():
            sec.end -= 1
        sec.tokens = estimate_tokens("\n".join(lines[sec.start - 1 : sec.end]))
        if not sec.explicit_anchor:
            base = slugify(sec.title) if sec.level else ""
            count = slug_counts.get(base, 0)
            slug_counts[base] = count + 1
            sec.anchor = base if count == 0 else f"{base}-{count}"
        addr = " > ".join(sec.heading_path)
        count = addr_counts.get(addr, 0) + 1
        addr_counts[addr] = count
        sec.address = addr if count == 1 else f"{addr} ({count})"
    for i, sec in enumerate(sections):
        sec.subtree_end = sec.end
        if sec.level == 0:
            continue
        for later in sections[i + 1 :]:
            if later.level <= sec.level:
                break
            sec.subtree_end = max(sec.subtree_end, later.end)
            if len(later.heading_path) == len(sec.heading_path) + 1:
                sec.children.append(later.index)


def parse_sections(text: str) -> list[Section]:
    return parse_page(text).sections
