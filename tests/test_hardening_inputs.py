"""Hostile inputs of issue 13 as regression tests: pages that made the parser backtrack for
minutes, 50k headings in one page, a sitemap gzip bomb and XML entities, percent-encoded
dot segments, set names, UTF-16 and binary files, `-rf` pages, empty `--section`."""

from __future__ import annotations

import gzip
import json
import shlex
import sqlite3
import tracemalloc
import zlib
from itertools import count
from pathlib import Path

import pytest
from conftest import run_cli
from growth import assert_linear

from doc4llm.corpus.paths import validate_set_name
from doc4llm.errors import ExternalError, InputError
from doc4llm.index.service import build_index
from doc4llm.index.store import index_dir, make_index_dir
from doc4llm.ingest.scrape.discovery import parse_sitemap
from doc4llm.ingest.scrape.urls import Scope, canonical_url


def _page(tmp_path: Path, text: str, name: str = "Page") -> Path:
    docs = tmp_path / "md_docs"
    page = docs / "Hostile@1" / name
    page.mkdir(parents=True)
    (page / "docContent.md").write_text(text, encoding="utf-8")
    return docs


# Each took from 40 s to hours before (cubic or quadratic regex backtracking). Each maps
# a size n to the page; the reproduction's size is the large input, a quarter of it the small.
HOSTILE = {
    "6,000-space line": (6000, lambda n: "# Spaces\n\n" + " " * n + "x\n"),
    "500-level nested list": (500 ** 2, lambda n: "# Nested\n\n" + "".join(
        "  " * i + f"- item {i}\n" for i in range(int(n ** 0.5)))),  # n characters of indent
    "backtick heading": (20000, lambda n: "# Ticks\n\n## " + "`" * n + " x\n\nbody\n"),
    "spaces then closing hashes": (20000, lambda n: "# T\n\n## t" + " " * n + "x #\n\nbody\n"),
    "image brackets": (10000, lambda n: "# T\n\n## " + "![" * n + "\n\nbody\n"),
    "table of pipes and spaces": (20000, lambda n: "# T\n\n" + "| " + " " * n + "\n"),
    "field line": (20000, lambda n: "# T\n\n" + " " * n + "- type\n"),
}


def _indexer(tmp_path: Path):
    """fn(text): a fresh docs dir holding one page with `text`, indexed from scratch; the
    reports land in the returned list."""
    reports: list[tuple[Path, dict]] = []
    numbers = count()

    def index(text: str) -> None:
        docs = _page(tmp_path / f"run{next(numbers)}", text)
        reports.append((docs, build_index(docs, vectors=False)))

    return index, reports


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_page_indexes_in_linear_time(tmp_path, name):
    size, make = HOSTILE[name]
    index, reports = _indexer(tmp_path)
    assert_linear(index, make, size // 4, what=name)
    assert all(report["lexical"]["sections"] >= 1 for _, report in reports)


def test_many_headings_index_in_linear_time_with_the_right_parents(tmp_path):
    """50k headings took 87 s (a parent lookup per heading scanned the page)."""
    def make(n: int) -> str:
        return "# Many\n\n" + "".join(f"## Part {i}\n\n### Sub {i}\n\nline\n\n" for i in range(n // 2))

    n = 8000  # quadratic, this size took ~2 s: 16x the quarter size, linear 4x
    index, reports = _indexer(tmp_path)
    assert_linear(index, make, n // 4, repeat=2, what="headings")
    docs, report = reports[-1]
    assert report["lexical"]["sections"] == n + 1
    conn = sqlite3.connect(index_dir(docs) / "index.sqlite")
    rows = {r[0]: r for r in conn.execute("SELECT id, title, level, parent_id FROM sections")}
    top = next(r for r in rows.values() if r[2] == 1)
    for _rid, title, level, parent in rows.values():
        if level == 2:
            assert parent == top[0]
        elif level == 3:
            assert rows[parent][1] == "Part " + title.split()[-1]


def test_sitemap_gzip_bomb_is_abandoned_within_bounded_memory():
    deflate = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = b"\0" * (1 << 20)
    bomb = b"".join(deflate.compress(chunk) for _ in range(200)) + deflate.flush()  # 200 MB inflated
    assert len(bomb) < 300_000
    tracemalloc.start()
    try:
        assert parse_sitemap(bomb) == ([], [])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20, peak  # the 50 MB cap plus a step, never the 200 MB


def test_sitemap_gzip_and_plain_parse_and_entities_are_refused():
    xml = (b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
           b"<url><loc>https://a.dev/docs/x</loc></url></urlset>")
    assert parse_sitemap(xml) == (["https://a.dev/docs/x"], [])
    assert parse_sitemap(gzip.compress(xml)) == (["https://a.dev/docs/x"], [])
    assert parse_sitemap(gzip.compress(xml)[:-12]) == ([], [])  # truncated
    laughs = (b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
              b"<urlset><url><loc>&b;</loc></url></urlset>")
    assert parse_sitemap(laughs) == ([], [])
    external = (b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
                b"<urlset><url><loc>&e;</loc></url></urlset>")
    assert parse_sitemap(external) == ([], [])


@pytest.mark.parametrize("url", ["https://x.dev/docs/%2e%2e/admin", "https://x.dev/docs/%2E%2E/%2e%2e/etc",
                                 "https://x.dev/docs/.%2e/other", "https://x.dev/docs/a/%2e%2e/%2e%2e/b"])
def test_percent_encoded_dot_segments_leave_the_scope(url):
    scope = Scope("https://x.dev/docs/")
    canonical = canonical_url(url)
    assert "%2e" not in canonical.lower()
    assert scope.reason_excluded(canonical) == "out of scope (outside path prefix)"


def test_escaped_unreserved_characters_are_one_url_and_others_keep_their_escape():
    assert canonical_url("https://x.dev/docs/%7euser/a%2db") == "https://x.dev/docs/~user/a-b"
    assert canonical_url("https://x.dev/docs/a%2fb%20c") == "https://x.dev/docs/a%2Fb%20c"
    assert Scope("https://x.dev/docs/").reason_excluded(canonical_url("https://x.dev/docs/%41pi")) is None


@pytest.mark.parametrize("name", [".hidden@1", "a@1\n", "a\t@1", " a@1", "a@1 ", "a*@1", "a?@1", "a[1]@1",
                                  'a"@1', "a|b@1", "a@1\u2028", "a\u200b@1"])
def test_set_names_that_would_be_invisible_or_globs_are_refused(name):
    with pytest.raises(InputError):
        validate_set_name(name)


@pytest.mark.parametrize("name", ["Acme_Docs@latest", "Claude Code@2.1", "uv@0.5.x", "Doc-Set@v1_2"])
def test_ordinary_set_names_pass(name):
    assert validate_set_name(name) == name


def test_hidden_set_name_is_refused_by_import_with_exit_2(tmp_path):
    src = tmp_path / "a.md"
    src.write_text("# A\n\ntext\n", encoding="utf-8")
    proc = run_cli("import", src, "--set", ".hidden@1", "--docs-dir", tmp_path / "md_docs")
    assert proc.returncode == 2 and "hidden" in proc.stderr
    assert not (tmp_path / "md_docs" / ".hidden@1").exists()


def test_utf16_is_decoded_and_binary_without_nul_bytes_is_skipped(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "wide.md").write_bytes("\ufeff# Wide Page\n\nÜber café text.\n".encode("utf-16-le"))
    (src / "blob.md").write_bytes(bytes(range(0x80, 0x100)) * 40)  # no NUL, not text
    docs = tmp_path / "md_docs"
    proc = run_cli("import", src, "--set", "Enc@1", "--docs-dir", docs, "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["created"] == ["Wide Page"]
    assert any(s["path"] == "blob.md" and "binary" in s["reason"] for s in data["skipped"])
    assert "Über café" in (docs / "Enc@1" / "Wide Page" / "docContent.md").read_text(encoding="utf-8")


def test_read_commands_for_a_dash_page_work_when_pasted(tmp_path):
    src = tmp_path / "-rf.md"
    src.write_text("# -rf\n\n## Danger\n\nremove the tree recursively\n", encoding="utf-8")
    docs = tmp_path / "md_docs"
    assert run_cli("import", src, "--set", "Dash@1", "--docs-dir", docs).returncode == 0
    from doc4llm.reader import read_command

    res = json.loads(run_cli("search", "remove the tree recursively", "--docs-dir", docs, "--json").stdout)
    top = res["results"][0]
    command = read_command(top["source"], top["doc_set"], *top["lines"], str(docs))  # what `read:` prints
    assert " -- -rf.md" in command

    argv = shlex.split(command)[2:]  # drop "doc4llm read"
    proc = run_cli("read", *argv, "--docs-dir", docs) if "--docs-dir" not in argv else run_cli("read", *argv)
    assert proc.returncode == 0, proc.stderr
    assert "remove the tree recursively" in proc.stdout


def test_empty_section_or_lines_is_bad_input(tmp_path):
    src = tmp_path / "p.md"
    src.write_text("# P\n\n## A\n\ntext\n", encoding="utf-8")
    docs = tmp_path / "md_docs"
    assert run_cli("import", src, "--set", "S@1", "--docs-dir", docs).returncode == 0
    for flag in ("--section", "--lines"):
        proc = run_cli("read", "P", flag, "", "--docs-dir", docs, "--json")
        assert proc.returncode == 2, proc.stdout
        assert "is empty" in json.loads(proc.stdout)["message"]


def test_unwritable_index_place_says_what_it_tried_and_how_to_choose(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    with pytest.raises(ExternalError) as err:
        make_index_dir(blocker / "cache" / "doc4llm")
    assert str(blocker) in err.value.message and "XDG_CACHE_HOME" in err.value.hint
