"""Typed results of the MCP tools, and the token budget every result is fitted into.

The models are what the MCP SDK validates each tool's `structuredContent` against, so a
client gets real objects (not a JSON string inside a `result` field). Nested parts whose
shape belongs to another layer (ask metadata, an error's parsed form) stay open objects;
everything an agent acts on (where to read, how sure, how to continue) is typed. What
`tools/list` publishes is smaller (`compact_schema`, `outline_schema`): every client reads
it at every start and an agent carries it in its context.

Budget: a result over `max_tokens` (estimated as characters / 4 of its JSON) drops list
items from the end, then shortens its longest text, and says so with `truncated` and a
`continuation`: the exact tool call that returns the rest.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Relevance = Literal["high", "medium", "low"]
Strategy = Literal["auto", "cascade", "L1", "L2", "L3.1", "L3.2", "bm25", "vector"]


class Continuation(BaseModel):
    """The call that returns what a budget cut off (pass `arguments` as they are)."""

    tool: str
    arguments: dict[str, Any]


class Budgeted(BaseModel):
    model_config = ConfigDict(extra="allow")

    truncated: bool = Field(False, description="true when max_tokens cut this result")
    continuation: Continuation | None = Field(None, description="the call that returns the rest")


class LineText(BaseModel):
    line: int
    text: str


class SearchHit(BaseModel):
    model_config = ConfigDict(extra="allow")  # detail=true adds score, found_by, toc_path, ...

    rank: int
    doc_set: str
    page: str
    heading_path: list[str]
    lines: list[int] = Field(description="[start, end] in docContent.md, 1-based inclusive; "
                                         "pass it to read_section as it is")
    tokens: int
    relevance: Relevance
    source: str | None = None
    best_lines: list[LineText] = []
    url: str | None = None
    content_path: str = Field(description="absolute path of the page's docContent.md")


class Guidance(BaseModel):
    model_config = ConfigDict(extra="allow")

    missing: list[str] = []
    suggested_searches: list[str] = []
    tips: list[str] = []


class SearchResult(Budgeted):
    text: str | None = None  # what `doc4llm search` prints
    confidence: int = Field(ge=0, le=100, description="calibrated chance (%) that result 1 answers")
    abstained: bool = Field(description="true: the local docs do not answer")
    # detail=true: the full contract (its other fields pass as extras)
    results: list[SearchHit] | None = None
    guidance: Guidance | None = None


class GrepMatch(BaseModel):
    doc_set: str
    page: str
    source: str | None = None
    heading_path: list[str]
    lines: list[int]
    tokens: int
    match_count: int
    match_lines: list[LineText]


class GrepResult(Budgeted):
    text: str | None = None  # what `doc4llm grep` prints
    total_lines: int = 0  # detail=true (the text's first line says them)
    total_sections: int = 0
    matches: list[GrepMatch] | None = None  # detail=true


class ReadResult(Budgeted):
    doc_set: str
    page: str
    title: str | None = None
    heading_path: list[str] | None = None
    url: str | None = None
    source: str | None = None
    content_path: str
    lines: list[int]
    tokens: int
    text: str


class TocEntry(BaseModel):
    # `no_heading: true` on a page's opening lines when the page has no heading (reader.get_toc)
    model_config = ConfigDict(extra="allow")

    address: str = Field(description="heading path to pass to read_section as section")
    level: int
    lines: list[int]
    subtree_lines: list[int]
    tokens: int


class TocResult(Budgeted):
    doc_set: str
    page: str
    title: str | None = None
    source: str | None = None
    content_path: str
    line_count: int
    tokens: int
    offset: int = Field(0, description="index of the first section listed")
    total_sections: int
    sections: list[TocEntry]


class DocSetInfo(BaseModel):
    name: str
    path: str
    pages: int
    index: str


class DocSetsResult(Budgeted):
    docs_dir: str
    offset: int = 0
    total_sets: int
    sets: list[DocSetInfo]


class AskSource(BaseModel):
    model_config = ConfigDict(extra="allow")

    ref: str | None = None
    type: str | None = None
    doc_set: str | None = None
    page: str | None = None
    heading_path: list[str] | None = None
    lines: list[int] | None = None
    url: str | None = None


class AskResult(Budgeted):
    answer: str | None = Field(description="null without a configured LLM")
    metadata: dict[str, Any] | None = None
    sources: list[AskSource] = []


class ErrorHit(BaseModel):
    model_config = ConfigDict(extra="allow")

    rank: int
    doc_set: str
    page: str
    heading_path: list[str]
    lines: list[int]
    relevance: Relevance
    snippet: str = ""


class ExplainResult(Budgeted):
    error: dict[str, Any]
    query: str
    mode: str = Field(description="sections (no LLM) or the LLM mode used")
    confidence: int
    abstained: bool
    explanation: Any = None
    results: list[ErrorHit] = []
    warnings: list[str] = []
    guidance: dict[str, Any] | None = None


class ExampleResult(Budgeted):
    task: str
    mode: str
    confidence: int
    example: dict[str, Any] | None = None
    answer: Any = None
    alternatives: list[dict[str, Any]] = []
    warnings: list[str] = []
    guidance: Any = None
    search_guidance: dict[str, Any] | None = None


def compact_schema(schema: Any, *, descriptions: bool = True, defaults: bool = True,
                   optional_null: bool = True) -> Any:
    """A JSON schema without what pydantic adds for humans browsing it: per-field titles,
    `additionalProperties: true` (the default), and `anyOf` of plain types written as one
    `type` list. tools/list is read by every client at every start, and an agent's context
    holds it: the published schemas stay exact but small. `optional_null=False` leaves
    `null` out of an optional argument's types (leaving the argument out says it).
    Output schemas also drop descriptions and defaults."""
    kw = {"descriptions": descriptions, "defaults": defaults, "optional_null": optional_null}
    if isinstance(schema, list):
        return [compact_schema(s, **kw) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" or (key == "additionalProperties" and value is True):
            continue
        if (key == "description" and not descriptions) or (key == "default" and not defaults):
            continue
        if key == "default" and value is None:  # an optional argument's absence says it
            continue
        if key in ("properties", "$defs"):  # maps of names: keep every name, compact the values
            out[key] = {name: compact_schema(v, **kw) for name, v in value.items()}
        else:
            out[key] = compact_schema(value, **kw)
    alternatives = out.get("anyOf")
    if alternatives and all(set(a) <= {"type", "items"} and isinstance(a.get("type"), str)
                            for a in alternatives):
        items = [a["items"] for a in alternatives if "items" in a]
        if len(items) <= 1:
            del out["anyOf"]
            types = [a["type"] for a in alternatives]
            if not optional_null and "default" in schema and schema["default"] is None:
                types = [t for t in types if t != "null"]
            out["type"] = types if len(types) > 1 else types[0]
            if items:
                out["items"] = items[0]
    return out


def outline_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """An output schema reduced to its top level: each field's name and type (and enum).
    Nested objects are `object` and lists `array`: every reply shows their shape, and a
    full schema cost 12 KB of every client's tools/list. The server still validates each
    reply against the full model before it is sent."""
    defs = schema.get("$defs") or {}

    def kind(prop: dict[str, Any]) -> dict[str, Any]:
        if "$ref" in prop:
            prop = defs.get(prop["$ref"].rsplit("/", 1)[-1], {"type": "object"})
        alternatives = prop.get("anyOf")
        if alternatives:
            types: list[str] = []
            for alt in alternatives:
                t = kind(alt).get("type")
                for one in t if isinstance(t, list) else [t] if t else []:
                    if one not in types:
                        types.append(one)
            return {"type": types if len(types) != 1 else types[0]} if types else {}
        return {k: prop[k] for k in ("type", "enum") if k in prop}

    return {"type": "object", "properties": {name: kind(p) for name, p in schema["properties"].items()}}


def estimate(data: Any) -> int:
    """Tokens of a result as the client sees it (compact JSON, ~4 characters a token)."""
    return len(json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)) // 4 + 1


def fit_list(data: dict, key: str, max_tokens: int,
             continuation: Callable[[int], dict | None], text_keys: tuple[str, ...] = (),
             min_items: int = 0) -> dict:
    """Drop items of `data[key]` from the end until the result fits; `continuation(kept)`
    gives the call that returns the rest (kept = how many items stayed). Then, if still
    over, shorten the longest of `text_keys` (answers, explanations). A paged list keeps
    `min_items` (1) so that its continuation always moves forward."""
    if estimate(data) <= max_tokens:
        return data
    kept = list(data.get(key) or [])

    def cut(items: list) -> dict:
        return {**data, key: items, "truncated": True, "continuation": continuation(len(items))}

    while len(kept) > 1 and estimate(cut(kept)) > max_tokens:
        kept.pop()
    out = shorten_text(cut(kept), max_tokens, text_keys)  # the best item outlives the advice
    if len(kept) > min_items and estimate(out) > max_tokens:
        out = shorten_text(cut([]), max_tokens, text_keys)
    return out


# Identities and addresses are never cut: a shortened path or page name is useless.
_KEEP = {"doc_set", "page", "content_path", "toc_path", "path", "url", "tool", "address",
         "ref", "read", "docs_dir", "name", "source", "lang", "status", "mode", "relevance"}
_OPTIONAL = ("search_guidance", "guidance", "metadata", "warnings")


def shorten_text(data: dict, max_tokens: int, text_keys: tuple[str, ...]) -> dict:
    """Last resorts, in order: cut the longest of `text_keys` (answers, explanations), then
    the longest other free text anywhere in the result, then drop optional advice blocks."""
    out = data
    for _ in range(8):
        over = estimate(out) - max_tokens
        if over <= 0:
            return out
        texts = [(len(out[k]), (k,)) for k in text_keys if isinstance(out.get(k), str) and out[k]]
        found = texts or list(_strings(out, ()))
        if not found:
            break
        length, path = max(found)
        if length < 80:
            break
        out = _set_in(out, path, _cut(_get_in(out, path), max(40, length - over * 4 - 40)))
        out["truncated"] = True
    for key in _OPTIONAL:
        if estimate(out) <= max_tokens:
            break
        if out.get(key):
            out = {**out, key: None if not isinstance(out[key], list) else [], "truncated": True}
    return out


def _cut(text: str, keep: int) -> str:
    return text[:keep].rstrip() + " …[cut: raise max_tokens]"


def _strings(node: Any, path: tuple):
    """(length, path) of every free-text string under `node`."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k in _KEEP or k in ("truncated", "continuation"):
                continue
            if isinstance(v, str):
                yield len(v), (*path, k)
            else:
                yield from _strings(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            if isinstance(v, str):
                yield len(v), (*path, i)
            else:
                yield from _strings(v, (*path, i))


def _get_in(node: Any, path: tuple) -> Any:
    for step in path:
        node = node[step]
    return node


def _set_in(node: Any, path: tuple, value: Any) -> Any:
    """A copy of `node` with the value at `path` replaced (the input is not modified)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(node, dict):
        return {**node, head: _set_in(node[head], rest, value)}
    copy = list(node)
    copy[head] = _set_in(node[head], rest, value)
    return copy
