"""Find the code blocks of a markdown text, with the lines their code occupies.

CommonMark decides what a code block is (markdown-it-py): fenced blocks with or without
an info string, and 4-space indented blocks, which is how the upstream scraped corpus
stores all of its code. Using the real parser keeps list continuations and nested
lists (also indented) from being mistaken for code.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from markdown_it import MarkdownIt


@dataclass(frozen=True)
class CodeBlock:
    """One code block. `start`/`end`: 1-based inclusive lines of the code itself
    (fence lines excluded) within the text given to `find_code_blocks`."""

    start: int
    end: int
    label: str | None  # the fence info string's first word; None when unlabelled
    code: str  # the code, de-indented as markdown renders it
    fenced: bool


@functools.lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark")


def find_code_blocks(text: str) -> list[CodeBlock]:
    """All code blocks in `text`, in order. Empty blocks are skipped."""
    blocks: list[CodeBlock] = []
    for token in _parser().parse(text):
        if token.type not in ("fence", "code_block") or not token.map:
            continue
        code = token.content
        n_lines = len(code.splitlines())
        if not code.strip():
            continue
        if token.type == "fence":
            start = token.map[0] + 2  # 0-based opening fence line -> 1-based first code line
            label = token.info.strip().split()[0] if token.info.strip() else None
        else:
            start = token.map[0] + 1
            label = None
        blocks.append(CodeBlock(start, start + n_lines - 1, label, code, token.type == "fence"))
    return blocks
