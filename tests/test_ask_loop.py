"""The evaluation loop end to end over loopback fakes, through the real openai and
tavily-python clients: one test per scenario of issue 6."""

from __future__ import annotations

import json

import fakes_llm
from fakes_llm import (
    HOOK_ANSWER,
    OPENAI_KEY,
    SCENARIOS,
    TAVILY_KEY,
    evaluation,
    fake_env,
    ranking,
    run_ask_in_process,
)

from doc4llm.answer.loop import UNJUDGED_CAP

docs = fakes_llm.docs_fixture  # shared fixtures: a docs dir, fakes wired into the env
fakes = fakes_llm.fakes_env_fixture


def _run(docs, fakes, name):
    llm, tav = fakes
    scenario = SCENARIOS[name](llm, tav)
    response = run_ask_in_process(docs, scenario["question"], **scenario.get("config", {}))
    assert not any(llm.script.values()), "every scripted reply must be consumed"
    return response, response["metadata"]["evaluationTrace"]


def _kinds(trace):
    return [(s["kind"], s.get("decision")) for s in trace["steps"]]


def test_well_documented_returns_after_one_evaluation(docs, fakes):
    response, trace = _run(docs, fakes, "well documented")
    assert _kinds(trace) == [("search", None), ("rerank", None), ("synthesis", None),
                             ("evaluation", "RETURN_ANSWER")]
    assert trace["finalAction"] == "returned"
    assert trace["totals"]["llm_calls"] == 3 and trace["totals"]["total_tokens"] > 0
    assert response["answer"].startswith("Add the hook")
    meta = response["metadata"]
    assert meta["confidence"] == 90 and meta["queryType"] == "howto"
    assert meta["searchGuidance"] is None and meta["warnings"] == []
    first = response["sources"][0]
    assert first["ref"] == "[1]" and first["cited"] and first["type"] == "doc"
    assert first["heading_path"] == ["Hooks", "Add a hook"]
    assert first["url"] == "https://docs.acme.dev/hooks#add-a-hook"
    assert first["doc_set"] == "Acme_Agent@1" and first["lines"][0] < first["lines"][1]
    assert meta["sourcesUsed"] == 1
    assert meta["suggestions"][0]["command"].startswith("doc4llm read Hooks --set Acme_Agent@1")


def test_synthesis_prompt_carries_the_numbered_section_text(docs, fakes):
    llm, _ = fakes
    _run(docs, fakes, "well documented")
    prompt = llm.calls("synthesis")[0]["body"]["messages"][1]["content"]
    assert "[1] Acme_Agent@1 / Hooks / Hooks > Add a hook (lines 9-21)" in prompt
    assert '"PreToolUse": [{"matcher": "Bash", "command": "echo checked"}]' in prompt
    assert "URL: https://docs.acme.dev/hooks#add-a-hook" in prompt
    eval_request = llm.calls("evaluation")[0]["body"]
    fmt = eval_request["response_format"]
    assert fmt["type"] == "json_schema" and eval_request["temperature"] == 0
    actions = fmt["json_schema"]["schema"]["properties"]["decision"]["properties"]["action"]["enum"]
    assert actions == ["RETURN_ANSWER", "QUERY_MORE_DOCS", "SEARCH_WEB", "REFINE_ANSWER"]


def test_partial_answer_queries_more_docs_and_cites_the_new_section(docs, fakes):
    response, trace = _run(docs, fakes, "partial (more docs)")
    assert _kinds(trace) == [
        ("search", None), ("rerank", None), ("synthesis", None),
        ("evaluation", "QUERY_MORE_DOCS"), ("doc_query", None), ("synthesis", None),
        ("evaluation", "RETURN_ANSWER")]
    assert trace["totals"]["doc_queries"] == 1
    decision = trace["steps"][3]
    assert decision["queries"] == ["hook timeout seconds"]
    assert decision["context"]["stillNeeded"] == ["hook timeout"]
    doc_query = trace["steps"][4]
    assert doc_query["query"] == "hook timeout seconds" and doc_query["new_sections"] >= 1
    third = response["sources"][2]
    assert third["heading_path"] == ["Settings", "Timeouts"] and third["cited"]
    assert third["query"] == "hook timeout seconds"
    # the evaluator's compressed context reaches the next evaluation
    llm, _ = fakes
    second_eval = llm.calls("evaluation")[1]["body"]["messages"][1]["content"]
    assert "hooks live in settings.json" in second_eval and "added 1 new sections" in second_eval


def test_undocumented_question_searches_the_web_and_cites_it(docs, fakes):
    response, trace = _run(docs, fakes, "undocumented (web)")
    assert ("web_search", None) in _kinds(trace) and trace["totals"]["web_searches"] == 1
    web = [s for s in response["sources"] if s["type"] == "web"]
    assert [w["ref"] for w in web] == ["[W1]", "[W2]"]
    assert web[0]["url"] == "https://blog.example/k8s-hooks" and web[0]["cited"]
    assert "[W1]" in response["answer"]
    _, tav = fakes
    request = tav.requests[0]
    assert request["body"]["query"] == "acme agent hooks kubernetes"
    assert request["headers"]["authorization"] == f"Bearer {TAVILY_KEY}"
    llm, _ = fakes
    second_synth = llm.calls("synthesis")[1]["body"]["messages"][1]["content"]
    assert "[W1] WEB: Running Acme hooks in Kubernetes" in second_synth


def test_no_local_results_go_straight_to_the_web(docs, fakes):
    llm, tav = fakes
    tav.add([{"title": "Zig build", "url": "https://ziglang.org/build", "content": "zig build",
              "score": 0.8}])
    llm.add("synthesis", "Use `zig build` [W1].")
    llm.add("evaluation", evaluation("RETURN_ANSWER", confidence=70))
    response = run_ask_in_process(docs, "zig compiler flags")
    trace = response["metadata"]["evaluationTrace"]
    assert _kinds(trace)[:2] == [("search", None), ("web_search", None)]
    assert trace["steps"][1]["reason"] == "the local docs do not cover this question"
    assert response["metadata"]["retrievalQuality"] == "none"
    assert response["sources"][0]["ref"] == "[W1]"


def test_malformed_evaluator_json_gets_one_repair(docs, fakes):
    response, trace = _run(docs, fakes, "malformed evaluator JSON")
    evaluation_step = trace["steps"][3]
    assert evaluation_step["decision"] == "RETURN_ANSWER" and evaluation_step["repaired"] is True
    assert evaluation_step["llm_calls"] == 2
    llm, _ = fakes
    repair = llm.calls("evaluation")[1]["body"]["messages"]
    assert repair[-2]["role"] == "assistant" and "not JSON" in repair[-1]["content"]


def test_twice_malformed_evaluator_returns_the_answer_with_a_warning(docs, fakes):
    llm, _ = fakes
    llm.add("reranking", ranking(0, 1))
    llm.add("synthesis", HOOK_ANSWER)
    llm.add("evaluation", "nope", json.dumps({"assessment": {}, "decision": {"action": "MAYBE"}}))
    response = run_ask_in_process(docs, "how do I add a hook")
    trace = response["metadata"]["evaluationTrace"]
    assert trace["finalAction"] == "evaluation_failed"
    assert response["answer"] == HOOK_ANSWER
    assert any("did not judge" in w and "after one repair" in w
               for w in response["metadata"]["warnings"])
    # the citation check still holds: verified, but no verdict, so the confidence is capped
    assert response["metadata"]["verified"] is True
    assert response["metadata"]["confidence"] <= UNJUDGED_CAP


def test_429_then_success_is_retried_and_recorded(docs, fakes):
    response, trace = _run(docs, fakes, "429 then success")
    assert response["answer"] == HOOK_ANSWER
    synth = trace["steps"][2]
    assert synth["kind"] == "synthesis" and synth["retries"][0]["wait_s"] == 0.05
    assert "HTTP 429" in synth["retries"][0]["error"]
    assert trace["totals"]["retries"] == 1
    call = [c for c in trace["llmCalls"] if c["role"] == "synthesis"][0]
    assert call["attempts"] == 2 and call["ok"]


def test_500s_exhaust_retries_and_ask_still_returns_the_sections(docs, fakes):
    llm, _ = fakes
    llm.add("reranking", ranking(0, 1))
    llm.add("synthesis", *[{"status": 500}] * 3)
    response = run_ask_in_process(docs, "how do I add a hook", max_retries=2)
    trace = response["metadata"]["evaluationTrace"]
    assert response["answer"] is None and trace["finalAction"] == "llm_error"
    assert len(llm.calls("synthesis")) == 3
    assert any("failed after 3 attempts" in w and "HTTP 500" in w
               for w in response["metadata"]["warnings"])
    assert response["sources"][0]["heading_path"] == ["Hooks", "Add a hook"]


def test_evaluator_timeout_keeps_the_answer(docs, fakes):
    llm, _ = fakes
    llm.add("reranking", ranking(0, 1))
    llm.add("synthesis", HOOK_ANSWER)
    llm.add("evaluation", {"delay": 1.5, "content": evaluation()})
    response = run_ask_in_process(docs, "how do I add a hook", timeout_s=0.3, max_retries=0)
    assert response["answer"] == HOOK_ANSWER
    assert response["metadata"]["evaluationTrace"]["finalAction"] == "evaluation_failed"
    assert any("timed out after 0.3 s (not retried" in w for w in response["metadata"]["warnings"])
    assert len(llm.calls("evaluation")) == 1  # no retry queued behind the slow request


def test_iteration_cap_always_terminates(docs, fakes):
    response, trace = _run(docs, fakes, "iteration cap (2)")
    assert trace["finalAction"] == "max_iterations"
    assert [s["kind"] for s in trace["steps"]].count("evaluation") == 2
    assert any("stopped after 2 evaluations" in w for w in response["metadata"]["warnings"])
    assert response["metadata"]["searchGuidance"] is not None  # judged incomplete: say so


def test_confident_evaluator_returns_at_once_even_when_it_would_refine(docs, fakes):
    llm, _ = fakes
    llm.add("reranking", ranking(0, 1))
    llm.add("synthesis", HOOK_ANSWER)
    llm.add("evaluation", evaluation("REFINE_ANSWER", confidence=95, focus=["style"]))
    response = run_ask_in_process(docs, "how do I add a hook")
    assert response["metadata"]["evaluationTrace"]["finalAction"] == "confident"
    assert len(llm.calls("synthesis")) == 1


def test_doc_query_budget_is_enforced(docs, fakes):
    llm, _ = fakes
    llm.add("reranking", ranking(0, 1))
    llm.add("synthesis", HOOK_ANSWER)
    ask_more = evaluation("QUERY_MORE_DOCS", confidence=30, answers=False,
                          completeness="partial", queries=["memory", "claude md", "settings"])
    llm.add("evaluation", ask_more, ask_more)
    llm.add("synthesis", HOOK_ANSWER + " [3]")
    response = run_ask_in_process(docs, "how do I add a hook", max_doc_queries=2,
                                  max_iterations=3)
    trace = response["metadata"]["evaluationTrace"]
    assert trace["totals"]["doc_queries"] == 2
    assert trace["finalAction"] == "doc_budget_spent"
    llm_second_eval = llm.calls("evaluation")[1]["body"]["messages"][1]["content"]
    assert '"docQueriesRemaining": 0' in llm_second_eval


def test_no_key_at_all_returns_sections_guidance_and_how_to_configure(docs, monkeypatch):
    for key, value in fake_env(None, None).items():
        monkeypatch.setenv(key, value)
    for var in ("OPENAI_API_KEY", "TAVILY_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    response = run_ask_in_process(docs, "how do I add a hook")
    meta = response["metadata"]
    assert response["answer"] is None
    assert meta["evaluationTrace"]["finalAction"] == "no_model"
    assert meta["evaluationTrace"]["totals"]["llm_calls"] == 0
    assert any("OPENAI_API_KEY" in w and "OPENAI_BASE_URL" in w for w in meta["warnings"])
    assert response["sources"][0]["heading_path"] == ["Hooks", "Add a hook"]
    assert meta["searchGuidance"] is None  # the search was sure: the sections are the answer
    unknown = run_ask_in_process(docs, "zig compiler flags")
    assert unknown["answer"] is None and unknown["sources"] == []
    guidance = unknown["metadata"]["searchGuidance"]
    assert guidance["suggested_searches"][0]["query"] == "zig compiler flags documentation"
    assert unknown["metadata"]["retrievalQuality"] == "none"


def test_keys_never_appear_in_the_response(docs, fakes):
    llm, _ = fakes
    llm.add("reranking", ranking(0, 1))
    # a server that echoes the key in its error message, as some do on 401
    llm.add("synthesis", {"status": 401, "message": f"Incorrect API key provided: {OPENAI_KEY}"})
    response = run_ask_in_process(docs, "how do I add a hook")
    text = json.dumps(response)
    assert OPENAI_KEY not in text and TAVILY_KEY not in text
    assert any("***" in w for w in response["metadata"]["warnings"])
    assert llm.calls("synthesis")[0]["headers"]["authorization"] == f"Bearer {OPENAI_KEY}"
