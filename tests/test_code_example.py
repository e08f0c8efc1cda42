"""`doc4llm example`: code-first retrieval, imports completed from neighbouring sections,
verified; offline without a key, synthesised and re-verified through an LLM with one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from fakes_llm import FakeOpenAI, fake_env

from doc4llm.code.example import working_example

ROOT = Path(__file__).resolve().parent.parent
# Lexical search is enough to test this layer: embedding the set first (the default)
# costs 5-40 s on a busy 2-core machine and belongs to the search tests.
LEXICAL = {"DOC4LLM_EMBEDDER": "none"}
OFFLINE = {"OPENAI_API_KEY": None, **LEXICAL}


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("code_docs") / "md_docs"
    proc = run_cli("import", ROOT / "benchmarks" / "code" / "code_docs", "--set", "Code_Examples@latest",
                   "--docs-dir", root, env=LEXICAL)
    assert proc.returncode == 0, proc.stderr
    return root


@pytest.fixture(scope="module")
def searcher(docs):
    from doc4llm.search.engine import Searcher

    s = Searcher(docs, embedder="none", quiet=True)
    yield s
    s.close()


def test_offline_example_is_completed_with_imports_and_verified(docs):
    proc = run_cli("example", "retry a flaky http call with backoff", "--docs-dir", docs, "--json",
                   env=OFFLINE)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["mode"] == "sections" and data["answer"] is None
    example = data["example"]
    assert example["lang"] == "python" and example["status"] == "ok"
    assert example["source"]["heading_path"][-1] == "Quick example"
    assert "def fetch_profile" in example["code"]
    # The snippet uses RetryPolicy/retry/compute_backoff_delay; the import is in another section.
    (imp,) = example["completed_imports"]
    assert imp["text"] == "from retrykit import RetryPolicy, compute_backoff_delay, retry"
    assert example["code"].startswith(imp["text"])
    lines = (docs / "Code_Examples@latest" / "Retrykit Guide" / "docContent.md").read_text().splitlines()
    assert lines[imp["lines"][0] - 1] == imp["text"]
    lo, hi = example["source"]["lines"]
    assert lines[lo - 1].startswith("policy = RetryPolicy(") and hi - lo < 15


def test_offline_text_output_prints_a_fenced_block(docs):
    proc = run_cli("example", "shut down the worker pool after a timeout", "--docs-dir", docs, env=OFFLINE)
    assert proc.returncode == 0, proc.stderr
    assert "```go" in proc.stdout and "func (p *Pool) Shutdown" in proc.stdout
    assert 'doc4llm read "Gopool Worker Pool in Go"' in proc.stdout


def test_long_blocks_give_the_matching_function_not_the_whole_block(docs, searcher):
    data = working_example("load config from environment variables", docs_dir=docs, searcher=searcher)
    example = data["example"]
    assert example["lang"] == "rust" and "Config.load" in example["symbols"]
    assert example["code"].count("\n") < 30  # the method, not the 130-line loader source
    assert any(i["text"] == "use std::collections::HashMap;" for i in example["completed_imports"])


def test_no_code_found_gives_guidance(tmp_path):
    docs = tmp_path / "md_docs"
    src = tmp_path / "src"
    src.mkdir()
    (src / "intro.md").write_text("# Intro\n\n## Philosophy\n\nWe value calm, careful retries.\n")
    assert run_cli("import", src, "--set", "Prose@1", "--docs-dir", docs).returncode == 0
    proc = run_cli("example", "careful retries", "--docs-dir", docs, "--json", env=OFFLINE)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["example"] is None and data["guidance"][0].startswith("No code")


@pytest.fixture
def fake_llm(monkeypatch):
    llm = FakeOpenAI()
    for key, value in {**fake_env(llm, None), **LEXICAL}.items():
        monkeypatch.setenv(key, value)
    yield llm
    llm.close()


def test_llm_example_is_verified_and_repaired_once(docs, fake_llm):
    broken = "```python\ndef fetch(:\n    pass\n```\n[1]"
    fixed = "```python\nfrom retrykit import retry\n\n\n@retry()\ndef fetch():\n    return 1\n```\n[1]"
    fake_llm.add("synthesis", broken, fixed)
    proc = run_cli("example", "retry a flaky http call with backoff", "--docs-dir", docs, "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["mode"] == "llm" and data["llm_calls"] == 2
    assert data["answer"] == fixed and data["warnings"] == []
    first, repair = fake_llm.calls("synthesis")
    prompt = first["body"]["messages"][1]["content"]
    assert "def fetch_profile" in prompt  # the documented code went to the model
    assert "does not parse" in repair["body"]["messages"][-1]["content"]
    assert "SECRET" not in proc.stdout + proc.stderr


def test_llm_example_still_broken_is_reported(docs, fake_llm):
    # code from the docs (so it is an answer from them), cut short, citing nothing
    broken = "```go\nfunc main() {\n\tpool := NewPool(ctx, 4, 16)\n\tpool.Shutdown(timeout)\n```\n"
    fake_llm.add("synthesis", broken, broken)
    proc = run_cli("example", "worker pool graceful shutdown", "--docs-dir", docs, "--json")
    data = json.loads(proc.stdout)
    assert data["mode"] == "llm" and len(data["warnings"]) == 2
    assert "syntax error" in data["warnings"][0] and "go" in data["warnings"][0]
    assert "cites none of the sources" in data["warnings"][1]
    assert data["verified"] is False


def test_llm_example_the_docs_do_not_hold_is_not_returned(docs, fake_llm):
    """Issue 35: code made up from nothing in the sections is not an example from the docs;
    the documented example is kept."""
    invented = ("```python\nimport celery\n\napp = celery.Celery(broker='redis://')\n"
                "app.conf.task_acks_late = True\n```\n[1]")
    fake_llm.add("synthesis", invented)
    proc = run_cli("example", "worker pool graceful shutdown", "--docs-dir", docs, "--json")
    data = json.loads(proc.stdout)
    assert proc.returncode == 0 and data["mode"] == "sections" and data["answer"] is None
    assert data["example"] is not None and data["verified"] is False
    assert "was not returned" in data["warnings"][0]


def test_no_llm_flag_stays_offline(docs, fake_llm):
    proc = run_cli("example", "paginate a list endpoint", "--docs-dir", docs, "--json", "--no-llm")
    data = json.loads(proc.stdout)
    assert data["mode"] == "sections" and fake_llm.requests == []
    assert data["example"]["lang"] == "typescript" and "paginate" in data["example"]["symbols"]
