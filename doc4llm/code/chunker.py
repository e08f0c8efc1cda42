"""Split code blocks at function, class, method and import boundaries for the index.

A search hit for `compute_backoff_delay` should be that function's own lines, not the
2,000-line block around it, and a chunk should never end mid-function. So each code
block is parsed once (tree-sitter) and cut along its top-level nodes:

* consecutive imports (with their comments) form one `imports` chunk;
* each function or class is its own chunk, with its leading comments and decorators;
* a class longer than `CLASS_SPLIT` lines is cut into its header and one chunk per method;
* other statements are packed into `block` chunks of at most `MAX_LINES`, descending
  into oversized containers (a long JSON object or YAML mapping splits at its keys);
* blocks of at most `SMALL_BLOCK` lines stay whole: fragments that small help no one.

Languages without a local grammar fall back to blank-line paragraphs. Only the top
level and class bodies are walked, so the cost is linear in the block's length.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from doc4llm.code import grammars, symbols
from doc4llm.code.blocks import find_code_blocks
from doc4llm.code.langdetect import resolve_language

if TYPE_CHECKING:
    from tree_sitter import Node

MAX_LINES = 60
CLASS_SPLIT = 40  # a class longer than this is cut into header + methods
SMALL_BLOCK = 20


@dataclass
class CodeChunk:
    """A piece of a code block. `start`/`end` are absolute 1-based inclusive lines."""

    start: int
    end: int
    lang: str | None
    symbols: list[str]
    kind: str  # 'function' | 'class' | 'method' | 'imports' | 'block'
    text: str


@dataclass
class _Unit:
    """A run of lines (0-based rows within the block) with one role."""

    first: int
    last: int
    kind: str
    symbols: list[str] = field(default_factory=list)


def chunks_for_section(text: str, first_line: int) -> list[CodeChunk]:
    """Code chunks of every code block in a section's markdown.

    `first_line` is the section's first line number in docContent.md, so chunk lines
    are absolute and can be read back with `doc4llm read --lines`.
    """
    chunks: list[CodeChunk] = []
    for block in find_code_blocks(text):
        lang = resolve_language(block.hint, block.code).lang
        chunks.extend(chunk_code(block.code, lang, first_line + block.start - 1))
    return chunks


def chunk_code(code: str, lang: str | None, first_line: int = 1) -> list[CodeChunk]:
    """Chunks of one code block whose first line is `first_line`."""
    lines = code.splitlines()
    if not lines:
        return []
    tree = grammars.parse(code, lang)
    units = _paragraph_units(lines) if tree is None else _node_units(tree.root_node.named_children)
    if len(lines) <= SMALL_BLOCK or not units:
        units = [_whole(units, len(lines))]
    return [_to_chunk(u, lines, lang, first_line) for u in _pack(units) if _trim(u, lines)]


def _whole(units: list[_Unit], n_lines: int) -> _Unit:
    """The block as one unit; it is a function/class/imports when one such unit dominates."""
    defs = [u for u in units if u.kind != "block"]
    kinds = {u.kind for u in defs if u.kind != "imports"}
    kind = "block"
    if len(kinds) == 1 and sum(u.kind != "imports" for u in defs) == 1:
        kind = kinds.pop()
    elif defs and all(u.kind == "imports" for u in units):
        kind = "imports"
    return _Unit(0, n_lines - 1, kind, _dedupe([s for u in units for s in u.symbols]))


def _node_units(nodes: list[Node]) -> list[_Unit]:
    units: list[_Unit] = []
    prefix_start: int | None = None  # first row of pending comments/attributes
    for node in nodes:
        first, last = node.start_point[0], _last_row(node)
        if node.type in symbols.PREFIX_TYPES:
            if prefix_start is None:
                prefix_start = first
            continue
        start = first if prefix_start is None else prefix_start
        prefix_start = None
        if symbols.is_import(node):
            if units and units[-1].kind == "imports":
                units[-1].last = last
            else:
                units.append(_Unit(start, last, "imports"))
            continue
        found = symbols.definition(node)
        if found is None:
            children = _container_children(node) if last - first + 1 > MAX_LINES else []
            if children:
                inner = _node_units(children)
                if inner:
                    inner[0].first = min(inner[0].first, start)
                    inner[-1].last = max(inner[-1].last, last)
                    units.extend(inner)
                    continue
            units.append(_Unit(start, last, "block"))
        elif found.kind == "class":
            units.extend(_class_units(found, start, last))
        else:
            bare = found.name.rsplit(".", 1)[-1] if found.name else None
            units.append(_Unit(start, last, found.kind, _dedupe([found.name, _bare(bare)])))
    if prefix_start is not None and nodes:  # trailing comments
        units.append(_Unit(prefix_start, _last_row(nodes[-1]), "block"))
    return units


def _class_units(found: symbols.Definition, start: int, last: int) -> list[_Unit]:
    """A class as one unit, or (when long) its header plus one unit per method."""
    methods = [(node, m) for node, m in symbols.members(found.node)]
    name = found.name
    own = [name] if name else []
    qualified = [f"{name}.{m}" if name and m else m for _, m in methods]
    if last - start + 1 <= CLASS_SPLIT or not methods:
        bare = [_bare(m) for _, m in methods]
        return [_Unit(start, last, "class", _dedupe([*own, *qualified, *bare]))]
    header_end = max(start, _with_leading_comments(methods[0][0]) - 1)
    units = [_Unit(start, header_end, "class", own)]
    for (member, method), qual in zip(methods, qualified, strict=True):
        # Fields and comments between two methods travel with the next method.
        units.append(_Unit(units[-1].last + 1, _last_row(member), "method", _dedupe([qual, _bare(method)])))
    units[-1].last = last  # the closing brace and any trailing members
    return units


def _bare(method: str | None) -> str | None:
    """A method's unqualified name as a symbol; `__init__` alone names nothing useful."""
    return None if method is None or method.startswith("__") else method


def _dedupe(names: list[str | None]) -> list[str]:
    return [n for n in dict.fromkeys(names) if n]


def _last_row(node: Node) -> int:
    """A node ending at column 0 (after a newline) ends on the row before."""
    row, col = node.end_point
    return row - 1 if col == 0 and row > node.start_point[0] else row


def _container_children(node: Node) -> list[Node]:
    """The parts an oversized statement can be cut into (through single-child wrappers,
    e.g. YAML document > block_node > mapping), or [] when it is one indivisible node."""
    while len(node.named_children) == 1:
        node = node.named_children[0]
    return node.named_children if len(node.named_children) > 1 else []


def _with_leading_comments(node: Node) -> int:
    first = node.start_point[0]
    prev = node.prev_named_sibling
    while prev is not None and prev.type in symbols.PREFIX_TYPES and prev.end_point[0] >= first - 1:
        first = prev.start_point[0]
        prev = prev.prev_named_sibling
    return first


def _paragraph_units(lines: list[str]) -> list[_Unit]:
    """No grammar: blank-line separated paragraphs (kind 'block')."""
    units: list[_Unit] = []
    start: int | None = None
    for i, line in enumerate(lines):
        if line.strip():
            if start is None:
                start = i
        elif start is not None:
            units.append(_Unit(start, i - 1, "block"))
            start = None
    if start is not None:
        units.append(_Unit(start, len(lines) - 1, "block"))
    return units


def _pack(units: list[_Unit]) -> list[_Unit]:
    """Merge neighbouring `block` units up to MAX_LINES; definitions stay alone."""
    packed: list[_Unit] = []
    for unit in units:
        prev = packed[-1] if packed else None
        if (
            prev is not None
            and unit.kind == "block"
            and prev.kind == "block"
            and unit.last - prev.first + 1 <= MAX_LINES
        ):
            prev.last = unit.last
        else:
            packed.append(_Unit(unit.first, unit.last, unit.kind, list(unit.symbols)))
    return packed


def _trim(unit: _Unit, lines: list[str]) -> bool:
    """Drop blank lines at both ends; False when nothing is left."""
    unit.last = min(unit.last, len(lines) - 1)
    while unit.first <= unit.last and not lines[unit.first].strip():
        unit.first += 1
    while unit.last >= unit.first and not lines[unit.last].strip():
        unit.last -= 1
    return unit.first <= unit.last


def _to_chunk(unit: _Unit, lines: list[str], lang: str | None, first_line: int) -> CodeChunk:
    return CodeChunk(
        start=first_line + unit.first,
        end=first_line + unit.last,
        lang=lang,
        symbols=unit.symbols,
        kind=unit.kind,
        text="\n".join(lines[unit.first : unit.last + 1]),
    )
