"""`doc4llm serve` driven by the real MCP client over stdio (and once over HTTP).

One server process answers a whole scripted session (list tools, call each tool, the
error cases), on a copy of the bundled md_docs with no embedder; the tests then assert
on what the client received.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from conftest import copy_indexed, run_cli

REPO = Path(__file__).resolve().parents[1]
TOOLS = {"search_docs", "grep_docs", "read_section", "get_toc", "list_doc_sets", "ask_docs", "explain_error",
         "get_working_example"}
ABSENT = "what is the capital of france"
CALLS: dict[str, tuple[str, dict]] = {
    "search": ("search_docs", {"query": "how do I add a hook", "k": 3}),
    "follow_up": ("search_docs", {"query": "and its timeout?", "k": 2, "detail": True}),
    "no_follow": ("search_docs", {"query": "and its timeout?", "k": 2, "follow_up": False, "detail": True}),
    "search_detail": ("search_docs", {"query": "how do I add a hook", "k": 1, "detail": True}),
    "search_set": ("search_docs", {"query": "custom provider", "sets": ["OpenCode*"], "k": 2, "detail": True}),
    "search_set_str": ("search_docs", {"query": "custom provider", "sets": "OpenCode_Docs", "k": 2,
                                       "detail": True}),
    "search_absent": ("search_docs", {"query": ABSENT, "detail": True}),
    "search_absent_text": ("search_docs", {"query": ABSENT, "follow_up": False}),
    "read_lines": ("read_section", {"page": "Agent Skills", "sets": "Claude_Code_Docs@latest",
                                    "lines": "149:167"}),
    "read_section": ("read_section", {"page": "Agent Skills", "sets": "Claude_Code_Docs@latest",
                                      "section": "Configure Skills > Write SKILL.md"}),
    "read_capped": ("read_section", {"page": "Hooks reference", "max_tokens": 300}),
    "read_list": ("read_section", {"page": "Agent Skills", "sets": "Claude_Code_Docs@latest",
                                   "lines": [149, 167]}),
    "read_dash": ("read_section", {"page": "Agent Skills", "sets": "Claude_Code_Docs@latest",
                                   "lines": "149-167"}),
    "toc": ("get_toc", {"page": "Plugins reference"}),
    "toc_capped": ("get_toc", {"page": "Hooks reference", "max_tokens": 400}),
    "search_capped": ("search_docs", {"query": "hooks", "k": 10, "max_tokens": 300, "follow_up": False}),
    "ask_capped": ("ask_docs", {"question": "how do I add a hook", "max_tokens": 300}),
    "explain_capped": ("explain_error", {"text": "Error: MCP server failed to start: ECONNREFUSED",
                                         "max_tokens": 300}),
    "example_capped": ("get_working_example", {"task": "add an MCP server with environment variables",
                                               "max_tokens": 300}),
    "sets_capped": ("list_doc_sets", {"max_tokens": 300}),
    "sets": ("list_doc_sets", {}),
    "ask": ("ask_docs", {"question": "how do I add a hook", "k": 2}),
    "explain": ("explain_error", {"text": "Error: MCP server failed to start: ECONNREFUSED", "k": 2}),
    "example": ("get_working_example", {"task": "add an MCP server with environment variables"}),
    # error cases
    "err_empty": ("search_docs", {"query": "   "}),
    "err_long": ("search_docs", {"query": "x" * 1001}),
    "err_k": ("search_docs", {"query": "hooks", "k": 50}),
    "err_strategy": ("search_docs", {"query": "hooks", "strategy": "L9"}),
    "err_traversal": ("read_section", {"page": "../../etc/passwd"}),
    "err_set_traversal": ("get_toc", {"page": "Agent Skills", "sets": "../x"}),
    "err_missing_page": ("read_section", {"page": "Agent Skils"}),
    "err_missing_set": ("search_docs", {"query": "hooks", "sets": ["Nope@1"]}),
    "err_many_sets": ("search_docs", {"query": "hooks", "sets": ["A@1"] * 21}),
    "err_lines": ("read_section", {"page": "Agent Skills", "sets": "Claude_Code_Docs@latest",
                                   "lines": "9:x"}),
    "err_empty_error": ("explain_error", {"text": ""}),
    "err_ambiguous": ("read_section", {"page": "Troubleshooting"}),
    "err_budget": ("get_toc", {"page": "Hooks reference", "max_tokens": 50}),
    "err_unknown": ("search_docs", {"query": "hooks", "quer": "hooks"}),
    "err_unknown_far": ("read_section", {"page": "Agent Skills", "zzz": 1}),
    "err_both_names": ("get_toc", {"page": "Agent Skills", "sets": "Claude_Code_Docs@latest",
                                   "set_name": "Claude_Code_Docs@latest"}),
    "err_k_type": ("search_docs", {"query": "hooks", "k": "many"}),
    "err_sets_type": ("search_docs", {"query": "hooks", "sets": 5}),
    "err_missing_query": ("search_docs", {"k": 2}),
    # the old name of `sets` on read_section and get_toc still works
    "toc_old_name": ("get_toc", {"page": "Agent Skills", "set_name": "Claude_Code_Docs@latest"}),
    "toc_new_name": ("get_toc", {"page": "Agent Skills", "sets": "Claude_Code_Docs@latest"}),
    "phrasings": ("search_docs", {"query": "stop a tool call before it runs", "phrasings": ["PreToolUse"]}),
    "err_phrasing": ("search_docs", {"query": "hooks", "phrasings": [""]}),
    "grep": ("grep_docs", {"pattern": "PreToolUse", "fixed": True, "sets": "Claude_Code_Docs@latest"}),
    "grep_detail": ("grep_docs", {"pattern": "PreToolUse", "fixed": True, "sets": "Claude_Code_Docs@latest",
                                  "detail": True}),
    "err_grep": ("grep_docs", {"pattern": "(a"}),
}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DOC4LLM_DOCS_DIR", "OPENAI_API_KEY", "TAVILY_API_KEY", "DOC4LLM_SESSION")}
    return {**env, "DOC4LLM_EMBEDDER": "none"}


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory, indexed_bundled: Path) -> Path:
    return copy_indexed(indexed_bundled, tmp_path_factory.mktemp("mcp") / "md_docs")


async def _session(docs: Path) -> dict:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, env=_env(),
                                   args=["-m", "doc4llm", "serve", "--docs-dir", str(docs)])
    out: dict = {"calls": {}}
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as streams, ClientSession(*streams) as session:
            await session.initialize()
            out["tools"] = {t.name: t for t in (await session.list_tools()).tools}
            for key, (tool, args) in CALLS.items():
                result = await session.call_tool(tool, args)
                out["calls"][key] = (result.is_error, result.content[0].text)
                out.setdefault("structured", {})[key] = result.structured_content
            # follow get_toc's continuations to the end of a long page
            pages, nxt = [], CALLS["toc_capped"]
            while nxt and len(pages) < 50:
                result = await session.call_tool(nxt[0], nxt[1])
                pages.append(result.structured_content)
                cont = result.structured_content["continuation"]
                nxt = (cont["tool"], cont["arguments"]) if cont else None
            out["toc_pages"] = pages
            # and read_section's, from a cut read to the end of the range
            cont = out["structured"]["read_capped"]["continuation"]
            result = await session.call_tool(cont["tool"], {**cont["arguments"], "max_tokens": 20000})
            out["read_rest"] = result.structured_content
    return out


@pytest.fixture(scope="module")
def session(docs: Path) -> dict:
    return anyio.run(_session, docs)


def ok(session: dict, key: str) -> dict:
    """The structured result; the text block carries its text (a compact search or grep)
    or the same object as compact JSON."""
    is_error, text = session["calls"][key]
    assert not is_error, text
    data = session["structured"][key]
    assert isinstance(data, dict)
    compact = "text" in data and ("abstained" in data and "results" not in data
                                  or set(data) <= {"text", "truncated", "continuation"})
    if compact:  # the same text; content also has the confidence figure the fields carry
        head, _, rest = data["text"].partition("\n")
        assert text.endswith(head.rpartition(": ")[2] + ("\n" + rest if rest else ""))
    else:
        assert json.loads(text) == data
    return data


def error(session: dict, key: str) -> str:
    is_error, text = session["calls"][key]
    assert is_error, f"{key} should be a tool error: {text[:300]}"
    return text


def test_lists_the_eight_read_only_tools(session: dict) -> None:
    tools = session["tools"]
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 30
        assert tool.annotations.read_only_hint is True
    search = tools["search_docs"].input_schema
    assert search["required"] == ["query"]
    assert search["properties"]["k"]["maximum"] == 20


def test_search_docs_default_is_compact(session: dict, docs: Path) -> None:
    """The text `doc4llm search` prints, and the two fields a program acts on: Claude Code
    shows the model JSON.stringify(structuredContent), which must cost no more than 1.1x
    the CLI's text for the same query (issue 34)."""
    res = ok(session, "search")
    assert set(res) == {"text", "confidence", "abstained"}
    assert res["confidence"] >= 50 and res["abstained"] is False
    lines = res["text"].split("\n")
    assert session["calls"]["search"][1].startswith(f"confidence {res['confidence']}/100: {lines[0]}")
    assert [ln[:3] for ln in lines if ln[:1].isdigit()] == ["1. ", "2. ", "3. "]
    assert "hooks" in next(ln for ln in lines if ln.startswith("1. ")).lower()
    cli = run_cli("search", "how do I add a hook", "--docs-dir", str(docs), env={"DOC4LLM_EMBEDDER": "none"})
    assert cli.returncode == 0
    shown = json.dumps(res, ensure_ascii=False, separators=(",", ":"))
    assert len(shown) <= 1.1 * len(cli.stdout.rstrip("\n")), (len(shown), len(cli.stdout))
    # the same results as the CLI, the read hint as the MCP call that reads the lines
    assert [ln for ln in lines if ln[:1].isdigit()] == [ln for ln in cli.stdout.split("\n") if ln[:1].isdigit()]
    absent = ok(session, "search_absent_text")
    assert absent["abstained"] is True and absent["text"].startswith("no section clearly answers this: ")


def test_search_docs_takes_phrasings_and_grep_docs_groups_by_section(session: dict) -> None:
    res = ok(session, "phrasings")
    first = next(ln for ln in res["text"].split("\n") if ln.startswith("1. "))
    assert "> PreToolUse" in first
    assert "phrasing" in error(session, "err_phrasing")
    grep = ok(session, "grep")  # the text `doc4llm grep` prints; its first line has the totals
    assert set(grep) == {"text"} and " in " in grep["text"].split("\n")[0]
    assert grep["text"].count("PreToolUse") >= 2
    detail = ok(session, "grep_detail")
    assert detail["total_sections"] >= len(detail["matches"]) >= 1
    assert all("PreToolUse" in x["text"] for m in detail["matches"] for x in m["match_lines"])
    assert "invalid pattern" in error(session, "err_grep")


def test_search_docs_detail_is_the_full_contract(session: dict) -> None:
    res = ok(session, "search_detail")
    for key in ("query", "query_type", "strategy", "confidence", "abstained", "results", "guidance", "timing_ms"):
        assert key in res
    assert {"score", "found_by", "content_path", "toc_path"} <= set(res["results"][0])


def test_follow_up_uses_the_conversation(session: dict) -> None:
    res = ok(session, "follow_up")
    assert "hook" in res["searched_as"]
    assert any("hook" in r["page"].lower() for r in res["results"])
    assert ok(session, "no_follow").get("searched_as") is None


def test_search_in_a_set_and_abstention(session: dict, docs: Path) -> None:
    assert {r["doc_set"] for r in ok(session, "search_set")["results"]} == {"OpenCode_Docs@latest"}
    assert ok(session, "search_set_str")["results"] == ok(session, "search_set")["results"]
    absent = ok(session, "search_absent")
    cli = run_cli("search", ABSENT, "--json", "--docs-dir", str(docs), env={"DOC4LLM_EMBEDDER": "none"})
    expected = json.loads(cli.stdout)
    assert absent["abstained"] is expected["abstained"] is True
    assert absent["confidence"] == expected["confidence"]
    guidance = absent["guidance"]
    assert guidance["missing"] == expected["guidance"]["missing"]
    assert guidance["suggested_searches"] == [s["query"] for s in expected["guidance"]["suggested_searches"]]


def test_read_section_by_lines_and_heading(session: dict, docs: Path) -> None:
    by_lines = ok(session, "read_lines")
    assert by_lines["lines"] == [149, 167] and by_lines["text"].startswith("### Write SKILL.md")
    by_heading = ok(session, "read_section")
    assert by_heading["text"] == by_lines["text"]
    assert by_heading["heading_path"][-1] == "Write SKILL.md"
    assert by_heading["content_path"] == str(
        (docs / "Claude_Code_Docs@latest" / "Agent Skills" / "docContent.md").resolve())
    # the lines a search result carries are accepted as they are, and "a-b" too
    assert ok(session, "read_list")["text"] == ok(session, "read_dash")["text"] == by_lines["text"]


def test_read_section_respects_the_token_cap(session: dict) -> None:
    capped = ok(session, "read_capped")
    assert capped["truncated"] is True and capped["tokens"] <= 300
    start, end = capped["lines"]
    cont = capped["continuation"]
    assert start == 1 and cont["tool"] == "read_section" and cont["arguments"]["lines"][0] == end + 1
    rest = session["read_rest"]
    assert rest["lines"][0] == end + 1 and rest["truncated"] is False


def test_toc_and_sets(session: dict) -> None:
    toc = ok(session, "toc")
    assert toc["doc_set"] == "Claude_Code_Docs@latest"
    assert any(s["address"].endswith("Plugin manifest schema") for s in toc["sections"])
    sets = ok(session, "sets")
    assert [s["name"] for s in sets["sets"]] == ["Claude_Code_Docs@latest", "OpenCode_Docs@latest"]
    assert all(s["pages"] > 10 for s in sets["sets"])


def test_answers_without_an_llm(session: dict) -> None:
    ask = ok(session, "ask")
    assert ask["answer"] is None and ask["sources"]
    assert "hooks" in ask["sources"][0]["page"].lower()
    explain = ok(session, "explain")
    assert explain["mode"] == "sections" and explain["error"]["codes"] == ["ECONNREFUSED"]
    assert explain["results"]
    example = ok(session, "example")
    assert example["mode"] == "sections" and "mcpServers" in example["example"]["code"]


def test_bad_input_becomes_clear_tool_errors(session: dict) -> None:
    assert "the query is empty" in error(session, "err_empty")
    assert "limit is 1000" in error(session, "err_long")
    assert "k is 50; it must be from 1 to 20" in error(session, "err_k")
    assert "strategy is 'L9'; it must be one of auto, cascade, L1" in error(session, "err_strategy")
    assert "refused" in error(session, "err_traversal")
    assert "refused" in error(session, "err_set_traversal")
    missing = error(session, "err_missing_page")
    assert "NotFoundError" in missing and "Claude_Code_Docs@latest / Agent Skills" in missing
    missing_set = error(session, "err_missing_set")
    assert "Nope@1" in missing_set and "list_doc_sets lists them" in missing_set
    assert "limit is 20" in error(session, "err_many_sets")
    lines_error = error(session, "err_lines")
    assert "lines '9:x'" in lines_error and "--lines" not in lines_error and "[N, M]" in lines_error
    ambiguous = error(session, "err_ambiguous")
    assert "pass sets" in ambiguous and "--set" not in ambiguous
    assert "max_tokens is 50; it must be from 300 to 20000" in error(session, "err_budget")
    assert "error text is empty" in error(session, "err_empty_error")


def test_stdout_carries_only_json_rpc(docs: Path) -> None:
    """Raw stdio: every line the server writes is a JSON-RPC message, even while it
    builds or syncs the index."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "search_docs", "arguments": {"query": "plugin manifest", "k": 1}}},
    ]
    proc = subprocess.Popen([sys.executable, "-m", "doc4llm", "serve", "--docs-dir", str(docs)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=_env(), text=True)
    lines = []
    try:
        for msg in messages:
            proc.stdin.write(json.dumps(msg) + "\n")
            proc.stdin.flush()
            if "id" in msg:
                lines.append(proc.stdout.readline())
    finally:
        proc.stdin.close()
        proc.wait(timeout=20)
    rest = proc.stdout.read()
    replies = [json.loads(ln) for ln in [*lines, *rest.splitlines()] if ln.strip()]
    assert all(r["jsonrpc"] == "2.0" for r in replies)
    result = next(r for r in replies if r.get("id") == 2)["result"]
    assert not result.get("isError")
    assert "plugin" in result["content"][0]["text"].split("\n")[1].lower()  # result 1, as the CLI prints it


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_http_transport_on_localhost(docs: Path, tmp_path: Path) -> None:
    """Over HTTP too; uvicorn's access log goes to stderr, never stdout."""
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    port = _free_port()
    out, err = open(tmp_path / "stdout", "w"), open(tmp_path / "stderr", "w")
    proc = subprocess.Popen([sys.executable, "-m", "doc4llm", "serve", "--http", "--port", str(port),
                             "--docs-dir", str(docs)], stdout=out, stderr=err, env=_env())

    async def call() -> dict:
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as streams, \
                ClientSession(*streams) as session:
            await session.initialize()
            result = await session.call_tool("get_toc", {"page": "Agent Skills",
                                                         "sets": "Claude_Code_Docs@latest"})
            return json.loads(result.content[0].text)

    try:
        deadline = time.monotonic() + 60  # a wait for the port, not a speed check
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "server did not start"
                time.sleep(0.1)
        toc = anyio.run(call)
        assert toc["page"] == "Agent Skills" and toc["sections"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        out.close()
        err.close()
    assert (tmp_path / "stdout").read_text() == ""
    assert '"POST /mcp' in (tmp_path / "stderr").read_text()


def test_tools_publish_typed_schemas_titles_and_hints(session: dict) -> None:
    tools = session["tools"]
    for tool in tools.values():
        assert tool.title, tool.name
        out = tool.output_schema
        assert out["type"] == "object" and set(out["properties"]) != {"result"}, tool.name
        assert {"truncated", "continuation"} <= set(out["properties"]), tool.name
        assert "max_tokens" in tool.input_schema["properties"], tool.name
    search = tools["search_docs"]
    assert search.input_schema["properties"]["strategy"]["enum"] == [
        "auto", "cascade", "L1", "L2", "L3.1", "L3.2", "bm25", "vector"]
    assert "confidence" in search.output_schema["properties"]
    lines = tools["read_section"].input_schema["properties"]["lines"]
    assert {"array", "string"} <= set(lines["type"]) and lines["items"] == {"type": "integer"}
    for name in ("ask_docs", "explain_error", "get_working_example"):  # they may call an LLM
        assert tools[name].annotations.open_world_hint is True, name
    for name in ("search_docs", "read_section", "get_toc", "list_doc_sets"):
        assert tools[name].annotations.open_world_hint is False, name


def test_every_budgeted_response_fits_its_budget(session: dict) -> None:
    for key, (_, args) in CALLS.items():
        if "max_tokens" in args and not key.startswith("err_"):
            is_error, text = session["calls"][key]
            assert not is_error, text
            assert len(text) / 4 <= args["max_tokens"], (key, len(text) / 4)
    capped = ok(session, "search_capped")  # the text within the budget; cut, it says so
    assert capped["text"].split("\n")[1].startswith("1. ") and ("truncated" not in capped or capped["continuation"])


def test_get_toc_continuations_cover_the_page(session: dict) -> None:
    pages = session["toc_pages"]
    assert len(pages) > 1 and all(p["truncated"] for p in pages[:-1])
    assert pages[-1]["continuation"] is None
    addresses = [s["address"] for p in pages for s in p["sections"]]
    assert len(addresses) == len(set(addresses)) == pages[0]["total_sections"]
    assert [p["offset"] for p in pages] == sorted({p["offset"] for p in pages})


RAW_PYDANTIC = ("validation error for", "errors.pydantic.dev", "input_type=", "[type=")


def test_invalid_arguments_read_as_plain_sentences(session: dict) -> None:
    """Validation errors name the argument, the value and what it accepts, never pydantic's
    raw report."""
    for key in ("err_k", "err_strategy", "err_budget", "err_k_type", "err_sets_type", "err_missing_query"):
        text = error(session, key)
        assert text.startswith("InputError: "), (key, text)
        assert not any(raw in text for raw in RAW_PYDANTIC), (key, text)
    assert "k is 'many'; expected an integer" in error(session, "err_k_type")
    sets = error(session, "err_sets_type")
    assert "sets is 5; expected a list of strings or a string" in sets
    assert sets.count("sets is") == 1  # one line per argument, not one per union branch
    missing = error(session, "err_missing_query")
    assert "query is required" in missing and "search_docs takes: query, phrasings, sets, k" in missing


def test_unknown_arguments_are_rejected_with_the_valid_names(session: dict) -> None:
    typo = error(session, "err_unknown")
    assert "search_docs has no argument 'quer' (did you mean 'query'?)" in typo
    assert "hint: search_docs takes: query, phrasings, sets, k, strategy, detail, follow_up, offset, max_tokens" in typo
    far = error(session, "err_unknown_far")
    assert "read_section has no argument 'zzz'" in far and "did you mean" not in far
    assert "page, sets, section, lines, with_subsections, max_tokens" in far


def test_one_name_for_the_doc_set_argument(session: dict) -> None:
    """`sets` on every tool that takes doc sets; `set_name`, the old name on read_section
    and get_toc, is accepted as the same argument but never published."""
    tools = session["tools"]
    for name in ("search_docs", "read_section", "get_toc", "ask_docs", "explain_error", "get_working_example"):
        props = tools[name].input_schema["properties"]
        assert "sets" in props and "set_name" not in props, name
        assert props["sets"] == tools["search_docs"].input_schema["properties"]["sets"], name
    assert ok(session, "toc_old_name") == ok(session, "toc_new_name")
    assert "'set_name' and 'sets' are the same argument" in error(session, "err_both_names")
    # continuations say `sets` too
    assert "sets" in ok(session, "read_capped")["continuation"]["arguments"]
    assert "set_name" not in ok(session, "read_capped")["continuation"]["arguments"]
    assert set(session["toc_pages"][0]["continuation"]["arguments"]) == {"page", "sets", "offset", "max_tokens"}


def _raw_session(docs: Path, lines: list[str], wait_for: set[int]) -> tuple[list[dict], str]:
    """Write raw lines to `doc4llm serve` on stdio; the replies (read until every id in
    `wait_for` has answered, then stdin closes) and stderr."""
    proc = subprocess.Popen([sys.executable, "-m", "doc4llm", "serve", "--docs-dir", str(docs)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=_env(), text=True)
    replies: list[dict] = []
    try:
        for line in lines:
            proc.stdin.write(line + "\n")
        proc.stdin.flush()
        while wait_for - {r.get("id") for r in replies}:
            raw = proc.stdout.readline()
            if not raw:
                break
            replies.append({**json.loads(raw), "_bytes": len(raw.rstrip("\n").encode())})
    finally:
        proc.stdin.close()
        proc.wait(timeout=20)
    replies += [json.loads(ln) for ln in proc.stdout.read().splitlines() if ln.strip()]
    return replies, proc.stderr.read()


INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "raw", "version": "0"}}})
INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})


@pytest.fixture(scope="module")
def raw(docs: Path) -> tuple[list[dict], str]:
    """One raw stdio session: tools/list, a line that is not JSON, JSON that is no
    JSON-RPC message, then a ping."""
    return _raw_session(docs, [
        INIT, INITIALIZED,
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        '{"jsonrpc": "2.0", "id": 5, "method": "tools/list", sk-secretvalue',
        '{"jsonrpc": "2.0", "id": 3, "params": 7}',
        json.dumps({"jsonrpc": "2.0", "id": 4, "method": "ping"}),
    ], wait_for={1, 2, 3, 4})


def test_malformed_json_on_stdio_gets_a_parse_error_and_a_log_line(raw: tuple[list[dict], str]) -> None:
    """A line that is not JSON gets a -32700 reply (id null), JSON that is no JSON-RPC
    message a -32600 reply with its id, each a line on stderr without the line's content;
    the session goes on."""
    replies, stderr = raw
    by_code = {r["error"]["code"]: r for r in replies if "error" in r}
    assert by_code[-32700]["id"] is None and "Parse error" in by_code[-32700]["error"]["message"]
    assert by_code[-32600]["id"] == 3
    assert next(r for r in replies if r.get("id") == 4)["result"] == {}
    assert "stdin: Parse error" in stderr and "replied -32700" in stderr
    assert "replied -32600" in stderr and "sk-secretvalue" not in stderr


def test_tools_list_fits_in_8000_bytes_on_the_wire(raw: tuple[list[dict], str]) -> None:
    """tools/list is read by every client at every start and sits in the agent's context."""
    listed = next(r for r in raw[0] if r.get("id") == 2)
    assert len(listed["result"]["tools"]) == len(TOOLS)
    assert listed["_bytes"] <= 8000, listed["_bytes"]


def test_starting_the_server_loads_no_search_engine(docs: Path) -> None:
    """`initialize` waits only for the SDK: the engine, numpy and the embedder load at the
    first call (counted as modules loaded, not timed)."""
    code = ("import sys, doc4llm.mcp.server as m; m.build_server(m.DocsService(sys.argv[1])); "
            "print(' '.join(sorted(n for n in sys.modules if n.split('.')[0] in "
            "('numpy', 'onnxruntime', 'tokenizers') or n.startswith(('doc4llm.search', 'doc4llm.index')))))")
    out = subprocess.run([sys.executable, "-c", code, str(docs)], capture_output=True, text=True,
                         env=_env(), cwd=REPO, check=True)
    assert out.stdout.split() == [], out.stdout
