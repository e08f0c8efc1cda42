"""JSON replies: the shapes the evaluator and the reranker must answer in, as JSON
schemas, and the one way a reply is read back and checked against the same schema.

The schema goes to the server as `response_format` (llm.py falls back from json_schema to
JSON mode to plain text when a server refuses); whatever the server did with it, the reply
is validated here with jsonschema, so a constrained and an unconstrained model are held to
the same shape. jsonschema rather than hand-written checks: the schema that constrains the
model is then the same object that judges its reply.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator

_FENCE = "```"
MAX_JSON_STARTS = 8  # prose before the JSON: try this many '{' / '[' starts, no more


def str_list(max_items: int = 3, max_chars: int = 160) -> dict:
    """A short list of short strings: bounded so a small model under a grammar cannot
    run to max_tokens inside one string (and the reply stays valid JSON)."""
    return {"type": "array", "items": {"type": "string", "maxLength": max_chars},
            "maxItems": max_items}


def extract_json(reply: str) -> Any:
    """The JSON value in a model's reply: the whole reply, a fenced block, or the first
    object/array after some prose. ValueError says what is wrong (fed to the repair)."""
    text = (reply or "").strip()
    if not text:
        raise ValueError("the reply is empty")
    fenced = _fenced(text)
    if fenced is not None:
        text = fenced
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        first_error = f"not JSON ({exc.msg} at char {exc.pos})"
    decoder = json.JSONDecoder()
    starts = [i for i, ch in enumerate(text) if ch in "{["][:MAX_JSON_STARTS]
    for i in starts:
        try:
            value, _ = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            continue
        if isinstance(value, (dict, list)):
            return value
    raise ValueError(first_error)


def _fenced(text: str) -> str | None:
    start = text.find(_FENCE)
    if start < 0:
        return None
    body_start = text.find("\n", start)
    end = text.find(_FENCE, start + 3)
    if body_start < 0 or end < 0 or end < body_start:
        return None
    return text[body_start + 1:end].strip()


def clip_to_schema(data: Any, schema: dict) -> Any:
    """`data` with strings cut to the schema's maxLength and lists to its maxItems: those
    bounds keep a constrained model's reply short, they are not what makes it right, so an
    unconstrained model's longer reason is clipped rather than rejected."""
    if isinstance(data, str) and "maxLength" in schema:
        return data[: schema["maxLength"]]
    if isinstance(data, list):
        items = data[: schema["maxItems"]] if "maxItems" in schema else data
        sub = schema.get("items")
        return [clip_to_schema(v, sub) for v in items] if isinstance(sub, dict) else list(items)
    if isinstance(data, dict):
        props = schema.get("properties") or {}
        return {k: clip_to_schema(v, props[k]) if isinstance(props.get(k), dict) else v
                for k, v in data.items()}
    return data


def validate(data: Any, schema: dict) -> None:
    """ValueError naming the first problem (path and message) when `data` breaks `schema`."""
    validator = Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: (len(e.path), list(e.path)))
    if errors:
        err = errors[0]
        where = ".".join(str(p) for p in err.absolute_path) or "the reply"
        raise ValueError(f"{where}: {err.message[:200]}")


def parse_reply(reply: str, schema: dict) -> Any:
    """extract_json then validate: the reply's JSON when it has the required shape."""
    data = extract_json(reply)
    validate(data, schema)
    return data
