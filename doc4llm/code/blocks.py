"""Find the code blocks of a markdown text, with the lines their code occupies.

CommonMark decides what a code block is (markdown-it-py): fenced blocks with or without
an info string, and 4-space indented blocks, which is how the upstream scraped corpus
stores all of its code. Using the real parser keeps list continuations and nested
lists (also indented) from being mistaken for code.
"""

from __future__ import annotations

import functools
import re
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
    filename: str | None = None  # a bare file name on the line above (`src/tool.ts`)

    @property
    def hint(self) -> str | None:
        """The label to resolve the language with: the fence label, else the file
        extension of a file name written just above the block (common in scraped docs)."""
        if self.label:
            return self.label
        if self.filename and "." in self.filename:
            return self.filename.rsplit(".", 1)[1]
        return None


_MAY_HOLD_CODE = re.compile(r"```|~~~|^(?: {4}|\t)", re.MULTILINE)
_FILENAME_LINE = re.compile(r"^\s*([\w.~@/-]*\w\.[A-Za-z]{1,10})\s*:?\s*$")


@functools.lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # Block structure is all we need; skipping inline parsing halves the cost.
    return MarkdownIt("commonmark").disable(["inline", "text_join"])


def find_code_blocks(text: str) -> list[CodeBlock]:
    """All code blocks in `text`, in order. Empty blocks are skipped."""
    return list(_code_blocks(text))


@functools.lru_cache(maxsize=8)
def _code_blocks(text: str) -> tuple[CodeBlock, ...]:
    """Cached for the section just parsed: indexing asks twice per section (its content
    type, then its code chunks), and the markdown parse was a third of indexing time."""
    blocks: list[CodeBlock] = []
    if not _MAY_HOLD_CODE.search(text):
        return ()  # most sections are prose: skip the markdown parse
    lines = text.splitlines()
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
        fence_line = token.map[0] if token.type == "fence" else start - 1  # 0-based line above
        filename = _filename_above(lines, fence_line)
        blocks.append(CodeBlock(start, start + n_lines - 1, label, code, token.type == "fence", filename))
    return tuple(blocks)


def _filename_above(lines: list[str], index: int) -> str | None:
    """A line holding only a file name, within three lines above `index` (blank lines skipped)."""
    for i in range(index - 1, max(index - 4, -1), -1):
        if not lines[i].strip():
            continue
        match = _FILENAME_LINE.match(lines[i])
        return match.group(1) if match else None
    return None
