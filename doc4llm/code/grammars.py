"""Offline tree-sitter grammars: a parser for a language, or None.

doc4llm never downloads at run time. tree-sitter-language-pack up to 0.13 ships every
grammar inside its wheel; its 1.x releases fetch grammars on first use. So a grammar
counts as available only when it is already on disk, and callers treat "no parser" as
"unverified" rather than failing. tree_sitter is imported lazily (CLI start-up time).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Tree


@functools.cache
def parser_for(lang: str | None) -> Parser | None:
    """A cached parser for `lang` (a normalised name), or None when no local grammar."""
    if not lang:
        return None
    try:
        import tree_sitter_language_pack as pack
    except ImportError:
        return None
    # 1.x downloads missing grammars inside get_parser(); only use ones already cached.
    downloaded = getattr(pack, "downloaded_languages", None)
    if downloaded is not None and lang not in downloaded():
        return None
    try:
        return pack.get_parser(lang)
    except Exception:  # noqa: BLE001 - the pack raises different types per version
        return None


def has_grammar(lang: str | None) -> bool:
    return parser_for(lang) is not None


def parse(code: str, lang: str | None) -> Tree | None:
    """Parse `code`, or None when `lang` has no local grammar."""
    parser = parser_for(lang)
    if parser is None:
        return None
    return parser.parse(code.encode("utf-8"))


def error_nodes(tree: Tree, limit: int = 50) -> list[Node]:
    """The outermost ERROR and MISSING nodes, in source order (at most `limit`).

    Only subtrees flagged `has_error` are walked, so a clean tree costs nothing and a
    broken one costs only its broken branches.
    """
    found: list[Node] = []
    stack = [tree.root_node]
    while stack and len(found) < limit:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            found.append(node)
            continue
        if node.has_error:
            stack.extend(reversed(node.children))
    return found
