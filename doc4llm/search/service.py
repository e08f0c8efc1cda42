"""What `doc4llm search` does around the engine: sessions and the optional LLM rerank."""

from __future__ import annotations

import os
from pathlib import Path

from doc4llm.search.engine import Searcher


def run_cli_search(query: str, *, docs_dir: Path, sets: list[str] | None, k: int, strategy: str,
                   query_type: str | None, explain: bool, rerank: str = "local",
                   session: str | None = None, embedder: str | None = None,
                   phrasings: list[str] | None = None, scope=None) -> dict:
    session = session or os.environ.get("DOC4LLM_SESSION")
    if phrasings:
        from doc4llm.search.phrasings import check_phrasings

        check_phrasings(query, phrasings)
    searcher = Searcher(docs_dir, embedder=embedder)
    sess = None
    context = None
    if session:
        from doc4llm.search.session import load_session

        sess = load_session(searcher.docs_dir, session)
        query_used, context = sess.enrich(query)
    else:
        query_used = query
    try:
        if phrasings:
            from doc4llm.search.phrasings import search_phrasings

            result = search_phrasings(searcher, [query_used, *phrasings], sets=sets, k=k, strategy=strategy,
                                      query_type=query_type, explain=explain, context=context, scope=scope)
        else:
            result = searcher.search(query_used, sets=sets, k=k, strategy=strategy, query_type=query_type,
                                     explain=explain, context=context, scope=scope)
    finally:
        searcher.close()
    if context:
        result["query"] = query
        result["query_enriched"] = query_used
    if rerank == "llm":
        result = llm_rerank_result(result)
    if sess is not None:
        from doc4llm.search.session import save_session

        sess.record(query, result)
        save_session(searcher.docs_dir, sess)
    return result


def llm_rerank_result(result: dict) -> dict:
    """Reorder results with the configured LLM; keep the local order on any problem."""
    warnings = result.setdefault("warnings", [])
    if result.get("abstained"):  # no section is a confident match: no order worth changing
        warnings.append("LLM rerank not run: the search abstained, so no section is a match "
                        "worth reordering; local order kept")
        result["reranked_by"] = "local"
        return result
    try:
        from doc4llm.answer.llm import LLMClient
        from doc4llm.answer.rerank_llm import rerank, rerank_warning
    except ImportError:
        warnings.append("LLM rerank is not available in this build; local order kept")
        return result
    client = LLMClient.from_env()
    if client is None:
        warnings.append("--rerank llm needs OPENAI_API_KEY (and OPENAI_BASE_URL for a local server); local order kept")
        return result
    try:
        reranked, kept_because = rerank(client, result["query"], result["query_type"],
                                        result["results"], confidence=result.get("confidence"))
    except Exception as exc:  # the contract: local order on any error
        warnings.append(f"LLM rerank failed ({type(exc).__name__}); local order kept")
        return result
    if kept_because:  # say so: the order shown is the local one (issues 30, 35)
        warnings.append(rerank_warning(kept_because))
        result["reranked_by"] = "local"
        return result
    result["results"] = reranked
    result["reranked_by"] = "llm"
    return result


DETAIL_KEYS = ("trace", "confidence_factors", "confidence_features")


def for_output(result: dict, explain: bool) -> dict:
    """The contract an agent reads: `--json` leaves the trace and score detail to `--explain`
    (it was 5-8 KB a search, most of it trace and factors no agent acted on)."""
    if explain:
        return result
    return {k: v for k, v in result.items() if k not in DETAIL_KEYS}

