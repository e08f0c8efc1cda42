"""The parts of `ask` on their own: config precedence, the LLM reranker, web search
failures and saving, evaluator parsing, and the checks on answers and section text."""

from __future__ import annotations

import dataclasses

import fakes_llm
import pytest
from fakes_llm import (
    HOOK_ANSWER,
    MODELS,
    evaluation,
    ranking,
    run_ask_in_process,
    stub_search,
)

from doc4llm.answer.config import load_answer_config
from doc4llm.answer.evaluator import parse_evaluation
from doc4llm.answer.llm import LLMClient
from doc4llm.answer.rerank_llm import llm_rerank
from doc4llm.answer.save_web import save_web_results
from doc4llm.answer.sources import CONTINUES, SourceBook, clip_outside_fences
from doc4llm.answer.synthesis import check_answer
from doc4llm.corpus.model import list_sets
from doc4llm.errors import InputError

docs = fakes_llm.docs_fixture  # shared fixtures: a docs dir, fakes wired into the env
fakes = fakes_llm.fakes_env_fixture


# -- config ---------------------------------------------------------------------------------

def test_config_precedence_env_over_yaml_over_defaults(tmp_path, monkeypatch):
    for var in ("DOC4LLM_SYNTHESIS_MODEL", "DOC4LLM_EVALUATION_MODEL", "OPENAI_BASE_URL",
                "DOC4LLM_MAX_ITERATIONS"):
        monkeypatch.delenv(var, raising=False)
    cfg_file = tmp_path / "doc4llm.yaml"
    cfg_file.write_text("answer:\n  models:\n    synthesis: yaml-synth\n    evaluation: yaml-eval\n"
                        "  max_iterations: 5\n  timeout_s: 9\n")
    monkeypatch.setenv("DOC4LLM_EVALUATION_MODEL", "env-eval")
    config = load_answer_config(cfg_file)
    assert config.synthesis_model == "yaml-synth"
    assert config.evaluation_model == "env-eval"
    assert config.reranking_model == "gpt-4o-mini"
    assert config.max_iterations == 5 and config.timeout_s == 9.0


@pytest.mark.parametrize("text", ["answer:\n  models:\n    planner: x\n",
                                  "answer:\n  max_iteratons: 2\n",
                                  "answer:\n  max_iterations: lots\n"])
def test_config_mistakes_are_input_errors(tmp_path, text):
    cfg_file = tmp_path / "doc4llm.yaml"
    cfg_file.write_text(text)
    with pytest.raises(InputError):
        load_answer_config(cfg_file)


# -- LLM reranker -----------------------------------------------------------------------------

def _client(docs) -> LLMClient:
    config = dataclasses.replace(load_answer_config(docs / "none.yaml"), max_retries=0)
    return LLMClient.from_env(config)


def test_llm_rerank_applies_the_model_order_and_keeps_every_result(docs, fakes):
    llm, _ = fakes
    results = stub_search(docs)("hook timeout seconds")["results"]
    assert len(results) == 3
    llm.add("reranking", '{"scores": [6, 0, 9]}')
    ranked = llm_rerank(_client(docs), "hook timeout seconds", "howto", results)
    assert [r["heading_path"] for r in ranked] == [results[2]["heading_path"],
                                                    results[0]["heading_path"],
                                                    results[1]["heading_path"]]
    assert [r["rank"] for r in ranked] == [1, 2, 3]
    assert all("llm" in r["found_by"] for r in ranked)  # the model ranked every one
    request = llm.calls("reranking")[0]["body"]
    assert request["temperature"] == 0
    assert request["response_format"]["json_schema"]["schema"]["properties"]["scores"]["minItems"] == 3
    prompt = request["messages"][1]["content"]
    assert "step-by-step" in prompt and "[2] Acme_Agent@1 / Hooks > Hook events" in prompt


def test_llm_rerank_preview_length_follows_the_query_type(docs, fakes):
    llm, _ = fakes
    results = stub_search(docs)("hook timeout seconds")["results"]
    long_text = "x" * 5000
    llm.add("reranking", ranking(0), ranking(0))
    client = _client(docs)
    llm_rerank(client, "what is a hook", "concept", results, read_text=lambda r: long_text)
    llm_rerank(client, "hook", "general", results, read_text=lambda r: long_text)
    concept, general = (c["body"]["messages"][1]["content"] for c in llm.calls("reranking"))
    assert "x" * 3000 in concept and "x" * 3001 not in concept
    assert "EXPLAIN" in concept
    assert "x" * 1500 in general and "x" * 1501 not in general


@pytest.mark.parametrize("reply", ["I think the first one", "[9, 12]", {"status": 500},
                                   "The best is [2], then maybe [0].", "[2, 0]",
                                   '{"scores": [3, 4]}', {"raw": {"choices": []}}])
def test_llm_rerank_keeps_the_local_order_on_any_error(docs, fakes, reply):
    llm, _ = fakes
    results = stub_search(docs)("hook timeout seconds")["results"]
    llm.add("reranking", reply)
    warnings: list[str] = []
    ranked = llm_rerank(_client(docs), "q", "howto", results, warnings=warnings)
    assert ranked == results
    assert warnings and "local order kept" in warnings[0]


# -- web search --------------------------------------------------------------------------------

def test_web_search_failure_is_a_warning_not_a_crash(docs, fakes):
    llm, tav = fakes
    llm.add("reranking", ranking(0))
    llm.add("synthesis", "The documentation does not cover this.")
    llm.add("evaluation", evaluation("SEARCH_WEB", confidence=10, answers=False,
                                     completeness="minimal", queries=["acme kubernetes"]),
            evaluation("RETURN_ANSWER", confidence=10, answers=False, completeness="minimal",
                       still_needed=["kubernetes deployment steps"]))
    tav.add({"status": 500})
    response = run_ask_in_process(docs, "how do I run hooks on kubernetes")
    meta = response["metadata"]
    assert any("web search failed" in w for w in meta["warnings"])
    assert response["answer"] == "The documentation does not cover this."
    assert "kubernetes deployment steps" in meta["searchGuidance"]["missing"]


def test_without_a_web_key_the_wanted_web_queries_become_guidance(docs, fakes, monkeypatch):
    monkeypatch.delenv("TAVILY_API_KEY")
    llm, tav = fakes
    llm.add("reranking", ranking(0))
    llm.add("synthesis", "The documentation does not cover this.")
    llm.add("evaluation", evaluation("SEARCH_WEB", confidence=10, answers=False,
                                     completeness="minimal", queries=["acme hooks kubernetes"]))
    response = run_ask_in_process(docs, "how do I run hooks on kubernetes")
    meta = response["metadata"]
    assert meta["evaluationTrace"]["finalAction"] == "web_unavailable"
    assert "acme hooks kubernetes" in [s["query"] for s in meta["searchGuidance"]["suggested_searches"]]
    assert any("TAVILY_API_KEY" in w for w in meta["warnings"])
    assert tav.requests == []
    prompt = llm.calls("evaluation")[0]["body"]["messages"][1]["content"]
    assert '"webSearchesRemaining": 0' in prompt and "SEARCH_WEB" not in prompt.split(
        "Available actions")[1]


def test_saved_web_results_become_a_searchable_doc_set(docs, fakes):
    llm, tav = fakes
    from fakes_llm import scenario_undocumented

    scenario = scenario_undocumented(llm, tav)
    from doc4llm.answer.loop import AskDeps, run_ask
    from doc4llm.answer.websearch import WebSearch

    config = load_answer_config(docs / "none.yaml")
    out = run_ask(scenario["question"], AskDeps(
        search_fn=stub_search(docs), docs_dir=docs, llm=LLMClient.from_env(config),
        web=WebSearch.from_env(config), config=config, k=2))
    written = save_web_results(docs, "Web_Notes@1", out.book.web, scenario["question"])
    assert [w["status"] for w in written] == ["created", "created"]
    web_set = [s for s in list_sets(docs) if s.name == "Web_Notes@1"][0]
    assert web_set.metadata["pages"]["web:https://blog.example/k8s-hooks"]["origin"] == "web"
    page = web_set.page(written[0]["folder"])
    assert "ConfigMap" in page.text and "https://blog.example/k8s-hooks" in page.text
    again = save_web_results(docs, "Web_Notes@1", out.book.web, scenario["question"])
    assert [w["status"] for w in again] == ["unchanged", "unchanged"]


# -- evaluator parsing, answer checks, section clipping -----------------------------------------

def test_evaluator_json_in_a_code_fence_is_accepted():
    ev = parse_evaluation("```json\n" + evaluation("REFINE_ANSWER", focus=["cite"]) + "\n```")
    assert ev.action == "REFINE_ANSWER" and ev.focus_areas == ["cite"]


@pytest.mark.parametrize("reply,message", [
    ("[1, 2]", "JSON object"),
    ('{"assessment": {"confidence": 50}, "decision": {"action": "QUERY_MORE_DOCS"}}',
     "queries"),
    ('{"assessment": {"confidence": "high"}, "decision": {"action": "RETURN_ANSWER"}}',
     "confidence"),
])
def test_evaluator_json_errors_say_what_is_wrong(reply, message):
    with pytest.raises(ValueError, match=message):
        parse_evaluation(reply)


def test_answer_checks_close_open_fences_and_flag_unknown_citations():
    book = SourceBook()
    book.add_doc({"doc_set": "A@1", "page": "P", "lines": [1, 3]}, "text", "q")
    checked = check_answer("Do this [1] and that [4]:\n```python\nprint(1)\n", book)
    assert checked.text.endswith("\n```") and checked.cited == ["1"]
    assert any("left a code block open" in w for w in checked.warnings)
    assert any("[4]" in w for w in checked.warnings)


def test_broken_code_in_an_answer_is_flagged_with_its_line():
    checked = check_answer("Use this [1]:\n```python\ndef f(:\n    pass\n```", SourceBook())
    assert any("python" in w and "syntax error at line 3" in w for w in checked.warnings)
    book = SourceBook()
    book.add_doc({"doc_set": "A@1", "page": "P", "lines": [1, 3]}, "text", "q")
    fine = check_answer("```json\n{\"hooks\": {}}\n```\nAs documented [1].", book)
    assert fine.warnings == []


def test_section_text_is_clipped_between_code_blocks_only():
    lines = ["intro " * 5] + ["```python"] + [f"line_{i} = {i}" for i in range(40)] + ["```",
                                                                                      "after"]
    text = clip_outside_fences(lines, char_budget=200)  # the block runs past the budget
    assert text.count("```") == 2 and "line_39 = 39" in text and "after" not in text
    assert text.endswith(CONTINUES)
    huge = clip_outside_fences(lines, char_budget=50)  # 4x the budget: closed with a marker
    assert huge.count("```") == 2 and "line_39" not in huge and huge.endswith(CONTINUES)
    assert clip_outside_fences(["a", "b"], 100) == "a\nb"


def test_models_are_chosen_per_role(docs, fakes):
    llm, _ = fakes
    llm.add("reranking", ranking(0, 1))
    llm.add("synthesis", HOOK_ANSWER)
    llm.add("evaluation", evaluation())
    run_ask_in_process(docs, "how do I add a hook")
    assert [r["body"]["model"] for r in llm.requests] == [
        MODELS["reranking"], MODELS["synthesis"], MODELS["evaluation"]]
