"""`doc4llm ask` as agents run it: a subprocess over the real search engine, with the
OpenAI- and Tavily-compatible fakes on 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from fakes_llm import (
    HOOK_ANSWER,
    OPENAI_KEY,
    TAVILY_KEY,
    FakeOpenAI,
    FakeTavily,
    evaluation,
    fake_env,
    make_docs,
    ranking,
    scenario_undocumented,
)


@pytest.fixture
def docs(tmp_path):
    return make_docs(tmp_path)


@pytest.fixture
def fakes():
    llm, tav = FakeOpenAI(), FakeTavily()
    yield llm, tav
    llm.close()
    tav.close()


def ask(docs, *args: str, llm=None, tav=None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "TAVILY_API_KEY", "OPENAI_BASE_URL")}
    env.update(fake_env(llm, tav), DOC4LLM_EMBEDDER="none")
    proc = subprocess.run([sys.executable, "-m", "doc4llm", "ask", *args, "--docs-dir", str(docs)],
                          env=env, capture_output=True, text=True, timeout=60,
                          cwd=docs.parent)
    for secret in (OPENAI_KEY, TAVILY_KEY):
        assert secret not in proc.stdout and secret not in proc.stderr
    return proc


def test_without_a_key_ask_exits_0_with_sections_and_how_to_configure(docs):
    proc = ask(docs, "how do I add a hook", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["answer"] is None
    assert data["sources"][0]["heading_path"] == ["Hooks", "Add a hook"]
    assert any("OPENAI_API_KEY" in w for w in data["metadata"]["warnings"])
    text = ask(docs, "how do I add a hook")
    assert text.returncode == 0
    assert "(no answer text" in text.stdout and "Sources (local docs):" in text.stdout
    assert "lines 9-21" in text.stdout
    assert "OPENAI_API_KEY" in text.stderr


def test_json_answer_with_trace(docs, fakes):
    llm, tav = fakes
    llm.add("reranking", ranking(0, 1))
    llm.add("synthesis", HOOK_ANSWER)
    llm.add("evaluation", evaluation("RETURN_ANSWER", confidence=91))
    proc = ask(docs, "how do I add a hook", "--json", "--trace", "-k", "2", llm=llm, tav=tav)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["answer"] == HOOK_ANSWER
    meta = data["metadata"]
    assert set(meta) >= {"confidence", "retrievalQuality", "sourcesUsed", "queryType",
                         "suggestions", "relatedQueries", "warnings", "processingTimeMs",
                         "searchGuidance", "evaluationTrace"}
    assert meta["confidence"] == 91 and meta["retrievalQuality"] == "high"
    trace = meta["evaluationTrace"]
    assert trace["finalAction"] == "returned" and trace["totals"]["llm_calls"] == 3
    assert data["sources"][0]["cited"] and data["sources"][0]["type"] == "doc"


def test_web_answer_saved_as_a_doc_set_is_found_by_the_next_search(docs, fakes):
    llm, tav = fakes
    scenario = scenario_undocumented(llm, tav)
    proc = ask(docs, scenario["question"], "--json", "--save-web", "Web_Notes@1", "-k", "2",
               llm=llm, tav=tav)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [s["ref"] for s in data["sources"] if s["type"] == "web"] == ["[W1]", "[W2]"]
    saved = data["metadata"]["savedWeb"]
    assert saved["set"] == "Web_Notes@1" and len(saved["pages"]) == 2
    assert (docs / "Web_Notes@1" / saved["pages"][0]["folder"] / "docContent.md").is_file()
    again = ask(docs, "ConfigMap settings.json pod", "--json", "--set", "Web_Notes@1")
    found = json.loads(again.stdout)["sources"]
    assert found and found[0]["doc_set"] == "Web_Notes@1"
    assert found[0]["source"] == "https://blog.example/k8s-hooks"
    for path in docs.rglob("*"):  # saved pages, set metadata, index: no key anywhere
        if path.is_file():
            data = path.read_bytes()
            assert OPENAI_KEY.encode() not in data and TAVILY_KEY.encode() not in data


def test_text_output_and_no_web_flag(docs, fakes):
    """Text mode: answer, sources, guidance, footer, trace; --no-web keeps Tavily unused
    even with TAVILY_API_KEY set, and the web search the evaluator wanted becomes guidance."""
    llm, tav = fakes
    llm.add("reranking", ranking(1, 0))
    # the reranker swaps the local top two: the section on adding a hook is then [2]
    llm.add("synthesis", "Add the hook under `hooks` in `.claude/settings.json` [2]. "
                         "The documentation does not say how to run hooks on Kubernetes.")
    llm.add("evaluation", evaluation("SEARCH_WEB", confidence=10, answers=False,
                                     completeness="minimal", queries=["acme hooks kubernetes"]))
    # a question the local search answers (an abstaining one is never synthesised from)
    proc = ask(docs, "how do I add a hook", "--no-web", "--trace", "-k", "2",
               llm=llm, tav=tav)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("Add the hook under `hooks` in `.claude/settings.json` [2]. The "
                          "documentation does not say how to run hooks on Kubernetes.\n\n"
                          "Sources (local docs):")
    # the fake reranker swaps the local top two, whichever they are: check the line format
    assert re.search(r"\[[12]\] Acme_Agent@1 / Hooks / Hooks( > [^\n]+)?  lines \d+-\d+  "
                     r"https://docs\.acme\.dev/hooks", out)
    assert "Not fully answered by the docs. Try:" in out and "  - acme hooks kubernetes" in out
    assert "-- incomplete (verified) | confidence 10 | retrieval " in out and "| type howto |" in out
    assert "evaluation SEARCH_WEB: scripted SEARCH_WEB" in out
    assert "web search is off (--no-web)" in proc.stderr
    assert tav.requests == []


@pytest.mark.parametrize("args", [["   "], ["q", "--save-web", "../evil"],
                                  ["q", "--max-iterations", "0"]])
def test_bad_input_exits_2(docs, args):
    proc = ask(docs, *args)
    assert proc.returncode == 2, proc.stderr
