"""Property and fuzz tests (hypothesis) for every parser that sees user or network text:
the markdown section scanner, the docTOC reader, heading text, URL scoping, set and page
naming, and the query analyser.

Long inputs are small hypothesis-chosen pieces repeated thousands of times, built at two
sizes (`_linear`): the CPU time on the input 4x longer must grow like linear work (~4x),
not like a pattern that backtracks on long runs (the regex denial of service of issue 13,
16x and more); no clock budget, so a busy machine does not fail it. Hypothesis' own
small examples check the structural properties.

Profiles: `ci` (default: derandomized, fast) and `long` (DOC4LLM_FUZZ_PROFILE=long, many
more examples; benchmarks/hardening/fuzz_long.sh runs it).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from growth import assert_linear
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doc4llm.corpus.paths import (
    MAX_FOLDER_BYTES,
    sanitize_folder_name,
    unique_folder_name,
    validate_page_name,
    validate_set_name,
)
from doc4llm.corpus.sections import parse_page, plain_title
from doc4llm.corpus.toc import parse_toc, render_toc
from doc4llm.errors import InputError
from doc4llm.ingest.scrape.urls import Scope, canonical_url
from doc4llm.search.analyze import analyze

settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("long", max_examples=1500, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("DOC4LLM_FUZZ_PROFILE", "ci"))

# Below this many characters the small input is not timed (too fast to measure: the
# structure is still checked); the large input is 4x the small one.
TIMED_FROM_CHARS = 1000


def _linear(fn: Callable[[str], Any], make: Callable[[int], str]) -> Any:
    """fn(make(1)), after checking that fn(make(4)) costs about 4x, not 16x."""
    text = make(1)
    out = fn(text)
    if len(text) >= TIMED_FROM_CHARS:
        assert_linear(fn, make, 1, repeat=1, what=f"{getattr(fn, '__name__', fn)} on {text[:60]!r}...")
    return out


def _scaled(text: str) -> Callable[[int], str]:
    """The same text at every size, for inputs with no long run to grow (timed once)."""
    return lambda k: text


# Pieces that exercise every branch of the markdown grammar, and the characters the
# patterns key on; repeated, they make the long runs that used to backtrack.
MD_ATOMS = [" ", "\t", "#", "# ", "`", "``", "```", "~~~", "*", "_", "-", "- ", "+", "=", "|", ">", "[", "]",
            "(", ")", "![", "](", "<", ">", "/", "\\", "&", ";", "{", "}", "{#", ":", ".", "1.", "a", "b c",
            "\n", "\n\n", "    ", "<div>", "</div>", "<!--", "-->", "---", "···", "·", "：", "L1-L2", "~3 tok",
            "{ .a", ":material-a-", "++k"]
atoms = st.sampled_from(MD_ATOMS)
pieces = st.lists(atoms, min_size=1, max_size=6).map("".join)
LINE_PREFIXES = ["", "# ", "## t ", "### ", "- ", "1. ", "> ", "| ", "    ", "  - ", "```\n", "Title\n"]


@dataclass(frozen=True)
class Run:
    """A line prefix, one small piece repeated, a tail; `text(k)` repeats the piece k times
    as often (the large input of the growth check)."""

    prefix: str
    piece: str
    repeat: int
    tail: str

    def text(self, k: int = 1) -> str:
        return self.prefix + self.piece * (self.repeat * k) + self.tail


@st.composite
def long_runs(draw: st.DrawFn) -> Run:
    """Up to 5k characters of one repeated piece (20k in the 4x input)."""
    piece = draw(pieces)
    repeat = draw(st.integers(min_value=1, max_value=max(1, 5_000 // len(piece))))
    return Run(draw(st.sampled_from(LINE_PREFIXES)), piece, repeat,
               draw(st.sampled_from(["", "x", " #", "\n", "`"])))


small_markdown = st.lists(st.one_of(atoms, st.text(max_size=6)), max_size=60).map("".join)


def _check_sections(make: Callable[[int], str]) -> None:
    parsed = _linear(parse_page, make)
    n = parsed.line_count
    previous_start = 0
    for sec in parsed.sections:
        assert 1 <= sec.start <= sec.end <= max(n, 1)
        assert sec.end <= sec.subtree_end <= max(n, 1)
        assert sec.start >= previous_start
        previous_start = sec.start
        assert sec.heading_path and all(isinstance(p, str) for p in sec.heading_path)
        assert "\n" not in sec.title


@given(long_runs())
def test_section_scanner_is_linear_on_long_runs(run):
    _check_sections(lambda k: "# Page\n\n" + run.text(k) + "\n\nbody\n")


@given(small_markdown)
def test_section_scanner_structure_on_arbitrary_markdown(text):
    _check_sections(_scaled(text))


@given(st.lists(long_runs(), min_size=1, max_size=3))
def test_section_scanner_on_many_hostile_lines(runs):
    _check_sections(lambda k: "\n".join(r.text(k) for r in runs))


@given(long_runs())
def test_heading_text_is_linear_and_single_line(run):
    title = _linear(plain_title, lambda k: run.text(k).replace("\n", " "))
    assert "\n" not in title and title == title.strip()


@given(small_markdown)
def test_toc_round_trip_keeps_every_section(text):
    parsed = parse_page(text)
    toc = render_toc("Page", "https://x.dev/p", parsed.sections, "https://x.dev/p", parsed.line_count)
    title, source, entries = parse_toc(toc)
    assert title == "Page" and source == "https://x.dev/p"
    ranged = [(e.start, e.end) for e in entries if e.start is not None]
    assert ranged == [(s.start, s.end) for s in parsed.sections]


@given(long_runs(), st.sampled_from(["", "# ", "## 1.2. ", "- ", "##### ", "> **Source**: ", "  * "]),
       st.sampled_from(["", " · L1-L9 · ~3 tok", "：https://x.dev/a#b", " · L1-L2 · ~1 tok · https://x", "："]))
def test_toc_reader_is_linear_on_hostile_lines(body, head, tail):
    def toc(k: int) -> str:
        text = head + body.text(k).replace("\n", " ") + tail
        return "# T\n\n" + text + "\n" + text + "\n"

    _linear(parse_toc, toc)


URL_ATOMS = ["/", ".", "..", "%2e", "%2E", "%2f", "%", "%41", "a", "docs", "?", "&", "=", "#", ";", "~", "//",
             "\\", ":", "@", "%25", "%2e%2e", " "]
url_paths = st.lists(st.sampled_from(URL_ATOMS), max_size=30).map("".join)


@given(url_paths)
def test_canonical_url_is_idempotent_and_scope_never_escapes_its_prefix(path):
    url = "https://x.dev/docs/" + path
    canonical = canonical_url(url)
    if canonical is None:
        return
    assert canonical_url(canonical) == canonical
    scope = Scope("https://x.dev/docs/")
    if scope.reason_excluded(canonical) is None:
        from urllib.parse import urlsplit

        segments = urlsplit(canonical).path.split("/")
        assert ".." not in segments and "." not in segments
        assert (urlsplit(canonical).path + "/").startswith("/docs/") or canonical == scope.root


@given(st.sampled_from(URL_ATOMS), st.integers(min_value=1, max_value=2000))
def test_url_handling_is_linear_on_long_runs(atom, n):
    canonical = _linear(canonical_url, lambda k: "https://x.dev/docs/" + atom * (n * k))
    if canonical:
        _linear(Scope("https://x.dev/docs/").reason_excluded,
                lambda k: canonical_url("https://x.dev/docs/" + atom * (n * k)) or canonical)


@given(st.text(max_size=300))
def test_folder_names_are_safe_bounded_and_stable(title):
    name = sanitize_folder_name(title)
    assert name and name not in (".", "..")
    assert not any(c in name for c in '<>:"/\\|?*') and not any(ord(c) < 32 or ord(c) == 127 for c in name)
    assert len(name.encode("utf-8")) <= MAX_FOLDER_BYTES
    assert name == name.strip()
    assert sanitize_folder_name(name) == name
    assert validate_page_name(name) == name
    again = unique_folder_name(name, {name})
    assert again != name and len(again.encode("utf-8")) <= MAX_FOLDER_BYTES


@given(st.text(max_size=80))
def test_accepted_set_names_are_visible_sets_and_never_globs(name):
    try:
        ok = validate_set_name(name)
    except InputError:
        return
    assert ok.count("@") == 1 and not ok.startswith(".") and ok == ok.strip()
    assert not any(c in ok for c in '*?[]/\\<>:"|') and ok.isprintable()


@given(st.text(max_size=40))
def test_page_names_never_leave_their_folder(name):
    try:
        ok = validate_page_name(name)
    except InputError:
        return
    assert "/" not in ok and "\\" not in ok and ok not in (".", "..") and "\x00" not in ok


QUERY_ATOMS = ["how do I", " ", "`", ".", "-", "--", "/", "\\", "()", "Error", "E", "a", "foo_bar", "fooBar",
               "@", "#", "?", "'", '"', "1", "http://", "::", "ENOENT", "404", "*", "~"]


@given(st.lists(st.sampled_from(QUERY_ATOMS), max_size=40).map("".join))
def test_query_analyser_handles_any_query(query):
    sets = [("Acme_Docs@1", None), ("Other@latest", {"source": "https://other.dev/docs"})]
    if not query.strip():
        return
    analyze(query, sets)


@given(st.sampled_from(QUERY_ATOMS), st.integers(min_value=1, max_value=1000))
def test_query_analyser_is_linear_on_long_runs(atom, n):
    _linear(lambda q: analyze(q, [("Acme_Docs@1", None)]), lambda k: "x " + atom * (n * k) + " y")


# The reproductions of issue 13, at a quarter of their size (the 4x input is their size).
KNOWN_DOS = {
    "spaces": lambda k: " " * 1500 * k + "x",
    "nested list": lambda k: "".join("  " * i + "- item\n" for i in range(250 * (1 if k == 1 else 2))),
    "backticks": lambda k: "## " + "`" * 5000 * k,
    "closing hashes": lambda k: "## t" + " " * 5000 * k + "x #",
    "image brackets": lambda k: "![" * 2500 * k,
}


@pytest.mark.parametrize("name", sorted(KNOWN_DOS))
def test_known_denial_of_service_inputs_stay_linear(name):
    _check_sections(lambda k: "# Page\n\n" + KNOWN_DOS[name](k) + "\n")


MDX_ATOMS = ["<Tabs>", "</Tabs>", "<TabItem label=\"a\">", "<Note title='x' />", "import X from 'y';",
             "export const a = {", "}", "{/* c */}", "<!--", "-->", "```", "~~~", "\n", " ", "x", "<", ">"]


MYST_ATOMS = ["```{note}", "````{tab} A", "```{code-block} python", ":::{tip}", "::::{tab-set}", ":::",
              "```{versionchanged} 2.0", ":class: x", "(label)=", "<a id=\"x\"></a>", "- [A](#a)", "````",
              "```{testsetup}", "{func}", "{ref}", "`", "``", "x <y>", "~a.b", ":::tip", "::: details x",
              ":::note[T]", "::::warning"]


MKDOCS_INLINE_ATOMS = [":material-", "cube", "-scan", ":", ":octicons-arrow-24:", "{", " .lg", " #id", "}", "{:",
                       " target=\"_blank\"", "++", "ctrl", "+", "[", "](x.md)", "## ", "\n"]


def _rewrites():
    from doc4llm.corpus.comments import blank_html_comments
    from doc4llm.ingest.mdx_blocks import rewrite_mdx
    from doc4llm.ingest.mkdocs_blocks import rewrite_mkdocs_blocks
    from doc4llm.ingest.mkdocs_inline import rewrite_mkdocs_inline
    from doc4llm.ingest.myst_blocks import rewrite_myst_blocks
    from doc4llm.ingest.myst_roles import rewrite_myst_roles

    return (rewrite_mdx, blank_html_comments, rewrite_mkdocs_blocks, rewrite_mkdocs_inline, rewrite_myst_blocks,
            rewrite_myst_roles)


@given(st.lists(st.sampled_from(MD_ATOMS + MDX_ATOMS + MYST_ATOMS + MKDOCS_INLINE_ATOMS), max_size=80).map("".join))
def test_import_rewrites_keep_every_line(text):
    """Every import rewrite is line for line (line numbers of sections stay true) and linear."""
    for fn in _rewrites():
        assert fn(text).count("\n") == text.count("\n")


@given(long_runs())
def test_import_rewrites_and_indexed_text_are_linear_on_long_runs(run):
    from doc4llm.index.build import own_text

    for fn in (*_rewrites(), own_text):
        _linear(fn, run.text)


@given(st.lists(st.sampled_from(QUERY_ATOMS + ["Okta", "PyInstaller", ".proto", "env.yml"]), max_size=40)
       .map("".join), st.sampled_from(["okta", "proto", "x", "env.yml"]))
def test_name_detection_handles_any_query(query, word):
    from doc4llm.search.confidence import written_as_name

    written_as_name(word, query)


@given(long_runs(), st.sampled_from(["x", "Agent", "fs.readFile", "a(b)", "[", "."]))
def test_named_entry_check_is_linear_on_long_headings(run, term):
    """`names_entry` strips signatures from any heading text in linear time."""
    from doc4llm.search.features import names_entry

    _linear(lambda t: names_entry(term, t), lambda k: run.text(k) + " " + term + " " + run.text(k))


@given(st.sampled_from(["1.", "1.16", "v2.0.1 ", ".", "9", "version ", "in ", "a_b.", "`", "{: ", "#"]),
       st.integers(min_value=1, max_value=1000))
def test_release_and_member_checks_are_linear_on_long_runs(atom, n):
    """The version, owner-member and error-catalog checks run on query and heading text."""
    from doc4llm.search.features import (
        _classify_page,
        _member_of,
        _same_version,
        asks_about_changes,
    )

    def text(k: int) -> str:
        return atom * (n * k)

    _linear(asks_about_changes, text)
    _linear(lambda t: _same_version(t, t), text)
    _linear(lambda t: _member_of(t, {"a", "fastify"}), lambda k: "fastify." + text(k))
    _linear(lambda t: _classify_page("Errors", "errors", "errors.md", [t] * 20), text)


@given(small_markdown, st.one_of(st.text(max_size=40), st.sampled_from(["# h", "- item", "1. x", "```", "a: b"])))
def test_front_matter_summary_keeps_the_body_and_is_never_markup(body, desc):
    """The summary paragraph goes before the body, which stays as written, and never
    becomes a heading, list, quote or fence."""
    from doc4llm.ingest.importer import _with_summary

    out = _with_summary({"description": desc}, body)
    assert out.endswith(body.lstrip("\n"))
    head = out[: len(out) - len(body.lstrip("\n"))]
    if head:
        first = head.split("\n", 1)[0]
        assert not parse_page(first + "\n").sections or parse_page(first + "\n").sections[0].level == 0
