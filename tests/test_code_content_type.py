"""Sections are classified prose / code / api-reference."""

from __future__ import annotations

from pathlib import Path

from conftest import UPSTREAM

from doc4llm.code import content_type

ROOT = Path(__file__).resolve().parent.parent


def test_prose():
    text = "## Why retries\n\nNetworks fail. A retry with backoff gives the server time to recover,\nand jitter keeps clients apart.\n"
    assert content_type(text) == "prose"


def test_code_section():
    text = "## Example\n\n```python\n" + "x = 1\n" * 20 + "```\n\nRun it.\n"
    assert content_type(text) == "code"


def test_indented_code_counts_as_code():
    text = "### Structure\n\nHooks are organized by matchers:\n\n" + "".join(f'    "k{i}": {i},\n' for i in range(12))
    assert content_type(text) == "code"


def test_parameter_table_is_api_reference():
    text = (ROOT / "benchmarks" / "code" / "code_docs" / "retrykit-api-reference.md").read_text()
    section = text.split("## RetryPolicy", 1)[0]
    assert content_type(section) == "api-reference"


def test_keyed_bullets_are_api_reference():
    text = "## Methods\n\n* `delays(rng=None)` - the waits\n* `should_retry(error)` - retryable?\n* `with_overrides(**c)` - a copy\n"
    assert content_type(text) == "api-reference"


def test_scraped_flag_table_is_api_reference():
    page = UPSTREAM / "Claude_Code_Docs@latest" / "CLI reference" / "docContent.md"
    text = page.read_text()
    flags = text.split("## CLI flags", 1)[1].split("\n## ", 1)[0]
    assert content_type("## CLI flags" + flags) == "api-reference"


def test_empty_is_prose():
    assert content_type("") == "prose"
