"""Is a section prose, code, or api-reference? Type-aware retrieval ranks by it.

Measured on lines, cheaply (the indexer calls this for every section):
* `code` when code blocks hold at least half of the non-blank lines;
* `api-reference` when the rest is dominated by reference shapes: table rows keyed by
  an identifier or flag, bullets that start with an identifier (`` `timeout` ``,
  `**matcher** :`), signatures, and reference words in headings (Parameters, Options);
* `prose` otherwise.
"""

from __future__ import annotations

import re

from doc4llm.code.blocks import find_code_blocks

CODE_SHARE = 0.5
REFERENCE_SHARE = 0.3
MIN_REFERENCE_LINES = 3

# Every pattern here runs on each line of every indexed section, so each one is linear in
# the line: possessive `\s*+` wherever two whitespace runs could share the same spaces
# (a 6,000-space line or a 500-level list once took minutes), and table rows are checked
# with string scans rather than patterns.
_SEPARATOR_CELL = re.compile(r":?-{3,}:?")
_KEYED_TABLE_ROW = re.compile(r"^\s*+\|?\s*+`[^`]+`\s*+(,\s*+`[^`]+`\s*+)*\|")
_KEYED_BULLET = re.compile(r"^\s*+(?:[-*+]|\d+\.)\s+(`[^`]+`|\*\*`?[\w.$/-]+(?:\(\))?`?\*\*)\s*[:(—–-]?")
_SIGNATURE = re.compile(r"^\s*+(#+\s*+)?`?[\w.]++\([^)]*+\)`?\s*+(->|:|$)")
_REFERENCE_HEADING = re.compile(
    r"^#+\s.*\b(parameters?|arguments?|returns?|options?|flags?|fields?|properties|"
    r"attributes|methods|settings|reference|schema|api|commands?|environment variables|"
    r"configuration|exit codes?)\b",
    re.IGNORECASE,
)
_FIELD_LINE = re.compile(
    r"^\s*+(?:[-*]\s*+)?\*?\*?(type|default|required|returns|raises|throws)\*?\*?\s*+:", re.IGNORECASE
)


def content_type(text: str) -> str:
    """'prose' | 'code' | 'api-reference' for a section's markdown."""
    lines = text.splitlines()
    nonblank = sum(1 for line in lines if line.strip())
    if not nonblank:
        return "prose"
    in_code: set[int] = set()
    for block in find_code_blocks(text):
        in_code.update(range(block.start - 1, block.end))
    code_lines = sum(1 for i in in_code if i < len(lines) and lines[i].strip())
    if code_lines / nonblank >= CODE_SHARE:
        return "code"
    reference = 0
    other = 0
    for i, line in enumerate(lines):
        if i in in_code or not line.strip() or _is_table_separator(line):
            continue
        if _is_reference_line(line):
            reference += 2 if _REFERENCE_HEADING.match(line) else 1
        else:
            other += 1
    total = reference + other
    if reference >= MIN_REFERENCE_LINES and reference / total >= REFERENCE_SHARE:
        return "api-reference"
    return "prose"


def _is_reference_line(line: str) -> bool:
    return bool(
        _KEYED_TABLE_ROW.match(line)
        or (line.count("|") >= 2 and _is_table_row(line))
        or _KEYED_BULLET.match(line)
        or _SIGNATURE.match(line)
        or _REFERENCE_HEADING.match(line)
        or _FIELD_LINE.match(line)
    )


def _is_table_row(line: str) -> bool:
    """Some text, then a pipe (after an optional leading pipe): `a | b`, `| a | b |`."""
    first = line.find("|")
    if first != 0:
        return first > 0
    return line.find("|", 1) > 1


def _is_table_separator(line: str) -> bool:
    """`|---|:--:|`: two or more cells of three or more dashes, optional colons."""
    cells = line.strip()
    if cells.startswith("|"):
        cells = cells[1:]
    if cells.endswith("|"):
        cells = cells[:-1]
    parts = cells.split("|")
    return len(parts) >= 2 and all(_SEPARATOR_CELL.fullmatch(p.strip()) for p in parts)
