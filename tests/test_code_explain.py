"""`doc4llm explain-error`: error signature, troubleshooting-first retrieval, guidance
offline, and an explanation through an LLM when configured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli
from fakes_llm import FakeOpenAI, fake_env

from doc4llm.code.explain import parse_error

ROOT = Path(__file__).resolve().parent.parent
# Lexical search is enough to test this layer: embedding the set first (the default)
# costs 5-40 s on a busy 2-core machine and belongs to the search tests.
LEXICAL = {"DOC4LLM_EMBEDDER": "none"}
OFFLINE = {"OPENAI_API_KEY": None, **LEXICAL}


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("explain_docs") / "md_docs"
    proc = run_cli("import", ROOT / "benchmarks" / "code" / "code_docs", "--set", "Code_Examples@latest",
                   "--docs-dir", root)
    assert proc.returncode == 0, proc.stderr
    return root


def test_python_traceback_signature():
    sig = parse_error(
        'Traceback (most recent call last):\n  File "/srv/app/main.py", line 3, in <module>\n'
        "    fetch()\nretrykit.RetryExhaustedError: gave up after 5 attempts: ConnectionError()\n"
    )
    assert sig.error_type == "RetryExhaustedError"
    assert sig.query.startswith("retrykit.RetryExhaustedError: gave up after 5 attempts")
    assert "/srv/app" not in sig.query


def test_node_error_keeps_the_cause_code():
    sig = parse_error("TypeError: fetch failed\n  cause: Error: connect ECONNREFUSED 127.0.0.1:8080")
    assert sig.error_type == "TypeError" and sig.codes == ["ECONNREFUSED"]
    assert sig.query == "TypeError: fetch failed ECONNREFUSED"


def test_rust_and_go_errors():
    rust = parse_error("error[E0502]: cannot borrow `values` as mutable\n --> src/main.rs:10:5")
    assert rust.codes == ["error[E0502]"] and rust.line.startswith("error[E0502]")
    go = parse_error("fatal error: all goroutines are asleep - deadlock!\n\ngoroutine 1 [chan send]:\nmain.main()")
    assert go.line == "fatal error: all goroutines are asleep - deadlock!"


def test_offline_ranks_the_troubleshooting_section_first(docs):
    proc = run_cli("explain-error", "fatal error: all goroutines are asleep - deadlock!",
                   "--docs-dir", docs, "--json", env=OFFLINE)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["mode"] == "sections" and data["explanation"] is None
    top = data["results"][0]
    assert top["heading_path"][-2:] == ["Troubleshooting", "fatal error: all goroutines are asleep - deadlock!"]
    assert "troubleshooting section" in top["why"]
    # the command carries the --docs-dir it was given, so it runs as printed (issue 35)
    assert top["read"] == (f'doc4llm read "Gopool Worker Pool in Go" --set "Code_Examples@latest" '
                           f'--lines {top["lines"][0]}:{top["lines"][1]} --docs-dir {docs}')
    assert data["guidance"]["next_steps"][0].startswith("Read ")


def test_traceback_from_stdin_text_output(docs):
    trace = "Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: unknown jitter mode: 'fast'\n"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "DOC4LLM_DOCS_DIR")}
    env.update(LEXICAL)
    proc = subprocess.run([sys.executable, "-m", "doc4llm", "explain-error", "-", "--docs-dir", str(docs)],
                          input=trace, capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("error: ValueError: unknown jitter mode: 'fast'  (type ValueError)")
    first = proc.stdout.splitlines()[1]
    assert "Troubleshooting > ValueError: unknown jitter mode" in first
    assert f"search: doc4llm search ValueError --docs-dir {docs}" in proc.stdout


def test_empty_text_is_bad_input(docs):
    proc = run_cli("explain-error", "   ", "--docs-dir", docs, "--json", env=OFFLINE)
    assert proc.returncode == 2 and json.loads(proc.stdout)["error"] == "InputError"


def test_llm_explanation(docs, monkeypatch):
    llm = FakeOpenAI()
    try:
        env = {**fake_env(llm, None), **LEXICAL}
        reply = ("**Cause** Nobody drains Results() [1].\n\n**Fix**\n\n```go\ngo func() {\n"
                 "\tfor r := range pool.Results() {\n\t\t_ = r\n\t}\n}()\n```\n\n**Check** no deadlock.")
        llm.add("synthesis", reply)
        proc = run_cli("explain-error", "fatal error: all goroutines are asleep - deadlock!",
                       "--docs-dir", docs, "--json", env=env)
        assert proc.returncode == 0, proc.stderr
        data = json.loads(proc.stdout)
        assert data["mode"] == "llm" and data["explanation"] == reply and data["warnings"] == []
        (call,) = llm.calls("synthesis")
        assert "Drain\n`Results()`" in call["body"]["messages"][1]["content"]  # the section went to the model
    finally:
        llm.close()


def test_error_types_with_underscores():
    assert parse_error("AI_APICallError: Bad Request").error_type == "AI_APICallError"


def test_unknown_error_suggests_searches(docs):
    proc = run_cli("explain-error", "Error: EACCES: permission denied, mkdir '/usr/local/lib/node_modules'",
                   "--docs-dir", docs, "--json", env=OFFLINE)
    assert proc.returncode == 0, proc.stderr
    guidance = json.loads(proc.stdout)["guidance"]
    assert guidance["suggested_searches"] == ["EACCES"]
    assert isinstance(guidance["web_searches"], list)
    assert any("No section names this error" in s or "No local section" in s for s in guidance["next_steps"])
