"""doc4llm.grounding (issue 35): a `[n]` is a citation only in prose, and a claim counts
only when the section it cites holds it; decided without a model."""

from __future__ import annotations

import pytest

from doc4llm.answer.prompts import SYNTHESIS_INSTRUCTIONS
from doc4llm.grounding import check

ROLLING_BACK = """Deployment Guide > Rolling Back
## Rolling Back

Run `helios migrate down --steps 1`, then redeploy the previous image tag. Migrations are
backwards compatible for exactly one release."""
SECRETS = """Deployment Guide > Secrets Management
## Secrets Management

API tokens and database passwords are injected from Vault by the agent sidecar. Rotate
them every thirty days; the process re-reads the mounted files on `SIGHUP`, so rotation
needs no restart."""
SOURCES = {"1": ROLLING_BACK, "2": SECRETS}
HEADERS = ["Mdmem@dev / Deployment Guide / Deployment Guide > Rolling Back",
           "Mdmem@dev / Deployment Guide / Deployment Guide > Secrets Management"]
QUESTION = "how do I undo a bad deploy"


def _check(text: str, question: str = QUESTION):
    return check(text, SOURCES, question=question, instructions=SYNTHESIS_INSTRUCTIONS,
                 headers=HEADERS)


def test_a_correct_cited_answer_is_verified():
    found = _check("Run `helios migrate down --steps 1`, then redeploy the previous image tag "
                   "[1]. Migrations are backwards compatible for one release only [1].")
    assert found.verified and found.grounded and found.cited == ["1"]
    assert [c.supported_by for c in found.claims] == [["1"], ["1"]]
    assert found.warnings() == []


def test_a_claim_cited_to_the_wrong_section_is_not_supported():
    found = _check("Rotate the database passwords every thirty days [1].",
                   question="how often should passwords be changed")
    assert not found.verified and found.grounded  # [2] holds it, [1] does not
    claim = found.claims[0]
    assert claim.found_in == ["2"] and claim.supported_by == [] and "not in [1]" in claim.why
    assert "1 of 1" not in " ".join(found.warnings())  # all claims bad: no "check them" line


@pytest.mark.parametrize("text,why", [
    ("1. [1] Run the deploy again.", "a list marker"),
    ("[1] Mdmem@dev / Deployment Guide / Deployment Guide > Rolling Back (lines 29-32)",
     "a copied source header"),
    ("Read the value with buffer[3] and redeploy.", "part of a name"),
    ("Call `rows[1]` to redeploy.", "inside inline code"),
    ("```python\nimage = tags[1]\n```", "inside a code block"),
])
def test_bracketed_numbers_that_are_not_citations(text, why):
    found = _check(text)
    assert found.cited == [] and not found.verified
    assert any(why in n for n in found.not_citations), found.not_citations


def test_a_citation_line_under_code_and_multi_citations_count():
    found = _check("Redeploy the previous image tag [1][2].\n\n```bash\nhelios migrate down "
                   "--steps 1\n```\n[1]")
    assert found.cited == ["1", "2"] and found.verified
    assert [c.kind for c in found.claims] == ["prose", "code"]


def test_restating_the_question_is_not_a_supported_claim():
    found = _check("To undo a bad deploy, you undo the bad deploy [1].")
    assert not found.verified and found.claims[0].why == "it only repeats the question"


def test_echoed_instructions_are_rejected_as_such():
    found = _check("Redeploy the previous image tag [1]. Write the answer now, citing sources "
                   "as instructed.")
    assert not found.verified and len(found.echoed) == 1
    assert "repeats the prompt's instructions" in found.warnings()[0]
    # the phrase the rules ask for is not an echo
    assert _check("The documentation does not cover this.").echoed == []


def test_an_invented_answer_is_held_by_no_source():
    found = _check("Back it up with pg_dump and copy the dump to S3 with aws s3 cp [1].",
                   question="how do I back up PostgreSQL to S3")
    assert not found.grounded and not found.verified
    assert found.missing_names == ["PostgreSQL", "S3"]


def test_a_section_copied_back_that_is_not_about_the_question_answers_nothing():
    found = _check("[4]\n## Secrets Management\n\nAPI tokens and database passwords are injected "
                   "from Vault by the agent sidecar.")
    assert found.claims[0].found_in == ["2"] and not found.claims[0].on_topic
    assert not found.grounded and found.unknown == ["4"]


def test_a_sentence_naming_what_the_docs_lack_is_no_claim():
    found = _check("Redeploy the previous image tag [1]. The documentation does not say how to "
                   "roll back the database by hand.")
    assert found.verified and len(found.absences) == 1


def test_growth_is_linear_in_the_answer():
    """No backtracking or rescans: brackets, code spans, markers and an unclosed `[` run."""
    from growth import assert_linear

    def make(n: int) -> str:
        return ("word[1] [2] `x[3]` and 1. [4] text. " * n) + "\n" + ("[" * n) + "`" * n

    assert_linear(_check, make, 300, what="grounding.check")


CONFIG = """Helios Configuration Reference > Environment Variables > Storage
| Variable | Type | Default | Description |
| --- | --- | --- | --- |
| `HELIOS_STORE_DSN` | string | *(required)* | PostgreSQL connection string |
| `HELIOS_STORE_POOL_MAX` | int | `32` | Upper bound of pooled connections |"""


def test_list_items_under_a_cited_intro_and_copied_table_rows_are_covered_by_it():
    """How good models write: one citation on the sentence that introduces a list or a
    table covers its items and rows; they must still be in the cited section."""
    sources = {"1": CONFIG, "2": SECRETS}
    good = ("Set these storage variables [1]:\n\n- `HELIOS_STORE_DSN`: the PostgreSQL "
            "connection string, required.\n- `HELIOS_STORE_POOL_MAX`: the upper bound of pooled "
            "connections, 32 by default.\n\n| Variable | Default |\n| --- | --- |\n"
            "| `HELIOS_STORE_POOL_MAX` | `32` |")
    found = check(good, sources, question="which database connection settings are there")
    assert found.verified, found.summary()
    assert [c.supported_by for c in found.claims] == [["1"]] * 5  # intro, 2 items, 2 rows
    # the same list with no citation before it: its items cite nothing
    bare = good.replace(" [1]:", ":")
    assert not check(bare, sources, question="which database connection settings are there").verified
    # an item the cited section does not hold is not covered by the intro
    wrong = good.replace("the upper bound of pooled connections, 32 by default",
                         "rotated every thirty days by the Vault sidecar")
    assert not check(wrong, sources, question="which database connection settings are there").verified
