"""`doc4llm grep`: ripgrep's job over the doc sets, answered by section.

An agent greps for an exact name (`sync.batch_size`, `E_WEAVE_CONFLICT`) when it knows
the docs' word; what it then needs is which section holds each hit, so matches come back
grouped under their heading path and line range, with the matching lines, bounded (a cap
on sections and lines per section, then counts of the rest).

User patterns run on RE2 (`google-re2`): linear time whatever the pattern, so
`(a+)+$` over a 30 KB line returns at once. `-F` matches a fixed string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from doc4llm.corpus.fences import fence_after
from doc4llm.corpus.model import NO_HEADING, Page, select_sets
from doc4llm.corpus.sections import Section
from doc4llm.errors import InputError, NotFoundError

MAX_PATTERN_CHARS = 1000
MAX_SECTIONS = 8  # sections shown; the rest are counted
MAX_LINES = 2  # matching lines shown per section
LINE_CHARS = 120  # a shown line is cut around its first match
RE2_MAX_MEM = 8 << 20  # a pattern whose program needs more is refused, not run
# a line whose match opens it, after markup only (a table row's first cell, a list item's
# or definition's term: "| `WKL_ADMIN_TOKEN` | — | Bearer token..."): an entry for the name
_ENTRY_PREFIX = re.compile(r"[\s|*`>:+#-]{0,12}")


@dataclass
class _Hit:
    page: Page
    section: Section
    lines: list[tuple[int, str, int]] = field(default_factory=list)  # (line no, text, match column)
    heading_hit: bool = False
    entry_hit: bool = False  # a line opens with the match (table row, list item, term)


def compile_pattern(pattern: str, *, ignore_case: bool, fixed: bool, word: bool = False):
    """An RE2 program for the pattern (or the fixed string); InputError with RE2's reason."""
    if not pattern:
        raise InputError("the pattern is empty", hint="doc4llm grep 'sync.batch_size' -F")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise InputError(f"the pattern is {len(pattern)} characters; at most {MAX_PATTERN_CHARS}")
    if "\n" in pattern:
        raise InputError("the pattern spans lines; grep matches one line at a time")
    if any("\ud800" <= c <= "\udfff" for c in pattern):  # argv bytes that are not UTF-8
        shown = pattern.encode("utf-8", "surrogateescape" if all(
            "\udc80" <= c <= "\udcff" for c in pattern if "\ud800" <= c <= "\udfff") else "replace")
        raise InputError(f"the pattern {shown!r} is not UTF-8 text; the docs are UTF-8, so it can match "
                         "nothing", hint="pass the text in UTF-8 (check the terminal's locale)")
    import re2

    if not fixed:  # GNU grep's basic-syntax alternation, which agents type by habit
        pattern = pattern.replace("\\|", "|")
    if word:  # whole words only (`sla`, not "translate"): RE2's \b, around the escaped text for -F
        # as ripgrep's -w: no word character right before or after (so `--flag` works too)
        pattern = rf"(?:^|\W)(?:{re2.escape(pattern) if fixed else pattern})(?:\W|$)"
        fixed = False
    opts = re2.Options()
    opts.case_sensitive = not ignore_case
    opts.literal = fixed
    opts.max_mem = RE2_MAX_MEM
    opts.log_errors = False
    try:
        return re2.compile(pattern, opts)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise InputError(f"invalid pattern {pattern!r}: {reason}",
                         hint="RE2 syntax (no backreferences or lookaround); -F for a fixed string") from None


def _cut(text: str, col: int) -> str:
    """The line around its first match, at most LINE_CHARS characters."""
    text = text.rstrip()
    if len(text) <= LINE_CHARS:
        return text
    start = max(0, min(col - LINE_CHARS // 3, len(text) - LINE_CHARS))
    if start:  # begin at a word
        space = text.find(" ", start, col)
        start = space + 1 if space != -1 else start
    piece = text[start:start + LINE_CHARS]
    return ("…" if start else "") + piece + ("…" if start + LINE_CHARS < len(text) else "")


def _section_at(sections: list[Section], line_no: int, cursor: int) -> tuple[Section | None, int]:
    """The section holding `line_no`; `cursor` moves forward only (lines come in order)."""
    while cursor + 1 < len(sections) and sections[cursor + 1].start <= line_no:
        cursor += 1
    if sections and sections[cursor].start <= line_no:
        return sections[cursor], cursor
    return None, cursor


def grep_docs(docs_dir: Path, pattern: str, *, sets: list[str] | None = None, ignore_case: bool = False,
              fixed: bool = False, word: bool = False, max_sections: int = MAX_SECTIONS,
              max_lines: int = MAX_LINES) -> dict:
    """Every line of every page in the chosen sets that matches, grouped by section.

    Sections whose heading matches come first (the place a name is defined), then those
    with a line that opens with the match (a table row's first cell, a list item's or a
    definition's term: the name's entry), then those with the most matching lines, then
    page order."""
    prog = compile_pattern(pattern, ignore_case=ignore_case, fixed=fixed, word=word)
    if max_sections < 1 or max_lines < 1:
        raise InputError("--max-sections and --max-lines must be at least 1")
    chosen = select_sets(docs_dir, sets)
    if not chosen:
        raise NotFoundError(f"no doc sets in {docs_dir}",
                            hint="import one: doc4llm import PATH --set NAME@VER (or pass --docs-dir)")
    hits: list[_Hit] = []
    total_lines = 0
    pages_hit = 0
    for doc_set in chosen:
        for page in doc_set.pages():
            sections = page.sections()
            cursor = 0
            by_section: dict[int, _Hit] = {}
            fence = ""  # the open code fence's marker: a line in code is no entry
            for no, text in enumerate(page.lines(), 1):
                fence, code = fence_after(text, fence)
                m = prog.search(text)
                if m is None:
                    continue
                sec, cursor = _section_at(sections, no, cursor)
                if sec is None:
                    continue  # the page header (title, source line) is not a section
                hit = by_section.get(sec.index)
                if hit is None:
                    hit = by_section[sec.index] = _Hit(page, sec)
                hit.lines.append((no, text, m.start()))
                hit.heading_hit = hit.heading_hit or no == sec.start and sec.level > 0
                hit.entry_hit = hit.entry_hit or not code and \
                    _ENTRY_PREFIX.fullmatch(text, 0, m.start()) is not None
                total_lines += 1
            if by_section:
                pages_hit += 1
                hits.extend(by_section.values())
    order = sorted(range(len(hits)), key=lambda i: (not hits[i].heading_hit, not hits[i].entry_hit,
                                                    -len(hits[i].lines), i))
    shown = [hits[i] for i in order[:max_sections]]
    from doc4llm.search.results import rel_path

    matches = []
    for h in shown:
        sec = h.section
        matches.append({
            "doc_set": h.page.doc_set.name,
            "page": h.page.name,
            "source": h.page.source,
            "heading_path": sec.heading_path,
            "lines": [sec.start, sec.end],
            "tokens": sec.tokens,
            "content_path": rel_path(docs_dir, h.page.doc_set.name, h.page.name, "docContent.md"),
            "match_count": len(h.lines),
            "heading_match": h.heading_hit,
            # the heading line itself is in the section's header already
            "match_lines": [{"line": no, "text": _cut(text, col)} for no, text, col in h.lines
                            if no != sec.start or sec.level == 0][:max_lines],
            **({"no_heading": True} if h.page.headingless(sec) else {}),
        })
    return {
        "pattern": pattern,
        "fixed": fixed,
        "ignore_case": ignore_case,
        "sets": [s.name for s in chosen],
        "total_lines": total_lines,
        "total_sections": len(hits),
        "total_pages": pages_hit,
        "truncated": len(hits) > len(shown)
        or any(m["match_count"] - m["heading_match"] > len(m["match_lines"]) for m in matches),
        "matches": matches,
    }


def render_grep(result: dict, echo_pattern: bool = True) -> str:
    """Compact text: one header line per section, then its matching lines with numbers.
    `echo_pattern=False`: a miss does not repeat the pattern (the MCP caller has it)."""
    scope = [f"scope: {result['scope']['note']}"] if result.get("scope") else []
    if not result["matches"]:
        what = f" for {result['pattern']!r}" if echo_pattern else ""
        # `-F 'a|b'` reads as alternatives to an agent used to ripgrep's regexes; it is one
        # literal string, and its miss looked like an absence (agent study, round 10)
        hint = "; with -F, | is a literal character: drop -F to match either side" \
            if result.get("fixed") and "|" in result["pattern"] else ""
        return "\n".join([*scope, f"no match{what} in {', '.join(result['sets'])}{hint}"])
    n_sec, n_lines = result["total_sections"], result["total_lines"]
    out = [f"{n_lines} matching line{'s' * (n_lines != 1)} in {n_sec} section{'s' * (n_sec != 1)}"
           f" ({result['total_pages']} page{'s' * (result['total_pages'] != 1)})", *scope]
    for m in result["matches"]:
        a, b = m["lines"]
        where = NO_HEADING if m.get("no_heading") else " > ".join(m["heading_path"])
        src = m["source"] or m["page"]
        out.append(f"{m['doc_set']} {src}  {where}  L{a}-{b} ~{m['tokens']}t")
        for ln in m["match_lines"]:
            out.append(f"  {ln['line']}: {ln['text'].strip()}")
        more = m["match_count"] - len(m["match_lines"]) - (1 if m["heading_match"] else 0)
        if more > 0:
            out.append(f"  (+{more} more line{'s' * (more != 1)})")
    rest = n_sec - len(result["matches"])
    if rest > 0:
        out.append(f"(+{rest} more section{'s' * (rest != 1)}; narrow with --set or a longer pattern, "
                   "or raise --max-sections)")
    return "\n".join(out)
