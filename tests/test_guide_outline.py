"""A guide's outline beside the results (search/outline.py): agents ran `toc` on the how-to
page the first three results held, to see its steps; the search now shows them inline.
Real imported pages in a temp docs dir; the CLI as a subprocess for the end-to-end case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import import_tree, run_cli

from doc4llm.search.outline import OUTLINE_MAX, attach_outline, guide_outline
from doc4llm.search.render import render_text

NO_EMBED = {"DOC4LLM_EMBEDDER": "none"}

GUIDE = """# Bulk importing quills

Moving an existing dataset into the Spindle through client writes is slow; import it on the server.

## Preparing the input

Export one JSON object per line (NDJSON), with an `id` field.

## Running the import

Run `spin import --collection contacts --file customers.ndjson`.

### Batch size

`--batch 2000` sends two thousand documents per stitch.

## Effect on devices

Devices pull imported documents on their next pass.
"""

CONCEPT = """# The ledger

## Why the Spindle orders everything

Every write gets a ledger position, so devices agree on the order of changes.

## Ledger retention

Old ledger entries are compacted after thirty days.
"""


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    big = "# Spindle CLI guide\n\n" + "".join(f"## Command {i}\n\nRun command {i}.\n\n" for i in range(OUTLINE_MAX + 2))
    return import_tree({"guides/bulk-import.md": GUIDE, "concepts/ledger.md": CONCEPT, "guides/every-command.md": big},
                       tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("docs") / "md_docs", "spindle@1")


def _hit(docs: Path, source: str, heading: str) -> dict:
    """A search result for the section headed `heading` of the page imported from `source`."""
    meta = (docs / "spindle@1" / "doc4llm-set.yaml").read_text(encoding="utf-8")
    assert source in meta
    for page in (docs / "spindle@1").iterdir():
        content = page / "docContent.md"
        if content.is_file() and f"> **Source**: {source}" in content.read_text(encoding="utf-8"):
            lines = content.read_text(encoding="utf-8").splitlines()
            start = next(i for i, ln in enumerate(lines, 1) if ln.lstrip("#").strip() == heading)
            return {"doc_set": "spindle@1", "page": page.name, "source": source, "lines": [start, start + 2],
                    "heading_path": [heading], "tokens": 30, "best_lines": []}
    raise AssertionError(f"no page from {source}")


def _names(outline: list[dict]) -> list[str]:
    return [x["heading"] for x in outline]


def test_the_guide_only_results_2_and_3_come_from_gets_its_outline_at_any_confidence(docs):
    """Agents doubting result 1 ran `toc` on the guide below it, at confidence 85-95 too."""
    results = [_hit(docs, "concepts/ledger.md", "Why the Spindle orders everything"),
               _hit(docs, "guides/bulk-import.md", "Running the import"),
               _hit(docs, "concepts/ledger.md", "Ledger retention")]
    found = guide_outline(docs, results, confidence=90)
    assert found is not None and found[0] == 1
    outline = found[1]
    assert _names(outline) == ["Bulk importing quills", "Preparing the input", "Running the import",
                               "Effect on devices"]
    assert [k["heading"] for k in outline[2]["children"]] == ["Batch size"]  # nested under its section
    assert all(x["lines"][0] <= x["lines"][1] for x in outline)


def test_a_guide_holding_result_1_gets_an_outline_only_with_another_result_and_below_80(docs):
    one = [_hit(docs, "guides/bulk-import.md", "Running the import"),
           _hit(docs, "concepts/ledger.md", "Ledger retention")]
    assert guide_outline(docs, one, confidence=50) is None  # result 1's neighbours line does it
    two = [one[0], _hit(docs, "guides/bulk-import.md", "Preparing the input"), one[1]]
    assert guide_outline(docs, two, confidence=79)[0] == 0
    assert guide_outline(docs, two, confidence=80) is None  # result 1 answers


def test_no_outline_for_a_concept_page_or_a_guide_too_big_to_be_a_recipe(docs):
    concept = [_hit(docs, "concepts/ledger.md", "Ledger retention"),
               _hit(docs, "concepts/ledger.md", "Why the Spindle orders everything")]
    assert guide_outline(docs, concept, confidence=40) is None
    big = [_hit(docs, "concepts/ledger.md", "Ledger retention"),
           _hit(docs, "guides/every-command.md", "Command 3")]
    assert guide_outline(docs, big, confidence=40) is None


def test_the_outline_line_replaces_result_1s_neighbours_and_is_cut_first_when_over_budget(docs):
    results = [_hit(docs, "guides/bulk-import.md", "Running the import"),
               _hit(docs, "guides/bulk-import.md", "Preparing the input")]
    for i, r in enumerate(results, 1):
        r["rank"] = i
    results[0]["nearby"] = [{"heading": "Preparing the input", "lines": [5, 7], "tokens": 20, "child": False}]
    attach_outline(docs, results, 60)
    result = {"confidence": 60, "abstained": False, "results": results, "sets": ["spindle@1"],
              "confidence_explanation": "plausible match"}
    text = render_text(result)
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("page outline:"))
    assert line.index("Bulk importing quills") < line.index("Preparing the input") < line.index("Running the import")
    assert "(Batch size " in line
    assert "next to it:" not in text
    assert "page outline:" not in render_text(result, max_tokens=60)


def test_cli_search_shows_the_guide_outline_under_its_result_and_json_carries_it(docs):
    """End to end: the real CLI on imported pages (no embedder: lexical ranking only)."""
    q = ("search", "how are devices kept in order when importing a dataset", "--docs-dir", str(docs))
    proc = run_cli(*q, env=NO_EMBED)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    # result 1 and result 3 from the guide, below confidence 80: its outline, not "next to it"
    assert int(lines[0].split("/")[0].split()[-1]) < 80
    at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("page outline:"))
    owner = next(ln for ln in reversed(lines[:at]) if ln[:1].isdigit())
    assert owner.startswith("1. guides/bulk-import.md") and "next to it:" not in proc.stdout
    assert lines[at].strip() == ("page outline: Bulk importing quills 1-7 · Preparing the input 9-11 · "
                                 "Running the import 13-15 (Batch size 17-19) · Effect on devices 21-23")
    data = json.loads(run_cli(*q, "--json", env=NO_EMBED).stdout)
    withs = [r for r in data["results"] if r.get("outline")]
    assert [r["source"] for r in withs] == ["guides/bulk-import.md"]
    assert withs[0]["outline"][2] == {"heading": "Running the import", "lines": [13, 15],
                                      "children": [{"heading": "Batch size", "lines": [17, 19]}]}
    # a confident result 1 from the guide: its subsections line, no outline
    sure = run_cli("search", "import customers ndjson into the spindle", "--docs-dir", str(docs), env=NO_EMBED)
    assert sure.stdout.startswith("confidence 8") or sure.stdout.startswith("confidence 9")
    assert "page outline:" not in sure.stdout and "subsections: Batch size" in sure.stdout


def test_a_guide_file_too_big_to_be_a_recipe_is_not_parsed_for_an_outline(tmp_path):
    """Four sections padded past OUTLINE_MAX_BYTES: no outline, the page is not a recipe."""
    from doc4llm.search.outline import OUTLINE_MAX_BYTES

    src = tmp_path / "src" / "guides"
    src.mkdir(parents=True)
    pad = ("word " * 200 + "\n\n") * (OUTLINE_MAX_BYTES // 1000 + 2)
    (src / "huge.md").write_text("# Huge guide\n\n" + "".join(f"## Step {i}\n\n{pad}" for i in range(4)), encoding="utf-8")
    out = tmp_path / "md_docs"
    assert run_cli("import", tmp_path / "src", "--set", "spindle@1", "--docs-dir", out).returncode == 0
    page = next(p for p in (out / "spindle@1").iterdir() if (p / "docContent.md").is_file())
    hit = {"doc_set": "spindle@1", "page": page.name, "source": "guides/huge.md", "lines": [1, 2],
           "heading_path": ["Step 1"]}
    other = {"doc_set": "spindle@1", "page": "nope", "source": "concepts/x.md", "lines": [1, 2],
             "heading_path": ["X"]}
    assert guide_outline(out, [other, hit], confidence=50) is None
