"""Issue 35 end to end: the real CLI over the mdmem fixture, against loopback servers that
reply like SmolLM2-135M did in benchmarks/ask/local_llm_bench.py (index-echo rerank scores, one
constant evaluator verdict, bracketed numbers that are not citations, the prompt copied
back), and like a good model (a correct cited answer, sensible scores). The first must
claim nothing doc4llm did not check; the second must be answered, verified and reranked:
the checks do not refuse good work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from fakes_llm import FakeOpenAI, candidate_count, fake_env

ROOT = Path(__file__).resolve().parent
LEXICAL = {"DOC4LLM_EMBEDDER": "none"}  # vectors belong to the search tests
COVERED = "how do I roll back a deploy"  # lexical search: Rolling Back first, confidence > 90
UNCOVERED = "how do I back up PostgreSQL to S3"  # matches "PostgreSQL" strongly; S3 is nowhere


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mdmem") / "md_docs"
    for args in (["import", ROOT / "fixtures" / "mdmem" / "corpus", "--set", "Mdmem@dev"], ["index"]):
        proc = run_cli(*args, "--docs-dir", root, env=LEXICAL)
        assert proc.returncode == 0, proc.stderr
    return root


@pytest.fixture
def llm():
    server = FakeOpenAI()
    yield server
    server.close()


def _cli(llm: FakeOpenAI, docs: Path, *args: str):
    proc = run_cli(*args, "--docs-dir", docs, "--json", env={**fake_env(llm, None), **LEXICAL},
                   timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _local(docs: Path, query: str, k: int) -> list[list[str]]:
    proc = run_cli("search", query, "-k", str(k), "--docs-dir", docs, "--json",
                   env={"OPENAI_API_KEY": None, **LEXICAL})
    return [r["heading_path"] for r in json.loads(proc.stdout)["results"]]


# -- how SmolLM2-135M replied ------------------------------------------------------------------

def echo_scores(body: dict) -> str:
    """{"scores": [1, 2, 3, ...]}: the documents' numbers, not their relevance."""
    return json.dumps({"scores": list(range(1, candidate_count(body) + 1))})


def descending_echo(body: dict) -> str:
    n = candidate_count(body)
    return json.dumps({"scores": list(range(n, 0, -1))})


CONSTANT_VERDICT = json.dumps({  # the same verdict for every answer, contradicting itself
    "assessment": {"answersQuestion": True, "completeness": "complete", "confidence": 0,
                   "specificIssues": ["The answer is not complete."]},
    "decision": {"action": "RETURN_ANSWER", "reason": "The answer is not complete.",
                 "details": {"queries": []}},
    "contextCompression": {"establishedFacts": [], "gaps": [], "stillNeeded": [], "summary": ""}})

SMOLLM_ANSWERS = [  # replies SmolLM2-135M gave in benchmarks/ask/local_llm_bench.py (shortened)
    # list markers and a copied source header
    "1. [1] Mdmem@dev / Deployment Guide / Deployment Guide > Rolling Back (lines 29-32)\n"
    "2. [2] To do this, you need to follow the steps to do it.",
    # Python subscripts in prose and code, then the prompt's closing line
    "You can use the buffer[3] to store the data.\n\n```python\ndata = buffer[3]\n```\n\n"
    "Write the answer now, citing sources as instructed.",
    # invented code
    "To undo a bad deployment, you can use the following code:\n```python\nimport os.path\n"
    "from boto3 import Client\nclient = Client(client_key=\"YOUR_CLIENT_KEY\")\n"
    "def undo(action):\n    if action == \"undo\":\n        client.delete_request(\"SIGHUP\")\n```",
    # another section copied back under a made-up marker: nothing about the question
    "[4]\n## Kubernetes\n\nApply the manifests with kustomize:\n```bash\nkubectl apply -f "
    "/var/log/kube-system.yaml\n# This is a very simple example, but it will work for any "
    "deployment you want to run on Kubernetes.\n```",
]


@pytest.mark.parametrize("question", [COVERED, UNCOVERED])
@pytest.mark.parametrize("answer", SMOLLM_ANSWERS)
def test_replies_like_smollm2_claim_nothing_that_was_not_checked(docs, llm, question, answer):
    for _ in range(2):  # two runs, the same outcome
        llm.add("reranking", echo_scores)
        llm.add("synthesis", answer)
        data = _cli(llm, docs, "ask", question, "-k", "3", "--trace")
        meta = data["metadata"]
        assert data["answer"] is None and meta["answerStatus"] == "not_covered"
        assert meta["verified"] is False and meta["confidence"] == 0
        assert any(w.startswith("not covered") for w in meta["warnings"])
        # the ranking was the documents' numbers: ignored, said so, local order kept
        assert any(w.startswith("LLM ranking ignored, local order kept: its scores [1, 2, 3")
                   for w in meta["warnings"])
        heads = [s["heading_path"] for s in data["sources"]]
        assert heads == _local(docs, question, 6)[:3]
        top = data["sources"][0]
        read = meta["suggestions"][0]["command"]  # the section it reads is the local top-1
        assert read.endswith(f"--lines {top['lines'][0]}:{top['lines'][1]} --docs-dir {docs}")
        assert llm.calls("evaluation") == []  # nothing to judge: no claim is in the docs
    synth = llm.calls("synthesis")
    assert len(synth) == 2 and all(c["body"]["temperature"] == 0 for c in synth)


def test_a_constant_evaluator_verdict_is_ignored_and_said_so(docs, llm):
    """The answer holds (each claim in the section it cites), the evaluator says "complete,
    confidence 0, the answer is not complete": no signal, so the loop ends on its checks."""
    llm.add("reranking", echo_scores)
    llm.add("synthesis", "Run `helios migrate down --steps 1`, then redeploy the previous image "
                         "tag [1].")
    llm.add("evaluation", CONSTANT_VERDICT)
    data = _cli(llm, docs, "ask", COVERED, "-k", "3", "--trace")
    meta = data["metadata"]
    assert meta["answerStatus"] == "answered" and meta["verified"] is True
    assert meta["confidence"] <= 50  # no verdict to lend it more
    assert meta["evaluationTrace"]["finalAction"] == "evaluator_ignored"
    assert any("evaluator's verdict was ignored (it calls the answer complete with confidence 0)"
               in w for w in meta["warnings"])
    assert len(llm.calls("evaluation")) == 1  # no more rounds on a verdict that says nothing


def constant_scores(body: dict) -> str:
    return json.dumps({"scores": [5] * candidate_count(body)})


@pytest.mark.parametrize("reply", [echo_scores, descending_echo, constant_scores])
def test_search_rerank_llm_keeps_the_local_order_on_an_uninformative_reply(docs, llm, reply):
    query = "gateway graceful shutdown drain"
    llm.add("reranking", reply)
    data = _cli(llm, docs, "search", query, "-k", "5", "--rerank", "llm")
    assert data["reranked_by"] == "local"
    assert [r["heading_path"] for r in data["results"]] == _local(docs, query, 5)
    assert any(w.startswith("LLM ranking ignored, local order kept") for w in data["warnings"])


def test_a_confident_top_section_is_not_dropped_to_the_bottom_without_reason(docs, llm):
    query = "rolling back a deployment"  # Rolling Back first, confidence > 90
    n = len(_local(docs, query, 5))
    llm.add("reranking", json.dumps({"scores": [0] + [7] * (n - 1)}))
    data = _cli(llm, docs, "search", query, "-k", "5", "--rerank", "llm")
    assert data["reranked_by"] == "local" and data["results"][0]["heading_path"][-1] == "Rolling Back"
    assert any("puts the search's top section" in w for w in data["warnings"])


def test_an_abstained_search_is_not_reranked(docs, llm):
    data = _cli(llm, docs, "search", "how do I set up single sign-on with Okta", "--rerank", "llm")
    assert data["abstained"] and data["reranked_by"] == "local"
    assert llm.requests == [] and any("the search abstained" in w for w in data["warnings"])


# -- a good model --------------------------------------------------------------------------------

GOOD_ANSWER = ("To roll back, run `helios migrate down --steps 1`, then redeploy the previous "
               "image tag [1]. Migrations are backwards compatible for exactly one release, so "
               "roll back one release at a time [1].")
GOOD_VERDICT = json.dumps({
    "assessment": {"answersQuestion": True, "completeness": "complete", "confidence": 90,
                   "specificIssues": []},
    "decision": {"action": "RETURN_ANSWER", "reason": "The answer gives the rollback command "
                 "and its limit, citing the section.", "details": {"queries": []}},
    "contextCompression": {"establishedFacts": ["helios migrate down --steps 1"], "gaps": [],
                           "stillNeeded": [], "summary": "answered"}})


def sensible_scores(body: dict) -> str:
    """Rolling Back (listed first) scores 9; the others 2 and 6, alternating: a reordering
    of the rest, the answering section kept first."""
    n = candidate_count(body)
    return json.dumps({"scores": [9] + [2 if i % 2 else 6 for i in range(1, n)]})


def test_a_good_model_is_answered_verified_and_its_ranking_used(docs, llm):
    llm.add("reranking", sensible_scores)
    llm.add("synthesis", GOOD_ANSWER)
    llm.add("evaluation", GOOD_VERDICT)
    data = _cli(llm, docs, "ask", COVERED, "-k", "3", "--trace")
    meta = data["metadata"]
    assert data["answer"] == GOOD_ANSWER
    assert meta["answerStatus"] == "answered" and meta["verified"] is True
    assert meta["confidence"] == 90 and meta["citationCheck"]["supported"] == 2
    steps = meta["evaluationTrace"]["steps"]
    assert next(s for s in steps if s["kind"] == "rerank")["reranked"] is True
    assert not any("LLM" in w or "evaluator" in w for w in meta["warnings"])
    local = _local(docs, COVERED, 6)
    scores = json.loads(sensible_scores({"messages": [{"content": "[0] a\n" * len(local)}]}))["scores"]
    order = sorted(range(len(local)), key=lambda i: (-scores[i], i))
    assert [s["heading_path"] for s in data["sources"]] == [local[i] for i in order][:3]
    assert order != sorted(order)  # the model's order, not the local one
    assert data["sources"][0]["cited"] and data["sources"][0]["heading_path"][-1] == "Rolling Back"


def test_search_rerank_llm_uses_a_sensible_ranking(docs, llm):
    query = "gateway graceful shutdown drain"
    llm.add("reranking", sensible_scores)
    data = _cli(llm, docs, "search", query, "-k", "5", "--rerank", "llm")
    assert data["reranked_by"] == "llm" and not data.get("warnings")
    assert data["results"][0]["heading_path"][-1] == "Graceful Shutdown"


def test_explain_error_returns_a_good_explanation_and_refuses_an_echo(docs, llm):
    error = "OOMKilled: container exceeded its memory limit"
    good = ("**Cause** The container is OOM-killed when batch size times record size exceeds "
            "the memory limit [1].\n\n**Fix** Lower the batch size [1].")
    llm.add("synthesis", good, "You explain an error message to a coding agent from "
                               "documentation excerpts. [1]")
    first = _cli(llm, docs, "explain-error", error, "-k", "3")
    assert first["mode"] == "llm" and first["explanation"] == good and first["verified"] is True
    second = _cli(llm, docs, "explain-error", error, "-k", "3")
    assert second["mode"] == "sections" and second["explanation"] is None
    assert second["verified"] is False and "was not returned" in second["warnings"][0]
    assert "repeats the prompt's instructions" in " ".join(second["warnings"])


def test_suggested_commands_run_as_printed(docs):
    """Issue 35: the suggestions carried no --docs-dir, so they failed when one was given."""
    import shlex

    proc = run_cli("ask", "how do I back up PostgreSQL to S3", "--docs-dir", docs, "--set",
                   "Mdmem@dev", "--json", env={"OPENAI_API_KEY": None, **LEXICAL})
    commands = [s["command"] for s in json.loads(proc.stdout)["metadata"]["suggestions"]]
    assert [c.split()[1] for c in commands] == ["read", "search"]
    for command in commands:
        args = shlex.split(command)
        assert args[0] == "doc4llm" and "--docs-dir" in args
        ran = run_cli(*args[1:], env={"OPENAI_API_KEY": None, **LEXICAL})
        assert ran.returncode == 0, (command, ran.stderr)
    assert "--set Mdmem@dev" in commands[1]
