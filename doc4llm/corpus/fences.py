"""Which lines of markdown are inside a code fence, line by line (CommonMark's rule), for the
rewriters that must leave code alone: a fence closes on a line of the same character, at
least as long, with nothing else on it."""

from __future__ import annotations

import re

FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})")


def fence_after(line: str, fence: str) -> tuple[str, bool]:
    """(the fence open after `line`, whether `line` is code or a fence line); `fence` is the
    marker open before it ("" when none)."""
    opened = FENCE_OPEN.match(line)
    if fence:
        if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
                and not line.strip().strip(fence[0]):
            return "", True
        return fence, True
    if opened:
        return opened.group(1), True
    return "", False


def keep_code(line: str, fence: str, out: list[str]) -> tuple[str, bool]:
    """`fence_after`, and a code or fence line appended to `out` unchanged."""
    fence, code = fence_after(line, fence)
    if code:
        out.append(line)
    return fence, code
