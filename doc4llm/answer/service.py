"""One call from a question to the structured `ask` response, for the CLI and the MCP server."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from doc4llm.answer.config import load_answer_config
from doc4llm.answer.deadline import Deadline
from doc4llm.answer.llm import LLMClient
from doc4llm.answer.loop import AskDeps, run_ask
from doc4llm.answer.response import build_response
from doc4llm.answer.save_web import save_web_results
from doc4llm.answer.websearch import WebSearch
from doc4llm.corpus.paths import resolve_docs_dir, validate_set_name
from doc4llm.errors import InputError


def ask(question: str, *, docs_dir: str | Path | None = None, sets: list[str] | None = None,
        k: int = 5, include_trace: bool = False, save_web: str | None = None,
        max_iterations: int | None = None, web: bool = True, searcher=None,
        deadline_s: float | None = None) -> dict:
    """{answer, metadata, sources} (see response.py). Never raises for a missing key or a
    failing model/web service: those become warnings; bad input raises InputError.
    Pass a live `searcher` (the MCP server does) to reuse its warm index and model.
    `deadline_s` (default answer.deadline_s) bounds the whole call, search included."""
    from doc4llm.search.engine import Searcher

    start = time.perf_counter()
    clock_start = time.monotonic()
    clock = Deadline(deadline_s, start=clock_start) if deadline_s else None
    if not question or not question.strip():
        raise InputError("the question is empty")
    if save_web:
        validate_set_name(save_web)
    config = load_answer_config()
    if max_iterations:
        config = dataclasses.replace(config, max_iterations=max_iterations)
    if clock is None:
        clock = Deadline(config.deadline_s, start=clock_start)
    docs = resolve_docs_dir(docs_dir)
    own_searcher = searcher is None
    if own_searcher:
        searcher = Searcher(docs)

    def search_fn(query: str) -> dict:
        # over-fetch so the LLM reranker has candidates to promote into the top k
        return searcher.search(query, sets=sets or None, k=2 * k)

    deps = AskDeps(search_fn=search_fn, docs_dir=docs, llm=LLMClient.from_env(config, deadline=clock),
                   web=WebSearch.from_env(config) if web else None, config=config, k=k,
                   deadline=clock)
    if not web:
        deps = dataclasses.replace(deps, web_off_reason="web search is off (--no-web)")
    try:
        outcome = run_ask(question, deps)
    finally:
        if own_searcher:
            searcher.close()
    saved = None
    if save_web:
        if outcome.book.web:
            saved = save_web_results(docs, save_web, outcome.book.web, question)
        else:
            outcome.warnings.append(f"--save-web {save_web}: no web results to save")
    response = build_response(outcome, processing_ms=(time.perf_counter() - start) * 1000,
                              include_trace=include_trace,
                              docs_arg=str(docs_dir) if docs_dir else None, sets=sets)
    if saved is not None:
        response["metadata"]["savedWeb"] = {"set": save_web, "pages": saved}
    if (deps.llm is not None and response.get("answer") is None
            and outcome.trace.final_action in ("llm_error", "deadline")):
        # a configured model that could not answer (in time) is an external failure (exit 3),
        # reported with everything found so far rather than a bare error
        failures = [w for w in outcome.warnings if w.startswith("model call failed")]
        response["metadata"]["error"] = {"type": "ExternalError", "exit_code": 3,
                                         "message": failures[-1] if failures else "the model call failed"}
    return response
