"""Type-aware search options (seed 004): how wide to search and what to prefer, per type.

- candidates: how many hits each signal contributes to fusion
- rerank_depth: how many fused candidates the local reranker reorders
- expand: adjacent-section window added as context (`context` in results): concept
  questions get surrounding prose, code lookups get none
- prefer: content type the reranker nudges up (prose / code / api-reference)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TypeOptions:
    candidates: int
    rerank_depth: int
    expand: int
    prefer: str | None
    prefer_bonus: float


OPTIONS: dict[str, TypeOptions] = {
    "error": TypeOptions(60, 30, 1, None, 0.0),
    "howto": TypeOptions(60, 30, 1, "prose", 0.02),
    "concept": TypeOptions(60, 30, 2, "prose", 0.03),
    "code_lookup": TypeOptions(80, 40, 0, "code", 0.04),
    "api_reference": TypeOptions(60, 30, 0, "api-reference", 0.04),
    "general": TypeOptions(50, 25, 1, None, 0.0),
}


def options_for(query_type: str) -> TypeOptions:
    return OPTIONS.get(query_type, OPTIONS["general"])
