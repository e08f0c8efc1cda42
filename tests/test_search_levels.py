"""Each strategy alone on real files, found_by tracing, identifier queries, dedupe."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli
from test_search_helpers import (
    CLAUDE,
    MDMEM_SET,
    NO_EMBED,
    OPENCODE,
    lines_of,
    make_mdmem,
    make_upstream,
    search_json,
)

from doc4llm.errors import InputError
from doc4llm.search.engine import Searcher

LEXICAL = ["auto", "cascade", "L1", "L2", "L3.1", "L3.2", "bm25"]


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    d = tmp_path_factory.mktemp("levels") / "docs"
    make_mdmem(d)
    make_upstream(d)
    return d


@pytest.fixture(scope="module")
def searcher(docs):
    s = Searcher(docs, embedder="none", quiet=True)
    yield s
    s.close()


@pytest.mark.parametrize("strategy", ["auto", "cascade", "L1", "L2", "L3.2", "bm25"])
def test_each_lexical_strategy_alone_finds_the_section(searcher, strategy):
    res = searcher.search("deduplicator stage", sets=[MDMEM_SET], k=3, strategy=strategy)
    assert res["strategy"] == strategy
    top = res["results"][0]
    if strategy == "L3.2":  # content grep ranks by body text, where "Overview" also names the stage
        assert "Deduplicator" in [r["heading_path"][-1] for r in res["results"]]
    else:
        assert top["heading_path"][-1] == "Deduplicator"
    if strategy not in ("auto", "cascade"):
        assert all(r["found_by"][0] == strategy for r in res["results"])
    levels_run = {t["level"] for t in res["trace"]}
    if strategy == "cascade":
        assert {"L1", "L2", "L3.2"} <= levels_run
        chosen = [t["level"] for t in res["trace"] if t.get("chosen")]
        assert len(chosen) == 1 and top["found_by"] == chosen
    elif strategy == "auto":
        assert {"bm25", "L2", "L3.2", "L1"} <= levels_run
        assert len(top["found_by"]) >= 2  # several signals agree


def test_cascade_falls_through_to_content_grep(searcher):
    """A word only in body text (no heading has it) is answered by L3.2."""
    res = searcher.search("goroutines", sets=[MDMEM_SET], k=3, strategy="cascade")
    assert res["results"] and res["results"][0]["found_by"] == ["L3.2"]
    assert any("goroutines" in ln for ln in lines_of(res["results"][0]))


def test_l31_restricts_to_the_set_the_query_names(searcher):
    for query, wanted in (("opencode troubleshooting", OPENCODE), ("claude troubleshooting", CLAUDE)):
        res = searcher.search(query, k=5, strategy="L3.1")
        assert res["analysis"]["domain_sets"] == [wanted]
        assert res["results"], query
        assert {r["doc_set"] for r in res["results"]} == {wanted}
        assert all(r["found_by"] == ["L3.1"] for r in res["results"])
        assert res["results"][0]["heading_path"][0] == "Troubleshooting"


def test_l31_without_a_domain_word_finds_nothing_rather_than_everything(searcher):
    res = searcher.search("troubleshooting", k=5, strategy="L3.1")
    assert res["analysis"]["domain_sets"] == []
    assert res["results"] == []


def test_auto_reports_the_domain_level(searcher):
    res = searcher.search("opencode plugins", k=3)
    assert res["analysis"]["domain_sets"] == [OPENCODE]
    assert res["results"][0]["doc_set"] == OPENCODE
    assert "L3.1" in res["results"][0]["found_by"]


@pytest.mark.parametrize("word", ["goroutines", "ENOSPC", "SIGHUP", "PostgreSQL"])
def test_l32_traces_content_hits_back_to_the_enclosing_section(searcher, docs, word):
    res = searcher.search(word, sets=[MDMEM_SET], k=3, strategy="L3.2")
    assert res["results"], word
    for r in res["results"][:1]:
        assert r["found_by"] == ["L3.2"]
        lines = lines_of(r)
        assert any(word.lower() in ln.lower() for ln in lines)
        heading = r["heading_path"][-1]
        if heading != "[Overview / Preamble]":
            assert lines[0].lstrip("#").strip() == heading


def test_found_by_names_real_levels_in_auto(searcher):
    allowed = {"L1", "L2", "L3.1", "L3.2", "bm25", "vector", "passage", "head", "symbol", "exact", "name", "llm"}
    for q in ("HELIOS_WAL_SEGMENT_MB", "graceful shutdown", "opencode keybinds leader key"):
        for r in searcher.search(q, k=5)["results"]:
            assert set(r["found_by"]) <= allowed, r["found_by"]


def test_vector_strategy_without_embedder_is_an_input_error(searcher, docs):
    with pytest.raises(InputError, match="needs an embedder"):
        searcher.search("deduplicator", sets=[MDMEM_SET], k=3, strategy="vector")
    proc = run_cli("search", "--docs-dir", docs, "--strategy", "vector", "deduplicator", env=NO_EMBED)
    assert proc.returncode == 2 and "--embedder" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(("query", "path"), [
    ("HELIOS_WAL_SEGMENT_MB", ["Helios Configuration Reference", "Environment Variables", "Storage"]),
    ("HELIOS_INGEST_BATCH_SIZE", ["Helios Configuration Reference", "Environment Variables", "Ingest"]),
    ("--replay-from-offset", ["Helios Configuration Reference", "Command Line Flags"]),
    ("--drain-seconds", ["Orbit Gateway", "Configuration", "Command Line Flags"]),
    ("kubectl rollout status", ["Deployment Guide", "Kubernetes"]),
    ("ENOSPC", ["Ingest Pipeline Architecture", "Failure Modes"]),
    ("SIGHUP", ["Deployment Guide", "Secrets Management"]),
    ("MARKDOWN_MEMORY_DB", ["markdown-memory", "Configuration"]),
])
def test_identifier_queries_rank_the_right_section_first(searcher, query, path):
    res = searcher.search(query, sets=[MDMEM_SET], k=5)
    assert res["results"][0]["heading_path"] == path
    assert not res["abstained"]
    assert res["results"][0]["relevance"] in ("high", "medium")  # calibrated: lexical-only is less sure


def test_identifier_query_through_the_cli(docs):
    res = search_json(docs, "--replay-from-offset", "--set", "mdmem*", "-k", "3")
    assert res["results"][0]["heading_path"][-1] == "Command Line Flags"
    assert any("--replay-from-offset" in ln for ln in lines_of(res["results"][0]))


@pytest.mark.parametrize("query", ["Stages", "ingest pipeline stages decoder writer", "orbit gateway configuration",
                                   "deployment guide kubernetes", "helios configuration environment variables",
                                   "opencode models"])
def test_a_parent_and_its_own_child_never_overlap(searcher, query):
    """A section and its ancestor may both be returned (the parent's intro is often the
    answer), because a result is its own text: the parent's lines end before the child's."""
    for strategy in ("auto", "L2", "bm25"):
        res = searcher.search(query, k=10, strategy=strategy)
        rs = res["results"]
        assert len({(r["doc_set"], r["page"], tuple(r["lines"])) for r in rs}) == len(rs), strategy
        for i, a in enumerate(rs):
            for b in rs[i + 1:]:
                if (a["doc_set"], a["page"]) != (b["doc_set"], b["page"]):
                    continue
                first, second = sorted((a, b), key=lambda r: r["lines"][0])
                assert first["lines"][1] < second["lines"][0], (strategy, first, second)


def test_upstream_results_carry_anchor_urls_matching_the_toc(searcher):
    res = searcher.search("opencode keybinds leader key", k=3)
    top = res["results"][0]
    assert (top["doc_set"], top["heading_path"]) == (OPENCODE, ["Keybinds", "Leader key"])
    assert top["url"].startswith("https://") and top["url"].endswith("#leader-key")
    assert top["source"].startswith("https://")
    toc = Path(top["toc_path"]).resolve().read_text(encoding="utf-8")
    assert top["url"] in toc
    assert any("leader" in ln.lower() for ln in lines_of(top))
