"""Linear time on untrusted text, checked by growth ratios (issue 29 item 2).

Every function here runs regexes over text from documentation pages, llms.txt files or
scraped front matter. Each is fed adversarial inputs (long runs of blank lines, spaces,
one repeated character, after the prefixes that used to trigger backtracking) at two
sizes, 8x apart, and must take less than 30x longer on the larger one: linear work is
~8x, the quadratic patterns of the issue were ~64x (`signal_scores(" \\n" * 4000)` took
33 s). CPU time, best of three, so neither a busy machine nor a fixed start-up cost
decides the outcome; hypothesis adds random pieces to the fixed generators.
"""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest
from growth import cpu_per_call
from hypothesis import given, settings
from hypothesis import strategies as st

from doc4llm.cli.progress import Progress
from doc4llm.code.chunker import chunks_for_section
from doc4llm.code.langdetect import detect_language, signal_scores
from doc4llm.ingest.myst_roles import render_role
from doc4llm.ingest.scrape.discovery import parse_llms_txt
from doc4llm.ingest.scrape.html_to_md import escape_heading
from doc4llm.ingest.scrape.markdown_page import convert_markdown

SMALL = 1_000
FACTOR = 8
MAX_RATIO = 30  # linear ~8, quadratic ~64

ATOMS = [" ", "\n", " \n", "\t", "\n\n ", "a", "_", "-", ":", "#", "*", "<", "(", ")", "=", "a ", "a:"]



def _growth(fn: Callable[[str], object], make: Callable[[int], str]) -> float:
    return cpu_per_call(fn, make(SMALL * FACTOR)) / cpu_per_call(fn, make(SMALL))


def _assert_linear(fn: Callable[[str], object], prefix: str = "", suffix: str = "x",
                   atoms: list[str] = ATOMS) -> None:
    for atom in atoms:
        ratio = _growth(fn, lambda n, a=atom: prefix + a * (n // len(a)) + suffix)
        assert ratio < MAX_RATIO, f"{ratio:.0f}x for {FACTOR}x more of {prefix!r} + {atom!r}*n"


@pytest.mark.parametrize("prefix", ["", "def f() -> ", "class A", "with x as "])
def test_language_signals_are_linear(prefix):
    """`signal_scores(" \\n" * 4000)` took 33 s and `def f() -> ` + 19,000 spaces 8 s."""
    _assert_linear(signal_scores, prefix)


def test_the_issues_reproductions_are_linear():
    assert _growth(signal_scores, lambda n: " \n" * (n // 2)) < MAX_RATIO
    assert _growth(signal_scores, lambda n: "def f() -> " + " " * n) < MAX_RATIO
    # a page with a code block of blank lines took 10 s to index at 6 KB
    assert _growth(lambda t: chunks_for_section(t, 1), lambda n: "```\n" + " \n" * (n // 2) + "x\n```\n") \
        < MAX_RATIO
    assert detect_language("def f() -> " + " " * 19_000) in (None, "python")


@settings(max_examples=15, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from([" ", "\t", "\n", "a", "_", ":", "(", ")", "-", ">", "#", "=", "!", "<", "{",
                                 "def ", "class ", "import ", "fn ", "let ", "$ ", "::", "'", '"']),
                min_size=1, max_size=4).map("".join))
def test_language_signals_are_linear_on_random_pieces(piece):
    ratio = _growth(signal_scores, lambda n: piece * max(1, n // len(piece)) + "x")
    assert ratio < MAX_RATIO, f"{ratio:.0f}x for {piece!r}"


@pytest.mark.parametrize("prefix", ["", "Source: ", "[a]("])
def test_llms_txt_links_are_linear(prefix):
    _assert_linear(parse_llms_txt, prefix)


def test_front_matter_title_is_linear_and_unquoted():
    _assert_linear(lambda t: convert_markdown(t, "https://h/x.md"), "---\ntitle: a", "b\n---\n# H\n")
    title, _, _ = convert_markdown("---\ntitle:  \"Quoted title\"  \n---\nbody\n", "https://h/x.md")
    assert title == "Quoted title"
    title, _, _ = convert_markdown("---\ntitle:\nslug: x\n---\nbody\n", "https://h/x.md", "Fallback")
    assert "slug" not in title  # an empty title does not take the next line


def test_myst_role_titles_are_linear():
    _assert_linear(lambda t: render_role("ref", t), "a", "<target>")
    assert render_role("ref", "The title   <target>") == "The title"
    assert render_role("ref", "<target>") == "target"
    assert render_role("ref", "a <b> <c>") == "a <b>"


def test_heading_escapes_are_linear():
    _assert_linear(escape_heading, "a", "")
    assert escape_heading("__init__ and snake_case_name") == "\\_\\_init\\_\\_ and snake_case_name"


def test_progress_lines_are_linear():
    def show(text: str) -> None:
        Progress(io.StringIO(), tty=False).message(text)

    _assert_linear(show, "a", " 3/10 sections")
    out = io.StringIO()
    Progress(out, tty=False).message("Acme@1: embedded 12/40 sections")
    assert out.getvalue().startswith("doc4llm: Acme@1: embedded 12/40 sections")


LINK_ATOMS = ["[", "]", "(", ")", "[a](", "[a][", "![", "](", "\"", " \"", "<br>", "`", "*"]


@pytest.mark.parametrize("prefix", ["", "[a](", "[a][", "!["])
def test_best_line_display_is_linear(prefix):
    """Best lines show links as their text (search/results.py `plain_line`): the link
    pattern runs over page lines of any length."""
    from doc4llm.search.results import cut_line, plain_line

    _assert_linear(plain_line, prefix, "x", ATOMS + LINK_ATOMS)
    _assert_linear(lambda t: cut_line(t, len(t) // 2), prefix, "x", LINK_ATOMS)
    assert plain_line("see [the `Field()`][pydantic.Field] and [docs](https://x/y \"t\")<br>") == \
        "see the `Field()` and docs "


def test_quoted_message_check_is_linear():
    """The pasted-message rule folds a section's prose and looks for the message in it
    (search/quoted.py); sections are untrusted text of any size."""
    from doc4llm.search.quoted import _fold, _prose

    _assert_linear(lambda t: "stitch exceeds max_stitch_bytes" in _fold(_prose(t)), "", "x",
                   ATOMS + ["```\n", "~~~", "`", "**"])


@pytest.mark.parametrize("prefix", ["", ">", "> - ", "`"])
def test_bare_name_and_link_target_checks_are_linear(prefix):
    """A best line that is only a name counts half (search/results.py `_BARE_NAME`), and a
    short result 1's links are read for a pointer to result 2-3 (search/twins.py): both
    patterns run over untrusted page text."""
    from doc4llm.search.results import _BARE_NAME
    from doc4llm.search.twins import _LINK_TARGET

    _assert_linear(lambda t: _BARE_NAME.fullmatch(t), prefix, "x", ATOMS + [">", "> ", "`", "- ", "* "])
    _assert_linear(lambda t: _LINK_TARGET.findall(t), prefix, "x", ATOMS + LINK_ATOMS + ["#", "](a#", "](#"])


def test_jsdoc_stripping_is_linear():
    """A declaration's code without its JSDoc (ingest/packages/api_typescript.py): .d.ts
    files come from any package; unclosed comments and comment runs stay linear."""
    from doc4llm.ingest.packages.api_typescript import without_jsdoc

    _assert_linear(without_jsdoc, "", "x", ATOMS + ["/**", "*/", "/** x */", "/*", "**/"])
    assert without_jsdoc("a(): void;\n/** doc */\nb(): void; /** unclosed") == "a(): void;\nb(): void; "
