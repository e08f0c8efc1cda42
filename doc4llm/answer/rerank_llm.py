"""LLM reranking of search results (seed 004): the prompt and preview length follow the
query type, the model returns a JSON list of indices, and on ANY failure the local order
is kept, because a reranker must never make a search fail or lose a result."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from doc4llm.answer.llm import LLMClient
from doc4llm.answer.prompts import RERANK_PREVIEW_CHARS, rerank_messages
from doc4llm.errors import Doc4llmError

_ARRAY = re.compile(r"\[[\d\s,]*\]")


def llm_rerank(client: LLMClient, query: str, query_type: str | None, results: list[dict], *,
               read_text: Callable[[dict], str] | None = None,
               warnings: list[str] | None = None) -> list[dict]:
    """Search results (contract dicts) reordered by the `reranking` model.

    Indices the model lists come first, in its order; the rest follow in local order
    (nothing is dropped); `rank` is renumbered and "llm" added to `found_by` of
    the results it placed. `read_text(result)` supplies the preview (default: `snippet`).
    """
    if len(results) < 2:
        return results
    qtype = query_type or "general"
    limit = RERANK_PREVIEW_CHARS.get(qtype, RERANK_PREVIEW_CHARS["general"])
    docs = []
    try:
        for r in results:
            text = read_text(r) if read_text else (r.get("snippet") or "")
            title = " > ".join(r.get("heading_path") or []) or r.get("page", "")
            docs.append((f"{r.get('doc_set', '')} / {title}", text[:limit]))
        reply, _ = client.chat("reranking", rerank_messages(query, qtype, docs))
        order = parse_ranking(reply, len(results))
    except (Doc4llmError, OSError, ValueError) as exc:
        if warnings is not None:
            warnings.append(f"LLM rerank skipped, local order kept: {exc}")
        return results
    chosen = set(order)
    placed = [dict(results[i], found_by=_with_rerank(results[i])) for i in order]
    rest = [dict(r) for i, r in enumerate(results) if i not in chosen]
    ranked = placed + rest
    for rank, r in enumerate(ranked, 1):
        r["rank"] = rank
    return ranked


def parse_ranking(reply: str, n: int) -> list[int]:
    """Valid, distinct indices from the model's JSON list; ValueError when there is none."""
    match = _ARRAY.search(reply or "")
    if not match:
        raise ValueError(f"reranker reply has no JSON list of indices: {reply[:80]!r}")
    order: list[int] = []
    for i in json.loads(match.group(0)):
        if isinstance(i, int) and 0 <= i < n and i not in order:
            order.append(i)
    if not order:
        raise ValueError("reranker returned no valid index")
    return order


def _with_rerank(result: dict) -> list[str]:
    found_by = list(result.get("found_by") or [])
    return found_by if "llm" in found_by else found_by + ["llm"]
