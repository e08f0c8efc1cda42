"""`doc4llm serve`: the MCP surface over the same library calls as the CLI.

One `DocsService` per server process keeps the index connection, the vectors and the
embedder warm between calls (ask_docs excepted: `answer.service.ask` opens its own
searcher), and a conversation `Session` in memory (follow-up queries borrow the previous
query's topic; `follow_up=false` turns that off per call). Tools are read-only: nothing here imports, scrapes
or saves web results (the search index under `.doc4llm/` is a rebuildable cache).

Every tool returns a typed object (`doc4llm.mcp.schemas`: the tool's outputSchema, sent
as structuredContent, with the same JSON as text for older clients) bounded by a
`max_tokens` budget: a cut result says `truncated` and gives the `continuation` call.
`search_docs` and `grep_docs` return by default the text the CLI prints (with the
two or three fields a program acts on): Claude Code shows the model the structuredContent,
so that is what a reply costs; `detail=true` gives the full contract of DESIGN.md.
Bad input (empty queries, unsafe page or set names, out-of-range values) and missing
pages/sets become MCP tool errors (`isError`) with the message, hint and candidates.
stdout carries JSON-RPC only: logs go to stderr and the searcher runs quiet.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

# The tool signatures' annotations are resolved by the SDK from this module's globals.
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from doc4llm.corpus.paths import resolve_docs_dir, validate_set_pattern
from doc4llm.corpus.sections import estimate_tokens
from doc4llm.errors import Doc4llmError, ExternalError, InputError
from doc4llm.mcp.args import MAX_BUDGET, Budget, K, Lines, Offset, Page, Sets, error_text
from doc4llm.mcp.schemas import (
    AskResult,
    DocSetsResult,
    ExampleResult,
    ExplainResult,
    GrepResult,
    ReadResult,
    SearchResult,
    Strategy,
    TocResult,
    estimate,
    fit_list,
    shorten_text,
)
from doc4llm.secrets import redact, redact_data

MAX_QUERY_CHARS = 1000
MAX_ERROR_TEXT_CHARS = 20_000
MAX_NAME_CHARS = 300
MAX_SETS = 20
DEFAULT_READ_TOKENS = 4000
DEFAULT_SEARCH_TOKENS = 2000
SEARCH_TEXT_TOKENS = 600  # search_docs' text, as `doc4llm search --max-tokens` (detail: 2000)
DEFAULT_LIST_TOKENS = 3000
DEFAULT_ANSWER_TOKENS = 4000

INSTRUCTIONS = (
    "Local documentation search. Call search_docs first, with phrasings in the docs' likely "
    "words; its text's best lines usually answer. Read more only with read_section (page + sets + "
    "lines); grep_docs finds an exact name. If abstained is true the local docs do "
    "not answer: say so instead of guessing. A reply "
    "over its max_tokens (a budget in tokens) is cut: truncated is true and continuation is the call (tool "
    "and arguments) that returns the rest."
)


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


_RESULT_LINE = re.compile(r"\d+\. ")  # a result's first line in the search text
_DASH_RANGE = re.compile(r"^\s*(\d+)\s*-\s*(\d*)\s*$")


def normalize_lines(lines: list[int] | str | None) -> str | None:
    """[a, b], "a:b", "a-b", "a:" or "a" -> the reader's "a:b" form."""
    if lines is None or lines == "" or lines == []:
        return None
    if isinstance(lines, list):
        if len(lines) not in (1, 2) or not all(isinstance(n, int) for n in lines):
            raise InputError(f"lines {lines!r}: expected [start, end], e.g. [58, 63]")
        return f"{lines[0]}:{lines[-1]}"
    _validate_text(lines, "line range", 40)
    dash = _DASH_RANGE.match(lines)
    return f"{dash.group(1)}:{dash.group(2)}" if dash else lines.strip()


def _absolute(path: str | None) -> str | None:
    """Library paths are cwd-relative; an MCP client does not share our cwd."""
    return str(Path(path).resolve()) if path else path


def compact_reply(result: dict, max_tokens: int) -> dict:
    """What an agent reads: the text `doc4llm search` prints (the read hint as a
    read_section call), and the two fields a program acts on. Claude Code shows the model
    `JSON.stringify(structuredContent)`, so this is the whole reply's cost (issue 34: the
    full contract had cost twice the CLI text); detail=true returns the contract."""
    from doc4llm.search.render import render_text

    text = render_text(result, max_tokens=max_tokens, reader="mcp", numbers=False)
    out: dict[str, Any] = {"text": text, "confidence": result["confidence"], "abstained": result["abstained"],
                           # clients that read `content` see the text with its confidence figure
                           "_content": render_text(result, max_tokens=max_tokens, reader="mcp")}
    if any(ln.startswith("(+") and "more; raise max_tokens" in ln for ln in text.split("\n")):
        out["truncated"] = True
    return out


def detailed_result(result: dict) -> dict:
    """The full search contract, shaped to the typed schema (guidance's searches as query
    strings, their rationale and engine in suggested_search_details)."""
    from doc4llm.search.service import for_output

    result = for_output(result, explain=False)  # as `--json`: no trace or score detail
    out = {**result, "results": [{**r, "content_path": _absolute(r["content_path"]),
                                  "toc_path": _absolute(r.get("toc_path"))} for r in result["results"]]}
    if result.get("query_enriched"):
        out["searched_as"] = result["query_enriched"]
    g = result.get("guidance")
    if g:
        out["guidance"] = {**g, "suggested_searches": [s["query"] for s in g.get("suggested_searches", [])],
                           "suggested_search_details": g.get("suggested_searches", [])}
    return out


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def _fit_text(result: dict, max_tokens: int, page: str) -> dict:
    """Cut a read at a line boundary so one call never floods the agent's context; the
    continuation reads the following lines."""
    if estimate(result) <= max_tokens:
        return result
    start, end = result["lines"]
    overhead = estimate({**result, "text": ""}) + 60  # + the truncation fields
    kept: list[str] = []
    used, budget = 0, max(1, max_tokens - overhead) * 4
    for line in result["text"].split("\n"):
        used += len(json.dumps(line, ensure_ascii=False)) - 1  # escaped as in the JSON reply
        if kept and used > budget:
            break
        kept.append(line)
    last = start + len(kept) - 1
    text = "\n".join(kept)
    out = {**result, "text": text, "lines": [start, last], "tokens": estimate_tokens(text),
           "truncated": True}
    if result.get("also_sections"):  # only the later sections the kept lines reach
        kept_more = [{**x, "lines": [x["lines"][0], min(x["lines"][1], last)]}
                     for x in result["also_sections"] if x["lines"][0] <= last]
        out.pop("also_sections")
        if kept_more:
            out["also_sections"] = kept_more
    if last < end:
        out["continuation"] = {"tool": "read_section", "arguments": {
            "page": page, "sets": result["doc_set"], "lines": [last + 1, end]}}
    return shorten_text(out, max_tokens, ("text",))


class DocsService:
    """The library calls behind the tools, with one warm Searcher and one Session."""

    def __init__(self, docs_dir: str | Path | None = None, *, embedder: str | None = None,
                 project: str | Path | None = None):
        self.docs_dir = resolve_docs_dir(docs_dir)
        self.embedder = embedder
        self.project = project  # --project; else the server's working directory's project
        self._searcher = None
        self._session = None
        # Tools run in worker threads; the searcher's connection and state are not shared-safe.
        self.lock = threading.Lock()

    @property
    def searcher(self):
        """Made at the first call, not at start: `initialize` then waits for nothing but
        the SDK (the search engine's imports are paid by the first search)."""
        if self._searcher is None:
            from doc4llm.search.engine import Searcher

            self._searcher = Searcher(self.docs_dir, embedder=self.embedder, quiet=True)
        return self._searcher

    def scope(self, sets: list[str] | None):
        """The synced project's sets, as the CLI's (corpus/projects.py)."""
        from doc4llm.corpus.model import list_sets
        from doc4llm.corpus.projects import resolve_scope

        return resolve_scope(self.docs_dir, [s.name for s in list_sets(self.docs_dir)], patterns=sets,
                             project_dir=Path(self.project) if self.project else None,
                             cwd=None if self.project else Path.cwd())

    def _page_in_scope(self, lookup, sets: list[str] | None):
        """A page in the project's sets first, then in every set (as the CLI's toc/read)."""
        return self.scope(sets).lookup_first(lookup, sets)

    @property
    def session(self):
        if self._session is None:
            from doc4llm.search.session import Session

            self._session = Session("mcp")
        return self._session

    def search_docs(self, query: str, *, phrasings: list[str] | None = None,
                    sets: list[str] | str | None = None, k: int = 3,
                    strategy: str = "auto", detail: bool = False, follow_up: bool = True,
                    offset: int = 0, max_tokens: int = SEARCH_TEXT_TOKENS) -> dict:
        query = _validate_text(query, "query")
        sets = _validate_sets(sets)
        searched, context = self.session.enrich(query) if follow_up else (query, None)
        if phrasings:
            from doc4llm.search.phrasings import check_phrasings, search_phrasings

            phrasings = [_validate_text(p, "phrasing") if p and p.strip() else p for p in phrasings]
            check_phrasings(query, phrasings)
            result = search_phrasings(self.searcher, [searched, *phrasings], sets=sets, k=k + offset,
                                      strategy=strategy, context=context, scope=self.scope(sets))
        else:
            result = self.searcher.search(searched, sets=sets, k=k + offset, strategy=strategy,
                                          context=context, scope=self.scope(sets))
        if context:
            result["query"] = query
            result["query_enriched"] = searched
        self.session.record(query, result)
        result["results"] = result["results"][offset:]

        def rest(kept: int) -> dict | None:
            if kept >= len(result["results"]):
                return None
            return {"tool": "search_docs", "arguments": {
                "query": searched, "phrasings": phrasings, "sets": sets, "k": k - kept, "strategy": strategy,
                "detail": detail, "follow_up": False, "offset": offset + kept,
                "max_tokens": max_tokens}}

        if not detail:
            reply = compact_reply(result, max_tokens)
            if reply.get("truncated"):
                reply["continuation"] = rest(sum(1 for ln in reply["text"].split("\n") if _RESULT_LINE.match(ln)))
            return reply
        budget = DEFAULT_SEARCH_TOKENS if max_tokens == SEARCH_TEXT_TOKENS else max_tokens  # the contract is larger
        return fit_list(detailed_result(result), "results", budget, rest, min_items=1)

    def grep_docs(self, pattern: str, *, sets: list[str] | str | None = None, ignore_case: bool = False,
                  fixed: bool = False, detail: bool = False, max_tokens: int = DEFAULT_SEARCH_TOKENS) -> dict:
        from doc4llm.search.grep import MAX_SECTIONS, grep_docs, render_grep

        sets = _validate_sets(sets)
        scoped = sets or self.scope(sets).names
        if detail:
            data = grep_docs(self.docs_dir, pattern, sets=scoped, ignore_case=ignore_case, fixed=fixed)
            data = {"total_lines": data["total_lines"], "total_sections": data["total_sections"],
                    "matches": data["matches"]}
            return fit_list(data, "matches", max_tokens, lambda kept: None, min_items=1)
        # the text `doc4llm grep` prints (its first line has the totals), with fewer sections
        # when it would pass the budget
        shown = MAX_SECTIONS
        while True:
            data = grep_docs(self.docs_dir, pattern, sets=scoped, ignore_case=ignore_case, fixed=fixed,
                             max_sections=shown)
            text = render_grep(data, echo_pattern=False)
            if estimate_tokens(text) <= max_tokens or shown == 1:
                break
            shown = max(1, shown // 2)
        out = {"text": text}
        if estimate_tokens(text) > max_tokens:
            out = shorten_text({**out, "truncated": True}, max_tokens, ("text",))
        return out

    def read_section(self, page: str, *, sets: list[str] | str | None = None, section: str | None = None,
                     lines: list[int] | str | None = None, with_subsections: bool = False,
                     max_tokens: int = DEFAULT_READ_TOKENS) -> dict:
        from doc4llm.reader import read_section

        _validate_text(page, "page name", MAX_NAME_CHARS)  # a folder name or a source file (reader.find_page)
        if section:
            _validate_text(section, "section", MAX_QUERY_CHARS)
        result = self._page_in_scope(
            lambda names: read_section(self.docs_dir, page, set_name=names, section=section or None,
                                       lines=normalize_lines(lines), with_subsections=with_subsections),
            _validate_sets(sets))
        result["content_path"] = _absolute(result["content_path"])
        return _fit_text(result, max_tokens, page)

    def get_toc(self, page: str, *, sets: list[str] | str | None = None, offset: int = 0,
                max_tokens: int = DEFAULT_LIST_TOKENS) -> dict:
        from doc4llm.reader import get_toc

        _validate_text(page, "page name", MAX_NAME_CHARS)  # a folder name or a source file (reader.find_page)
        toc = self._page_in_scope(lambda names: get_toc(self.docs_dir, page, names), _validate_sets(sets))
        sections = [{"address": s["address"], "level": s["level"], "lines": s["lines"],
                     "subtree_lines": s["subtree_lines"], "tokens": s["tokens"],
                     **({"no_heading": True} if s.get("no_heading") else {})}
                    for s in toc["sections"]]
        data = {"doc_set": toc["doc_set"], "page": toc["page"], "title": toc["title"],
                "source": toc["source"], "content_path": _absolute(toc["content_path"]),
                "line_count": toc["line_count"], "tokens": toc["tokens"], "offset": offset,
                "total_sections": len(sections), "sections": sections[offset:]}

        def rest(kept: int) -> dict | None:
            if offset + kept >= len(sections):
                return None
            return {"tool": "get_toc", "arguments": {"page": toc["page"], "sets": toc["doc_set"],
                                                     "offset": offset + kept, "max_tokens": max_tokens}}

        return fit_list(data, "sections", max_tokens, rest, min_items=1)

    def list_doc_sets(self, *, offset: int = 0, max_tokens: int = DEFAULT_LIST_TOKENS) -> dict:
        from doc4llm.corpus.model import list_sets
        from doc4llm.index.state import index_states

        states = index_states(self.docs_dir)
        rows = [{"name": s.name, "path": str(s.path.resolve()), "pages": len(s.pages()),
                 "index": states.get(s.name, "not indexed")} for s in list_sets(self.docs_dir)]
        data = {"docs_dir": str(self.docs_dir), "offset": offset, "total_sets": len(rows),
                "sets": rows[offset:]}

        def rest(kept: int) -> dict | None:
            if offset + kept >= len(rows):
                return None
            return {"tool": "list_doc_sets", "arguments": {"offset": offset + kept,
                                                           "max_tokens": max_tokens}}

        return fit_list(data, "sets", max_tokens, rest, min_items=1)

    def ask_docs(self, question: str, *, sets: list[str] | str | None = None, k: int = 5,
                 max_tokens: int = DEFAULT_ANSWER_TOKENS) -> dict:
        from doc4llm.answer.service import ask

        # Read-only: never save web results into the docs dir.
        data = ask(_validate_text(question, "question"), docs_dir=self.docs_dir,
                   sets=_validate_sets(sets), k=k, save_web=None, searcher=self.searcher)
        for src in data.get("sources") or []:
            if src.get("content_path"):
                src["content_path"] = _absolute(src["content_path"])
        return fit_list(data, "sources", max_tokens, lambda kept: _again(
            "ask_docs", {"question": question, "sets": sets, "k": k}, max_tokens), ("answer",))

    def explain_error(self, text: str, *, sets: list[str] | str | None = None, k: int = 5,
                      max_tokens: int = DEFAULT_ANSWER_TOKENS) -> dict:
        from doc4llm.code.explain import explain_error

        data = explain_error(_validate_text(text, "error text", MAX_ERROR_TEXT_CHARS),
                             docs_dir=self.docs_dir, sets=_validate_sets(sets), k=k,
                             llm=_configured_llm(), searcher=self.searcher)
        for r in data.get("results") or []:
            if r.get("content_path"):
                r["content_path"] = _absolute(r["content_path"])
        return fit_list(data, "results", max_tokens, lambda kept: _again(
            "explain_error", {"text": text, "sets": sets, "k": k}, max_tokens), ("explanation",))

    def get_working_example(self, task: str, *, sets: list[str] | str | None = None,
                            max_tokens: int = DEFAULT_ANSWER_TOKENS) -> dict:
        from doc4llm.code.example import working_example

        data = working_example(_validate_text(task, "task"), docs_dir=self.docs_dir,
                               sets=_validate_sets(sets), llm=_configured_llm(),
                               searcher=self.searcher)
        return fit_list(data, "alternatives", max_tokens, lambda kept: _again(
            "get_working_example", {"task": task, "sets": sets}, max_tokens), ("answer",))

    def close(self) -> None:
        if self._searcher is not None:
            self._searcher.close()


def _again(tool: str, arguments: dict, max_tokens: int) -> dict | None:
    """Answers are not paged: the rest comes from the same call with a larger budget."""
    if max_tokens >= MAX_BUDGET:
        return None
    return {"tool": tool, "arguments": {**arguments, "max_tokens": min(MAX_BUDGET, max_tokens * 2)}}


def _configured_llm():
    """The LLM the environment configures, else None: the tool then answers with the
    documented sections and guidance, exactly as the CLI does offline."""
    from doc4llm.answer.config import load_answer_config
    from doc4llm.answer.llm import LLMClient

    return LLMClient.from_env(load_answer_config())


def reply_parts(model: type, raw: dict) -> tuple[dict, str]:
    """(structuredContent, content text) of a tool's reply: the typed object, validated;
    a compact search or grep reply carries only what is set (each field costs the agent
    tokens: Claude Code shows it JSON.stringify(structuredContent)) and its content is the
    text itself; any other reply's content is the same object as compact JSON."""
    content = raw.pop("_content", None)
    compact = model in (SearchResult, GrepResult) and isinstance(raw.get("text"), str)
    data = model.model_validate(raw).model_dump(mode="json", exclude_none=compact, exclude_defaults=compact)
    data = redact_data(data)  # the one way out of the server: no key in any reply
    if not compact:
        return data, _dump(data)
    return data, redact(content) if content else data["text"]


def _dump(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


def build_server(service: DocsService):
    """The MCP server whose tools call `service`; errors become MCP tool errors.

    Each tool's signature is the one list of its arguments (types from `args`): the
    SDK publishes it as the input schema and validates calls against it, and
    `app.DocsMCPServer` rejects any other name. A new argument is one parameter here
    (and the service's keyword)."""
    try:
        from mcp.server.mcpserver.exceptions import ToolError

        from doc4llm.mcp.app import DocsMCPServer
    except ImportError as exc:  # mcp 1.x named it FastMCP, with another API
        raise ExternalError(f"doc4llm serve needs the mcp SDK 2.x ({exc})",
                            hint='pip install "mcp>=2,<3"') from exc

    from doc4llm import __version__

    app = DocsMCPServer("doc4llm", version=__version__, instructions=INSTRUCTIONS)
    # Local reads: the answer depends only on the docs dir (destructiveHint only means
    # something when readOnlyHint is false, so it is left out).
    local = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    # May call the configured LLM (and, for ask_docs, the web): still writes nothing.
    outside = ToolAnnotations(read_only_hint=True, open_world_hint=True)

    def call(model: type, fn: Callable[..., dict], *args: Any, **kwargs: Any):
        """The typed object as structuredContent, and the same compact JSON as text (what
        the budget measured; the SDK's own text rendering would be indented)."""
        try:
            with service.lock:
                data, text = reply_parts(model, fn(*args, **kwargs))
            return CallToolResult(content=[TextContent(type="text", text=text)],
                                  structured_content=data)
        except Doc4llmError as exc:
            raise ToolError(redact(error_text(exc))) from exc

    @app.tool(title="Search the docs", annotations=local)
    def search_docs(
        query: Annotated[str, Field(description="Words or an error message.")],
        phrasings: Annotated[list[str] | None, Field(
            description="Other wordings, fused with query.")] = None,
        sets: Sets = None,
        k: K = 3,
        strategy: Annotated[Strategy, Field(description="auto fuses all.")] = "auto",
        detail: bool = False,  # the full contract
        follow_up: bool = True,  # false: not a follow-up of the previous query
        offset: Annotated[int, Field(ge=0, le=100)] = 0,
        max_tokens: Budget = SEARCH_TEXT_TOKENS,
    ) -> Annotated[CallToolResult, SearchResult]:
        """Sections that answer a query (source, heading path, lines, best lines),
        confidence 0-100; abstained: docs do not answer."""
        return call(SearchResult, service.search_docs, query, phrasings=phrasings, sets=sets, k=k,
                    strategy=strategy, detail=detail, follow_up=follow_up, offset=offset,
                    max_tokens=max_tokens)

    @app.tool(title="Grep the docs", annotations=local)
    def grep_docs(
        pattern: Annotated[str, Field(description="RE2 regex; fixed: plain text.")],
        sets: Sets = None,
        ignore_case: bool = False,
        fixed: bool = False,
        detail: bool = False,
        max_tokens: Budget = DEFAULT_SEARCH_TOKENS,
    ) -> Annotated[CallToolResult, GrepResult]:
        """Matching lines grouped by section (source, heading path, lines)."""
        return call(GrepResult, service.grep_docs, pattern, sets=sets, ignore_case=ignore_case,
                    fixed=fixed, detail=detail, max_tokens=max_tokens)

    @app.tool(title="Read a section", annotations=local)
    def read_section(
        page: Page,
        sets: Sets = None,
        section: Annotated[str | None, Field(description="Heading path ('Config > Hooks') or its end.")] = None,
        lines: Lines = None,
        with_subsections: Annotated[bool, Field(description="With section: and its subsections.")] = False,
        max_tokens: Budget = DEFAULT_READ_TOKENS,
    ) -> Annotated[CallToolResult, ReadResult]:
        """Read one section (by heading path) or a line range of a page; prefer the lines
        search_docs returned."""
        return call(ReadResult, service.read_section, page, sets=sets, section=section,
                    lines=lines, with_subsections=with_subsections, max_tokens=max_tokens)

    @app.tool(title="Page table of contents", annotations=local)
    def get_toc(
        page: Page,
        sets: Sets = None,
        offset: Offset = 0,
        max_tokens: Budget = DEFAULT_LIST_TOKENS,
    ) -> Annotated[CallToolResult, TocResult]:
        """A page's heading tree: each section's address, level, lines and tokens."""
        return call(TocResult, service.get_toc, page, sets=sets, offset=offset, max_tokens=max_tokens)

    @app.tool(title="List doc sets", annotations=local)
    def list_doc_sets(offset: Offset = 0, max_tokens: Budget = DEFAULT_LIST_TOKENS,
                      ) -> Annotated[CallToolResult, DocSetsResult]:
        """The local doc sets: folder, page count, index state."""
        return call(DocSetsResult, service.list_doc_sets, offset=offset, max_tokens=max_tokens)

    @app.tool(title="Ask the docs", annotations=outside)
    def ask_docs(
        question: Annotated[str, Field(description="The question.")],
        sets: Sets = None,
        k: K = 5,
        max_tokens: Budget = DEFAULT_ANSWER_TOKENS,
    ) -> Annotated[CallToolResult, AskResult]:
        """An LLM answer citing doc sections (and the web with TAVILY_API_KEY); without an
        LLM, the sources only."""
        return call(AskResult, service.ask_docs, question, sets=sets, k=k, max_tokens=max_tokens)

    @app.tool(title="Explain an error", annotations=outside)
    def explain_error(
        text: Annotated[str, Field(description="The error or traceback, as printed.")],
        sets: Sets = None,
        k: K = 5,
        max_tokens: Budget = DEFAULT_ANSWER_TOKENS,
    ) -> Annotated[CallToolResult, ExplainResult]:
        """The doc sections about an error (troubleshooting first); with an LLM, an
        explanation and a fix."""
        return call(ExplainResult, service.explain_error, text, sets=sets, k=k, max_tokens=max_tokens)

    @app.tool(title="Get a working example", annotations=outside)
    def get_working_example(
        task: Annotated[str, Field(description="What the code should do.")],
        sets: Sets = None,
        max_tokens: Budget = DEFAULT_ANSWER_TOKENS,
    ) -> Annotated[CallToolResult, ExampleResult]:
        """The best documented code example for a task, syntax-checked; with an LLM,
        completed."""
        return call(ExampleResult, service.get_working_example, task, sets=sets,
                    max_tokens=max_tokens)

    return app


def serve(docs_dir: str | Path | None = None, *, embedder: str | None = None,
          http: bool = False, host: str = "127.0.0.1", port: int = 8765, project: str | None = None) -> None:
    """Run over stdio (default) or streamable HTTP on localhost until the client leaves."""
    _single_threaded_math()
    if embedder:  # ask_docs builds its own Searcher (answer.service): same embedder for all
        os.environ["DOC4LLM_EMBEDDER"] = embedder
    from doc4llm.corpus.model import list_sets

    service = DocsService(docs_dir, embedder=embedder, project=project)
    if not list_sets(service.docs_dir):
        _log(f"no doc sets in {service.docs_dir} yet; tools will say so until one is imported "
             "(pass --docs-dir or set DOC4LLM_DOCS_DIR)")
    app = build_server(service)
    try:
        if http:
            if host not in ("127.0.0.1", "localhost", "::1"):
                _log(f"serving on {host}: anyone who can reach this port can read the docs")
            _log(f"MCP over HTTP at http://{host}:{port}/mcp (docs: {service.docs_dir})")
            _access_log_to_stderr()
            app.run("streamable-http", host=host, port=port)
        else:
            app.run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        service.close()


def _access_log_to_stderr() -> None:
    """uvicorn writes its access lines to stdout by default; stdout is for data only."""
    from uvicorn.config import LOGGING_CONFIG

    for handler in LOGGING_CONFIG.get("handlers", {}).values():
        if handler.get("stream") == "ext://sys.stdout":
            handler["stream"] = "ext://sys.stderr"


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
