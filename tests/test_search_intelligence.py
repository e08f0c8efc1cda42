"""Query intelligence (issue 4): query types, technical terms, domain words, abstention
with guidance, corrective retry, and session follow-ups through the CLI."""

from __future__ import annotations

import pytest
from conftest import run_cli
from test_search_helpers import (
    CLAUDE,
    MDMEM_SET,
    NO_EMBED,
    OPENCODE,
    make_mdmem,
    make_upstream,
    search_json,
)

from doc4llm.search.analyze import analyze, detect_domains, technical_terms
from doc4llm.search.engine import Searcher

SETS = [(OPENCODE, None), (CLAUDE, None)]


@pytest.mark.parametrize(("query", "qtype"), [
    ("TypeError: cannot read property 'map' of undefined", "error"),
    ("ECONNREFUSED when starting the server", "error"),
    ("permission denied when running hooks", "error"),
    ("the build fails with exit code 137", "error"),
    ("how do I configure hooks", "howto"),
    ("how to install opencode on windows", "howto"),
    ("set up single sign-on for my team", "howto"),
    ("what is a subagent", "concept"),
    ("why does the model forget context between sessions", "concept"),
    ("explain the difference between plugins and skills", "concept"),
    ("useEffect()", "code_lookup"),
    ("maxItemErrors", "code_lookup"),
    ("example of a pre-commit hook", "code_lookup"),
    ("what parameters does settings.json accept", "api_reference"),
    ("default value of the --max-turns flag", "api_reference"),
    ("environment variables for bedrock", "api_reference"),
    ("changelog", "general"),
    ("release notes for the latest version", "general"),
])
def test_query_type_detection(query, qtype):
    assert analyze(query, SETS).query_type == qtype


def test_screaming_case_identifier_is_a_lookup_type():
    assert analyze("HELIOS_WAL_SEGMENT_MB").query_type in {"code_lookup", "api_reference"}


def test_forced_type_wins():
    assert analyze("what is a subagent", forced_type="error").query_type == "error"


def test_technical_terms_of_every_shape():
    q = ("run `npm run build` in MyComponent with snake_case_name, SCREAMING_CASE, --dry-run, "
         "./src/app.py, client.fetch(), HttpClient.request() and ENOSPC or E0425")
    terms = technical_terms(q)
    for t in ["npm run build", "MyComponent", "snake_case_name", "SCREAMING_CASE", "--dry-run", "./src/app.py",
              "client.fetch()", "HttpClient.request()", "ENOSPC", "E0425"]:
        assert t in terms, (t, terms)
    assert not {"run", "in", "with", "and", "or"} & set(terms)
    assert technical_terms("how do I add a hook") == []


def test_domain_words_come_from_set_names():
    assert detect_domains("opencode keybinds", SETS)[0] == [OPENCODE]
    assert detect_domains("claude code hooks", SETS)[0] == [CLAUDE]
    assert detect_domains("how do keybinds work", SETS)[0] == []
    # any set name works, nothing is hard-coded
    sets = [("Zyxwv_Framework@2.1", None), ("Quokka_Docs@latest", None)]
    assert detect_domains("zyxwv routing", sets) == (["Zyxwv_Framework@2.1"], ["zyxwv"])
    assert detect_domains("quokka install", sets)[0] == ["Quokka_Docs@latest"]
    a = analyze("how do I add opencode plugins", SETS)
    assert a.domain_sets == [OPENCODE] and "opencode" not in a.keywords and "plugins" in a.keywords


@pytest.fixture(scope="module")
def mdmem(tmp_path_factory):
    return make_mdmem(tmp_path_factory.mktemp("intel") / "docs")


@pytest.fixture(scope="module")
def searcher(mdmem):
    s = Searcher(mdmem, embedder="none", quiet=True)
    yield s
    s.close()


def check_guidance(res: dict) -> None:
    g = res["guidance"]
    assert isinstance(g, dict)
    assert isinstance(g["understood"], dict) and g["understood"]["intent"]
    assert isinstance(g["missing"], list)
    assert 2 <= len(g["suggested_searches"]) <= 4
    for s in g["suggested_searches"]:
        assert s["query"].strip() and s["rationale"].strip()
        assert s["engine"] in {"general", "github", "stackoverflow", "docs"}
    assert g["tips"] and all(isinstance(t, str) and t for t in g["tips"])


@pytest.mark.parametrize("query", ["HELIOS_REPLICATION_FACTOR", "--enable-tls", "maxItemErrors"])
def test_unanswerable_identifiers_abstain_with_guidance(searcher, query):
    res = searcher.search(query, k=5)
    assert res["abstained"] is True
    assert res["confidence"] < 40
    assert all(r["relevance"] == "low" for r in res["results"])
    check_guidance(res)
    g = res["guidance"]
    assert query in g["understood"]["technical_terms"]
    assert query in g["missing"]
    assert any(query in s["query"] for s in g["suggested_searches"])
    assert g["understood"]["project"] == "mdmem"  # from the set name


def test_abstention_through_the_cli_text_and_json(mdmem):
    res = search_json(mdmem, "HELIOS_REPLICATION_FACTOR")
    assert res["abstained"] and res["guidance"]["suggested_searches"]
    proc = run_cli("search", "--docs-dir", mdmem, "HELIOS_REPLICATION_FACTOR", env=NO_EMBED)
    assert proc.returncode == 0
    assert proc.stdout.startswith("no section clearly answers this") and "web search: " in proc.stdout
    assert "no section contains: HELIOS_REPLICATION_FACTOR" in proc.stdout


def test_abstention_text_stays_within_the_token_budget(mdmem):
    for budget in (60, 150):
        proc = run_cli("search", "--docs-dir", mdmem, "--max-tokens", budget, "HELIOS_REPLICATION_FACTOR", env=NO_EMBED)
        assert proc.returncode == 0
        assert proc.stdout.startswith("no section clearly answers this") and len(proc.stdout.strip()) / 4 <= budget


def test_answerable_query_has_no_abstention(searcher):
    res = searcher.search("HELIOS_WAL_SEGMENT_MB")
    assert not res["abstained"] and res["confidence"] >= 60 and res["guidance"] is None


def test_project_name_in_guidance_comes_from_the_set_name(tmp_path):
    docs = make_mdmem(tmp_path / "docs", "Zyxwv_Platform_Docs@3.0")
    s = Searcher(docs, embedder="none", quiet=True)
    try:
        res = s.search("ZYXWV_CLUSTER_QUORUM_SIZE")
    finally:
        s.close()
    assert res["abstained"]
    check_guidance(res)
    assert res["guidance"]["understood"]["project"] == "Zyxwv Platform"
    assert all("Zyxwv Platform" in s["query"] for s in res["guidance"]["suggested_searches"])


def test_weak_query_keeps_its_own_ranking(searcher):
    """No corrective retry: a weak query's results are its own first pass, not a reworded
    query's (the retry traded right answers for wrong ones and broke abstention)."""
    from doc4llm.corpus.model import select_sets
    from doc4llm.search.pipeline import rank_once

    res = searcher.search("HELIOS_REPLICATION_FACTOR")
    assert "retried" not in res and res["confidence"] < 30
    sets = [s.name for s in select_sets(searcher.docs_dir, None)]
    ranked, rows, _ = rank_once(searcher, analyze("HELIOS_REPLICATION_FACTOR", [(s, None) for s in sets]),
                                sets, "auto", {}, [])
    first = rows.get(ranked[0].sid) or searcher.section_rows([ranked[0].sid])[ranked[0].sid]
    assert res["results"][0]["heading_path"] == first["heading_path"]


def test_session_follow_up_is_enriched_through_the_cli(mdmem):
    first = search_json(mdmem, "how do I configure the ingest batch size", "--session", "t1")
    assert "Ingest" in [r["heading_path"][-1] for r in first["results"][:3]]
    follow = search_json(mdmem, "what about its timeout", "--session", "t1")
    assert follow["query"] == "what about its timeout"
    assert follow["query_enriched"].startswith("what about its timeout ")
    assert "ingest" in follow["query_enriched"]
    assert follow["context_used"] == "how do I configure the ingest batch size"
    # another session name, or no session, has no memory
    other = search_json(mdmem, "what about its timeout", "--session", "t2")
    assert "query_enriched" not in other
    plain = search_json(mdmem, "what about its timeout")
    assert "query_enriched" not in plain
    text = run_cli("search", "--docs-dir", mdmem, "--session", "t1", "and its workers", env=NO_EMBED)
    assert text.returncode == 0 and "follow-up: searched" in text.stdout


def test_upstream_domain_query_prefers_the_named_set(tmp_path):
    docs = make_upstream(tmp_path / "docs")
    res = search_json(docs, "opencode troubleshooting", "-k", "3")
    assert res["analysis"]["domain_sets"] == [OPENCODE]
    assert res["results"][0]["doc_set"] == OPENCODE
    assert MDMEM_SET not in {r["doc_set"] for r in res["results"]}


def test_question_as_asked_names_the_project_once(searcher):
    """A question that already says the project's name is searched as asked, not as
    "mdmem ... mdmem ..."; one that does not gets the name in front."""
    for q in ("how do I deploy mdmem on a raspberry pi cluster", "how do I deploy it on a raspberry pi cluster"):
        res = searcher.search(q, k=3)
        asked = [s["query"] for s in res["guidance"]["suggested_searches"] if "as asked" in s["rationale"]]
        assert asked and asked[0].casefold().count("mdmem") == 1, asked
