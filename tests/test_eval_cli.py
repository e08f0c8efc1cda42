"""`doc4llm eval`: the mdmem dev split, the set-aware format, and --compare regressions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from test_search_helpers import MDMEM, MDMEM_SET, NO_EMBED, make_mdmem

from doc4llm.evaluation import compare_reports, load_queries

DEV = MDMEM / "queries_dev.json"


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    return make_mdmem(tmp_path_factory.mktemp("eval") / "docs")


@pytest.fixture(scope="module")
def dev_report(docs, tmp_path_factory):
    proc = run_cli("eval", DEV, "--docs-dir", docs, "--embedder", "none", "--json", env=NO_EMBED, timeout=120)
    assert proc.returncode == 0, proc.stderr
    path = tmp_path_factory.mktemp("eval_out") / "base.json"
    path.write_text(proc.stdout, encoding="utf-8")
    return path, json.loads(proc.stdout)


def test_mdmem_dev_split_reports_per_kind_metrics(dev_report):
    _, rep = dev_report
    assert set(rep["by_kind"]) == {"paraphrase", "identifier", "no_answer"}
    for kind in ("paraphrase", "identifier"):
        m = rep["by_kind"][kind]
        for metric in ("top1", "top3", "top5", "mrr", "ndcg5", "abstained"):
            assert 0.0 <= m[metric] <= 1.0
        assert m["top1"] <= m["top3"] <= m["top5"]
    assert rep["by_kind"]["identifier"]["n"] == 10 and rep["by_kind"]["identifier"]["top1"] >= 0.9
    assert rep["by_kind"]["no_answer"]["n"] == 4 and rep["by_kind"]["no_answer"]["abstention"] >= 0.5
    o = rep["overall"]
    assert o["n"] == 48 and o["latency_ms_p50"] > 0 and 0 <= o["confidence_auc"] <= 1
    assert len(rep["queries"]) == 48


def test_text_report_and_failures(docs):
    proc = run_cli("eval", DEV, "--docs-dir", docs, "--embedder", "none", "--failures", env=NO_EMBED, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for word in ("identifier", "paraphrase", "no_answer", "top1", "mrr", "ndcg5", "confidence AUC"):
        assert word in out
    assert "  x [" in out  # the dev split is not solved perfectly without vectors


def test_set_aware_format(docs, tmp_path):
    queries = [
        {"query": "HELIOS_WAL_SEGMENT_MB", "kind": "identifier",
         "expected": [{"set": MDMEM_SET, "page": "Helios Configuration Reference",
                       "section": "Helios Configuration Reference > Environment Variables > Storage"}]},
        {"query": "--drain-seconds", "kind": "identifier",
         "expected": [{"set": MDMEM_SET, "page": "Orbit Gateway", "section": "Configuration > Command Line Flags"}]},
        {"query": "ENOSPC", "kind": "identifier",
         "expected": [{"set": "wrong@set", "page": "Ingest Pipeline Architecture",
                       "section": "Ingest Pipeline Architecture > Failure Modes"}]},
        {"query": "HELIOS_REPLICATION_FACTOR", "kind": "no_answer"},
    ]
    path = tmp_path / "q.json"
    path.write_text(json.dumps({"queries": queries}), encoding="utf-8")
    assert [q["kind"] for q in load_queries(path)] == ["identifier"] * 3 + ["no_answer"]
    proc = run_cli("eval", path, "--docs-dir", docs, "--embedder", "none", "--json", env=NO_EMBED)
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    ident = rep["by_kind"]["identifier"]
    assert ident["n"] == 3
    assert ident["top1"] == pytest.approx(2 / 3, abs=0.01)  # the wrong set never matches
    assert rep["by_kind"]["no_answer"] == {"n": 1, "abstention": 1.0}
    path.write_text(json.dumps(queries), encoding="utf-8")  # a bare list works too
    assert len(load_queries(path)) == 4


def test_compare_exits_1_on_regression_and_0_otherwise(docs, dev_report, tmp_path):
    base_path, base = dev_report
    same = run_cli("eval", DEV, "--docs-dir", docs, "--embedder", "none", "--compare", base_path, env=NO_EMBED,
                   timeout=120)
    assert same.returncode == 0, same.stderr
    assert "regression" not in same.stderr
    better = json.loads(json.dumps(base))
    better["by_kind"]["identifier"]["top1"] = min(1.0, base["by_kind"]["identifier"]["top1"]) + 0.5
    better["by_kind"]["no_answer"]["abstention"] = 1.5
    high = tmp_path / "high.json"
    high.write_text(json.dumps(better), encoding="utf-8")
    worse = run_cli("eval", DEV, "--docs-dir", docs, "--embedder", "none", "--compare", high, env=NO_EMBED,
                    timeout=120)
    assert worse.returncode == 1
    assert "regression: identifier top1" in worse.stderr and "no_answer abstention" in worse.stderr
    assert "Traceback" not in worse.stderr


def test_compare_reports_tolerance():
    base = {"by_kind": {"a": {"top1": 0.80, "mrr": 0.9}, "gone": {"top1": 1.0}}}
    new = {"by_kind": {"a": {"top1": 0.79, "mrr": 0.85}}}
    assert compare_reports(base, new, 0.02) == ["a mrr 0.9 -> 0.85"]
    assert compare_reports(base, new, 0.1) == []


@pytest.mark.parametrize("content", ["not json", '[{"q": 1}]', '{"queries": [{"query": "x", "expected": [{"set": "a@1"}]}]}',
                                     "[]", '"just a string"'],
                         ids=["not-json", "no-query", "no-section", "empty", "scalar"])
def test_a_malformed_query_file_is_an_input_error(docs, tmp_path, content):
    path = tmp_path / "q.json"
    path.write_text(content, encoding="utf-8")
    proc = run_cli("eval", path, "--docs-dir", docs, "--embedder", "none", env=NO_EMBED)
    assert proc.returncode == 2, proc.stderr
    assert str(path) in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"overall": {}}'])
def test_a_bad_baseline_fails_before_the_run(docs, tmp_path, content):
    base = tmp_path / "base.json"
    base.write_text(content, encoding="utf-8")
    proc = run_cli("eval", DEV, "--docs-dir", docs, "--embedder", "none", "--compare", base, env=NO_EMBED)
    assert proc.returncode == 2, proc.stderr
    assert "baseline" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""  # failed before scoring anything


def test_corpus_aware_file_reports_per_corpus_and_finds_sets_by_name_or_origin(tmp_path):
    """realdocs-dev's format: labels are file + own heading per corpus. A corpus is the set
    named `<corpus>@...`, or the set imported from a folder of the corpus's name."""
    from pathlib import Path

    fixtures = Path(__file__).parent / "fixtures" / "realworld"
    docs = tmp_path / "md_docs"
    for folder, set_name in (("starlette", "Starlette@test"), ("npm", "NodePM@9")):
        r = run_cli("import", fixtures / folder, "--set", set_name, "--docs-dir", docs)
        assert r.returncode == 0, r.stderr
    qfile = tmp_path / "queries.json"
    qfile.write_text(json.dumps({
        "corpora": {"starlette": "starlette", "npm": "npm"},
        "queries": [
            {"id": "s1", "corpus": "starlette", "kind": "identifier", "query": "url_path_for",
             "expected": [{"file": "routing.md", "heading": "Reverse URL lookups"}]},
            {"id": "s2", "corpus": "starlette", "kind": "concept", "query": "what is Starlette's routing table",
             "expected": [{"file": "routing.md", "heading": None}]},
            {"id": "n1", "corpus": "npm", "kind": "identifier", "query": "npm cache verify",
             "expected": [{"file": "npm-cache.md", "heading": "Description"}],
             "also_valid": [{"file": "npm-cache.md", "heading": "Synopsis"}]},
            {"id": "n2", "corpus": "npm", "kind": "no_answer", "query": "HELIOS_REPLICATION_FACTOR", "expected": []},
        ]}), encoding="utf-8")
    proc = run_cli("eval", qfile, "--docs-dir", docs, "--embedder", "none", "--json", env=NO_EMBED, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    assert set(rep["by_corpus"]) == {"starlette", "npm"}
    rows = {r["id"]: r for r in rep["queries"]}
    assert rows["s1"]["top1"] and rows["n1"]["top3"], rows  # NodePM@9 found by its import folder
    assert rows["s2"]["top3"], rows["s2"]  # heading null = the page's intro
    assert rows["n2"]["abstained"]
    assert rep["by_corpus"]["npm"]["no_answer_abstention"] == 1.0


def test_a_result_counts_for_the_identical_sections_it_collapsed():
    """The search returns one result for a section repeated word for word on several
    pages (`also_in`); a label naming any of those copies is answered by it."""
    from doc4llm.evaluation import Label, _grade

    result = {"heading_path": ["npx", "npx vs npm exec"], "doc_set": "npm@11", "page": "npx",
              "source": "commands/npx.md",
              "also_in": [{"doc_set": "npm@11", "page": "npm-exec", "source": "commands/npm-exec.md",
                           "heading_path": ["npm-exec", "npx vs npm exec"], "lines": [44, 80]}]}
    want = Label("`npx` vs `npm exec`", 2, file="commands/npm-exec.md", heading_only=True)
    other = Label("`npx` vs `npm exec`", 2, file="commands/other.md", heading_only=True)
    assert _grade([result], [want]) == [2]
    assert _grade([result], [other]) == [0]


def test_a_label_can_name_a_section_of_another_corpus(tmp_path):
    """Docs overlap (Fastify's "Log Redaction" answers a pino question): a label with its
    own `corpus` is looked up there, the others in the query's corpus."""
    from doc4llm.evaluation import bind_corpora, load_queries

    fixtures = Path(__file__).parent / "fixtures" / "realworld"
    docs = tmp_path / "md_docs"
    for folder, set_name in (("fastify", "fastify@5"), ("pino", "pino@10")):
        assert run_cli("import", fixtures / folder, "--set", set_name, "--docs-dir", docs).returncode == 0
    qfile = tmp_path / "q.json"
    qfile.write_text(json.dumps({"corpora": {"fastify": "fastify", "pino": "pino"}, "queries": [
        {"id": "f1", "corpus": "fastify", "kind": "identifier", "query": "trustProxy",
         "expected": [{"file": "Server.md", "heading": "`trustProxy`"}]},
        {"id": "p1", "corpus": "pino", "kind": "howto", "query": "mixin",
         "expected": [{"file": "api.md", "heading": "`mixin` (Function):"}],
         "also_valid": [{"file": "Server.md", "heading": "`trustProxy`", "corpus": "fastify"}]}]}))
    queries = load_queries(qfile)
    bind_corpora(queries, docs)
    own, other = queries[1]["labels"]
    assert own.set_name == "pino@10" and other.set_name == "fastify@5"
    hit = {"heading_path": ["Server", "Factory", "trustProxy"], "doc_set": "fastify@5", "page": "Server",
           "source": "Server.md"}
    assert other.matches(hit) and not own.matches(hit)
