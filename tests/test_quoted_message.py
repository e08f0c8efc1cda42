"""A pasted message (an error, a log line) is answered by the section that quotes it: the
catalogue entry whose **Message:** line holds it beats a config entry that only names the
same identifier, in one search and in a fused one (search/quoted.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from doc4llm.search.quoted import pasted_text

NO_EMBED = {**os.environ, "DOC4LLM_EMBEDDER": "none"}

CONFIG = """# Configuration

## sync

### sync.max_stitch_bytes

- **Type:** integer, default 262144

The largest encoded size of one stitch. Larger stitches are rejected with WKL-3115.
Keep sync.max_stitch_bytes under the proxy's body limit; sync.max_stitch_bytes is per stitch.

### sync.heartbeat

Seconds between heartbeats.
"""

ERRORS = """# Error codes

## WKL-3115

**Message:** `stitch exceeds max_stitch_bytes (<n> > <limit>)`

A single write encoded to more than the limit. Store large binary data as attachments.

## WKL-3116

**Message:** `swatch not found`

The subscription names a swatch that no thread declares.
"""

GUIDE = """# Attachments

## Storing files

Files go in attachments, not in documents: a stitch has a size limit.
"""


@pytest.mark.parametrize(("query", "want"), [
    ("stitch exceeds max_stitch_bytes", "stitch exceeds max_stitch_bytes"),
    ("stitch exceeds max_stitch_bytes (300012 > 262144)", "stitch exceeds max_stitch_bytes"),  # the user's numbers
    ("'selvedge predates retained warp; re-spin required'", "selvedge predates retained warp; re-spin required"),
    ("how do I raise max_stitch_bytes?", None),  # a question
    ("install only the runtime packages", None),  # prose
    ("uv sync --no-install-project", None),  # a command line: its quotes are usage examples
    ("E_LEDGER_GAP", None),  # one name: the ranking's named-entry rule
    ("x" * 400 + " a b c", None),  # a log, not a message
])
def test_pasted_text(query, want):
    assert pasted_text(query) == want


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src")
    (src / "reference").mkdir()
    (src / "reference" / "config.md").write_text(CONFIG, encoding="utf-8")
    (src / "reference" / "errors.md").write_text(ERRORS, encoding="utf-8")
    (src / "attachments.md").write_text(GUIDE, encoding="utf-8")
    docs = tmp_path_factory.mktemp("docs")
    for args in (["import", str(src), "--set", "loom@1"], ["index"]):
        proc = subprocess.run([sys.executable, "-m", "doc4llm", *args, "--docs-dir", str(docs)],
                              capture_output=True, text=True, env=NO_EMBED, timeout=120)
        assert proc.returncode == 0, proc.stderr
    return docs


def _search(docs: Path, *args: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "doc4llm", "search", *args, "--json", "--docs-dir", str(docs)],
                          capture_output=True, text=True, env=NO_EMBED, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_section_quoting_the_message_is_result_1(docs):
    data = _search(docs, "stitch exceeds max_stitch_bytes")
    top = data["results"][0]
    assert top["heading_path"][-1] == "WKL-3115" and top.get("quotes_query") is True
    assert data.get("twins") is None  # the quoting entry is the canonical one: no near-twins line


def test_a_fused_search_keeps_the_quoting_section_first(docs):
    data = _search(docs, "stitch exceeds max_stitch_bytes", "--or", "max_stitch_bytes size limit",
                   "--or", "sync.max_stitch_bytes")
    assert data["results"][0]["heading_path"][-1] == "WKL-3115"


def test_a_question_about_the_option_is_not_moved(docs):
    data = _search(docs, "what is the default of sync.max_stitch_bytes")
    assert data["results"][0]["heading_path"][-1] == "sync.max_stitch_bytes"
    assert not any(r.get("quotes_query") for r in data["results"])
