"""Regression cases from real documentation (Starlette- and npm-style pages, small copies
under tests/fixtures/realworld): release notes must not outrank the reference section,
a page named by the query is found, a parent that explains an identifier is not hidden
by its children, and one generic word match does not give a confident answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import copy_indexed, run_cli

FIXTURES = Path(__file__).parent / "fixtures" / "realworld"


@pytest.fixture(scope="module")
def docs(tmp_path_factory, indexed_bundled) -> Path:
    # real documentation around the small cases: distractors, and a docs dir of the size
    # users have (the "never mentioned" rules only speak for docs with a vocabulary)
    d = copy_indexed(indexed_bundled, tmp_path_factory.mktemp("realworld") / "md_docs")
    for name, set_name in (("starlette", "Starlette@test"), ("npm", "npm@test"), ("fastify", "fastify@test"),
                           ("pino", "pino@test")):
        r = run_cli("import", FIXTURES / name, "--set", set_name, "--docs-dir", d)
        assert r.returncode == 0, r.stderr
    return d


def search(docs: Path, query: str, *extra: str) -> dict:
    r = run_cli("search", query, "--docs-dir", docs, "--embedder", "none", "--json", "-k", "5", *extra)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_reference_section_outranks_release_notes(docs):
    res = search(docs, "url_path_for")
    top = res["results"][0]
    assert top["heading_path"][-1] == "Reverse URL lookups"
    assert not res["abstained"]


def test_release_notes_rank_when_the_query_asks_about_changes(docs):
    res = search(docs, "what changed in url_path_for in 0.36")
    assert res["results"][0]["page"] == "Release Notes"


def test_release_notes_are_recognised_by_name_and_by_shape(docs):
    from doc4llm.search.engine import Searcher
    from doc4llm.search.features import page_facts

    s = Searcher(docs, embedder="none", quiet=True)
    try:
        s.search("url_path_for", k=1)
        pages = {r["page"]: r["id"] for r in s.conn.execute("SELECT id, page FROM pages")}
        facts = page_facts(s.conn, list(pages.values()))
    finally:
        s.close()
    changes = {name for name, pid in pages.items() if facts[pid]["changes"]}
    assert "Release Notes" in changes  # by name and by its version headings
    assert any("CHANGELOG" in name for name in changes)  # the bundled Claude Code changelog
    assert not {"Routing", "Middleware", "npm-ci", "npm-install"} & changes


def test_version_headings_alone_mark_a_changelog():
    from doc4llm.search.features import _classify_page

    heads = ["1.4.0 (2024-05-01)", "Fixed", "1.3.2", "Added", "v1.3.0", "2023-11-02"]
    assert _classify_page("Project history", "Project history", "docs/history-of-things.md", heads)["changes"]
    assert not _classify_page("Routing", "Routing", "routing.md", ["Path Parameters", "Mounts"])["changes"]


def test_a_version_migration_guide_is_a_changes_page_but_a_tool_migration_guide_is_not():
    """Moving between versions of one product reads like a changelog (its headings name
    what changed); moving from another tool is an ordinary how-to guide."""
    from doc4llm.search.features import _classify_page

    heads = ["Install V2", "Changes to pydantic.BaseModel", "Changes to config",
             "TypeError is no longer converted", "Removed in Pydantic V2", "Dicts", "Unions",
             "Mypy plugins", "Constrained types", "Other changes"]
    assert _classify_page("Migration guide", "migration", "migration.md", heads)["changes"]
    assert _classify_page("Migrating to 1.0", "Migrating to 1.0", "docs/1-0/", [])["changes"]
    tool = ["Understanding pip workflows", "Project dependencies", "Requirements files",
            "The uv lockfile", "Project environments", "Next steps"]
    assert not _classify_page("Migrating from pip to a uv project", "Migrating from pip",
                              "guides/migration/pip-to-project.md", tool)["changes"]


def test_page_named_by_the_query_is_found(docs):
    res = search(docs, "npm ci")
    assert res["results"][0]["page"] == "npm-ci"
    assert "name" in res["results"][0]["found_by"]
    # its opening answers, not a sub-section ("See Also" won before), and confidently
    assert res["results"][0]["heading_path"] == ["npm-ci"]
    assert res["confidence"] >= 80 and "name of this page" in res["confidence_explanation"]


def test_page_entry_is_its_first_section_with_text(tmp_path):
    """A page whose intro is empty opens with its first section that says something."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "npm-dist-tag.md").write_text("---\ntitle: npm-dist-tag\n---\n\n### Synopsis\n\n"
                                         "npm dist-tag add <package-spec> [<tag>]\n\n### Caveats\n\n"
                                         "Tags share a namespace with versions, so avoid semver-like tag names.\n")
    (src / "other.md").write_text("# Other\n\nThe dist-tag command adds tags; see its page.\n")
    d = tmp_path / "md_docs"
    assert run_cli("import", src, "--set", "npm@t", "--docs-dir", d).returncode == 0
    res = search(d, "npm dist-tag", "--explain")
    assert res["results"][0]["heading_path"] == ["npm-dist-tag", "Synopsis"], res["results"][:2]
    assert res["results"][0]["explain"]["rerank.page_entry"] == 1.0


def test_parent_that_explains_is_not_hidden_by_its_children(docs):
    res = search(docs, "CORSMiddleware")
    assert res["results"][0]["heading_path"][-1] == "CORSMiddleware"


def test_a_class_named_with_a_leading_acronym_is_not_absent(docs):
    """The index splits `CORSMiddleware` into `cor middlewar`; the absence check looked up
    the lower-cased word's stem, found it nowhere, and abstained on the section headed by it."""
    for query in ("CORSMiddleware", "how do I configure CORSMiddleware", "starlette CORSMiddleware allow_origins"):
        res = search(docs, query)
        assert not res["abstained"], (query, res["confidence"], res["coverage"])
        assert res["coverage"]["absent_from_docs"] == [] and res["results"][0]["heading_path"][-1] == "CORSMiddleware"


def test_a_question_about_one_product_answered_only_by_another_abstains(docs):
    """The query names Starlette, and only npm's docs answer it (other sets count half and
    still win): the Starlette docs do not cover it, whatever npm says."""
    res = search(docs, "starlette: install packages from the lockfile with ci")
    assert res["analysis"]["domain_sets"] == ["Starlette@test"]
    assert res["results"][0]["doc_set"] == "npm@test" and res["abstained"]
    assert res["coverage"]["off_domain"] == "npm@test" and "Starlette@test" in res["confidence_explanation"]
    own = search(docs, "starlette CORSMiddleware allow_origins")
    assert own["coverage"]["off_domain"] == "" and not own["abstained"]


def test_one_generic_word_does_not_answer_a_question_about_something_else(docs):
    res = search(docs, "PostgreSQL autovacuum tuning")
    assert res["abstained"], (res["confidence"], res["results"][:1])
    assert "autovacuum" in res["coverage"]["absent_from_docs"]


def test_a_product_the_docs_never_name_is_not_answered(docs):
    """A long question about a tool the docs never mention abstains (absent name rule),
    even though its other words match plenty."""
    res = search(docs, "bundle my starlette app into a single standalone executable with PyInstaller")
    assert res["abstained"], (res["confidence"], res["results"][:1])
    assert res["coverage"]["absent_names"] == ["PyInstaller"]
    assert "PyInstaller" in res["confidence_explanation"]


def test_a_lower_case_name_the_docs_never_mention_is_not_answered(docs):
    """'zstd' is written in lower case, so it is not written as a name, but it is no
    English word either: the question is about a format these docs never mention."""
    res = search(docs, "compress every response body with zstd in a route")
    assert res["abstained"], (res["confidence"], res["results"][:1])
    assert res["coverage"]["absent_names"] == ["zstd"]
    kept = search(docs, "why do responses come back garbled")  # English the docs phrase otherwise
    assert kept["coverage"]["absent_names"] == []


def test_an_everyday_word_the_docs_phrase_otherwise_is_no_anchor(docs):
    """'afraid' is common English: the docs not using it proves nothing, so the single
    anchor rule (which fires on this query when every absent word counts) stays off."""
    res = search(docs, "my template rendering feels afraid")
    assert "afraid" in res["coverage"]["absent_from_docs"]
    assert not res["coverage"]["single_anchor"]
    assert res["coverage"]["absent_names"] == []


def test_a_named_entry_is_the_heading_that_is_the_name_not_one_that_mentions_it():
    from doc4llm.search.features import names_entry

    assert names_entry("fs.readFile", "`fs.readFile(path[, options], callback)`")
    assert names_entry("EnvHttpProxyAgent", "Class: EnvHttpProxyAgent")
    assert names_entry("EnvHttpProxyAgent", "new EnvHttpProxyAgent([options])")
    assert not names_entry("EnvHttpProxyAgent", "Example - EnvHttpProxyAgent instantiation")
    assert not names_entry("EnvHttpProxyAgent", "`EnvHttpProxyAgent.close([callback])`")
    assert not names_entry("Agent", "Parameter: `AgentOptions`")


def test_an_entry_repeated_on_many_pages_is_one_result(docs):
    """npm documents `ignore-scripts` word for word on every command that takes it: one
    result, the other copies named in `also_in` (and in the text output), and the freed
    slots go to other sections."""
    res = search(docs, "ignore-scripts")
    hits = [r for r in res["results"] if r["heading_path"][-1] == "ignore-scripts"]
    assert len(hits) == 1, [r["heading_path"] for r in res["results"]]
    also = hits[0]["also_in"]
    assert {a["page"] for a in also} | {hits[0]["page"]} == {"npm-ci", "npm-install"}
    assert all(a["heading_path"][-1] == "ignore-scripts" and len(a["lines"]) == 2 for a in also)
    text = run_cli("search", "ignore-scripts", "--docs-dir", docs, "--embedder", "none").stdout
    assert "same text also in: npm-" in text


def test_sections_that_only_share_a_heading_stay_apart():
    from doc4llm.search.fusion import Candidate
    from doc4llm.search.results import collapse_repeats

    def row(sid, page, text):
        return {"id": sid, "set_name": "s@1", "page": page, "title": "Configuration",
                "heading_path": [page, "Configuration"], "start": 1, "end": 3,
                "page_source": f"{page}.md", "text": f"## Configuration\n{text}"}

    rows = {1: row(1, "a", "Set the cache folder and the log level for every run of the tool."),
            2: row(2, "b", "Set the cache folder and the log level for every run of the tool."),
            3: row(3, "c", "Choose which registry receives the package when you publish it.")}
    ranked = [(Candidate(i), rows[i]) for i in (1, 2, 3)]
    out = collapse_repeats(ranked, rows)
    assert [item[0].sid for item, _ in out] == [1, 3]
    assert [a["page"] for a in out[0][1]] == ["b"] and out[1][1] == []


def test_an_in_page_table_of_contents_does_not_answer_for_the_page(docs):
    """Fastify's Errors page opens with a list of links to every error code: the code's
    row in the table that explains it must win, not the list that only names it."""
    res = search(docs, "FST_ERR_DEC_ALREADY_PRESENT")
    assert res["results"][0]["heading_path"][-1] == "Fastify Error Codes"


def test_table_of_contents_lines_are_not_indexed_but_other_links_are():
    from doc4llm.index.build import own_text

    toc = "## Errors\n**Table of contents**\n- [Errors](#errors)\n  - [Codes](#codes)\n    - [FST_X](#fst_x)\n"
    assert "FST_X" not in own_text(toc) and "Table of contents" in own_text(toc)
    one = "## Usage\nSee below.\n- [the options](#options)\n- [Guide](./guide.md)\n- [API](./api.md)\n"
    assert own_text(one).count("](") == 3  # one in-page link is a reference, not a TOC
    pages = "## Index\n- [Server](./Server.md)\n- [Routes](./Routes.md)\n- [Hooks](./Hooks.md)\n"
    assert "Routes" in own_text(pages)  # links to other pages are the page's content


def test_a_one_word_query_names_the_option_documented_under_it(docs):
    """`mixin` is the option headed "`mixin` (Function):", not `mixinMergeStrategy`, whose
    text says "mixin" more often."""
    res = search(docs, "mixin")
    assert res["results"][0]["heading_path"][-1] == "mixin (Function):"


def test_a_name_qualified_by_its_doc_set_finds_the_member_entry(docs):
    """Docs about fastify head its method `listen`; the question says `fastify.listen`."""
    for query in ("fastify.listen", "what options does fastify.listen accept?"):
        res = search(docs, query)
        assert res["results"][0]["heading_path"][-1] == "listen", query
    from doc4llm.search.features import _names_member

    assert _names_member("fastify.listen", "listen", {"fastify"})
    assert _names_member("reply.hijack()", ".hijack()", {"reply"})
    assert not _names_member("express.listen", "listen", {"fastify"})
    assert not _names_member("fastify.listen", "listen on a port", {"fastify"})
    assert not _names_member("uv.lock", "lock", {"uv"})  # a file, not a member


def test_an_error_catalog_is_recognised_and_steps_back_for_other_questions():
    """pydantic's validation_errors page: 100+ entries headed by their codes. A question
    about something else must not land on `invalid_key` through the word "key"; a query
    that quotes an error or names the code still does."""
    from types import SimpleNamespace

    from doc4llm.search.features import _classify_page, candidate_features
    from doc4llm.search.fusion import Candidate

    codes = [f"`{w}_type`" for w in ("int", "bool", "dict", "list", "set", "str", "bytes", "float",
                                     "date", "time", "url", "uuid", "decimal", "enum", "tuple")]
    catalog = _classify_page("Validation Errors", "validation_errors", "errors/validation_errors.md",
                             ["Validation Errors", *codes])
    assert catalog["error_catalog"]
    assert not _classify_page("Server", "Server", "Reference/Server.md", codes)["error_catalog"]  # options
    assert not _classify_page("Errors", "errors", "errors.md", ["Errors", "Handling", *codes[:5]])["error_catalog"]

    row = {"text": "## `dict_type`\nThis error is raised when the input is not a dict.", "title": "`dict_type`",
           "heading_path": ["validation_errors", "dict_type"], "level": 2, "words": 10, "set_name": "pydantic@2",
           "page": "validation_errors", "tok_title": "dict_type dict type", "tok_path": "", "tok_body": ""}

    def feats(query: str, qtype: str, identifier_only: bool) -> dict:
        qa = SimpleNamespace(raw=query, terms=["dict_type"] if identifier_only else [], keywords=["keys"],
                             stems=["key"], query_type=qtype, identifier_only=identifier_only)
        return candidate_features(qa, Candidate(1, score=1.0), row, catalog, None, False, "", {})

    assert feats("what keys are in each error dict", "api_reference", False)["err_catalog"] == 1.0
    assert feats("Input should be a valid dictionary [type=dict_type]", "error", False)["err_catalog"] == 0.0
    assert feats("dict_type", "code_lookup", True)["err_catalog"] == 0.0


def test_a_question_names_a_release_only_when_it_asks_about_versions():
    """"bump the minor version of my project" is about the user's version, not the
    product's releases: release notes stay behind. A named release finds its entry."""
    from doc4llm.search.features import _same_version, asks_about_changes

    for q in ("what's new in hatch 1.16?", "which versions added the --frozen flag", "in version 2 the API",
              "what changed in url_path_for in 0.36", "is this deprecated"):
        assert asks_about_changes(q), q
    for q in ("bump the minor version of my project", "test my library against several Python versions",
              "take the package version from an environment variable"):
        assert not asks_about_changes(q), q
    assert _same_version("what's new in hatch 1.16?", "Hatch v1.16.0")
    assert _same_version("what's new in 1.16", "1.16.5 - 2026-02-26")
    assert not _same_version("what's new in 1.16", "1.17.0 - 2026-05-31")
    assert not _same_version("changes in 1.16.5", "1.16.0")
    assert not _same_version("changes in 2.0", "Hatch v1.20.0") and not _same_version("no version here", "1.2")


def test_the_release_a_question_names_comes_first(docs):
    res = search(docs, "what's new in starlette 0.35")
    assert res["results"][0]["heading_path"][1] == "0.35.0 (December 2023)"


def test_sections_naming_a_quoted_name_reach_the_reranker(docs):
    """A pasted error is mostly common words; the few sections that hold its name
    (`Python.h`) join the reranker's pool whatever those words rank, and win."""
    from doc4llm.search.analyze import analyze
    from doc4llm.search.engine import Searcher
    from doc4llm.search.fusion import Candidate
    from doc4llm.search.levels import name_holders
    from doc4llm.search.pipeline import _into_pool

    query = "fatal error: Python.h: No such file or directory when pip builds a package from source"
    s = Searcher(docs, embedder="none", quiet=True)
    try:
        s.search("warm up", k=1)
        sets = [r[0] for r in s.conn.execute("SELECT DISTINCT set_name FROM sections")]
        holders = name_holders(s.conn, analyze(query, [(x, None) for x in sets]), sets)
        titles = [r["heading_path"][-1] for r in s.section_rows(holders).values()]
    finally:
        s.close()
    assert titles == ["Database drivers"]
    ranked = [Candidate(i) for i in range(10)]
    _into_pool(ranked, [8, 2, 42], 4)  # 2 is in already; 8 and the unfused 42 join it
    assert [c.sid for c in ranked] == [0, 2, 8, 42, 1, 3, 4, 5, 6, 7, 9]
    ranked = [Candidate(i) for i in range(3)]
    _into_pool(ranked, [7], 5)  # a pool with room: the candidate is appended
    assert [c.sid for c in ranked] == [0, 1, 2, 7]
    res = search(docs, query)
    assert res["results"][0]["heading_path"][-1] == "Database drivers"


def test_an_examples_section_trades_places_with_the_entry_it_illustrates():
    from doc4llm.search.fusion import Candidate
    from doc4llm.search.rerank import parent_over_example

    def row(sid, title, parent, words=40):
        return {"id": sid, "title": title, "parent_id": parent, "words": words}

    rows = {1: row(1, "archs", None), 2: row(2, "Examples", 1), 3: row(3, "build, skip", None),
            4: row(4, "Example:", 3)}
    head = [Candidate(2, score=3.0), Candidate(5, score=2.5), Candidate(1, score=1.0),
            Candidate(3, score=0.5), Candidate(4, score=0.2)]
    rows[5] = row(5, "Windows ARM64 builds", None)
    parent_over_example(head, rows)
    # the entry takes its example's place; the results between them stay where they were
    assert [c.sid for c in head] == [1, 5, 2, 3, 4]
    assert head[0].parts["rerank.example_parent"] == 1.0
    # below the first three, or with its parent already above it, an example stays put
    assert head[3].sid == 3 and head[4].sid == 4
    # a parent that is only a heading over its sub-sections has nothing to answer with
    rows[6], rows[7] = row(6, "Usage", None, words=0), row(7, "Examples", 6)
    head = [Candidate(7, score=2.0), Candidate(6, score=1.0)]
    parent_over_example(head, rows)
    assert [c.sid for c in head] == [7, 6]


def test_an_option_found_through_its_examples_is_answered_by_the_option(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "options.md").write_text(
        "# Options\n\n## Build selection\n\n### archs\n\nChoose the architectures to build wheels for."
        " The default builds the native architectures of the runner; `auto64` and `auto32` pick one"
        " word size, and emulated architectures need QEMU.\n\n#### Examples\n\n```yaml\n"
        "CIBW_ARCHS_LINUX: x86_64 aarch64\nCIBW_ARCHS_MACOS: x86_64 arm64\nCIBW_ARCHS: auto64\n```\n\n"
        "### build, skip\n\nChoose the Python versions to build.\n\n#### Examples\n\n```yaml\n"
        "CIBW_BUILD: cp311-*\n```\n", encoding="utf-8")
    (src / "faq.md").write_text("# FAQ\n\n## Windows ARM64 builds\n\nCross-compile wheels for ARM64"
                                " on an x86 runner.\n", encoding="utf-8")
    docs = tmp_path / "md_docs"
    r = run_cli("import", src, "--set", "cibw@1", "--docs-dir", docs)
    assert r.returncode == 0, r.stderr
    res = search(docs, "CIBW_ARCHS", "--explain")
    paths = [x["heading_path"][-1] for x in res["results"]]
    assert paths[0] == "archs", paths
    assert "Examples" in paths[1:3], paths
