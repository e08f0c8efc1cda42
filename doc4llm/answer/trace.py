"""The evaluation trace: every step of `ask` with its decision, reason, duration, LLM
calls and tokens, and the totals (including the loop's own overhead) the benchmark reads."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from doc4llm.answer.llm import LLMClient
from doc4llm.answer.websearch import WebSearch


class Trace:
    def __init__(self, llm: LLMClient | None, web: WebSearch | None):
        self._llm = llm
        self._web = web
        self._start = time.perf_counter()
        self.steps: list[dict] = []
        self.final_action = "returned"
        self.doc_queries = 0
        self.web_searches = 0

    @contextmanager
    def step(self, kind: str, **detail: object) -> Iterator[dict]:
        """Record one step; the caller adds decision/reason/outcome to the yielded dict."""
        calls_before = len(self._llm.calls) if self._llm else 0
        entry: dict = {"step": len(self.steps) + 1, "kind": kind, **detail}
        self.steps.append(entry)
        start = time.perf_counter()
        try:
            yield entry
        finally:
            entry["duration_ms"] = round((time.perf_counter() - start) * 1000, 1)
            new_calls = self._llm.calls[calls_before:] if self._llm else []
            entry["llm_calls"] = len(new_calls)
            entry["tokens"] = sum(c.usage.total_tokens for c in new_calls)
            retries = [r for c in new_calls for r in c.retries]
            if retries:
                entry["retries"] = retries

    def to_dict(self) -> dict:
        total_ms = (time.perf_counter() - self._start) * 1000
        llm = self._llm.totals() if self._llm else {
            "llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0,
            "retries": 0, "llm_ms": 0.0}
        web_ms = round(self._web.elapsed_ms, 1) if self._web else 0.0
        totals = {**llm, "doc_queries": self.doc_queries, "web_searches": self.web_searches,
                  "duration_ms": round(total_ms, 1), "web_ms": web_ms,
                  # time in doc4llm itself: search, reading, prompts, parsing, bookkeeping
                  "overhead_ms": round(max(0.0, total_ms - llm["llm_ms"] - web_ms), 1)}
        return {"finalAction": self.final_action, "steps": self.steps, "totals": totals,
                "llmCalls": [c.to_dict() for c in self._llm.calls] if self._llm else []}
