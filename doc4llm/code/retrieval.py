"""From search results to code: the code pieces a result's lines hold, and the imports
elsewhere on the same page that make a piece complete.

`example` and `explain-error` share this. A search result names a section (or, for a
symbol hit, the symbol's chunk); the code it shows is cut from the page's code blocks
with the same chunker the index uses, so line ranges agree with `doc4llm read`.
"""

from __future__ import annotations

import functools
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from doc4llm.code import grammars, symbols
from doc4llm.code.blocks import CodeBlock, find_code_blocks
from doc4llm.code.chunker import CodeChunk, chunk_code
from doc4llm.code.langdetect import resolve_language
from doc4llm.corpus.paths import safe_join
from doc4llm.corpus.sections import Section, parse_sections
from doc4llm.reader import scope_args

WHOLE_BLOCK_LINES = 80  # a block this short, wholly inside a result, is shown whole


@dataclass
class CodePiece:
    """Code shown by one search result, with where it lives."""

    doc_set: str
    page: str
    heading_path: list[str]
    lang: str | None
    start: int
    end: int
    text: str
    symbols: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    rank: int = 0  # rank of the search result that showed it; 0 = found on the page

    def location(self, docs_dir: str | None = None) -> dict:
        return {"doc_set": self.doc_set, "page": self.page, "heading_path": self.heading_path,
                "lines": [self.start, self.end],
                "read": read_command(self.page, self.doc_set, self.start, self.end, docs_dir)}


def read_command(page: str, doc_set: str, start: int, end: int, docs_dir: str | None = None) -> str:
    """The command an agent runs to read these lines itself (with the --docs-dir the
    command that prints it was given, so it runs as printed)."""
    if page.startswith("-") or any(c in page + doc_set for c in '$`\\"!'):
        from doc4llm.reader import read_command as quoted  # a name a shell would act on

        return quoted(page, doc_set, start, end, docs_dir)
    return f'doc4llm read "{page}" --set "{doc_set}" --lines {start}:{end}{scope_args(None, docs_dir)}'


@dataclass
class _PageCode:
    blocks: list[tuple[CodeBlock, str | None, list[CodeChunk]]]  # block, language, chunks
    sections: list[Section]


@functools.lru_cache(maxsize=64)
def _page_code(content_path: Path) -> _PageCode:
    text = content_path.read_text(encoding="utf-8")
    out = []
    for block in find_code_blocks(text):
        lang = resolve_language(block.hint, block.code).lang
        out.append((block, lang, chunk_code(block.code, lang, block.start)))
    return _PageCode(out, parse_sections(text))


def page_pieces(docs_dir: Path, doc_set: str, page: str) -> list[CodePiece]:
    """Every piece of code on a page: short blocks whole, long ones by chunk."""
    code = _page_code(content_path(docs_dir, doc_set, page))
    pieces = []
    for block, lang, chunks in code.blocks:
        groups = [chunks] if block.end - block.start < WHOLE_BLOCK_LINES else [[c] for c in chunks]
        for group in groups:
            if not group:
                continue
            start, end = group[0].start, group[-1].end
            heading = _heading_at(code.sections, start)
            pieces.append(_piece(doc_set, page, heading, lang, block, group, start, end, rank=0))
    return pieces


def _heading_at(sections: list[Section], line: int) -> list[str]:
    inside = [s for s in sections if s.start <= line <= s.end]
    return list(inside[-1].heading_path) if inside else []


def _piece(doc_set: str, page: str, heading: list[str], lang: str | None, block: CodeBlock,
           chunks: list[CodeChunk], start: int, end: int, rank: int) -> CodePiece:
    lines = block.code.splitlines()[start - block.start : end - block.start + 1]
    text = textwrap.dedent("\n".join(lines))  # a method cut from its class reads flush left
    return CodePiece(doc_set, page, heading, lang, start, end, text,
                     _unique(s for c in chunks for s in c.symbols), _unique(c.kind for c in chunks), rank)


def content_path(docs_dir: Path, doc_set: str, page: str) -> Path:
    return safe_join(docs_dir, doc_set, page, "docContent.md")


def code_pieces(docs_dir: Path, result: dict) -> list[CodePiece]:
    """The code inside a search result's line range: short blocks whole, long blocks
    as the chunks (functions, classes, methods) that overlap the range."""
    lo, hi = result["lines"]
    page = _page_code(content_path(docs_dir, result["doc_set"], result["page"]))
    heading = list(result["heading_path"])
    pieces = []
    for block, lang, chunks in page.blocks:
        inside = [c for c in chunks if c.end >= lo and c.start <= hi]
        if not inside:
            continue
        short = block.end - block.start < WHOLE_BLOCK_LINES
        groups = [chunks] if short and lo <= block.start and block.end <= hi else [[c] for c in inside]
        for group in groups:
            pieces.append(_piece(result["doc_set"], result["page"], heading, lang, block, group,
                                 group[0].start, group[-1].end, result.get("rank", 0)))
    return pieces


def missing_imports(docs_dir: Path, piece: CodePiece) -> list[tuple[str, int, int]]:
    """Import statements elsewhere on the page (same language) that the piece needs.

    Returns (statement text, start line, end line). Docs often show the imports once, in
    an "Installation" section or at the top of a long block, and leave them out of later
    snippets. The piece's own block is searched first; a statement is taken when it
    brings in a name the piece uses but neither defines nor already imports.
    """
    if piece.lang is None:
        return []
    page = _page_code(content_path(docs_dir, piece.doc_set, piece.page))
    needed = set(re.findall(r"[A-Za-z_]\w*", piece.text)) - set(piece.symbols)
    needed -= set(_imported(piece.text, piece.lang))
    own = [b for b in page.blocks if b[0].start <= piece.start <= b[0].end]
    found: list[tuple[str, int, int]] = []
    for _, lang, chunks in own + [b for b in page.blocks if b not in own]:
        if lang != piece.lang:
            continue
        for chunk in chunks:
            if chunk.kind != "imports" or (piece.start <= chunk.start and chunk.end <= piece.end):
                continue
            for text, start, end in _import_statements(chunk):
                names = set(_imported(text, lang)) & needed
                if names:
                    found.append((text, start, end))
                    needed -= names
    return sorted(found, key=lambda item: item[1])


def _import_statements(chunk: CodeChunk) -> list[tuple[str, int, int]]:
    tree = grammars.parse(chunk.text, chunk.lang)
    if tree is None:
        return []
    lines = chunk.text.splitlines()
    out = []
    for node in tree.root_node.named_children:
        if symbols.is_import(node) and node.type != "package_clause":
            first, last = node.start_point[0], node.end_point[0]
            out.append(("\n".join(lines[first : last + 1]), chunk.start + first, chunk.start + last))
    return out


def _imported(statement: str, lang: str | None) -> list[str]:
    tree = grammars.parse(statement, lang)
    if tree is None:
        return []
    return [n for node in tree.root_node.named_children if symbols.is_import(node)
            for n in symbols.imported_names(node)]


def _unique(items) -> list:
    return list(dict.fromkeys(items))
