"""Absence judged on topics (issue 34): the user's own values and spelling variants are
never "not in these docs"; real gaps (backoff, man page, a flag written as such) are named;
a section that holds the question's subject is never abstained over."""

from __future__ import annotations

import pytest

from doc4llm.search.absence import variant_forms
from doc4llm.search.values import covers, user_values


@pytest.mark.parametrize(("query", "value"), [
    ("deploy my blog to username.github.io/my-repo with the posts in ./posts", "username.github.io/my-repo"),
    ("deploy my blog to username.github.io/my-repo with the posts in ./posts", "./posts"),
    ("reference ${API_TOKEN} in my .mcp.json", "${API_TOKEN}"),
    ("I named my private index acme-internal; where do its credentials go?", "acme-internal"),
    ("customise opencode with my own theme called midnight-ocean", "midnight-ocean"),
    ("dump my model without the `password_hash` field", "password_hash"),
    ("my model `UserProfile` has a field `favourite_colour`", "UserProfile"),
    ("discriminated union for my Cat and Dog models", "Dog"),
    ("give uv access with my secret ACME_PAT", "ACME_PAT"),
    ("install from git+https://github.com/myorg/mytool as a tool", "git+https://github.com/myorg/mytool"),
    ("run ./scripts/backup_db.py with its dependencies", "./scripts/backup_db.py"),
])
def test_values_by_shape(query, value):
    assert value in user_values(query)


@pytest.mark.parametrize(("query", "word"), [
    ("bundle my uv project into a single standalone executable with PyInstaller", "PyInstaller"),
    ("Is there a Flutter or Dart client library?", "Dart"),
    ("list outdated dependencies, like pip list --outdated", "--outdated"),
    ("install packages from conda-forge using an environment.yml with uv", "environment.yml"),
    ("encode a model as MessagePack bytes", "MessagePack"),
])
def test_names_the_question_asks_about_are_not_values(query, word):
    assert not covers(user_values(query), word)


def test_a_question_that_is_only_a_name_asks_about_it():
    assert user_values("MYAPP_DATABASE_URL") == []
    assert user_values("UV_HTTP_TIMEOUT") == []


def test_parts_of_a_value_are_covered():
    values = user_values("run ./scripts/backup_db.py and git+https://github.com/myorg/mytool")
    for part in ("backup_db", "myorg", "mytool", "scripts"):
        assert covers(values, part), part
    assert not covers(values, "script")  # a whole word only


@pytest.mark.parametrize(("word", "variant"), [
    ("behaviour", "behavior"), ("behavior", "behaviour"), ("customise", "customize"),
    ("optimise", "optimize"), ("modelling", "modeling"), ("modeling", "modelling"),
    ("colored", "coloured"), ("lower-case", "lowercase"), ("try/except", "try except"),
    ("org's", "organization"), ("repo", "repository"),
])
def test_spelling_and_syntax_variants(word, variant):
    assert variant in variant_forms(word)


def test_values_are_linear_on_hostile_input():
    from growth import assert_linear

    assert_linear(user_values, lambda n: "my " + "a.b/" * n + " called " + "`x_" * n + " field", 4000,
                  what="user_values")


DOCS = {
    "config.md": """# Configuration

## Index credentials

An index named `internal-proxy` reads its password from `ZED_INDEX_INTERNAL_PROXY_PASSWORD`
and its user name from `ZED_INDEX_INTERNAL_PROXY_USERNAME`. `ZED_CACHE_DIR` moves the cache.

## Resolution

The default resolution behavior picks the highest compatible version of every package;
`--resolution lowest` picks the lowest.

## Publishing

`zed publish` retries failed uploads three times before it gives up.
""",
    "install.md": """# Installing

## Requirements

Zed needs a recent operating system and a network connection to download packages.

## Uninstalling

Remove the binary and the cache folder.
""",
}


@pytest.fixture(scope="module")
def zed(tmp_path_factory):
    from doc4llm.ingest.importer import import_path
    from doc4llm.search.engine import Searcher

    root = tmp_path_factory.mktemp("zed")
    src = root / "src"
    src.mkdir()
    for name, text in DOCS.items():
        (src / name).write_text(text, encoding="utf-8")
    import_path(src, root / "md_docs", "zed@1")
    searcher = Searcher(root / "md_docs", embedder="none", quiet=True)
    yield searcher
    searcher.close()


def _missing(result: dict) -> list[str]:
    return [w.casefold() for w in result["coverage"]["missing"]]


def test_a_templated_env_var_and_the_index_name_are_the_users(zed):
    r = zed.search("how do I set ZED_INDEX_ACME_PASSWORD for my index named acme?", k=3)
    assert not {"zed_index_acme_password", "acme"} & set(_missing(r))
    assert not r["abstained"]
    assert r["results"][0]["heading_path"][-1] == "Index credentials"


def test_an_env_var_with_the_users_own_prefix_is_a_value(zed):
    r = zed.search("load MYAPP_TOKEN into zed from the environment of my shell", k=3)
    assert "myapp_token" not in _missing(r)


def test_a_british_spelling_of_a_documented_word_is_not_absent(zed):
    r = zed.search("what is the default resolution behaviour of zed?", k=3)
    assert "behaviour" not in _missing(r)
    assert r["results"][0]["heading_path"][-1] == "Resolution"
    assert not r["abstained"]


def test_a_real_gap_is_named(zed):
    r = zed.search("how do I make zed retry a failed download with exponential backoff?", k=3)
    assert "backoff" in _missing(r)


def test_a_flag_is_absent_unless_written_as_a_flag(zed):
    r = zed.search("zed install --lowest", k=3)
    assert "--lowest" in _missing(r)  # the docs say "lowest" and `--resolution lowest`, never `--lowest`
    r = zed.search("zed install --resolution", k=3)
    assert "--resolution" not in _missing(r)


def test_a_long_section_points_into_its_matching_entry():
    """A glossary or an option table of one section: the entry that matched, with its own
    line range (a definition's term joined to it; a table's row)."""
    from doc4llm.search.results import entry_of

    text = "## Glossary\n\nIntro.\n\n" + "".join(
        f"term{i}\n\n:   What term {i} means.\n    More about it.\n\n" for i in range(60))
    text += "| name | default |\n|---|---|\n" + "".join(f"| OPT_{i} | {i} |\n" for i in range(30))
    lines = text.split("\n")
    at = next(i for i, ln in enumerate(lines) if "term 17 " in ln) + 100
    a, b = entry_of(text, 100, at)
    assert lines[a - 100] == "term17" and b == at + 1
    row = next(i for i, ln in enumerate(lines) if ln.startswith("| OPT_12 ")) + 100
    assert entry_of(text, 100, row) == (row, row)
    assert entry_of("one\ntwo", 5, 5) is None  # the whole section: nothing smaller to read


def test_near_twins_name_the_canonical_page_for_the_question_type():
    from doc4llm.search.twins import canonical_choice, page_kind

    body = "set the retry count with retries option default three attempts backoff none"
    results = [{"source": "reference/config.md", "page": "config", "heading_path": ["Config", "retries"]},
               {"source": "guides/retrying.md", "page": "retrying", "heading_path": ["Retrying", "Set it up"]},
               {"source": "concepts/sync.md", "page": "sync", "heading_path": ["Sync"]}]
    rows = [{"tok_body": body}, {"tok_body": body + " step one"}, {"tok_body": "entirely different words here"}]
    assert [page_kind(r) for r in results] == ["reference", "how-to", "concept"]
    howto = canonical_choice("howto", results, rows)
    assert howto["ranks"] == [1, 2] and howto["read"] == 2
    assert canonical_choice("api_reference", results, rows)["read"] == 1
    assert canonical_choice("general", results, rows) is None  # no canonical kind for it
    rows[1] = {"tok_body": "nothing in common at all"}
    assert canonical_choice("howto", results, rows) is None  # not twins
    # "what is the default for retries" reads as a concept question; the entry headed by
    # the name it asks about is still the one to read
    rows[1] = {"tok_body": body}
    named = canonical_choice("concept", results, rows, ["retries"])
    assert named["read"] == 1 and "retries" in named["why"]
    # a heading that only mentions the name is another subject, not its entry
    results[0]["heading_path"] = ["Errors", "retries is not allowed on a subclass"]
    assert canonical_choice("concept", results, rows, ["retries"]) is None  # no concept twin either


def test_a_short_entry_that_links_to_a_shown_section_points_to_it():
    """An FAQ answer "Yes, atomic skeins ... See [Skeins](concepts/data-model.md#skeins)"
    defers to the section it links to: when that section is result 2 or 3, the text says
    so (for any question type); a long section's link, or a link to a section not shown,
    is no pointer."""
    from doc4llm.search.render import render_text
    from doc4llm.search.twins import canonical_choice

    results = [{"rank": 1, "doc_set": "s@1", "page": "FAQ", "source": "faq.md", "lines": [33, 35], "tokens": 52,
                "heading_path": ["FAQ", "Does it support transactions?"], "best_lines": []},
               {"rank": 2, "doc_set": "s@1", "page": "Data model", "source": "concepts/data-model.md",
                "lines": [52, 61], "tokens": 181, "heading_path": ["Data model", "Skeins"], "best_lines": []},
               {"rank": 3, "doc_set": "s@1", "page": "SDK", "source": "reference/sdk.md", "lines": [1, 9],
                "tokens": 90, "heading_path": ["SDK", "transaction()"], "best_lines": []}]
    rows = [{"tokens": 52, "tok_body": "yes atomic", "text": "### Does it support transactions?\n\nYes, atomic "
             "skeins. See [Skeins](concepts/data-model.md#skeins)."},
            {"tokens": 181, "anchor": "skeins", "tok_body": "skein stitches"},
            {"tokens": 90, "anchor": "transaction", "tok_body": "transaction"}]
    got = canonical_choice("general", results, rows)
    assert got["pointer"] and got["read"] == 2
    text = render_text({"confidence": 80, "abstained": False, "results": results, "sets": ["s@1"], "twins": got})
    assert "result 1 links to result 2 for the details: read 2" in text
    from_guide = dict(results[0], source="guides/faq.md")  # a relative link resolves from its folder
    rows[0]["text"] = "See [Skeins](../concepts/data-model.md#skeins)."
    assert canonical_choice("general", [from_guide, *results[1:]], rows)["read"] == 2
    rows[0]["tokens"] = 400  # a long section that links somewhere does not defer to it
    assert canonical_choice("general", [from_guide, *results[1:]], rows) is None
    rows[0] = {"tokens": 52, "text": "See [Other](concepts/data-model.md#other)."}
    assert canonical_choice("general", results, rows) is None


def test_result_1_on_another_subject_or_a_legacy_api():
    from doc4llm.search.analyze import analyze
    from doc4llm.search.fusion import Candidate
    from doc4llm.search.subject import other_subject

    ranked = [Candidate(1), Candidate(2), Candidate(3)]
    for c, score in zip(ranked, (3.0, 2.9, 2.8), strict=True):
        c.score = score
    rows = {1: {"heading_path": ["Message Sending Retry", "Retry Policy"], "text": "Publish retries."},
            2: {"heading_path": ["Routing", "Queues"], "text": "Queues."},
            3: {"heading_path": ["Tasks", "Retrying a task"], "text": "Task retries."}}
    got = other_subject(analyze("how do I retry a failed task"), ranked, rows)
    assert got and got[0] == 3
    rows[3]["heading_path"] = ["Tasks", "Scheduling"]
    assert other_subject(analyze("how do I retry a failed task"), ranked, rows) is None
    rows[1] = {"heading_path": ["orm", "declarative_base"], "text": "**Deprecated:** use `DeclarativeBase`."}
    rows[2] = {"heading_path": ["orm", "DeclarativeBase"], "text": "The base class."}
    assert other_subject(analyze("declarative base class for my models"), ranked, rows)[0] == 2
    assert other_subject(analyze("the legacy declarative base"), ranked, rows) is None  # asked about it


def test_a_subsection_or_a_function_word_is_not_another_subject():
    """Result 1 a page's introduction and result 3 its step ("Multi-tenant projects" >
    "Restrict grants by tenant") is one subject, narrower; "Per-tenant limits" adds only
    "per" (and `per_tenant`, a compound of a word result 1 already names)."""
    from doc4llm.search.analyze import analyze
    from doc4llm.search.fusion import Candidate
    from doc4llm.search.subject import other_subject

    ranked = [Candidate(1), Candidate(2), Candidate(3)]
    for c, score in zip(ranked, (3.0, 2.9, 2.8), strict=True):
        c.score = score
    page = {"set_name": "w@1", "page": "Multi-tenant projects"}
    rows = {1: {**page, "heading_path": ["Multi-tenant projects"], "text": "Tenants."},
            2: {**page, "heading_path": ["Multi-tenant projects", "Per-tenant limits"], "text": "Limits."},
            3: {**page, "heading_path": ["Multi-tenant projects", "2. Restrict grants by tenant"], "text": "Grants."}}
    qa = analyze("per-tenant projects grants isolation")
    assert other_subject(qa, ranked, rows) is None
    rows[3] = {"set_name": "w@1", "page": "Access", "heading_path": ["Tenant projects", "Grants"], "text": "G."}
    assert other_subject(qa, ranked, rows)[0] == 3  # the same words on another page: another subject


def test_an_error_questions_quoted_text_is_the_subject_not_a_value():
    from doc4llm.search.analyze import analyze

    q = "claude crashes with 'Illegal instruction (core dumped)' on startup"
    assert analyze(q).query_type == "error" and analyze(q).values == []
    assert "hello world" in user_values('print "hello world" from my script')


def test_a_currency_is_absent_only_when_no_section_writes_an_amount_with_its_symbol(zed, tmp_path):
    """"$49 per month" holds no "usd": the symbol form is a spelling of the currency. When no
    section writes one, the absent line says the symbol was checked too (agents grepped for
    `$[0-9]` after a bare "usd")."""
    from doc4llm.ingest.importer import import_path
    from doc4llm.search.engine import Searcher
    from doc4llm.search.render import render_text

    r = zed.search("how much does zed cost per month in usd?", k=3)
    assert "usd" in _missing(r)
    assert "no section contains: usd (nor any $ amount)" in render_text(r)
    src = tmp_path / "src"
    src.mkdir()
    (src / "plans.md").write_text("# Plans\n\n## Team plan\n\nThe team plan costs $49 per month per project.\n\n"
                                  "## Shell\n\nRun `$ zed plan` to see yours.\n", encoding="utf-8")
    import_path(src, tmp_path / "md_docs", "zed@2")
    priced = Searcher(tmp_path / "md_docs", embedder="none", quiet=True)
    try:
        r = priced.search("how much does the team plan cost per month in usd?", k=3)
        assert "usd" not in _missing(r) and "dollars" not in _missing(
            priced.search("team plan price in dollars", k=3))
        assert r["results"][0]["heading_path"][-1] == "Team plan"
    finally:
        priced.close()


def test_a_currency_is_not_reported_absent_where_its_symbol_form_cannot_be_checked():
    """The absent line claims the symbol form was checked: a backend without the sections'
    text cannot check it, so the currency is taken as documented."""
    from doc4llm.search.absence import documented_variant

    assert documented_variant(object(), "usd", ["zed@1"]) == "$"
    assert documented_variant(object(), "euros", ["zed@1"]) == "€"
