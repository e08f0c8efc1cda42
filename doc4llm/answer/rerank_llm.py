"""LLM reranking of search results (seed 004): the prompt and preview length follow the
query type; the model scores every candidate (`rerank_schema`: one 0-10 score per
document, in the order listed), so a reply that parses is a complete ranking by
construction. A complete list of indices (every candidate once, as the whole reply) is
accepted too; anything else (prose, a few bracketed numbers, a partial list) keeps the
local order and says so, because a reranker must never make a search fail, lose a result
or claim an order it did not produce.

A reply that parses is used only when it carries information (`uninformative`, issue 35):
scores that repeat the documents' positions (`[1, 2, 3]`, in either direction), the same
score for every document, or a reply that puts a confident search's top section last
while the section it puts first matches fewer of the query's words, are ignored: the
local order is kept and the reason is returned, so the caller says so."""

from __future__ import annotations

import json
from collections.abc import Callable

from doc4llm.answer.llm import LLMClient
from doc4llm.answer.prompts import RERANK_PREVIEW_CHARS, rerank_messages
from doc4llm.answer.structured import extract_json, validate
from doc4llm.errors import Doc4llmError
from doc4llm.index.tokenize import tokens

MAX_SCORE = 10
CONFIDENT_SEARCH = 70  # a top-1 this sure is not dropped to the bottom without a reason


def rerank_schema(n: int) -> dict:
    return {"type": "object",
            "properties": {"scores": {"type": "array", "minItems": n, "maxItems": n,
                                      "items": {"type": "integer",
                                                "enum": list(range(MAX_SCORE + 1))}}},
            "required": ["scores"]}


def max_tokens_for(n: int) -> int:
    """`{"scores": [7, 3, ...]}`: ~3 tokens a score, and some slack for spacing."""
    return 32 + 4 * n


def rerank(client: LLMClient, query: str, query_type: str | None, results: list[dict], *,
           read_text: Callable[[dict], str] | None = None,
           confidence: int | None = None) -> tuple[list[dict], str | None]:
    """(results, None) reordered by the `reranking` model, or (results unchanged, why the
    local order was kept). The model's order puts "llm" in each result's `found_by`;
    `rank` is renumbered. `read_text(result)` supplies the preview (default: `snippet`);
    `confidence` is the search's (a confident top-1 is not dropped without a reason)."""
    if len(results) < 2:
        return results, "fewer than 2 results"
    qtype = query_type or "general"
    limit = RERANK_PREVIEW_CHARS.get(qtype, RERANK_PREVIEW_CHARS["general"])
    try:
        docs = []
        for r in results:
            text = read_text(r) if read_text else (r.get("snippet") or "")
            title = " > ".join(r.get("heading_path") or []) or r.get("page", "")
            docs.append((f"{r.get('doc_set', '')} / {title}", text[:limit]))
        n = len(results)
        reply, _ = client.chat("reranking", rerank_messages(query, qtype, docs),
                               schema=rerank_schema(n), schema_name="ranking",
                               max_tokens=max_tokens_for(n), temperature=0)
        order, scores = parse_reply(reply, n)
    except (Doc4llmError, OSError, ValueError) as exc:
        return results, str(getattr(exc, "message", None) or exc)
    ignored = uninformative(order, scores, query, docs, confidence)
    if ignored:
        return results, IGNORED + ignored
    ranked = [dict(results[i], found_by=_with_rerank(results[i])) for i in order]
    for rank, r in enumerate(ranked, 1):
        r["rank"] = rank
    return ranked, None


IGNORED = "the LLM ranking was ignored: "


def rerank_warning(kept_because: str) -> str:
    """The one sentence every surface prints when the local order was kept."""
    if kept_because.startswith(IGNORED):
        return f"LLM ranking ignored, local order kept: {kept_because[len(IGNORED):]}"
    return f"LLM rerank failed, local order kept: {kept_because}"


def uninformative(order: list[int], scores: list[int] | None, query: str,
                  docs: list[tuple[str, str]], confidence: int | None) -> str:
    """Why this reply says nothing about relevance ("" when it may): see the module doc."""
    n = len(order)
    positions = [list(range(n)), list(range(1, n + 1))]
    if scores is not None:
        if len(set(scores)) == 1:
            return f"it gave every document the same score ({scores[0]})"
        if scores in positions or scores[::-1] in positions:
            return f"its scores {scores} only repeat the documents' positions"
    elif order in (list(range(n)), list(range(n))[::-1]):
        return f"its ranking {order} only repeats the documents' positions"
    if confidence is not None and confidence >= CONFIDENT_SEARCH and n >= 2 and order[-1] == 0:
        words = set(tokens(query))
        if words and _coverage(words, docs[order[0]]) <= _coverage(words, docs[0]):
            return (f"it puts the search's top section ({docs[0][0]}, search confidence "
                    f"{confidence}) last, and the one it puts first matches no more of the query")
    return ""


def _coverage(words: set[str], doc: tuple[str, str]) -> float:
    title, text = doc
    return len(words & set(tokens(f"{title}\n{text}"))) / len(words)


def llm_rerank(client: LLMClient, query: str, query_type: str | None, results: list[dict], *,
               read_text: Callable[[dict], str] | None = None,
               warnings: list[str] | None = None, confidence: int | None = None) -> list[dict]:
    """`rerank`, with the reason for keeping the local order appended to `warnings`."""
    ranked, kept_because = rerank(client, query, query_type, results, read_text=read_text,
                                  confidence=confidence)
    if kept_because and len(results) >= 2 and warnings is not None:
        warnings.append(rerank_warning(kept_because))
    return ranked


def parse_ranking(reply: str, n: int) -> list[int]:
    """A complete order of the n candidates from the model's reply; ValueError otherwise.

    Accepted: {"scores": [n scores]} (highest first, ties in local order), or a list of
    every index exactly once (bare, or as {"ranking": [...]}) that is the whole reply."""
    return parse_reply(reply, n)[0]


def parse_reply(reply: str, n: int) -> tuple[list[int], list[int] | None]:
    """(order, the scores it came from, or None for a list of indices): parse_ranking."""
    data = _whole_json(reply)
    if data is None:
        data = extract_json(reply)  # JSON after prose: only an object with scores counts
        if not isinstance(data, dict):
            raise ValueError(f"reranker reply holds no ranking: {_head(reply)!r}")
    if isinstance(data, dict) and "scores" in data:
        validate(data, rerank_schema(n))
        scores = data["scores"]
        return sorted(range(n), key=lambda i: (-scores[i], i)), list(scores)
    ranking = data.get("ranking") if isinstance(data, dict) else data
    if not isinstance(ranking, list) or not all(isinstance(i, int) and not isinstance(i, bool)
                                                for i in ranking):
        raise ValueError(f"reranker reply holds no ranking: {_head(reply)!r}")
    if sorted(ranking) != list(range(n)):
        raise ValueError(f"reranker ranking is incomplete: it must list each of the {n} "
                         f"documents once, got {ranking[:12]}")
    return list(ranking), None


def _whole_json(reply: str) -> object | None:
    """The reply parsed as JSON when it is nothing but JSON (fenced or not), else None."""
    text = (reply or "").strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def _head(reply: str) -> str:
    return " ".join((reply or "").split())[:80]


def _with_rerank(result: dict) -> list[str]:
    found_by = list(result.get("found_by") or [])
    return found_by if "llm" in found_by else found_by + ["llm"]
