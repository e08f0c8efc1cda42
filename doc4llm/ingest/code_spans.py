"""Where a page's code is (fenced blocks, inline spans), so inline rewrites leave it alone.

A role example (```` `` {func}`x` `` ````), an attribute list written as an example
(`` `{ .class }` ``) or a `++key++` inside backticks is code, shown as typed. CommonMark
pairs a backtick run with the next run of the same length; unpaired runs are literal.
One left-to-right pass over the runs, so linear in the line.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_RUN = re.compile(r"`+")
_FENCE = re.compile(r"^ *(`{3,}|~{3,})")


def map_outside_fences(text: str, rewrite: Callable[[str], str]) -> str:
    """`rewrite` applied to each line outside fenced code blocks (a fence closes at a
    line of the same character, at least as long, with nothing after it)."""
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                    and not line.strip().strip(fence[0]):
                fence = None
            out.append(line)
        elif m:
            fence = m.group(1)
            out.append(line)
        else:
            out.append(rewrite(line))
    return "\n".join(out)


def code_spans(line: str) -> list[tuple[int, int, int, int]]:
    """(open start, open end, close start, close end) of each code span, in order."""
    runs = [(m.start(), m.end()) for m in _RUN.finditer(line)]
    by_len: dict[int, list[int]] = {}  # run length -> indexes of runs, in order
    for i, (s, e) in enumerate(runs):
        by_len.setdefault(e - s, []).append(i)
    next_of = {n: 0 for n in by_len}  # per length, the first index not yet passed
    spans: list[tuple[int, int, int, int]] = []
    i = 0
    while i < len(runs):
        s, e = runs[i]
        idxs = by_len[e - s]
        k = next_of[e - s]
        while k < len(idxs) and idxs[k] <= i:
            k += 1
        next_of[e - s] = k
        if k >= len(idxs):  # no closer: a literal run of backticks
            i += 1
            continue
        j = idxs[k]
        spans.append((s, e, runs[j][0], runs[j][1]))
        i = j + 1
    return spans


def map_outside_code(line: str, rewrite: Callable[[str], str]) -> str:
    """`rewrite` applied to each stretch of the line outside code spans."""
    if "`" not in line:
        return rewrite(line)
    parts: list[str] = []
    pos = 0
    for s, _, _, e in code_spans(line):
        parts.append(rewrite(line[pos:s]))
        parts.append(line[s:e])
        pos = e
    parts.append(rewrite(line[pos:]))
    return "".join(parts)
