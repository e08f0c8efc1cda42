"""What an agent gets per call (issue 26): results as `file:lines` with their best lines,
several phrasings in one search, `doc4llm grep` by section, the set outline, reads by
source file, and evidence rather than verdicts. Real CLI subprocesses over a small
imported doc set (an invented product, so no word is guessable)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from conftest import import_tree, run_cli

NO_EMBED = {"DOC4LLM_EMBEDDER": "none"}

PAGES = {
    "guides/attachments.md": """# Attachments with quills

Documents hold structured data. Photos and other files belong in **quills**, immutable
binary objects stored by the Spindle outside the ledger.

## Declaring a quill field

Add a field of type `quill` to the collection schema.

## Attaching a file

Upload the file with `client.quills.put(file)` and store the returned id in the quill field.
The upload resumes after a dropped connection.

## Reading a quill

Quills download lazily on first `get()`, then stay cached on the device.
""",
    "reference/config.md": """# spindle.yaml reference

## sync

### sync.window_size

- **Type:** integer
- **Default:** 500

How many stitches a device sends in one push. Lower it on slow links.

### sync.max_stitch_bytes

The largest stitch the Spindle accepts, 256 KiB by default.
""",
    "troubleshooting.md": """# Troubleshooting

## E_LEDGER_GAP

The device missed part of the ledger (it was offline longer than the retention window).
Run `spin resync --device ID` to fetch a fresh snapshot.

## Slow first sync

A new device downloads every swatch it subscribes to; narrow the swatch filters.
""",
}


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return import_tree(PAGES, tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("docs") / "md_docs",
                       "spindle@1")


def cli(docs: Path, *args: str) -> tuple[int, str, str]:
    proc = run_cli(*args, "--docs-dir", docs, env=NO_EMBED)
    return proc.returncode, proc.stdout, proc.stderr


# -- search text output ------------------------------------------------------------------

def test_result_names_source_file_lines_heading_and_best_lines(docs, tmp_path):
    rc, out, err = cli(docs, "search", "how do I upload a photo with the quills put call")
    assert rc == 0, err
    first = re.search(r"^1\. (\S+):(\d+)-(\d+) ~\d+t  (.+)$", out, re.M)
    assert first, out
    src, a, b, path = first.group(1), int(first.group(2)), int(first.group(3)), first.group(4)
    assert src == "guides/attachments.md" and path.endswith("Attaching a file")
    best = [int(n) for n in re.findall(r"^   (\d+): .*quills\.put", out, re.M)]
    assert best and all(a <= n <= b for n in best)  # the line with the evidence, inside the section
    conf = int(re.match(r"confidence (\d+)/100", out).group(1))
    hint = re.search(r"^read: (doc4llm read .+)$", out, re.M)
    assert bool(hint) == (conf < 60)  # the ready command only while result 1 may not answer
    # as printed, or as the skill teaches: SOURCE --set SET --lines A:B
    read = hint.group(1) if hint else f"doc4llm read {src} --set spindle@1 --lines {a}:{b} --docs-dir {docs}"
    proc = run_cli(*shlex.split(read)[1:], env=NO_EMBED, cwd=tmp_path)
    assert proc.returncode == 0 and "client.quills.put(file)" in proc.stdout
    assert "source guides/attachments.md" in proc.stdout.splitlines()[0]
    assert len(out) < 1400


def test_json_is_the_contract_without_trace_unless_explained(docs):
    rc, out, _ = cli(docs, "search", "sync.window_size", "--json")
    data = json.loads(out)
    r = data["results"][0]
    assert r["source"] == "reference/config.md" and r["heading_path"][-1] == "sync.window_size"
    assert r["best_lines"] and all(r["lines"][0] <= x["line"] <= r["lines"][1] for x in r["best_lines"])
    assert "trace" not in data and "confidence_factors" not in data
    rc, out, _ = cli(docs, "search", "sync.window_size", "--json", "--explain")
    assert "trace" in json.loads(out)


def test_default_k_is_three(docs):
    rc, out, _ = cli(docs, "search", "sync stitch device", "--json")
    assert len(json.loads(out)["results"]) <= 3


# -- several phrasings ---------------------------------------------------------------------

def test_or_phrasings_are_fused_in_one_call(docs):
    question = "my phone was offline for ages and now refuses to catch up"
    rc, out, _ = cli(docs, "search", question, "--or", "E_LEDGER_GAP", "--json")
    assert rc == 0
    data = json.loads(out)
    assert data["phrasings"] == [question, "E_LEDGER_GAP"]
    top = data["results"][0]
    assert top["heading_path"][-1] == "E_LEDGER_GAP" and 1 in top["phrasings"]
    assert len({(r["page"], tuple(r["lines"])) for r in data["results"]}) == len(data["results"])
    rc, text, _ = cli(docs, "search", question, "--or", "E_LEDGER_GAP")
    assert rc == 0 and re.search(r"^1\. .*E_LEDGER_GAP$", text, re.M)  # the fused first result, in the text too


@pytest.mark.parametrize("bad", [[""], ["  "], ["a", "b", "c", "d", "e", "f"]])
def test_or_rejects_empty_and_too_many_phrasings(docs, bad):
    args = [x for p in bad for x in ("--or", p)]
    rc, _, err = cli(docs, "search", "quills", *args)
    assert rc == 2 and "phrasing" in err and "Traceback" not in err


# -- grep ------------------------------------------------------------------------------------

def test_grep_groups_matches_by_section(docs):
    rc, out, err = cli(docs, "grep", "quill", "-i")
    assert rc == 0, err
    assert re.search(r"^spindle@1 guides/attachments\.md  Attachments with quills > Attaching a file  L\d+-\d+ ~\d+t$",
                     out, re.M)
    assert re.search(r"^  \d+: Upload the file with `client\.quills\.put", out, re.M)
    rc, out, _ = cli(docs, "grep", "quill", "-i", "--json")
    data = json.loads(out)
    assert data["total_lines"] >= data["total_sections"] >= 3
    heads = [m for m in data["matches"] if m["heading_match"]]
    assert heads and data["matches"][0]["heading_match"]  # where the name is a heading comes first
    for m in data["matches"]:
        assert all(m["lines"][0] <= x["line"] <= m["lines"][1] for x in m["match_lines"])


def test_grep_fixed_alternatives_say_the_bar_is_literal(docs):
    rc, out, _ = cli(docs, "grep", "-F", "quills|nothing-like-this")
    assert rc == 1 and "with -F, | is a literal character" in out
    rc, out, _ = cli(docs, "grep", "quills|nothing-like-this", "-i")
    assert rc == 0  # without -F it is an alternation


def test_grep_options_after_a_double_dash_pattern(docs):
    """ripgrep's habit, `grep -F -- '--flag' --set S`: the options after the pattern are
    options (grep takes no paths), the pattern stays literal."""
    rc, out, err = cli(docs, "grep", "-F", "--", "sync.window_size", "--set", "spindle@1", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["matches"] and data["sets"] == ["spindle@1"]
    rc, _, err = cli(docs, "grep", "-F", "--", "--set", "--set", "spindle@1")
    assert rc == 1 and "Traceback" not in err  # the pattern "--set" itself, searched and not found


def test_grep_fixed_case_caps_and_sets(docs):
    rc, out, _ = cli(docs, "grep", "sync.window_size", "-F", "--json")
    data = json.loads(out)
    assert rc == 0 and data["matches"][0]["heading_path"][-1] == "sync.window_size"
    rc, _, _ = cli(docs, "grep", "sync.window_size".upper(), "-F")
    assert rc == 1  # case matters without -i
    rc, out, _ = cli(docs, "grep", "e", "--max-sections", "2", "--max-lines", "1", "--json")
    data = json.loads(out)
    assert len(data["matches"]) == 2 and data["truncated"] and data["total_sections"] > 2
    assert all(len(m["match_lines"]) <= 1 for m in data["matches"])
    rc, out, _ = cli(docs, "grep", "e", "--max-sections", "2")
    assert re.search(r"\(\+\d+ more sections", out)
    rc, _, err = cli(docs, "grep", "quill", "--set", "nope@9")
    assert rc == 1 and "nope@9" in err


def test_grep_no_match_is_exit_1(docs):
    rc, out, _ = cli(docs, "grep", "zanzibar")
    assert rc == 1 and out.startswith("no match")


@pytest.mark.parametrize(("pattern", "reason"), [("(a", "missing )"), ("", "empty"), ("x" * 5000, "characters"),
                                                 ("a(?=b)", "invalid pattern")])
def test_grep_bad_patterns_are_exit_2_with_the_reason(docs, pattern, reason):
    rc, _, err = cli(docs, "grep", pattern)
    assert rc == 2 and reason in err and "Traceback" not in err


def test_grep_runs_a_backtracking_bomb_in_linear_time(tmp_path):
    """`(a+)+$` against 30,000 a's and a b: exponential for a backtracking engine, one pass
    for RE2 (a subprocess, so a hang would be the test's timeout, not a wall-clock assert)."""
    page = tmp_path / "src" / "p.md"
    page.parent.mkdir()
    page.write_text("# Bomb\n\n" + "a" * 30_000 + "b\n\n## Next\n\n" + "a" * 30_000 + "\n", encoding="utf-8")
    docs = tmp_path / "docs"
    assert run_cli("import", page.parent, "--set", "b@1", "--docs-dir", docs).returncode == 0
    proc = run_cli("grep", "(a+)+$", "--docs-dir", docs, "--json", env=NO_EMBED, timeout=30)
    data = json.loads(proc.stdout)
    assert proc.returncode == 0 and [m["heading_path"][-1] for m in data["matches"]] == ["Next"]
    assert len(data["matches"][0]["match_lines"][0]["text"]) <= 170  # a long line is cut


def test_gnu_style_alternation_is_accepted(docs):
    rc, out, _ = cli(docs, "grep", r"E_LEDGER_GAP\|window_size", "--json")
    assert rc == 0 and json.loads(out)["total_sections"] >= 2


# -- outline, read by source -----------------------------------------------------------------

def test_set_outline(docs):
    rc, out, err = cli(docs, "toc", "--set", "spindle@1")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("spindle@1  3 pages")
    i = lines.index(next(ln for ln in lines if ln.startswith("guides/attachments.md")))
    assert "Attachments with quills" in lines[i]
    assert re.search(r"Attaching a file L\d+-\d+ ~\d+t", lines[i + 1])
    rc, out, _ = cli(docs, "toc", "--set", "spindle@1", "--depth", "2", "--json")
    cfg = next(p for p in json.loads(out)["pages"] if p["source"] == "reference/config.md")
    assert [h["heading"] for h in cfg["headings"]] == ["sync", "sync.window_size", "sync.max_stitch_bytes"]
    assert cfg["headings"][0]["tokens"] >= cfg["headings"][1]["tokens"]  # a heading counts its subtree


def test_outline_needs_one_set(docs, tmp_path):
    other = tmp_path / "o.md"
    other.write_text("# Other\n\ntext\n", encoding="utf-8")
    many = tmp_path / "many"
    assert run_cli("import", other, "--set", "o@1", "--docs-dir", many).returncode == 0
    assert run_cli("import", other, "--set", "p@1", "--docs-dir", many).returncode == 0
    proc = run_cli("toc", "--docs-dir", many, env=NO_EMBED)
    assert proc.returncode == 2 and "o@1" in proc.stderr and "p@1" in proc.stderr


def test_read_by_source_file_names_the_section(docs):
    rc, out, _ = cli(docs, "toc", "troubleshooting.md", "--json")
    gap = next(s for s in json.loads(out)["sections"] if s["title"] == "E_LEDGER_GAP")
    a = gap["lines"][0] + 1
    rc, out, _ = cli(docs, "read", "troubleshooting.md", "--set", "spindle@1", "--lines", f"{a}:{a + 1}", "--json")
    data = json.loads(out)
    assert rc == 0 and data["heading_path"][-1] == "E_LEDGER_GAP" and data["source"] == "troubleshooting.md"
    rc, _, err = cli(docs, "read", "../troubleshooting.md", "--lines", "1:2")
    assert rc == 2 and "Traceback" not in err


# -- evidence, not verdicts -----------------------------------------------------------------

def test_abstention_names_only_what_names_something(docs):
    rc, out, _ = cli(docs, "search", "is there a Terraform provider for a couple of jobs", "--json")
    data = json.loads(out)
    assert data["abstained"]
    missing = data["guidance"]["missing"]
    assert "Terraform" in missing or "terraform" in missing
    assert not {"couple", "jobs", "job"} & set(missing)  # everyday words the docs phrase otherwise
    rc, text, _ = cli(docs, "search", "is there a Terraform provider for a couple of jobs")
    assert text.startswith("no section clearly answers this")
    assert len(re.findall(r"^\d+\. ", text, re.M)) <= 2  # the best two candidates, still shown
    assert "NOT FOUND" not in text


def test_key_terms_rule():
    from doc4llm.index.tokenize import tokens
    from doc4llm.search.analyze import analyze
    from doc4llm.search.confidence import _holds_key_terms, key_terms

    qa = analyze("how do I resync a device after E_LEDGER_GAP", [("spindle@1", None)])
    keys = key_terms(qa)
    assert "E_LEDGER_GAP" in keys and "how" not in keys
    text = "E_LEDGER_GAP\nRun spin resync --device ID to fetch a fresh snapshot for the device."
    assert _holds_key_terms(qa, text, set(tokens(text)))
    assert not _holds_key_terms(qa, "Run spin resync", set(tokens("Run spin resync")))


def test_best_lines_show_links_as_their_text():
    """A best line is for reading: `[`Field()`][pydantic.Field]` is `Field()`, an inline
    link its text, `<br>` a space; the cut stays around the matched word."""
    from doc4llm.search.results import best_lines

    text = ("## Fields\n"
            "The `repr` parameter of the [`Field()`][pydantic.Field] function, see [the docs](https://example.com/a/b \"t\")<br>\n")
    got = best_lines(text, 10, {"repr": 1.0}, [], n=1)
    assert got[0]["line"] == 11
    assert got[0]["text"] == "The `repr` parameter of the `Field()` function, see the docs"


def test_best_lines_pick_the_evidence():
    from doc4llm.search.results import best_lines

    text = "## Title\n\nIntro words here.\n\nThe quill upload resumes.\n```\nclient.quills.put(file)\n```\n"
    got = best_lines(text, 10, {"quill": 2.0, "upload": 1.0}, ["client.quills.put"], n=2)
    assert [g["line"] for g in got] == [14, 16]
    assert best_lines(text, 10, {"nothing": 1.0}, [], n=2) == [{"line": 12, "text": "Intro words here."}]
    long = "word " * 100 + "quill " + "word " * 100
    cut = best_lines(long, 1, {"quill": 1.0}, [], n=1)[0]["text"]
    assert "quill" in cut and len(cut) <= 152 and cut.startswith("…") and cut.endswith("…")


def test_a_line_that_is_only_a_name_gives_way_to_a_sentence_with_it():
    """MkDocs pages open with an "API Documentation" pointer (`> [`pkg.mod.Thing`][...]`):
    it names the class, the next sentence says what it does; with the same words the
    sentence is the evidence shown."""
    from doc4llm.search.results import best_lines

    text = ("You may want to validate a list.\n\n> **API Documentation**\n"
            "> [`pkg.adapter.TypeAdapter`][pkg.adapter.TypeAdapter]<br>\n\n"
            "For this, pkg provides [`TypeAdapter`][pkg.adapter.TypeAdapter], which validates any type.\n")
    got = best_lines(text, 1, {"typeadapter": 1.0}, ["TypeAdapter"], n=1)
    assert got[0]["line"] == 6 and got[0]["text"].startswith("For this, pkg provides `TypeAdapter`")
    only = "> [`pkg.adapter.TypeAdapter`][pkg.adapter.TypeAdapter]<br>\n"  # alone, it still shows
    assert best_lines(only, 1, {"typeadapter": 1.0}, ["TypeAdapter"], n=1)[0]["line"] == 1


def test_a_subject_no_section_holds_in_every_phrasing_caps_the_fused_confidence(docs):
    """Every rewording keeps "search" and no section contains it: the results match the
    question's other words, so the fused confidence says so (30), whatever a phrasing's
    other words found; a code name absent as written (`goOffline`) is not such a subject."""
    from doc4llm.search.phrasings import ASKED_ABSENT_CAP, _in_every_phrasing

    rc, out, _ = cli(docs, "search", "full-text search over quills on the device", "--or",
                     "quill search index", "--or", "search quills cached", "--json")
    data = json.loads(out)
    assert rc == 0 and "search" in data["coverage"]["missing"]
    assert data["confidence"] <= ASKED_ABSENT_CAP and "every phrasing asks about search" in data["confidence_explanation"]
    assert _in_every_phrasing(["goOffline", "search"], ["test goOffline search", "goOffline search harness"]) == ["search"]
    assert _in_every_phrasing(["search"], ["full-text search"]) == []  # one phrasing: the question alone
    assert _in_every_phrasing(["search"], ["full-text search", "text index"]) == []


def test_a_huge_phrasing_is_cut_and_its_absent_word_shown_short(docs):
    rc, out, err = cli(docs, "search", "quills " + "z" * 5000, "--or", "quills")
    assert rc == 0 and "using the first 1000" in err
    line = next(ln for ln in out.splitlines() if ln.startswith("no section contains: "))
    assert len(line) < 80 and line.endswith("…")


def test_fused_search_judges_near_twins_on_the_fused_list_for_the_question_as_asked(tmp_path):
    """The near-twins line of a fused search names the fused ranks and is chosen for the
    question as asked (its type), from the rows the searcher showed; no line when the rows
    are unknown."""
    from doc4llm.search.phrasings import search_phrasings

    def res(page: str, source: str, rank: int) -> dict:
        return {"doc_set": "s@1", "page": page, "source": source, "lines": [1, 5], "rank": rank,
                "heading_path": [page]}

    body = "set the retry count with retries option default three attempts backoff none"
    rows = {"a": {"tok_body": body}, "b": {"tok_body": body + " step one"}, "c": {"tok_body": "other words"}}
    runs = {"asked": {"query_type": "howto", "confidence": 70, "abstained": False, "twins": None,
                      "results": [res("a", "reference/config.md", 1), res("c", "concepts/c.md", 2),
                                  res("b", "guides/retrying.md", 3)]},
            "guess": {"query_type": "api_reference", "confidence": 90, "abstained": False,
                      "twins": {"ranks": [1, 2], "kinds": ["reference", "how-to"], "read": 1, "why": "x"},
                      "results": [res("a", "reference/config.md", 1), res("b", "guides/retrying.md", 2),
                                  res("c", "concepts/c.md", 3)]}}

    class Searcher:
        docs_dir = tmp_path
        shown_rows: dict = {}

        def search(self, q: str, **_: object) -> dict:
            for r in runs[q]["results"]:
                self.shown_rows[("s@1", r["page"], 1, 5)] = rows[r["page"]]
            return {**runs[q], "results": [dict(r) for r in runs[q]["results"]]}

    out = search_phrasings(Searcher(), ["asked", "guess"], sets=None, k=3)
    assert [r["page"] for r in out["results"]] == ["a", "b", "c"]
    assert out["twins"]["ranks"] == [1, 2] and out["twins"]["read"] == 2  # a how-to: the guide
    Searcher.shown_rows = {}

    class Blind(Searcher):
        def search(self, q: str, **_: object) -> dict:
            return {**runs[q], "results": [dict(r) for r in runs[q]["results"]]}

    assert search_phrasings(Blind(), ["asked", "guess"], sets=None, k=3)["twins"] is None


def test_fused_confidence_comes_from_a_phrasing_that_vouches_for_result_1(tmp_path):
    """An abstained phrasing (a guessed word the docs never use) never speaks for the fused
    result; a fused first result that no other phrasing ranks first is "plausible" (59), not
    the confidence of a phrasing that ranked something else first."""
    from doc4llm.search.phrasings import AGREED_CAP, search_phrasings

    def res(page: str, rank: int) -> dict:
        return {"doc_set": "s@1", "page": page, "lines": [1, 5], "rank": rank, "heading_path": [page]}

    def run(conf: int, pages: str, abstained: bool = False, why: str = "plausible") -> dict:
        return {"query_type": "general", "confidence": conf, "abstained": abstained, "confidence_explanation": why,
                "results": [res(p, i) for i, p in enumerate(pages, 1)]}

    runs = {"message": run(52, "ezt"), "guess": run(9, "tez", True, "the docs never mention resync"),
            "term": run(94, "gtz")}

    class Searcher:
        docs_dir = tmp_path

        def search(self, q: str, **_: object) -> dict:
            return {**runs[q], "results": [dict(r) for r in runs[q]["results"]]}

    out = search_phrasings(Searcher(), ["message", "guess", "term"], sets=None, k=3)
    assert out["results"][0]["page"] == "t" and not out["abstained"]  # the phrasings agree on t
    assert out["confidence"] == AGREED_CAP and "resync" not in out["confidence_explanation"]
    runs["term"] = run(94, "tgz")  # a confident phrasing ranks t first: its confidence
    out = search_phrasings(Searcher(), ["message", "guess", "term"], sets=None, k=3)
    assert out["results"][0]["page"] == "t" and out["confidence"] == 94


def _result(conf: int) -> dict:
    rows = [{"rank": i, "doc_set": "s@1", "page": f"P{i}", "source": f"p{i}.md", "lines": [i * 10, i * 10 + 5],
             "tokens": 50, "heading_path": [f"P{i}", f"Section {i}"],
             "best_lines": [{"line": i * 10 + 1, "text": f"evidence line of result {i}"}]} for i in (1, 2, 3)]
    return {"confidence": conf, "abstained": False, "results": rows, "sets": ["s@1"],
            "confidence_explanation": "strong match covering the question's terms" if conf >= 75 else "plausible match"}


def test_confident_search_lists_the_other_results_by_heading_only():
    """From confidence 80 result 1 is the answer almost every time: results 2-3 keep their
    heading path (alternatives to recognise) without a best line; the band's stock words are
    left out of the first line (the figure says them)."""
    from doc4llm.search.render import render_text

    sure = render_text(_result(85)).splitlines()
    assert sure[0] == "confidence 85/100 · s@1"
    assert "evidence line of result 1" in sure[2]
    assert [ln for ln in sure if "evidence line" in ln] == [sure[2]]
    assert sure[3].startswith("2. p2.md:20-25") and sure[4].startswith("3. p3.md:30-35")
    unsure = render_text(_result(70))
    assert "evidence line of result 2" in unsure and "evidence line of result 3" in unsure
    assert unsure.startswith("confidence 70/100: plausible match · s@1")
    assert render_text(_result(85), numbers=False).splitlines()[0] == "s@1"  # MCP: the figure is a field


def test_an_introduction_lists_its_subsections_and_theirs_by_name(tmp_path):
    """Result 1 an introduction: its subsections with line ranges, and a subsection's own
    subsections by name in parentheses (agents ran `toc` to see what filled a gap); the
    nested names are capped (search/pipeline.py NEARBY_GRANDCHILDREN)."""
    from doc4llm.search.pipeline import NEARBY_GRANDCHILDREN

    src = tmp_path / "src"
    src.mkdir()
    steps = "".join(f"### Step {i}\n\nDo step {i}.\n\n" for i in range(1, NEARBY_GRANDCHILDREN + 3))
    (src / "testing.md").write_text(
        "# Testing offline quills\n\nHow to test quills offline with the spindle harness, deterministically.\n\n"
        "## Unit tests with the harness\n\nUse the harness.\n\n" + steps
        + "## End-to-end tests\n\nRun the dev server.\n", encoding="utf-8")
    docs = tmp_path / "docs"
    assert run_cli("import", src, "--set", "spindle@1", "--docs-dir", docs).returncode == 0
    rc, out, _ = cli(docs, "search", "testing quills offline deterministically")
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("subsections:"))
    assert "Unit tests with the harness" in line and "(Step 1 " in line and "End-to-end tests" in line
    listed = line.count("Step ")
    assert listed == NEARBY_GRANDCHILDREN and f"Step {NEARBY_GRANDCHILDREN + 1} " not in line


def test_a_result_shown_with_one_line_shows_its_line_with_the_most_evidence(docs):
    """Results 2-3 show one best line: the one naming what was asked (the `--drop-rate` row),
    not the first in page order (an example above it); `--json` says which (`top_line`)."""
    from doc4llm.search.render import render_text

    rows = _result(70)
    rows["results"][1]["best_lines"] = [{"line": 21, "text": "an example above the row"},
                                        {"line": 24, "text": "| `--drop-rate` | the row asked about |"}]
    rows["results"][1]["top_line"] = 24
    text = render_text(rows)
    assert "24: | `--drop-rate` | the row asked about |" in text and "an example above the row" not in text
    rc, out, _ = cli(docs, "search", "upload a file and resume after a dropped connection", "--json")
    top = [r for r in json.loads(out)["results"] if r.get("top_line")]
    assert top and all(r["top_line"] in [b["line"] for b in r["best_lines"]] for r in top)


def test_fused_results_show_the_lines_that_hold_the_name_the_question_asks_about():
    """Another phrasing's guessed words picked a result's lines ("dev server": an example);
    the question as asked names `--drop-rate`, and its own lines for that result hold it."""
    from doc4llm.search.phrasings import _names_more

    asked = {"best_lines": [{"line": 62, "text": "| `--drop-rate <0-1>` | `0` | Randomly fail passes |"}]}
    other = {"best_lines": [{"line": 51, "text": "wick dev --seed seeds/demo.json --latency 300ms"}]}
    assert _names_more(asked, other, ["--drop-rate"])
    assert not _names_more(other, asked, ["--drop-rate"])
    assert not _names_more(asked, other, [])
    assert not _names_more(asked, asked, ["--drop-rate"])


def test_a_code_chunk_result_says_it_is_code_inside_its_section():
    """A symbol's 2-line chunk under a section heading read as a parsing fault to an agent:
    the head names the section it sits in, with that section's range and size."""
    from doc4llm.search.render import render_text

    rows = _result(70)
    rows["results"][1].update(lines=[356, 357], tokens=8, in_section={"lines": [329, 381], "tokens": 553})
    line = next(ln for ln in render_text(rows).splitlines() if ln.startswith("2. "))
    assert line.endswith("Section 2  (code in the section 329-381 ~553t)") and ":356-357 ~8t" in line


def test_to_result_marks_a_chunk_narrower_than_its_section(tmp_path):
    from types import SimpleNamespace

    from doc4llm.search.results import to_result

    text = "\n".join(["Rebuild a model when its forward references resolve:", "", "```python",
                      "class Foo(BaseModel):", "    x: 'Bar'", "", "Foo.model_rebuild()", "```"])
    row = {"text": text, "start": 10, "end": 17, "tokens": 40, "set_name": "s@1", "page": "P",
           "heading_path": ["P", "Rebuilding model schema"], "page_source": "p.md", "url": None,
           "content_type": "code"}
    cand = SimpleNamespace(score=1.0, found_by=["symbol"], parts={}, raw={})
    res = to_result(1, cand, row, tmp_path, ["rebuild"], ["Foo.model_rebuild"], "high", False, chunk=(16, 16))
    assert res["lines"] == [16, 16] and res["in_section"] == {"lines": [10, 17], "tokens": 40}
    whole = to_result(1, cand, row, tmp_path, ["rebuild"], [], "high", False, chunk=(10, 17))
    assert "in_section" not in whole


def test_grep_puts_the_names_entry_before_its_mentions(tmp_path):
    """A table row, list item or term that opens with the name is its entry: it comes before
    sections that mention the name in prose or set it in a code block (a config file's
    `NAME: value` line is no entry)."""
    docs = import_tree({
        "a-guide.md": "# Deploying\n\n## Compose\n\n```yaml\nSPIN_ADMIN_TOKEN: ${SPIN_ADMIN_TOKEN}\nOTHER: 1\n```\n\n"
                      "## Securing\n\nSet `SPIN_ADMIN_TOKEN` to protect the admin port.\n"
                      "Without SPIN_ADMIN_TOKEN it is open.\n",
        "z-reference.md": "# Environment variables\n\n## Security\n\n| Variable | Default | Description |\n"
                          "|---|---|---|\n| `SPIN_ADMIN_TOKEN` | — | Bearer token for the admin port. |\n",
    }, tmp_path / "src", tmp_path / "docs", "spin@1")
    rc, out, _ = cli(docs, "grep", "SPIN_ADMIN_TOKEN", "-F", "--json")
    assert rc == 0
    order = [m["heading_path"][-1] for m in json.loads(out)["matches"]]
    assert order == ["Security", "Securing", "Compose"]  # the entry, then 2 lines, then 1
