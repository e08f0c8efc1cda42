"""The section parser: heading paths, line ranges and every repair rule of sections.py."""

from __future__ import annotations

from conftest import MDMEM as MDMEM_BENCH

from doc4llm.corpus.sections import PREAMBLE, parse_page, parse_sections

MDMEM = MDMEM_BENCH / "corpus"


def paths(text: str) -> list[str]:
    return [s.address for s in parse_sections(text)]


def test_skipped_levels_keep_a_well_formed_path():
    secs = parse_sections("# A\n\n#### D\n\ntext\n\n## B\n\n### C\n")
    assert [s.heading_path for s in secs] == [["A"], ["A", "D"], ["A", "B"], ["A", "B", "C"]]
    assert [(s.start, s.end) for s in secs] == [(1, 1), (3, 5), (7, 7), (9, 9)]
    assert secs[0].children == [1, 2] and secs[0].subtree_end == 9


def test_text_before_the_first_heading_is_the_preamble():
    secs = parse_sections("![badge](x.svg)\nSummary line.\n\n# Title\n\nBody\n")
    assert secs[0].heading_path == [PREAMBLE] and secs[0].level == 0
    assert (secs[0].start, secs[0].end) == (1, 2)
    assert secs[1].heading_path == ["Title"] and (secs[1].start, secs[1].end) == (4, 6)


def test_front_matter_is_not_a_heading_and_gives_the_title():
    page = parse_page("---\ntitle: From Front Matter\nowner: x\n---\n\nIntro.\n\n## Part\n")
    assert page.title == "From Front Matter"
    assert page.front_matter["owner"] == "x"
    assert [s.heading_path for s in page.sections] == [[PREAMBLE], ["Part"]]
    assert page.sections[0].start == 6


def test_a_leading_rule_followed_by_prose_is_not_front_matter():
    page = parse_page("---\nJust prose here.\n---\n\n# T\n")
    assert page.front_matter == {}
    # CommonMark: a rule (kept as preamble text), then a setext heading
    assert [(s.title, s.level) for s in page.sections] == [
        (PREAMBLE, 0), ("Just prose here.", 2), ("T", 1)]


def test_h1_wins_over_front_matter_title_for_the_parsed_page():
    assert parse_page("---\ntitle: FM\n---\n# Real\n").title == "Real"


def test_unclosed_fence_does_not_swallow_later_headings():
    text = (MDMEM / "guides/troubleshooting.md").read_text()
    secs = parse_sections(text)
    titles = [s.title for s in secs]
    assert "Slow Queries After Upgrade" in titles
    assert "Verifying The Fix" in titles
    assert "list the largest recent batches" not in titles
    oom = next(s for s in secs if s.title == "Out Of Memory Kills")
    lines = text.splitlines()
    own = lines[oom.start - 1 : oom.end]
    assert "# list the largest recent batches" in own
    assert not any(s.startswith("## Slow") for s in own)
    assert [s.heading_path for s in secs][-2:] == [
        ["Troubleshooting", "Slow Queries After Upgrade"],
        ["Troubleshooting", "Slow Queries After Upgrade", "Verifying The Fix"],
    ]


def test_fence_left_open_before_another_opening_fence_is_cut():
    text = "# T\n\n```bash\necho hi\n\n## Next\n\ntext\n\n```python\nprint(1)\n```\n\n## After\n"
    assert paths(text) == ["T", "T > Next", "T > After"]


def test_hash_lines_in_code_are_never_headings():
    text = (
        "# T\n\n```\n# fenced\n## fenced\n```\n\n~~~md\n## tilde\n~~~\n\n"
        "    # indented code\n    ## more\n\n````\n```\n## nested fence\n```\n````\n\n## Real\n"
    )
    assert paths(text) == ["T", "T > Real"]


def test_blank_preceded_heading_in_a_closed_fence_stays_code():
    text = "# T\n\n```bash\necho\n\n## looks like a heading\n```\n\n## Real\n"
    assert paths(text) == ["T", "T > Real"]


def test_headings_in_html_comments_and_lists_are_not_sections():
    text = "# T\n\n<!--\n## hidden\n-->\n\n- item\n\n  ## in item\n\n> ## quoted\n\n## Real\n"
    assert paths(text) == ["T", "T > Real"]


def test_fence_inside_a_list_item_hides_its_hash_lines():
    text = "# T\n\n1. Run:\n\n   ```bash\n   # comment\n# flush left comment\n   ```\n\n## Real\n"
    assert paths(text) == ["T", "T > Real"]


def test_duplicate_headings_get_unique_addresses_and_anchors():
    secs = parse_sections("# A\n\n## Usage\n\n## Usage\n\n## Usage\n")
    assert [s.address for s in secs] == ["A", "A > Usage", "A > Usage (2)", "A > Usage (3)"]
    assert [s.anchor for s in secs] == ["a", "usage", "usage-1", "usage-2"]
    assert [s.heading_path for s in secs][1:] == [["A", "Usage"]] * 3


def test_setext_headings():
    secs = parse_sections("Title\n=====\n\nIntro\n\nPart one\ncontinued\n---------\n\nx\n")
    assert [(s.title, s.level) for s in secs] == [("Title", 1), ("Part one continued", 2)]
    assert (secs[1].start, secs[1].end) == (6, 10)


def test_rule_after_list_or_blank_is_not_a_setext_heading():
    assert paths("# T\n\n- item\n---\n\ntext\n\n---\n") == ["T"]


def test_inline_markup_gives_plain_titles():
    secs = parse_sections(
        "# The `run()` **bold** and *em* [link](http://x.y/z) ![img](a.png)\n"
        "## Option<T> and <b>Vec</b>\n"
        "## Using C# and snake_case_name \\*stars\\* &amp; more ##\n"
        "## Explicit {#custom-id}\n"
    )
    assert secs[0].title == "The run() bold and em link"  # images are dropped
    assert secs[1].title == "Option<T> and Vec"
    assert secs[2].title == "Using C# and snake_case_name *stars* & more"
    assert secs[3].title == "Explicit" and secs[3].anchor == "custom-id"
    assert secs[0].anchor == "the-run-bold-and-em-link"


def test_no_headings_at_all():
    page = parse_page("just text\n\nmore text\n")
    assert page.title is None
    assert [(s.heading_path, s.start, s.end) for s in page.sections] == [([PREAMBLE], 1, 3)]
    assert parse_page("").sections == []
    assert parse_page("\n\n").sections == []


def test_doc4llm_header_with_repeated_title_makes_the_preamble():
    text = "# Page\n\n> **Source**: x.md\n\n---\n\nintro\n\n# Page\n\n## Sub\n"
    page = parse_page(text)
    assert page.title == "Page" and page.source == "x.md"
    assert [(s.heading_path, s.start, s.end) for s in page.sections] == [
        ([PREAMBLE], 7, 7), (["Page"], 9, 9), (["Page", "Sub"], 11, 11)]


def test_crlf_and_tokens():
    secs = parse_sections("# A\r\n\r\nbody text\r\n")
    assert (secs[0].start, secs[0].end) == (1, 3)
    assert secs[0].tokens == len("# A\n\nbody text") // 4 + 1


def _big_page(megabytes: float) -> str:
    unit = ("## Heading {i}\n\nSome text with `code`, **bold** and a [link](http://x/{i}).\n\n"
            "```bash\n# comment {i}\necho {i}\n```\n\n- item {i}\n- another\n\n    indented\n\n")
    parts, size, i = ["# Big\n\n"], 0, 0
    while size < megabytes * 1024 * 1024:
        s = unit.format(i=i)
        parts.append(s)
        size += len(s)
        i += 1
    return "".join(parts)


def test_large_pages_parse_in_linear_time():
    """0.25 MB against 1 MB pages: linear is 4x the CPU time, quadratic 16x."""
    from growth import assert_linear

    small, big = _big_page(0.25), _big_page(1)
    assert len(parse_sections(big)) > 3.8 * len(parse_sections(small))
    assert_linear(parse_sections, lambda n: small if n == 1 else big, 1, repeat=2)


def test_every_mdmem_file_keeps_its_headings():
    for path in MDMEM.rglob("*.md"):
        lines = path.read_text().splitlines()
        for sec in parse_sections("\n".join(lines)):
            first = lines[sec.start - 1]
            if sec.level:
                assert first.lstrip().startswith("#"), (path, first)


def test_fence_opened_on_a_list_item_line_pairs_correctly():
    text = "# T\n\n1. ```bash\n   # comment\n   ```\n\n## Next\n\n```\ncode\n```\n\n## Last\n"
    assert paths(text) == ["T", "T > Next", "T > Last"]


def test_headings_right_after_lists_and_rules():
    text = "# T\n- a\n- b\n## After List\n1. x\n\n## After Blank\n***\n## After Rule\n"
    assert paths(text) == ["T", "T > After List", "T > After Blank", "T > After Rule"]
