"""JSON and TOML from outside (package.json, lockfiles, registry answers) parsed safely.

Both parsers recurse once per nesting level: `[` x 200,000 raised RecursionError, a
traceback. Here excess depth, bad syntax and a document of the wrong shape all end in one
`DataError` (an InputError, exit 2) naming the file; callers that read a registry answer
turn it into their own external error.
"""

from __future__ import annotations

import json
import tomllib
from typing import Any

from doc4llm.errors import InputError

MAX_DEPTH = 200  # real manifests and lockfiles nest < 15 levels


class DataError(InputError):
    """A JSON or TOML document that does not parse or is nested too deep (exit 2)."""


def _depth_ok(data: Any, max_depth: int) -> bool:
    """Iterative (no recursion): every container within `max_depth` levels."""
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > max_depth:
            return False
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return True


def loads_json(text: str | bytes, source: str, *, max_depth: int = MAX_DEPTH, want: type | None = dict) -> Any:
    """Parse JSON; `want` (default dict) is the type the top level must have (None: any)."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise DataError(f"{source} is nested deeper than {max_depth} levels: not read") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"{source} does not parse as JSON: {_short(exc)}") from None
    if not _depth_ok(data, max_depth):
        raise DataError(f"{source} is nested deeper than {max_depth} levels: not read")
    if want is not None and not isinstance(data, want):
        raise DataError(f"{source} is not a JSON {_kind(want)}")
    return data


def loads_toml(text: str, source: str, *, max_depth: int = MAX_DEPTH) -> dict:
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise DataError(f"{source} is nested deeper than {max_depth} levels: not read") from None
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        raise DataError(f"{source} does not parse as TOML: {_short(exc)}") from None
    if not _depth_ok(data, max_depth):
        raise DataError(f"{source} is nested deeper than {max_depth} levels: not read")
    return data


def _short(exc: Exception) -> str:
    return " ".join(str(exc).split())[:200]


def _kind(t: type) -> str:
    return {dict: "object", list: "array", str: "string"}.get(t, t.__name__)
