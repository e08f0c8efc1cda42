"""`doc4llm serve`: the MCP surface over the same library calls as the CLI.

One `DocsService` per server process keeps the index connection, the vectors and the
embedder warm between calls (ask_docs excepted: `answer.service.ask` opens its own
searcher), and a conversation `Session` in memory (follow-up queries borrow the previous
query's topic; `follow_up=false` turns that off per call). Tools are read-only: nothing here imports, scrapes
or saves web results (the search index under `.doc4llm/` is a rebuildable cache).

Responses are compact JSON text: `search_docs` returns by default only what an agent
needs to decide and to read (`detail=true` gives the full search contract of DESIGN.md).
Bad input (empty queries, unsafe page or set names, out-of-range values) and missing
pages/sets become MCP tool errors (`isError`) with the message, hint and candidates.
stdout carries JSON-RPC only: logs go to stderr and the searcher runs quiet.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from doc4llm.corpus.paths import resolve_docs_dir, validate_page_name, validate_set_pattern
from doc4llm.corpus.sections import estimate_tokens
from doc4llm.errors import Doc4llmError, ExternalError, InputError

MAX_QUERY_CHARS = 1000
MAX_ERROR_TEXT_CHARS = 20_000
MAX_NAME_CHARS = 300
MAX_SETS = 20
SNIPPET_CHARS = 160
DEFAULT_READ_TOKENS = 4000

INSTRUCTIONS = (
    "Local documentation search. Call search_docs first; read only the lines it returns "
    "with read_section (page + set_name + lines). If abstained is true the local docs do "
    "not answer: say so and use guidance.suggested_searches instead of guessing."
)

SetsArg = Annotated[list[str] | str | None, Field(
    default=None,
    description="Doc sets to search (NAME@VER or a glob such as 'OpenCode*'); default all.")]


def _validate_text(value: str, what: str, limit: int = MAX_QUERY_CHARS) -> str:
    """Empty or oversized free text is the caller's mistake: say so clearly."""
    if not value or not value.strip():
        raise InputError(f"the {what} is empty")
    if len(value) > limit:
        raise InputError(f"the {what} is {len(value)} characters; the limit is {limit}")
    return value


def _validate_sets(sets: list[str] | str | None) -> list[str] | None:
    """A list of set names or globs (one bare name is accepted as a list of one)."""
    if not sets:
        return None
    sets = [sets] if isinstance(sets, str) else sets
    if len(sets) > MAX_SETS:
        raise InputError(f"{len(sets)} sets given; the limit is {MAX_SETS}")
    return [validate_set_pattern(_validate_text(s, "set name", MAX_NAME_CHARS)) for s in sets]


def compact_result(result: dict) -> dict:
    """The token-frugal view of a search result: where to read, and how sure we are."""
    out: dict[str, Any] = {"confidence": result["confidence"], "abstained": result["abstained"]}
    if result.get("query_enriched"):
        out["searched_as"] = result["query_enriched"]
    out["results"] = []
    for r in result["results"]:
        item = {"rank": r["rank"], "doc_set": r["doc_set"], "page": r["page"],
                "heading_path": r["heading_path"], "lines": r["lines"], "tokens": r["tokens"],
                "relevance": r["relevance"], "snippet": _shorten(r.get("snippet") or "", SNIPPET_CHARS)}
        if r.get("url"):  # imported pages have none: no key rather than a null per result
            item["url"] = r["url"]
        out["results"].append(item)
    g = result.get("guidance")
    if result["abstained"] and g:
        out["guidance"] = {
            "missing": g.get("missing", []),
            "suggested_searches": [s["query"] for s in g.get("suggested_searches", [])],
            "tips": g.get("tips", [])[:2],
        }
    return out


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def _fit_tokens(result: dict, max_tokens: int) -> dict:
    """Cut a read at a line boundary so one call never floods the agent's context."""
    if result["tokens"] <= max_tokens:
        return result
    start, end = result["lines"]
    kept: list[str] = []
    used, budget = 0, max_tokens * 4  # estimate_tokens counts ~4 characters per token
    for line in result["text"].split("\n"):
        used += len(line) + 1
        if kept and used > budget:
            break
        kept.append(line)
    last = start + len(kept) - 1
    text = "\n".join(kept)
    return {**result, "text": text, "lines": [start, last], "tokens": estimate_tokens(text),
            "truncated": True, "next_lines": f"{last + 1}:{end}"}


class DocsService:
    """The library calls behind the tools, with one warm Searcher and one Session."""

    def __init__(self, docs_dir: str | Path | None = None, *, embedder: str | None = None):
        from doc4llm.search.engine import Searcher
        from doc4llm.search.session import Session

        self.docs_dir = resolve_docs_dir(docs_dir)
        self.searcher = Searcher(self.docs_dir, embedder=embedder, quiet=True)
        self.session = Session("mcp")
        # Tools run in worker threads; the searcher's connection and state are not shared-safe.
        self.lock = threading.Lock()

    def search_docs(self, query: str, *, sets: list[str] | str | None = None, k: int = 5,
                    strategy: str = "auto", detail: bool = False, follow_up: bool = True) -> dict:
        query = _validate_text(query, "query")
        sets = _validate_sets(sets)
        searched, context = self.session.enrich(query) if follow_up else (query, None)
        result = self.searcher.search(searched, sets=sets, k=k, strategy=strategy, context=context)
        if context:
            result["query"] = query
            result["query_enriched"] = searched
        self.session.record(query, result)
        return result if detail else compact_result(result)

    def read_section(self, page: str, *, set_name: str | None = None, section: str | None = None,
                     lines: str | None = None, with_subsections: bool = False,
                     max_tokens: int = DEFAULT_READ_TOKENS) -> dict:
        from doc4llm.reader import read_section

        validate_page_name(_validate_text(page, "page name", MAX_NAME_CHARS))
        if section:
            _validate_text(section, "section", MAX_QUERY_CHARS)
        if lines:
            _validate_text(lines, "line range", 40)
        result = read_section(self.docs_dir, page, set_name=_validate_sets(set_name),
                              section=section or None, lines=lines or None,
                              with_subsections=with_subsections)
        return _fit_tokens(result, max_tokens)

    def get_toc(self, page: str, *, set_name: str | None = None) -> dict:
        from doc4llm.reader import get_toc

        validate_page_name(_validate_text(page, "page name", MAX_NAME_CHARS))
        toc = get_toc(self.docs_dir, page, _validate_sets(set_name))
        return {
            "doc_set": toc["doc_set"], "page": toc["page"], "title": toc["title"],
            "source": toc["source"], "line_count": toc["line_count"], "tokens": toc["tokens"],
            "sections": [{"address": s["address"], "level": s["level"], "lines": s["lines"],
                          "subtree_lines": s["subtree_lines"], "tokens": s["tokens"]}
                         for s in toc["sections"]],
        }

    def list_doc_sets(self) -> dict:
        from doc4llm.corpus.model import list_sets
        from doc4llm.index.state import index_states

        states = index_states(self.docs_dir)
        return {"docs_dir": str(self.docs_dir), "sets": [
            {"name": s.name, "pages": len(s.pages()), "index": states.get(s.name, "not indexed")}
            for s in list_sets(self.docs_dir)]}

    def ask_docs(self, question: str, *, sets: list[str] | str | None = None, k: int = 5) -> dict:
        from doc4llm.answer.service import ask

        # Read-only: never save web results into the docs dir.
        return ask(_validate_text(question, "question"), docs_dir=self.docs_dir,
                   sets=_validate_sets(sets), k=k, save_web=None, searcher=self.searcher)

    def explain_error(self, text: str, *, sets: list[str] | str | None = None, k: int = 5) -> dict:
        from doc4llm.code.explain import explain_error

        return explain_error(_validate_text(text, "error text", MAX_ERROR_TEXT_CHARS),
                             docs_dir=self.docs_dir, sets=_validate_sets(sets), k=k,
                             llm=_configured_llm(), searcher=self.searcher)

    def get_working_example(self, task: str, *, sets: list[str] | str | None = None) -> dict:
        from doc4llm.code.example import working_example

        return working_example(_validate_text(task, "task"), docs_dir=self.docs_dir,
                               sets=_validate_sets(sets), llm=_configured_llm(),
                               searcher=self.searcher)

    def close(self) -> None:
        self.searcher.close()


def _configured_llm():
    """The LLM the environment configures, else None: the tool then answers with the
    documented sections and guidance, exactly as the CLI does offline."""
    from doc4llm.answer.config import load_answer_config
    from doc4llm.answer.llm import LLMClient

    return LLMClient.from_env(load_answer_config())


def _dump(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


def build_server(service: DocsService):
    """An MCPServer whose tools call `service`; errors become MCP tool errors."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
        from mcp.types import ToolAnnotations
    except ImportError as exc:  # mcp 1.x named it FastMCP, with another API
        raise ExternalError(f"doc4llm serve needs the mcp SDK 2.x ({exc})",
                            hint='pip install "mcp>=2,<3"') from exc

    from doc4llm import __version__

    app = MCPServer("doc4llm", version=__version__, instructions=INSTRUCTIONS)
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
    # ask_docs may search the web (TAVILY_API_KEY); it still writes nothing.
    web_read = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=True)

    def call(fn: Callable[..., dict], *args: Any, **kwargs: Any) -> str:
        try:
            with service.lock:
                return _dump(fn(*args, **kwargs))
        except Doc4llmError as exc:
            msg = f"{type(exc).__name__}: {exc.message}"
            if exc.candidates:
                msg += "\ncandidates:\n" + "\n".join(f"  {c}" for c in exc.candidates[:10])
            if exc.hint:
                msg += f"\nhint: {exc.hint}"
            raise ToolError(msg) from exc

    @app.tool(annotations=read_only)
    def search_docs(
        query: Annotated[str, Field(description="What you need to know, in plain words or an error message.")],
        sets: SetsArg = None,
        k: Annotated[int, Field(ge=1, le=20, description="Number of results.")] = 5,
        strategy: Annotated[str, Field(description="auto (default), cascade, L1, L2, L3.1, L3.2, bm25 or vector.")] = "auto",
        detail: Annotated[bool, Field(description="Return the full result contract (scores, paths, trace).")] = False,
        follow_up: Annotated[bool, Field(description="false: never read the query as a follow-up of the previous one.")] = True,
    ) -> str:
        """Find the documentation sections that answer a query: page, heading path, line range,
        tokens, snippet, with a confidence 0-100. abstained=true means the local docs do not
        answer (guidance then lists what is missing and web searches to try). Follow-up
        queries ("and its timeout?") reuse the previous query's topic (shown as searched_as)."""
        return call(service.search_docs, query, sets=sets, k=k, strategy=strategy, detail=detail,
                    follow_up=follow_up)

    @app.tool(annotations=read_only)
    def read_section(
        page: Annotated[str, Field(description="Page folder name as search_docs returns it.")],
        set_name: Annotated[str | None, Field(description="Doc set (NAME@VER) when the page exists in several.")] = None,
        section: Annotated[str | None, Field(description="Heading path, e.g. 'Configuration > Hooks', or a trailing part.")] = None,
        lines: Annotated[str | None, Field(description="Line range N:M in docContent.md (1-based, inclusive).")] = None,
        with_subsections: Annotated[bool, Field(description="With section: include its subsections.")] = False,
        max_tokens: Annotated[int, Field(ge=100, le=20000, description="Cut the text at this budget (next_lines says where to go on).")] = DEFAULT_READ_TOKENS,
    ) -> str:
        """Read one section (by heading path) or a line range of a page. Prefer the lines
        search_docs returned over reading whole pages."""
        return call(service.read_section, page, set_name=set_name, section=section, lines=lines,
                    with_subsections=with_subsections, max_tokens=max_tokens)

    @app.tool(annotations=read_only)
    def get_toc(
        page: Annotated[str, Field(description="Page folder name.")],
        set_name: Annotated[str | None, Field(description="Doc set (NAME@VER) when the page exists in several.")] = None,
    ) -> str:
        """A page's heading tree: each section's address, level, line range and tokens."""
        return call(service.get_toc, page, set_name=set_name)

    @app.tool(annotations=read_only)
    def list_doc_sets() -> str:
        """The doc sets available locally, with page counts and index state."""
        return call(service.list_doc_sets)

    @app.tool(annotations=web_read)
    def ask_docs(
        question: Annotated[str, Field(description="The question.")],
        sets: SetsArg = None,
        k: Annotated[int, Field(ge=1, le=20, description="Sections per search.")] = 5,
    ) -> str:
        """Answer a question from the docs with cited sources. Without a configured LLM the
        answer is null and the sources, suggestions and search guidance are returned."""
        return call(service.ask_docs, question, sets=sets, k=k)

    @app.tool(annotations=read_only)
    def explain_error(
        text: Annotated[str, Field(description="The error message or traceback, as printed.")],
        sets: SetsArg = None,
        k: Annotated[int, Field(ge=1, le=20, description="Sections to return.")] = 5,
    ) -> str:
        """The documentation sections about an error (troubleshooting first), with what to
        read next; with an LLM configured, also an explanation and a fix."""
        return call(service.explain_error, text, sets=sets, k=k)

    @app.tool(annotations=read_only)
    def get_working_example(
        task: Annotated[str, Field(description="What the code should do, e.g. 'add an MCP server with env vars'.")],
        sets: SetsArg = None,
    ) -> str:
        """The best documented code example for a task, syntax-checked, with its source lines
        and alternatives."""
        return call(service.get_working_example, task, sets=sets)

    return app


def serve(docs_dir: str | Path | None = None, *, embedder: str | None = None,
          http: bool = False, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Run over stdio (default) or streamable HTTP on localhost until the client leaves."""
    _single_threaded_math()
    if embedder:  # ask_docs builds its own Searcher (answer.service): same embedder for all
        os.environ["DOC4LLM_EMBEDDER"] = embedder
    from doc4llm.corpus.model import list_sets

    service = DocsService(docs_dir, embedder=embedder)
    if not list_sets(service.docs_dir):
        _log(f"no doc sets in {service.docs_dir} yet; tools will say so until one is imported "
             "(pass --docs-dir or set DOC4LLM_DOCS_DIR)")
    app = build_server(service)
    try:
        if http:
            if host not in ("127.0.0.1", "localhost", "::1"):
                _log(f"serving on {host}: anyone who can reach this port can read the docs")
            _log(f"MCP over HTTP at http://{host}:{port}/mcp (docs: {service.docs_dir})")
            app.run("streamable-http", host=host, port=port)
        else:
            app.run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        service.close()


def _single_threaded_math() -> None:
    """One BLAS thread unless the user chose otherwise (must run before numpy loads).

    A query embedding is a small matrix product: extra BLAS threads barely help, and on
    a machine whose cores are busy (an agent running builds and tests) they stall one
    another: measured on the mdmem dev split under load, warm p50 289 -> 75 ms and p95
    3262 -> 127 ms with one thread.
    """
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")


def _log(message: str) -> None:
    """stderr only: on stdio, stdout belongs to JSON-RPC."""
    print(f"doc4llm: {message}", file=sys.stderr)
