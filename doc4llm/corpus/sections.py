"""Split a markdown page into sections: heading path, level, 1-based line range, anchor.

Headings are found by a linear, line-based block scanner (pages of tens of MB must parse
in seconds; a full CommonMark parse costs ~2.5 s per MB). It follows CommonMark where
it decides what is a heading, and repairs malformed pages, always keeping line numbers:

- ATX (`## Title`, optional closing `#`s) and setext (`Title` underlined by `===` or
  `---` under a paragraph) headings, indented at most 3 spaces.
- Never headings: lines in fenced code, in 4-space-indented code, in HTML blocks
  (comments, `<pre>`, `<div>`...), in blockquotes, or inside list items (a `#` line
  indented under a list item is treated as the item's content).
- YAML front matter at the top is metadata, not a heading (its `title` is a page-title
  fallback); a leading `---` rule followed by prose is not taken for it.
- Unclosed code fences: a fence that runs to the end of the page, or that contains
  another opening fence with an info string (```` ```python ````, strong evidence that its
  closing line is missing), is closed just before the first later ATX heading of level
  >= 2 preceded by a blank line, so a pasted runbook does not swallow the rest of the page
  (`# comment` lines in shell code stay code).
- Heading titles are made plain; the heading line itself is left as written. `code`
  keeps its text verbatim (a `*` or `[` inside code is not markup), **emphasis** and
  links keep their text (also `[`code`](url)`), images are dropped, lower-case HTML tags
  (`<b>`, `<sub>`) are dropped but `Option<T>` keeps its `<T>`, backslash escapes and
  entities are decoded. Titles are cut at 1000 characters.
- A trailing attribute list, `{#id}`, `{ #id }` or `{: #id .class key=value }` (MkDocs,
  Pandoc, kramdown), leaves the title; its `#id` becomes the section's anchor.
- The doc4llm page header (`# Title`, source line, `---`) is recognised: when the body
  repeats the title as its own H1, the text between the header and that H1 becomes the
  `[Overview / Preamble]` section instead of a duplicate page section.
- Skipped levels (`#` then `####`) keep a well-formed heading path; duplicate paths get
  unique addresses (` (2)`) and anchors (`-1`, GitHub style).
- A leading byte-order mark is dropped; CRLF and CR line ends count as one line end.
"""

from __future__ import annotations

import bisect
import html
import re
from dataclasses import dataclass, field

PREAMBLE = "[Overview / Preamble]"

_FENCE_OPEN = re.compile(r"^(`{3,}|~{3,})(.*)$")  # on the line without its indentation
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?)|[ \t]*)$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_HR = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_LIST_ITEM = re.compile(r"^( *)([-+*]|\d{1,9}[.)])([ \t]+|$)")
_HTML_RAW = re.compile(r"^ {0,3}<(script|pre|style|textarea)(?:[\s>]|$)", re.IGNORECASE)
_HTML_BLOCK = re.compile(
    r"^ {0,3}</?(?:address|article|aside|blockquote|body|caption|center|col|colgroup|dd|"
    r"details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|h[1-6]|head|"
    r"header|hr|html|iframe|legend|li|main|menu|nav|ol|p|section|summary|table|tbody|td|"
    r"tfoot|th|thead|tr|ul)(?:[\s/>]|$)",
    re.IGNORECASE,
)
# the inside of a trailing `{...}` heading attribute list: `#id`, `.class`, `key=value`
_ATTR_LIST = re.compile(
    r"\{:?[ \t]*((?:[#.][\w:.\-]+|[\w\-]+=(?:\"[^\"]*\"|'[^']*'|[^\s}\"']*))"
    r"(?:[ \t]+(?:[#.][\w:.\-]+|[\w\-]+=(?:\"[^\"]*\"|'[^']*'|[^\s}\"']*)))*)[ \t]*\}"
)
# ... or, opened by `{:` or by an id, any attributes, bare words too (cibuildwheel's
# `{: #platform cmd-line env-var }` and `{: android}`)
_ANY_ATTR = r"(?:[#.][\w:.\-]+|[\w\-]+(?:=(?:\"[^\"]*\"|'[^']*'|[^\s}\"']*))?)"
_ATTR_LIST_LOOSE = re.compile(
    r"\{(?::[ \t]*" + _ANY_ATTR + r"|:?[ \t]*#[\w:.\-]+)(?:[ \t]+" + _ANY_ATTR + r")*[ \t]*\}"
)
_ATTR_ID = re.compile(r"(?:^|[ \t])#([\w:.\-]+)")
_CLOSING_HASHES = re.compile(r"(?<=[ \t])#++$")
# `> **Source**: x` (ours), `> **原文链接**: x` and a bare `原文链接: x` (upstream)
_SOURCE_LINE = re.compile(r"^>?\s*(?:\*\*(?:Source|原文链接)\*\*|原文链接)\s*[:：]\s*(.*)$")
FRONT_MATTER_NODES = 20_000  # real front matter has tens of keys
FRONT_MATTER_DEPTH = 20
_FRONT_MATTER_END = re.compile(r"^(---|\.\.\.)\s*$")
_SLUG_DROP = re.compile(r"[^\w\- ]")
_SPACES = re.compile(r"\s+")

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
    return _SLUG_DROP.sub("", text.strip().lower()).replace(" ", "-")


def _front_matter(lines: list[str]) -> tuple[int, dict]:
    """Return (number of front-matter lines, parsed mapping).

    Page text is untrusted: the YAML is read within a budget (safe_yaml: aliases counted as
    copies, nesting capped), and front matter over it is ignored like front matter that does
    not parse (`title: [[[[...` raised RecursionError out of PyYAML's composer)."""
    if not lines or lines[0].strip() != "---":
        return 0, {}
    for i in range(1, min(len(lines), 400)):
        if _FRONT_MATTER_END.match(lines[i]):
            from doc4llm.corpus.safe_yaml import YamlError, load_yaml

            try:
                data = load_yaml("\n".join(lines[1:i]), "front matter", max_nodes=FRONT_MATTER_NODES,
                                 max_depth=FRONT_MATTER_DEPTH) or {}
            except YamlError:
                data = {}
            if not isinstance(data, dict):
                return 0, {}
            return i + 1, data
    return 0, {}


def _indent(line: str) -> int:
    """Columns of leading whitespace, tabs to 4-column stops."""
    prefix = line[:len(line) - len(line.lstrip(" \t"))]
    if "\t" not in prefix:  # the common case at C speed (a Python loop per space took
        return len(prefix)  # 5.6 s on 40 pages of 1,500 nested quotes)
    col = 0
    for ch in prefix:
        if ch == " ":
            col += 1
        elif ch == "\t":
            col += 4 - col % 4
        else:
            break
    return col


def _atx(line: str) -> tuple[int, str] | None:
    m = _ATX.match(line)
    if not m:
        return None
    return len(m.group(1)), _strip_closing_hashes(m.group(2) or "").strip()


def _strip_closing_hashes(text: str) -> str:
    """`Title ##` -> `Title`: a closing run of `#`s preceded by a space (or alone).

    String scans, not a pattern: searching `[ \t]+#+` restarts at every space of a long
    run of spaces (quadratic)."""
    body = text.rstrip(" \t")
    if not body.endswith("#"):
        return text
    rest = body.rstrip("#")
    if not rest:
        return ""
    return rest if rest[-1] in " \t" else text


def _fence_end(lines: list[str], i: int, marker: str, indent: int) -> int:
    """Index of the first line after the fence opened at `i` (see the module doc).

    Linear overall: a scan reaches the end only when no later line could close this
    fence, so a later fence at least as long cannot exist.
    """
    char = marker[0]
    limit = len(lines)
    for j in range(i + 1, len(lines)):
        body = lines[j].lstrip(" \t")
        if not body.startswith(marker):
            continue
        if not body.rstrip(" \t").strip(char) and _indent(lines[j]) <= indent + 3:
            return j + 1  # a closing fence: the same character, at least as long
        m = _FENCE_OPEN.match(body)
        if m and m.group(1)[0] == char and m.group(2).strip() and "`" not in m.group(2):
            limit = j  # an opening fence inside a fence: this one was never closed
            break
    for k in range(i + 2, limit):
        h = _atx(lines[k])
        if h and h[0] >= 2 and h[1] and not lines[k - 1].strip():
            return k
    return limit


def _html_block_end(lines: list[str], i: int) -> int | None:
    """If an HTML block starts at `i`, the index of the first line after it."""
    line = lines[i]
    if line.lstrip().startswith("<!--"):
        for j in range(i, len(lines)):
            if "-->" in (lines[j] if j > i else line[line.index("<!--") + 4 :]):
                return j + 1
        return len(lines)
    m = _HTML_RAW.match(line)
    if m:
        end_tag = f"</{m.group(1).lower()}>"
        for j in range(i, len(lines)):
            if end_tag in lines[j].lower():
                return j + 1
        return len(lines)
    if _HTML_BLOCK.match(line):
        j = i + 1
        while j < len(lines) and lines[j].strip():
            j += 1
        return j
    return None


def _find_headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(0-based line, level, raw heading text) for each top-level heading, in order."""
    headings: list[tuple[int, int, str]] = []
    para: str | None = None  # None, "top" (may take a setext underline) or "nested"
    para_start = 0
    list_indent: int | None = None  # content indent of the outermost open list item
    prev_blank = True
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if not line.strip():
            para, prev_blank = None, True
            i += 1
            continue
        if line[0].isalpha():  # fast path: plain paragraph text, by far the most common line
            if prev_blank:
                list_indent = None
            if para is None:
                para, para_start = "top", i
            prev_blank = False
            i += 1
            continue
        indent = _indent(line) if line[0] in " \t" else 0
        if list_indent is not None and prev_blank and indent < list_indent \
                and not _LIST_ITEM.match(line):
            list_indent = None
        in_list = list_indent is not None and indent >= list_indent
        prev_blank = False
        if indent >= 4 and not in_list and para is None:
            i += 1  # indented code
            continue
        fence = _FENCE_OPEN.match(line.lstrip(" \t")) if indent <= 3 or in_list else None
        if fence and not (fence.group(1)[0] == "`" and "`" in fence.group(2)):
            i = _fence_end(lines, i, fence.group(1), indent)
            para = None
            continue
        if in_list or indent >= 4:
            para = para or "nested"
            i += 1
            continue
        atx = _atx(line)
        if atx:
            headings.append((i, atx[0], atx[1]))
            para, list_indent = None, None
            i += 1
            continue
        setext = _SETEXT.match(line)
        if setext and para == "top":
            text = " ".join(s.strip() for s in lines[para_start:i])
            headings.append((para_start, 1 if setext.group(1)[0] == "=" else 2, text))
            para = None
            i += 1
            continue
        if _HR.match(line):
            para, list_indent = None, None
            i += 1
            continue
        html_end = _html_block_end(lines, i)
        if html_end is not None:
            para, list_indent = None, None
            i = html_end
            continue
        item = _LIST_ITEM.match(line)
        if item:
            pad = len(item.group(3).expandtabs(4))
            content = len(item.group(1)) + len(item.group(2)) + (pad if 1 <= pad <= 4 else 1)
            if list_indent is None or indent < list_indent:
                list_indent = content
            para = "nested"
            fence = _FENCE_OPEN.match(line[item.end() :])  # "1. ```bash": a fence in the item
            if fence and not (fence.group(1)[0] == "`" and "`" in fence.group(2)):
                i = _fence_end(lines, i, fence.group(1), content)
                para = None
                continue
        elif line.lstrip().startswith(">"):
            para = "nested"
        elif para is None:
            para, para_start = "top", i
        i += 1
    return headings


_BACKTICKS = re.compile(r"`+")
_CODE_OR_ESCAPE_START = re.compile(r"[`\\]")
_PUNCT = re.compile(r"[!-/:-@\[-`{-~]")
# Linear on any heading line: a bracket text never runs past another `[`, an autolink
# never past another `<`, and the link-title part takes its spaces possessively (each
# search restart would otherwise rescan the rest of a line of `![![![`).
_INLINE_RULES = [
    (re.compile(r"!\[[^\[\]]*\]\((?:[^()\s]|\([^()\s]*\))*+(?:\s++[^()]*+)?\)"), ""),  # ![alt](src)
    (re.compile(r"!\[[^\[\]]*\]\[[^\[\]]*\]"), ""),  # ![alt][ref]
    (re.compile(r"\[([^\[\]]*)\]\((?:[^()\s]|\([^()\s]*\))*+(?:\s++[^()]*+)?\)"), r"\1"),  # [text](url)
    (re.compile(r"\[([^\[\]]+)\]\[[^\[\]]*\]"), r"\1"),  # [text][ref]
    (re.compile(r"<((?:https?|mailto|ftp):[^<>\s]+)>"), r"\1"),  # autolinks
    (re.compile(r"<img\b[^<>]*>", re.IGNORECASE), ""),
    (re.compile(r"</?[a-z][a-z0-9-]*(?:\s[^<>]*)?/?>"), ""),  # lower-case HTML tags
    (re.compile(r"(\*{1,3})(?=\S)(.+?)(?<=\S)\1"), r"\2"),
    (re.compile(r"(?<![\w\\])(_{1,3})(?=\S)(.+?)(?<=\S)\1(?!\w)"), r"\2"),
    (re.compile(r"~~(?=\S)(.+?)(?<=\S)~~"), r"\1"),
]
_MAX_TITLE = 1000
_PRIVATE = 0xF0000  # Unicode private-use plane: never in real headings
_HIDDEN = re.compile("[\U000f0000-\U000f007f]")


def _hide(text: str) -> str:
    """ASCII punctuation -> private-use characters, so no inline rule can touch it."""
    return _PUNCT.sub(lambda m: chr(_PRIVATE + ord(m.group())), text)


def _protect_code_and_escapes(raw: str) -> str:
    """Code spans -> their text verbatim, backslash escapes -> the character, both hidden.

    CommonMark's rule, in linear time: a run of n backticks opens a span closed by the
    next run of exactly n (found by bisecting the runs of that length); without one, the
    run is literal text. Escapes count outside code spans only."""
    runs: dict[int, list[int]] = {}
    for m in _BACKTICKS.finditer(raw):
        runs.setdefault(m.end() - m.start(), []).append(m.start())
    out: list[str] = []
    i = 0
    while True:
        m = _CODE_OR_ESCAPE_START.search(raw, i)
        if not m:
            out.append(raw[i:])
            return "".join(out)
        j = m.start()
        out.append(raw[i:j])
        if raw[j] == "\\":
            if j + 1 < len(raw) and _PUNCT.match(raw, j + 1):
                out.append(_hide(raw[j + 1]))  # a backslash escape: the character, literal
                i = j + 2
            else:
                out.append("\\")
                i = j + 1
            continue
        end = j
        while end < len(raw) and raw[end] == "`":
            end += 1
        n = end - j
        starts = runs.get(n, [])
        k = bisect.bisect_left(starts, end)
        if k == len(starts):  # no closing run: the backticks are text
            out.append(raw[j:end])
            i = end
            continue
        code = raw[end:starts[k]]
        if code.strip() and code[0] == " " and code[-1] == " ":
            code = code[1:-1]
        out.append(_hide(code))  # a code span: its text verbatim
        i = starts[k] + n


def split_attributes(raw: str) -> tuple[str, str | None]:
    """`Title {: #id .cls }` -> ("Title", "id"); the list goes even when it has no id.

    Linear: only the last `{` of the line is tried."""
    stripped = raw.rstrip()
    if not stripped.endswith("}"):
        return raw, None
    brace = stripped.rfind("{")
    if brace < 0 or (brace and stripped[brace - 1] == "\\"):
        return raw, None
    m = _ATTR_LIST.fullmatch(stripped, brace) or _ATTR_LIST_LOOSE.fullmatch(stripped, brace)
    if not m:
        return raw, None
    ident = _ATTR_ID.search(m.group(0)[1:-1])
    # `### Features (extras) ### {: #features }` (Python-Markdown, hatch's docs): the
    # closing hashes sit before the list, so they close the heading once it is gone
    title = _CLOSING_HASHES.sub("", stripped[:brace].rstrip()).rstrip()
    return title, ident.group(1) if ident else None


def plain_title(raw: str) -> str:
    """Heading markdown -> plain text (see the module doc). A heading line longer than
    `_MAX_TITLE` characters (real ones stay under ~500) is cut there: the inline rules are
    not linear in the worst case, and a cut keeps a pathological line cheap."""
    if len(raw) > _MAX_TITLE:
        raw = raw[:_MAX_TITLE] + "…"
    if not any(c in raw for c in "`[<*_~\\&!"):
        return _SPACES.sub(" ", raw).strip()
    text = _protect_code_and_escapes(raw) if ("`" in raw or "\\" in raw) else raw
    if any(c in text for c in "[<*_~&"):
        for rx, repl in _INLINE_RULES:
            text = rx.sub(repl, text)
        text = html.unescape(text)
    text = _HIDDEN.sub(lambda m: chr(ord(m.group()) - _PRIVATE), text)
    return _SPACES.sub(" ", text).strip()


_plain_title = plain_title  # the former private name


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
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    n_lines = len(lines)
    fm_len, front = _front_matter(lines)
    work = [""] * fm_len + lines[fm_len:]
    headings = []  # (0-based line, level, plain title, explicit anchor or None)
    for i, level, raw in _find_headings(work):
        text, anchor = split_attributes(raw)
        headings.append((i, level, plain_title(text), anchor))

    source = None
    for line in lines[fm_len : fm_len + 12]:
        m = _SOURCE_LINE.match(line.strip())
        if m:
            source = m.group(1).strip() or None
            break

    header_end = _detect_header(lines, headings[0][0] if headings else None)
    page_title: str | None = None
    body_start = fm_len
    skip_first = False
    if header_end >= 0 and headings and headings[0][1] == 1:
        page_title = headings[0][2]
        later = [h for h in headings[1:] if h[0] > header_end]
        if later and later[0][1] == 1 and later[0][2].casefold() == page_title.casefold():
            skip_first = True  # the body repeats the title: the header is only a header
            body_start = header_end + 1
    if skip_first:
        headings = headings[1:]
    if page_title is None:
        h1 = next((h for h in headings if h[1] == 1), None)
        if h1:
            page_title = h1[2]
        elif isinstance(front.get("title"), str) and front["title"].strip():
            page_title = front["title"].strip()

    sections: list[Section] = []
    first_heading = headings[0][0] if headings else n_lines
    pre_lines = lines[body_start:first_heading]
    if any(s.strip() for s in pre_lines):
        start = body_start + next(i for i, s in enumerate(pre_lines) if s.strip())
        sections.append(Section(PREAMBLE, 0, [PREAMBLE], start + 1, first_heading))

    stack: list[tuple[int, str]] = []
    for i, (line_idx, level, title, anchor) in enumerate(headings):
        title = title or f"(untitled h{level})"
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        end = headings[i + 1][0] if i + 1 < len(headings) else n_lines
        sec = Section(title, level, [t for _, t in stack], line_idx + 1, end)
        if anchor:
            sec.anchor, sec.explicit_anchor = anchor, True
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
    open_: list[Section] = []  # the current section's ancestors, outermost first
    for sec in sections:
        sec.subtree_end = sec.end
        if sec.level == 0:
            continue
        while open_ and open_[-1].level >= sec.level:
            open_.pop()
        if open_:
            open_[-1].children.append(sec.index)
        for parent in open_:
            parent.subtree_end = max(parent.subtree_end, sec.end)
        open_.append(sec)


def parse_sections(text: str) -> list[Section]:
    return parse_page(text).sections
