"""Hostile replies from the model and web servers (issue 13): a 200 that is not JSON, JSON of
the wrong shape, a body that does not parse. Each gives a clear message, exit 3 when the
model could not answer, one JSON object under --json, and never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from fakes_llm import FakeOpenAI, evaluation, fake_env, make_docs, ranking


class RawServer:
    """127.0.0.1 server answering every POST with HTTP 200, `body` and `content_type`."""

    def __init__(self, body: bytes, content_type: str):
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _ask(docs, env_extra: dict, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "TAVILY_API_KEY", "OPENAI_BASE_URL", "DOC4LLM_DOCS_DIR")}
    env.update(fake_env(None, None), DOC4LLM_EMBEDDER="none", **env_extra)
    return subprocess.run([sys.executable, "-m", "doc4llm", "ask", "how do I add a hook", *args,
                           "--docs-dir", str(docs)], env=env, capture_output=True, text=True,
                          timeout=90, cwd=docs.parent)


MODEL_REPLIES = [
    (b"<html><body>502 from the proxy</body></html>", "text/html", "not an OpenAI chat completion"),
    (b"{not json", "application/json", "not valid JSON"),
    (b'{"foo": 1}', "application/json", "not an OpenAI chat completion"),
    (b"[1, 2]", "application/json", "not an OpenAI chat completion"),
    (b'{"choices": [{"message": {"content": {"a": 1}}}]}', "application/json", "not text"),
]


@pytest.mark.parametrize("body,content_type,message", MODEL_REPLIES)
def test_a_model_reply_that_is_not_a_chat_completion_exits_3_with_json(tmp_path, body, content_type,
                                                                       message):
    docs = make_docs(tmp_path)
    server = RawServer(body, content_type)
    try:
        env = {"OPENAI_API_KEY": "sk-hostile-test-key", "OPENAI_BASE_URL": server.url + "/v1"}
        proc = _ask(docs, env, "--json")
        text = _ask(docs, env)
    finally:
        server.close()
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr and "Traceback" not in text.stderr
    data = json.loads(proc.stdout)
    assert data["answer"] is None and data["sources"]  # the sections found are still there
    assert data["metadata"]["error"]["exit_code"] == 3
    assert message in data["metadata"]["error"]["message"]
    assert text.returncode == 3 and message in text.stderr
    assert "Sources (local docs):" in text.stdout


@pytest.mark.parametrize("body,content_type", [(b"<html>rate limited</html>", "text/html"),
                                               (b'["not", "an", "object"]', "application/json"),
                                               (b'{"results": "nope"}', "application/json")])
def test_a_web_search_reply_that_is_not_tavily_json_is_a_warning(tmp_path, body, content_type):
    docs = make_docs(tmp_path)
    llm = FakeOpenAI()
    tavily = RawServer(body, content_type)
    try:
        llm.add("reranking", ranking(0))
        llm.add("synthesis", "The docs do not cover this.")
        llm.add("evaluation", evaluation("SEARCH_WEB", confidence=10, answers=False,
                                         completeness="minimal", queries=["acme hooks k8s"]))
        env = {**fake_env(llm, None), "TAVILY_API_KEY": "tvly-hostile-test-key",
               "TAVILY_API_BASE_URL": tavily.url}
        proc = _ask(docs, env, "--json")
    finally:
        llm.close()
        tavily.close()
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    data = json.loads(proc.stdout)
    assert data["answer"] == "The docs do not cover this."
    assert any("web search failed" in w for w in data["metadata"]["warnings"])
