"""Loopback fakes for `ask`: an OpenAI-compatible chat server and a Tavily-compatible search
server, both scripted per test and driven through the real openai / tavily-python clients.
Also a tiny contract-shaped search over real md_docs files, and a sample docs dir.

Used by tests/test_ask_*.py and benchmarks/ask/ask_bench.py.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import defaultdict, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

MODELS = {"synthesis": "fake-synth", "evaluation": "fake-eval", "reranking": "fake-rerank"}
OPENAI_KEY = "sk-test-SECRET-openai-4242"
TAVILY_KEY = "tvly-SECRET-tavily-9191"


class _Server:
    """A ThreadingHTTPServer on 127.0.0.1:0 whose handler calls self.handle(path, body, headers)."""

    def __init__(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                status, headers, payload = owner.handle(
                    self.path, body, {k.lower(): v for k, v in self.headers.items()})
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,),
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def handle(self, path: str, body: dict, headers: dict) -> tuple[int, dict, dict]:
        raise NotImplementedError


class FakeOpenAI(_Server):
    """/v1/chat/completions. Script replies per model with `add(role, *replies)`; a reply is
    the content string, or a dict {"status": 429|500, "headers": {...}}, or
    {"delay": seconds, "content": str}, or {"raw": body} (a 200 with that JSON body), or a
    callable body -> content (`ranking`). An unscripted call answers HTTP 400 (not retried),
    so a test fails loudly instead of hanging."""

    def __init__(self) -> None:
        self.script: dict[str, deque] = defaultdict(deque)
        self.requests: list[dict] = []
        super().__init__()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def add(self, role: str, *replies: object) -> None:
        self.script[MODELS[role]].extend(replies)

    def calls(self, role: str) -> list[dict]:
        return [r for r in self.requests if r["body"].get("model") == MODELS[role]]

    def handle(self, path: str, body: dict, headers: dict) -> tuple[int, dict, dict]:
        self.requests.append({"path": path, "body": body, "headers": headers})
        model = body.get("model", "")
        if not path.endswith("/chat/completions") or not self.script[model]:
            return 400, {}, {"error": {"message": f"unscripted call for {model!r}",
                                       "type": "invalid_request_error"}}
        reply = self.script[model].popleft()
        if isinstance(reply, dict) and "status" in reply:
            message = reply.get("message", f"scripted HTTP {reply['status']}")
            return reply["status"], reply.get("headers", {}), {
                "error": {"message": message, "type": "server_error"}}
        if callable(reply):
            reply = reply(body)
        if isinstance(reply, dict) and "raw" in reply:  # a 200 of any shape (choices: [] ...)
            return 200, {}, reply["raw"]
        if isinstance(reply, dict):
            time.sleep(reply.get("delay", 0))
            reply = reply.get("content", "")
        prompt = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
        return 200, {}, {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": reply}}],
            "usage": {"prompt_tokens": prompt // 4, "completion_tokens": len(reply) // 4,
                      "total_tokens": prompt // 4 + len(reply) // 4}}


class FakeTavily(_Server):
    """/search. `add(*replies)`: each a list of result dicts, or {"status": code}."""

    def __init__(self) -> None:
        self.script: deque = deque()
        self.requests: list[dict] = []
        super().__init__()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def add(self, *replies: object) -> None:
        self.script.extend(replies)

    def handle(self, path: str, body: dict, headers: dict) -> tuple[int, dict, dict]:
        self.requests.append({"path": path, "body": body, "headers": headers})
        if path != "/search" or not self.script:
            return 400, {}, {"detail": {"error": "unscripted search"}}
        reply = self.script.popleft()
        if isinstance(reply, dict):
            return reply["status"], {}, {"detail": {"error": "scripted failure"}}
        return 200, {}, {"query": body.get("query"), "results": reply, "response_time": 0.01}


def evaluation(action: str = "RETURN_ANSWER", *, confidence: int = 80, answers: bool = True,
               queries: list[str] | None = None, focus: list[str] | None = None,
               still_needed: list[str] | None = None, completeness: str = "complete") -> str:
    """An evaluator reply in the documented JSON format."""
    return json.dumps({
        "assessment": {"answersQuestion": answers, "completeness": completeness,
                       "specificIssues": [], "confidence": confidence},
        "decision": {"action": action, "reason": f"scripted {action}",
                     "details": {"queries": queries or [], "focusAreas": focus or []}},
        "contextCompression": {"establishedFacts": ["hooks live in settings.json"],
                               "gaps": [], "stillNeeded": still_needed or [],
                               "summary": "scripted"}})


def ranking(*top: int):
    """A reranker reply in the requested shape ({"scores": [...]}, one per candidate): the
    indices in `top` score 10, 9, ...; the rest 0. The candidate count is read from the
    request (its schema, else the numbered documents of the prompt)."""

    def reply(body: dict) -> str:
        n = candidate_count(body)
        scores = [0] * n
        for place, i in enumerate(top):
            if i < n:
                scores[i] = 10 - place
        return json.dumps({"scores": scores})

    return reply


def candidate_count(body: dict) -> int:
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") or {}
    scores = (schema.get("properties") or {}).get("scores") or {}
    if "minItems" in scores:
        return int(scores["minItems"])
    user = body["messages"][-1]["content"]
    return len(re.findall(r"^\[\d+\] ", user, re.M))


# -- a small docs dir and a contract-shaped search over it -----------------------------------

PAGES = {
    "Hooks": """Hooks run shell commands at points of the agent's lifecycle.

## Add a hook

Add a hook under `hooks` in `.claude/settings.json`:

```json
{
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "command": "echo checked"}]
  }
}
```

Restart the session so the hook is loaded.

## Hook events

PreToolUse runs before a tool call; PostToolUse runs after it.
""",
    "Settings": """Settings are read from `.claude/settings.json` and the user file.

## Timeouts

Every hook may set `timeout` in seconds; the default is 60.

```json
{"hooks": {"PreToolUse": [{"command": "lint", "timeout": 30}]}}
```
""",
    "Memory": """Memory files give the agent standing instructions.

## CLAUDE.md

Put project instructions in `CLAUDE.md` at the repository root.
""",
}
SET_NAME = "Acme_Agent@1"


def make_docs(root: Path) -> Path:
    """A real md_docs dir written by the project's own SetWriter."""
    from doc4llm.corpus.writer import SetWriter

    docs = root / "md_docs"
    writer = SetWriter(docs, SET_NAME, origin="import")
    for title, body in PAGES.items():
        writer.write_page(title, body, source=f"docs/{title.lower()}.md", key=title,
                          url=f"https://docs.acme.dev/{title.lower()}")
    writer.finish({})
    return docs


_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"how", "do", "i", "a", "the", "to", "is", "in", "what", "of", "and", "for", "my"}


def stub_search(docs: Path):
    """query -> a DESIGN.md search-result dict, scored by word overlap over real sections."""
    from doc4llm.corpus.model import list_sets

    def search(query: str) -> dict:
        words = set(_WORD.findall(query.lower())) - _STOP
        scored = []
        for doc_set in list_sets(docs):
            for page in doc_set.pages():
                lines = page.lines()
                for sec in page.sections():
                    if sec.level < 2:
                        continue
                    text = "\n".join(lines[sec.start - 1:sec.end]).lower()
                    hits = len(words & set(_WORD.findall(text + " " + page.title.lower())))
                    if hits:
                        scored.append((hits, doc_set, page, sec))
        scored.sort(key=lambda t: -t[0])
        results = []
        for rank, (hits, doc_set, page, sec) in enumerate(scored[:10], 1):
            first_line = page.lines()[sec.start - 1]
            results.append({
                "rank": rank, "doc_set": doc_set.name, "page": page.name,
                "heading_path": sec.heading_path, "source": page.source,
                "url": page.url_for(sec), "toc_path": str(page.toc_path),
                "content_path": str(page.content_path), "lines": [sec.start, sec.end],
                "tokens": sec.tokens, "score": float(hits),
                "relevance": "high" if hits >= 2 else "low", "found_by": ["stub"],
                "snippet": first_line[:80]})
        top = results[0]["score"] if results else 0
        return {"query": query, "query_type": "howto", "strategy": "stub",
                "confidence": min(100, int(top * 30)), "abstained": not results,
                "results": results,
                "guidance": None if results else {
                    "understood": {"terms": sorted(words)}, "missing": sorted(words),
                    "suggested_searches": [{"query": f"{query} documentation", "engine": "general",
                                            "rationale": "stub"}]},
                "timing_ms": {}}

    return search


# -- the scenarios the tests and benchmarks/ask/ask_bench.py run -----------------------------

HOOK_ANSWER = """Add the hook under `hooks` in `.claude/settings.json` [1]:

```json
{"hooks": {"PreToolUse": [{"matcher": "Bash", "command": "echo checked"}]}}
```

Restart the session so it is loaded [1]."""


def scenario_well_documented(llm: FakeOpenAI, tav: FakeTavily) -> dict:
    llm.add("reranking", ranking(0, 1))
    llm.add("synthesis", HOOK_ANSWER)
    llm.add("evaluation", evaluation("RETURN_ANSWER", confidence=90))
    return {"question": "how do I add a hook"}


def scenario_partial(llm: FakeOpenAI, tav: FakeTavily) -> dict:
    llm.add("reranking", ranking(0, 1))
    llm.add("synthesis", HOOK_ANSWER + "\nThe docs found do not say how to limit its run time.")
    llm.add("evaluation", evaluation("QUERY_MORE_DOCS", confidence=45, answers=False,
                                     completeness="partial", queries=["hook timeout seconds"],
                                     still_needed=["hook timeout"]))
    llm.add("synthesis", HOOK_ANSWER + "\nSet `timeout` in seconds on the hook; default 60 [3].")
    llm.add("evaluation", evaluation("RETURN_ANSWER", confidence=88))
    return {"question": "how do I add a hook and limit how long it runs"}


def scenario_undocumented(llm: FakeOpenAI, tav: FakeTavily) -> dict:
    llm.add("reranking", ranking(0))
    llm.add("synthesis", "The documentation does not cover this.")
    llm.add("evaluation", evaluation("SEARCH_WEB", confidence=10, answers=False,
                                     completeness="minimal", queries=["acme agent hooks kubernetes"]))
    tav.add([{"title": "Running Acme hooks in Kubernetes", "url": "https://blog.example/k8s-hooks",
              "content": "Mount settings.json from a ConfigMap; hooks then run in the pod.",
              "score": 0.91},
             {"title": "Acme on k8s", "url": "https://example.org/acme-k8s",
              "content": "Use the official image.", "score": 0.5}])
    llm.add("synthesis", "Not in your docs; on the web: mount settings.json from a ConfigMap [W1].")
    llm.add("evaluation", evaluation("RETURN_ANSWER", confidence=75))
    return {"question": "how do I run hooks on kubernetes"}


def scenario_malformed_json(llm: FakeOpenAI, tav: FakeTavily) -> dict:
    llm.add("reranking", ranking(0, 1))
    llm.add("synthesis", HOOK_ANSWER)
    llm.add("evaluation", "Looks good to me! {decision: return}",
            evaluation("RETURN_ANSWER", confidence=90))
    return {"question": "how do I add a hook"}


def scenario_rate_limited(llm: FakeOpenAI, tav: FakeTavily) -> dict:
    llm.add("reranking", ranking(0, 1))
    llm.add("synthesis", {"status": 429, "headers": {"Retry-After": "0.05"}}, HOOK_ANSWER)
    llm.add("evaluation", evaluation("RETURN_ANSWER", confidence=90))
    return {"question": "how do I add a hook"}


def scenario_iteration_cap(llm: FakeOpenAI, tav: FakeTavily) -> dict:
    llm.add("reranking", ranking(0, 1))
    llm.add("synthesis", HOOK_ANSWER, HOOK_ANSWER + " Restart required [1].")
    llm.add("evaluation", *[evaluation("REFINE_ANSWER", confidence=40, answers=False,
                                       completeness="partial", focus=["more detail"])] * 2)
    return {"question": "how do I add a hook", "config": {"max_iterations": 2}}


SCENARIOS = {
    "well documented": scenario_well_documented,
    "partial (more docs)": scenario_partial,
    "undocumented (web)": scenario_undocumented,
    "malformed evaluator JSON": scenario_malformed_json,
    "429 then success": scenario_rate_limited,
    "iteration cap (2)": scenario_iteration_cap,
}


def fake_env(llm: FakeOpenAI | None, tav: FakeTavily | None) -> dict[str, str]:
    """Environment that points doc4llm at the fakes (keys only for the fakes given)."""
    env = {"DOC4LLM_SYNTHESIS_MODEL": MODELS["synthesis"],
           "DOC4LLM_EVALUATION_MODEL": MODELS["evaluation"],
           "DOC4LLM_RERANKING_MODEL": MODELS["reranking"],
           "DOC4LLM_LLM_BACKOFF": "0.01", "NO_PROXY": "127.0.0.1,localhost"}
    if llm is not None:
        env.update(OPENAI_API_KEY=OPENAI_KEY, OPENAI_BASE_URL=llm.url)
    if tav is not None:
        env.update(TAVILY_API_KEY=TAVILY_KEY, TAVILY_API_BASE_URL=tav.url)
    return env


def run_ask_in_process(docs: Path, question: str, *, k: int = 2, **overrides: object) -> dict:
    """The library path of `doc4llm ask --json --trace` over the stub search, with real
    openai / tavily clients built from the environment."""
    import dataclasses

    from doc4llm.answer.config import load_answer_config
    from doc4llm.answer.llm import LLMClient
    from doc4llm.answer.loop import AskDeps, run_ask
    from doc4llm.answer.response import build_response
    from doc4llm.answer.websearch import WebSearch

    start = time.perf_counter()
    config = dataclasses.replace(load_answer_config(docs / "none.yaml"), **overrides)
    deps = AskDeps(search_fn=stub_search(docs), docs_dir=docs, llm=LLMClient.from_env(config),
                   web=WebSearch.from_env(config), config=config, k=k)
    out = run_ask(question, deps)
    return build_response(out, processing_ms=(time.perf_counter() - start) * 1000,
                          include_trace=True)


@pytest.fixture(name="docs")
def docs_fixture(tmp_path):
    """A real md_docs dir (see make_docs)."""
    return make_docs(tmp_path)


@pytest.fixture(name="fakes")
def fakes_env_fixture(monkeypatch):
    """Both fake servers, with the environment pointing the real clients at them."""
    llm, tav = FakeOpenAI(), FakeTavily()
    for key, value in fake_env(llm, tav).items():
        monkeypatch.setenv(key, value)
    yield llm, tav
    llm.close()
    tav.close()
