"""Issue 30 (and 29.5, 29.6, 29.9): `ask`, the reranker, `explain-error` and `example`
against loopback servers that answer like a small local model: prose where JSON was asked
for, bracketed numbers in prose, a 500 for an unknown response_format (llama-cpp-python),
streams that trickle, `choices: []`, `content: null`, a server that never answers. And
redaction that masks keys but not the word "local"."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import fakes_llm
import pytest
from conftest import UPSTREAM, run_cli
from fakes_llm import (
    HOOK_ANSWER,
    MODELS,
    FakeOpenAI,
    evaluation,
    fake_env,
    make_docs,
    ranking,
    run_ask_in_process,
    stub_search,
)

from doc4llm.answer.config import load_answer_config
from doc4llm.answer.deadline import Deadline
from doc4llm.answer.evaluator import evaluation_schema, parse_evaluation
from doc4llm.answer.llm import LLMClient
from doc4llm.answer.loop import UNJUDGED_CAP, UNVERIFIED_CAP, AskDeps, run_ask
from doc4llm.answer.rerank_llm import parse_ranking, rerank
from doc4llm.answer.response import build_response
from doc4llm.errors import InputError
from doc4llm.secrets import is_secret_like, redact

docs = fakes_llm.docs_fixture
fakes = fakes_llm.fakes_env_fixture
LEXICAL = {"DOC4LLM_EMBEDDER": "none"}


class LlamaCppLike(FakeOpenAI):
    """Refuses `response_format: json_schema` the way llama-cpp-python does (HTTP 500
    naming the field) and takes JSON mode with a schema."""

    def handle(self, path: str, body: dict, headers: dict) -> tuple[int, dict, dict]:
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            self.requests.append({"path": path, "body": body, "headers": headers})
            return 500, {}, {"error": {"message": "1 validation error: ('body', "
                                       "'response_format', 'type') Input should be 'text' "
                                       "or 'json_object'", "type": "internal_server_error"}}
        return super().handle(path, body, headers)


class StreamServer:
    """Answers every POST with an SSE stream: `chunks` (content pieces) sent `gap` seconds
    apart, then [DONE]; `forever` keeps sending. Records whether the client hung up."""

    def __init__(self, chunks: list[object], gap: float = 0.0, forever: bool = False):
        owner = self
        self.requests = 0
        self.client_left = threading.Event()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                try:
                    pieces = list(chunks)
                    while pieces or forever:
                        piece = pieces.pop(0) if pieces else " more"
                        delta = {"choices": [{"index": 0, "delta": {"content": piece}}]}
                        self.wfile.write(f"data: {json.dumps(delta)}\n\n".encode())
                        self.wfile.flush()
                        time.sleep(gap)
                        if time.monotonic() - started > 30:
                            return  # never outlive a test
                    self.wfile.write(b"data: [DONE]\n\n")
                except (BrokenPipeError, ConnectionResetError):
                    owner.client_left.set()

            def log_message(self, *args: object) -> None:
                pass

        started = time.monotonic()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _client(docs: Path, **overrides: object) -> LLMClient:
    config = dataclasses.replace(load_answer_config(docs / "none.yaml"), **overrides)
    return LLMClient.from_env(config)


def _cli_env(llm_url: str | None, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "TAVILY_API_KEY", "OPENAI_BASE_URL", "DOC4LLM_DOCS_DIR")}
    env.update(fake_env(None, None), **LEXICAL, **extra)
    if llm_url:
        env.update(OPENAI_API_KEY=fakes_llm.OPENAI_KEY, OPENAI_BASE_URL=llm_url)
    return env


def _cli(docs: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "doc4llm", *args, "--docs-dir", str(docs)],
                          env=env, capture_output=True, text=True, timeout=120, cwd=docs.parent)


# -- structured output ----------------------------------------------------------------------

def test_a_server_that_refuses_json_schema_gets_json_mode_with_the_schema(docs, monkeypatch):
    llm = LlamaCppLike()
    for key, value in fake_env(llm, None).items():
        monkeypatch.setenv(key, value)
    try:
        llm.add("evaluation", evaluation("RETURN_ANSWER"), evaluation("RETURN_ANSWER"))
        client = _client(docs, max_retries=3)
        schema = evaluation_schema()
        for _ in range(2):
            reply, _ = client.chat("evaluation", [{"role": "user", "content": "judge"}],
                                   schema=schema, temperature=0)
            assert parse_evaluation(reply, schema).action == "RETURN_ANSWER"
        formats = [r["body"].get("response_format", {}).get("type") for r in llm.requests]
        # one refusal, no retries of the 500, and the second call starts where the first ended
        assert formats == ["json_schema", "json_object", "json_object"]
        assert llm.requests[1]["body"]["response_format"]["schema"] == schema
        assert client.calls[0].format_fallbacks[0]["refused"] == "json_schema"
        assert client.calls[1].response_format == "json_object_schema"
    finally:
        llm.close()


def test_prose_around_the_json_is_read_and_then_validated_with_the_same_schema():
    wrapped = "Here is my evaluation:\n" + evaluation("QUERY_MORE_DOCS", queries=["hook timeout"]) + "\nHope it helps"
    assert parse_evaluation(wrapped).queries == ["hook timeout"]
    long_reason = json.loads(evaluation())
    long_reason["decision"]["reason"] = "x" * 5000  # a verbose model: clipped, not rejected
    assert len(parse_evaluation(json.dumps(long_reason)).reason) == 240
    with pytest.raises(ValueError, match="action"):
        parse_evaluation(evaluation("DO_SOMETHING_ELSE"))
    empty_queries = json.loads(evaluation("SEARCH_WEB", still_needed=["helm chart values"]))
    assert parse_evaluation(json.dumps(empty_queries)).queries == ["helm chart values"]


def test_evaluator_prose_twice_leaves_the_citation_check_and_a_capped_confidence(docs, fakes):
    llm, _ = fakes
    llm.add("reranking", ranking(0, 1))
    llm.add("synthesis", HOOK_ANSWER)
    llm.add("evaluation", "The answer looks correct and complete, confidence 95.",
            "I would return the answer [1].")
    response = run_ask_in_process(docs, "how do I add a hook")
    meta = response["metadata"]
    # every claim is in the section it cites: verified, whatever the evaluator did
    assert meta["answerStatus"] == "answered" and meta["verified"] is True
    assert meta["confidence"] <= UNJUDGED_CAP  # never the evaluator's "95" from prose
    assert any("did not judge" in w and "unusable after one repair" in w
               for w in meta["warnings"])
    assert not any("unverified" in w for w in meta["warnings"])
    for request in llm.calls("evaluation"):
        assert request["body"]["temperature"] == 0 and request["body"]["max_tokens"] <= 1000


# -- reranker -------------------------------------------------------------------------------

@pytest.mark.parametrize("reply,why", [
    ("Document [2] looks best, then [0].", "no ranking"),
    ("[2, 0]", "incomplete"),
    ('{"scores": [1, 2]}', "scores"),
])
def test_reranker_accepts_only_a_complete_ranking(reply, why):
    with pytest.raises(ValueError, match=why):
        parse_ranking(reply, 3)
    assert parse_ranking('{"scores": [3, 9, 3]}', 3) == [1, 0, 2]  # ties keep local order
    assert parse_ranking("```json\n[2, 0, 1]\n```", 3) == [2, 0, 1]


def test_rerank_reports_keeping_the_local_order(docs, fakes):
    llm, _ = fakes
    results = stub_search(docs)("hook timeout seconds")["results"]
    llm.add("reranking", "The most relevant is [1].")
    ranked, kept_because = rerank(_client(docs), "hook timeout", "howto", results)
    assert ranked == results and "no ranking" in kept_because
    request = llm.calls("reranking")[0]["body"]
    assert request["max_tokens"] <= 32 + 4 * len(results) and request["temperature"] == 0


def test_search_rerank_llm_says_when_it_kept_the_local_order(tmp_path):
    docs = make_docs(tmp_path)
    llm = FakeOpenAI()
    try:
        env = _cli_env(llm.url, DOC4LLM_RERANKING_MODEL=MODELS["reranking"])
        llm.add("reranking", "Sure! I'd rank [1] first.", ranking(1, 0))
        kept = _cli(docs, env, "search", "hook timeout", "--json", "--rerank", "llm")
        ranked = _cli(docs, env, "search", "hook timeout", "--json", "--rerank", "llm")
    finally:
        llm.close()
    assert kept.returncode == 0 and ranked.returncode == 0, kept.stderr + ranked.stderr
    kept_data, ranked_data = json.loads(kept.stdout), json.loads(ranked.stdout)
    assert kept_data["reranked_by"] == "local"
    assert any("local order kept" in w for w in kept_data["warnings"])
    assert ranked_data["reranked_by"] == "llm"
    assert ranked_data["results"][0]["heading_path"] == kept_data["results"][1]["heading_path"]


# -- honest results ---------------------------------------------------------------------------

def _abstaining(docs: Path):
    search = stub_search(docs)

    def abstain(query: str) -> dict:
        return {**search(query), "abstained": True, "confidence": 6}

    return abstain


def _ask(docs: Path, search_fn, **overrides: object) -> dict:
    from doc4llm.answer.websearch import WebSearch

    config = dataclasses.replace(load_answer_config(docs / "none.yaml"), **overrides)
    deps = AskDeps(search_fn=search_fn, docs_dir=docs, llm=LLMClient.from_env(config),
                   web=WebSearch.from_env(config), config=config, k=2)
    return build_response(run_ask("how do I add a hook", deps), processing_ms=0, include_trace=True)


def test_abstained_retrieval_without_web_is_not_covered_and_nothing_is_synthesised(docs, fakes, monkeypatch):
    llm, _ = fakes
    monkeypatch.delenv("TAVILY_API_KEY")
    response = _ask(docs, _abstaining(docs))
    meta = response["metadata"]
    assert response["answer"] is None and meta["answerStatus"] == "not_covered"
    assert meta["confidence"] == 0 and llm.requests == []  # no model call at all
    assert response["sources"]  # the closest sections are still listed
    assert any(w.startswith("not covered") and "TAVILY_API_KEY" in w for w in meta["warnings"])
    assert meta["searchGuidance"]["suggested_searches"]


def test_abstained_retrieval_with_web_answers_from_the_web_only(docs, fakes):
    llm, tav = fakes
    tav.add([{"title": "Hooks on k8s", "url": "https://blog.example/k8s",
              "content": "Mount the settings file from a ConfigMap.", "score": 0.9}])
    llm.add("synthesis", "Mount the settings [W1].")
    llm.add("evaluation", evaluation("RETURN_ANSWER", confidence=80))
    response = _ask(docs, _abstaining(docs))
    prompt = llm.calls("synthesis")[0]["body"]["messages"][1]["content"]
    assert "[W1] WEB: Hooks on k8s" in prompt and "[1] Acme_Agent@1" not in prompt
    assert response["metadata"]["answerStatus"] == "answered"
    assert response["metadata"]["confidence"] == 80


def test_an_uncited_answer_is_flagged_and_capped_whatever_the_evaluator_says(docs, fakes):
    llm, _ = fakes
    llm.add("reranking", ranking(0, 1))
    llm.add("synthesis", "Add the hook under hooks in .claude/settings.json, then restart "
                         "the session so the hook is loaded.")
    llm.add("evaluation", evaluation("RETURN_ANSWER", confidence=93))
    response = run_ask_in_process(docs, "how do I add a hook")
    meta = response["metadata"]
    assert meta["answerStatus"] == "uncited" and meta["confidence"] == UNVERIFIED_CAP
    assert meta["verified"] is False
    assert any("cites none of the sources" in w for w in meta["warnings"])


def test_an_invented_answer_is_not_covered_and_not_returned(docs, fakes):
    """Issue 35.4: an answer no section supports is a refusal, not an uncited answer; the
    evaluator is not even asked."""
    llm, _ = fakes
    llm.add("reranking", ranking(0, 1))
    llm.add("synthesis", "Hooks are configured in a YAML file under /etc/hooks.")
    response = run_ask_in_process(docs, "how do I add a hook")
    meta = response["metadata"]
    assert response["answer"] is None and meta["answerStatus"] == "not_covered"
    assert meta["confidence"] == 0 and meta["verified"] is False
    assert response["sources"]  # the closest sections
    assert any(w.startswith("not covered") and "none of its claims" in w for w in meta["warnings"])
    assert llm.calls("evaluation") == []


def test_an_invented_answer_sends_ask_to_the_web_when_it_can(docs, fakes):
    """With a web key, the refused local answer is followed by one web search and an answer
    from the web pages only, checked the same way."""
    llm, tav = fakes
    llm.add("reranking", ranking(0, 1))
    llm.add("synthesis", "Hooks are configured in a YAML file under /etc/hooks.",
            "Mount the hook settings file from a ConfigMap [W1].")
    tav.add([{"title": "Hooks on k8s", "url": "https://blog.example/k8s",
              "content": "Mount the hook settings file from a ConfigMap.", "score": 0.9}])
    llm.add("evaluation", evaluation("RETURN_ANSWER", confidence=80))
    response = run_ask_in_process(docs, "how do I add a hook")
    meta = response["metadata"]
    assert meta["answerStatus"] == "answered" and meta["verified"] is True
    second = llm.calls("synthesis")[1]["body"]["messages"][1]["content"]
    assert "[W1] WEB: Hooks on k8s" in second and "[1] Acme_Agent@1" not in second


# -- bad 200 replies and time ------------------------------------------------------------------

@pytest.mark.parametrize("raw,message", [
    ({"choices": []}, "no choices"),
    ({"choices": [{"index": 0, "message": {"role": "assistant", "content": None}}]}, "content: null"),
])
def test_a_200_without_an_answer_exits_3_with_the_sections(tmp_path, raw, message):
    docs = make_docs(tmp_path)
    llm = FakeOpenAI()
    try:
        llm.add("reranking", ranking(0))
        llm.add("synthesis", {"raw": raw})
        proc = _cli(docs, _cli_env(llm.url), "ask", "how do I add a hook", "--json")
    finally:
        llm.close()
    assert proc.returncode == 3, proc.stderr
    data = json.loads(proc.stdout)
    assert data["answer"] is None and data["sources"]
    assert message in data["metadata"]["error"]["message"]


def test_a_streamed_reply_is_joined_and_null_content_is_refused(docs, monkeypatch):
    good = StreamServer(["Add it ", "under hooks [1]."])
    empty = StreamServer([None])
    try:
        monkeypatch.setenv("OPENAI_API_KEY", fakes_llm.OPENAI_KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", good.url)
        text, usage = _client(docs).chat("synthesis", [{"role": "user", "content": "q"}])
        assert text == "Add it under hooks [1]." and usage.estimated
        monkeypatch.setenv("OPENAI_BASE_URL", empty.url)
        with pytest.raises(Exception, match="content: null"):
            _client(docs, max_retries=0).chat("synthesis", [{"role": "user", "content": "q"}])
    finally:
        good.close()
        empty.close()


def test_a_trickling_stream_is_cut_at_the_deadline_and_not_retried(docs, monkeypatch):
    slow = StreamServer(["The"], gap=0.1, forever=True)  # every read succeeds, never ends
    try:
        monkeypatch.setenv("OPENAI_API_KEY", fakes_llm.OPENAI_KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", slow.url)
        config = dataclasses.replace(load_answer_config(docs / "none.yaml"), max_retries=3)
        client = LLMClient.from_env(config, deadline=Deadline(1.5))
        with pytest.raises(Exception, match="deadline|timed out"):
            client.chat("synthesis", [{"role": "user", "content": "q"}])
        assert slow.client_left.wait(5)  # the connection was closed: the server stops
        assert slow.requests == 1  # and nothing queued behind it
        with pytest.raises(Exception, match="deadline"):
            client.chat("synthesis", [{"role": "user", "content": "q"}])
        assert slow.requests == 1
    finally:
        slow.close()


def test_ask_against_a_server_that_never_answers_ends_at_its_deadline(tmp_path):
    docs = make_docs(tmp_path)
    llm = FakeOpenAI()
    try:
        llm.add("reranking", {"delay": 30, "content": "[0]"})
        proc = _cli(docs, _cli_env(llm.url), "ask", "how do I add a hook", "--json",
                    "--deadline", "4")
        requests = len(llm.requests)
    finally:
        llm.close()
    assert proc.returncode == 3, proc.stderr
    data = json.loads(proc.stdout)
    assert data["answer"] is None and data["sources"]
    assert "deadline" in data["metadata"]["error"]["message"]
    assert requests <= 1  # at most the reranker's request (search may use the 4 s); no retry


def test_deadline_settings_are_checked():
    with pytest.raises(InputError, match="positive"):
        from doc4llm.answer.config import _build

        _build({"deadline_s": "0"}, source="env")


# -- explain-error and example keep their sections (29.5) --------------------------------------

@pytest.mark.parametrize("command,args,kept", [
    ("explain-error", ["TypeError: hook timeout exceeded"], "results"),
    ("example", ["add a PreToolUse hook"], "example"),
])
def test_code_commands_keep_the_sections_when_the_model_fails(tmp_path, command, args, kept):
    docs = make_docs(tmp_path)
    llm = FakeOpenAI()
    try:
        llm.add("synthesis", *[{"status": 500}] * 4)
        env = _cli_env(llm.url, DOC4LLM_LLM_BACKOFF="0.01")
        proc = _cli(docs, env, command, *args, "--json")
        text = _cli(docs, {**env, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, command, *args)
    finally:
        llm.close()
    assert proc.returncode == 3, proc.stderr
    data = json.loads(proc.stdout)
    assert data[kept] and data["mode"] == "sections"
    assert data["llm_error"]["exit_code"] == 3 and "HTTP 500" in data["llm_error"]["message"]
    assert any("documented sections are kept" in w for w in data["warnings"])
    assert text.returncode == 3 and "Traceback" not in text.stderr
    assert "model call failed" in text.stderr and text.stdout.strip()


# -- redaction ----------------------------------------------------------------------------------

def test_a_placeholder_key_rewrites_nothing(tmp_path):
    env = _cli_env(None, OPENAI_API_KEY="local")
    read = run_cli("read", "Network", "--set", "OpenCode_Docs@latest", "--docs-dir", UPSTREAM,
                   env=env)
    assert read.returncode == 0, read.stderr
    assert "localhost" in read.stdout and "***" not in read.stdout
    helptext = run_cli("search", "--help", env=env)
    assert "[local|llm]" in helptext.stdout


def test_only_secret_like_values_count_as_keys():
    for placeholder in ("local", "ollama", "EMPTY", "lm-studio", "sk-no-key-required",
                        "ollama-local-key", "xxxxxxxxxxxxxxxxxxxxxxxx"):
        assert not is_secret_like(placeholder), placeholder
    for key in (fakes_llm.OPENAI_KEY, fakes_llm.TAVILY_KEY, "sk-proj-4fQ9zT1bX7mK2pL8vR3nW6yC",
                "0f3a9c2e7b1d4a6f8e5c3b2a1d0e9f8c"):
        assert is_secret_like(key), key


def test_percent_encoded_and_base64_spellings_are_masked(monkeypatch):
    key = fakes_llm.OPENAI_KEY
    monkeypatch.setenv("OPENAI_API_KEY", key)
    every_char = "".join(f"%{b:02X}" for b in key.encode())
    assert redact(f"GET /?k={every_char} HTTP/1.1") == "GET /?k=*** HTTP/1.1"
    assert redact("sk%2Dtest%2DSECRET%2dopenai-4242 then") == "*** then"
    basic = base64.b64encode(f"user:{key}".encode()).decode()
    assert key not in redact(basic) and basic not in redact(f"Authorization: Basic {basic}")
    urlsafe = base64.urlsafe_b64encode(f"xy{key}".encode()).decode()
    assert redact(urlsafe) != urlsafe
    assert redact("100% of localhost, %41 and %zz") == "100% of localhost, %41 and %zz"


def test_mcp_tools_keep_the_sections_when_the_model_fails(tmp_path, monkeypatch):
    from doc4llm.mcp.server import DocsService

    docs = make_docs(tmp_path)
    llm = FakeOpenAI()
    for key, value in {**_cli_env(llm.url, DOC4LLM_LLM_BACKOFF="0.01")}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    llm.add("synthesis", *[{"status": 500}] * 8)
    service = DocsService(docs, embedder="none")
    try:
        explained = service.explain_error("TypeError: hook timeout exceeded")
        example = service.get_working_example("add a PreToolUse hook")
    finally:
        service.close()
        llm.close()
    assert explained["results"] and explained["llm_error"]["exit_code"] == 3
    assert example["example"] and example["llm_error"]["exit_code"] == 3
