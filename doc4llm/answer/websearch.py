"""Web search through Tavily (tavily-python), for what the local docs do not cover.

Only built when TAVILY_API_KEY is set. Every failure becomes an ExternalError with the
key redacted; the evaluation loop turns it into a warning, never a crash.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from doc4llm.answer.config import AnswerConfig
from doc4llm.answer.secrets import redact
from doc4llm.errors import ExternalError


@dataclass
class WebResult:
    title: str
    url: str
    content: str
    score: float | None


class WebSearch:
    def __init__(self, client: Any, config: AnswerConfig):
        self._client = client
        self.config = config
        self.elapsed_ms = 0.0  # time spent waiting on the web service

    @classmethod
    def from_env(cls, config: AnswerConfig) -> WebSearch | None:
        key = os.environ.get("TAVILY_API_KEY")
        if not key:
            return None
        from tavily import TavilyClient

        return cls(TavilyClient(api_key=key, api_base_url=config.tavily_base_url or None), config)

    def search(self, query: str, timeout: float | None = None) -> list[WebResult]:
        start = time.perf_counter()
        try:
            reply = self._client.search(query, max_results=self.config.web_max_results,
                                        timeout=timeout or self.config.timeout_s)
        except Exception as exc:  # tavily raises its own classes, requests' and ValueError
            raise ExternalError(f"web search failed for {query!r}: "
                                f"{type(exc).__name__}: {redact(exc)}") from None
        finally:
            self.elapsed_ms += (time.perf_counter() - start) * 1000
        if not isinstance(reply, dict) or not isinstance(reply.get("results") or [], list):
            raise ExternalError(f"web search failed for {query!r}: the reply is not a Tavily "
                                f"result object (got {type(reply).__name__})")
        results = []
        for r in reply.get("results") or []:
            if isinstance(r, dict) and r.get("url"):
                results.append(WebResult(title=str(r.get("title") or r["url"]), url=str(r["url"]),
                                         content=str(r.get("raw_content") or r.get("content") or ""),
                                         score=r.get("score")))
        return results
