"""`doc4llm toc` / `read` / `sets` through the real CLI: lookup rules, ranges, safety."""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

import pytest
from conftest import run_cli

from doc4llm.corpus.writer import SetWriter
from doc4llm.errors import InputError, NotFoundError
from doc4llm.reader import get_toc, read_section

GUIDE = """Intro paragraph.

## Install

Install text.

### Linux

Linux text.

### macOS

Mac text.

## Usage

Usage text.

## Configure

### Usage

Configure usage.

## Configure

Second configure.
"""


@pytest.fixture
def docs(tmp_path) -> Path:
    docs = tmp_path / "md_docs"
    w = SetWriter(docs, "Acme@1", origin="test")
    w.write_page("Getting Started", GUIDE, source="guide.md", key="guide")
    w.write_page("Reference", "## API\n\nCall it.\n", source="ref.md", key="ref")
    w.finish({})
    w2 = SetWriter(docs, "Other@2", origin="test")
    w2.write_page("Reference", "## CLI\n\nRun it.\n", source="ref.md", key="ref")
    w2.finish({})
    return docs


def cli_json(docs: Path, *args: str) -> tuple[int, dict]:
    proc = run_cli(*args, "--docs-dir", docs, "--json")
    return proc.returncode, json.loads(proc.stdout)


def test_toc_json_lists_sections_with_lines_and_tokens(docs):
    rc, data = cli_json(docs, "toc", "Getting Started")
    assert rc == 0
    assert data["doc_set"] == "Acme@1" and data["page"] == "Getting Started"
    # cited so that it opens from the caller's working directory (here: outside the docs)
    assert Path(data["content_path"]) == (docs / "Acme@1" / "Getting Started" / "docContent.md").resolve()
    addrs = [s["address"] for s in data["sections"]]
    assert addrs[:4] == ["Getting Started", "Getting Started > Install",
                         "Getting Started > Install > Linux", "Getting Started > Install > macOS"]
    assert "Getting Started > Configure (2)" in addrs
    lines = (docs / "Acme@1" / "Getting Started" / "docContent.md").read_text().splitlines()
    for s in data["sections"]:
        a, b = s["lines"]
        assert 1 <= a <= b <= len(lines) and s["tokens"] > 0
    text = run_cli("toc", "Getting Started", "--docs-dir", docs)
    assert text.returncode == 0 and "Linux  L" in text.stdout
    assert "  Configure (2)  L" in text.stdout  # the address to pass to --section


def test_page_lookup_exact_case_insensitive_and_fuzzy(docs):
    rc, data = cli_json(docs, "read", "getting started", "--lines", "1:1")
    assert rc == 0 and data["page"] == "Getting Started" and data["text"] == "# Getting Started"
    SetWriter(docs, "Acme@1", origin="test").write_page("Café Guide", "x\n", source="c.md", key="c")
    nfd = unicodedata.normalize("NFD", "café guide")
    assert read_section(docs, nfd, lines="1")["page"] == "Café Guide"
    proc = run_cli("read", "Geting Startd", "--docs-dir", docs)
    assert proc.returncode == 1
    assert "did you mean" in proc.stderr and "Acme@1 / Getting Started" in proc.stderr
    too_long = run_cli("read", "x" * 300, "--docs-dir", docs)
    assert too_long.returncode == 1 and "no page named" in too_long.stderr
    rc, err = cli_json(docs, "toc", "Geting Startd")
    assert rc == 1 and err["error"] == "NotFoundError"
    assert "Acme@1 / Getting Started" in err["candidates"]


def test_page_in_two_sets_needs_set(docs):
    proc = run_cli("toc", "Reference", "--docs-dir", docs)
    assert proc.returncode == 1
    assert "Acme@1 / Reference" in proc.stderr and "Other@2 / Reference" in proc.stderr
    rc, data = cli_json(docs, "read", "Reference", "--set", "Other@2", "--section", "CLI")
    assert rc == 0 and data["doc_set"] == "Other@2" and "Run it." in data["text"]
    rc, data = cli_json(docs, "read", "Reference", "--set", "acme", "--section", "API")
    assert rc == 0 and data["doc_set"] == "Acme@1"
    proc = run_cli("toc", "Reference", "--set", "Nope@1", "--docs-dir", docs)
    assert proc.returncode == 1 and "no doc set matches" in proc.stderr


@pytest.mark.parametrize("query", [
    "Getting Started > Install > Linux",  # full path
    "Install > Linux",  # without the page H1
    "Linux",  # trailing fragment
    "getting started > install > LINUX",  # case-insensitive
    "  Install >  Linux ",  # spaces
])
def test_section_lookup_forms(docs, query):
    data = read_section(docs, "Getting Started", section=query)
    assert data["heading_path"] == ["Getting Started", "Install", "Linux"]
    assert data["text"] == "### Linux\n\nLinux text."


def test_ambiguous_section_lists_candidates(docs):
    SetWriter(docs, "Acme@1", origin="test").write_page(
        "Twice", "## Install\n\n### Setup\n\na\n\n## Configure\n\n### Setup\n\nb\n", source="t.md", key="t")
    proc = run_cli("read", "Twice", "--section", "setup", "--docs-dir", docs)
    assert proc.returncode == 1
    assert "ambiguous" in proc.stderr
    assert "Twice > Install > Setup" in proc.stderr and "Twice > Configure > Setup" in proc.stderr
    # a full path (here without the H1) wins over a trailing fragment
    data = read_section(docs, "Getting Started", section="Usage")
    assert data["text"] == "## Usage\n\nUsage text."
    data = read_section(docs, "Getting Started", section="Configure > Usage")
    assert data["text"] == "### Usage\n\nConfigure usage."
    # duplicate paths: the address (as `toc` lists it) picks one, ` (2)` the next
    rc, first = cli_json(docs, "read", "Getting Started", "--section", "Configure")
    assert rc == 0 and first["text"] == "## Configure"
    second = read_section(docs, "Getting Started", section="Configure (2)")
    assert second["text"] == "## Configure\n\nSecond configure."
    assert read_section(docs, "Getting Started", section="Getting Started > Configure (2)")["lines"] == second["lines"]


def test_missing_section_suggests(docs):
    rc, err = cli_json(docs, "read", "Getting Started", "--section", "Instal > Linux")
    assert rc == 1 and "Getting Started > Install > Linux" in err["candidates"]


def test_preamble_and_with_subsections(docs):
    rc, data = cli_json(docs, "read", "Getting Started", "--section", "Install", "--with-subsections")
    assert rc == 0
    assert data["text"].startswith("## Install") and data["text"].endswith("Mac text.")
    own = read_section(docs, "Getting Started", section="Install")
    assert own["text"] == "## Install\n\nInstall text."
    assert own["lines"][0] == data["lines"][0] and own["lines"][1] < data["lines"][1]
    assert data["tokens"] > own["tokens"]


def test_line_ranges(docs):
    content = (docs / "Acme@1" / "Getting Started" / "docContent.md").read_text().splitlines()
    rc, data = cli_json(docs, "read", "Getting Started", "--lines", "3:5")
    assert rc == 0 and data["lines"] == [3, 5] and data["text"] == "\n".join(content[2:5])
    assert data["url"] is None and data["source"] == "guide.md"  # a file path is not a URL
    assert read_section(docs, "Getting Started", lines=f"{len(content) - 1}:")["lines"] == [len(content) - 1, len(content)]
    assert read_section(docs, "Getting Started", lines=":2")["lines"] == [1, 2]
    assert read_section(docs, "Getting Started", lines="4")["lines"] == [4, 4]
    assert read_section(docs, "Getting Started", lines="1:100000")["lines"] == [1, len(content)]
    for bad in ("abc", "0:3", "5:2", "-1:2", f"{len(content) + 1}:{len(content) + 5}", "1:2:3", "x:"):
        with pytest.raises(InputError, match="--lines"):
            read_section(docs, "Getting Started", lines=bad)
    proc = run_cli("read", "Getting Started", "--lines", "5:2", "--docs-dir", docs)
    assert proc.returncode == 2 and "--lines '5:2'" in proc.stderr
    both = run_cli("read", "Getting Started", "--lines", "1:2", "--section", "Usage", "--docs-dir", docs)
    assert both.returncode == 2


def test_sets_json_and_text(docs):
    rc, data = cli_json(docs, "sets")
    assert rc == 0
    assert [(s["name"], s["pages"]) for s in data["sets"]] == [("Acme@1", 2), ("Other@2", 1)]
    text = run_cli("sets", "--docs-dir", docs)
    assert "Acme@1  2 pages" in text.stdout


def test_docs_dir_without_sets_says_so(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for args in (("sets",), ("toc", "X"), ("read", "X")):
        proc = run_cli(*args, "--docs-dir", empty)
        assert "no doc sets in" in proc.stdout + proc.stderr
        assert proc.returncode == (0 if args == ("sets",) else 1)
    missing = run_cli("sets", "--docs-dir", tmp_path / "missing")
    assert "does not exist" in missing.stdout
    env = run_cli("sets", cwd=tmp_path, env={"DOC4LLM_DOCS_DIR": str(empty)})
    assert str(empty) in env.stdout


def test_env_var_and_default_docs_dir(docs):
    proc = run_cli("toc", "Getting Started", "--json", env={"DOC4LLM_DOCS_DIR": str(docs)})
    assert proc.returncode == 0 and json.loads(proc.stdout)["page"] == "Getting Started"
    proc = run_cli("toc", "Getting Started", "--json", cwd=docs.parent)  # ./md_docs
    assert proc.returncode == 0


def test_unsafe_names_are_refused_and_nothing_outside_is_touched(docs, tmp_path):
    sentinel = tmp_path / "sentinel.md"
    sentinel.write_text("# Secret\n\nsecret text\n")
    (tmp_path / "Secret@1").mkdir()
    before = (sentinel.stat().st_mtime_ns, sentinel.read_bytes())
    attempts = [
        ("read", "../sentinel.md"),
        ("read", "../../etc/passwd"),
        ("toc", str(sentinel)),
        ("read", "Getting Started", "--set", "../Secret@1"),
        ("import", str(sentinel), "--set", "../Secret@1"),
    ]
    for args in attempts:
        proc = run_cli(*args, "--docs-dir", docs)
        assert proc.returncode == 2, args
        assert "refused" in proc.stderr or "cannot contain" in proc.stderr, (args, proc.stderr)
        assert "secret text" not in proc.stdout + proc.stderr
        assert "root:" not in proc.stdout
    assert (sentinel.stat().st_mtime_ns, sentinel.read_bytes()) == before
    assert list((tmp_path / "Secret@1").iterdir()) == []
    for name in ("bad\x00name", "..", ".", "/etc/passwd", "x/../y", "../sentinel.md"):
        with pytest.raises(InputError, match="refused"):
            read_section(docs, name)
    for name in ("a/b", "a\\b"):  # a source file no page records: looked up, never joined into a path
        with pytest.raises(NotFoundError, match="no page whose source file is"):
            read_section(docs, name)
    for set_pattern in ("Acme@1\x00", "../Secret@1", "Acme@1/..", "/abs"):
        with pytest.raises(InputError):
            get_toc(docs, "Getting Started", set_pattern)
    assert (sentinel.stat().st_mtime_ns, sentinel.read_bytes()) == before


def test_symlinks_out_of_the_docs_dir_are_not_followed(docs, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "docContent.md").write_text("# Leak\n\nsecret text\n")
    os.symlink(outside, docs / "Acme@1" / "Linked Page")
    (docs / "Acme@1" / "Linked File").mkdir()
    os.symlink(outside / "docContent.md", docs / "Acme@1" / "Linked File" / "docContent.md")
    os.symlink(outside, docs / "Linked@1")
    for page in ("Linked Page", "Linked File", "Leak"):
        proc = run_cli("read", page, "--docs-dir", docs)
        assert proc.returncode == 1, page
        assert "secret text" not in proc.stdout
    sets = json.loads(run_cli("sets", "--docs-dir", docs, "--json").stdout)
    assert "Linked@1" not in [s["name"] for s in sets["sets"]]


def test_non_utf8_page_reads_with_a_warning(docs):
    page = docs / "Acme@1" / "Latin"
    page.mkdir()
    (page / "docContent.md").write_bytes("# Latin\n\n## Caf\xe9\n\nna\xefve\n".encode("latin-1"))
    proc = run_cli("read", "Latin", "--section", "Caf\ufffd", "--docs-dir", docs)
    assert proc.returncode == 0, proc.stderr
    assert "not valid UTF-8" in proc.stderr
    assert "na\ufffdve" in proc.stdout


def test_hand_made_page_without_toc(docs):
    page = docs / "Acme@1" / "Hand Made"
    page.mkdir()
    (page / "docContent.md").write_text("Notes first.\n\n# Hand Made\n\n## Step\n\nDo it.\n")
    data = get_toc(docs, "Hand Made")
    assert data["toc_path"] is None
    assert [s["heading_path"] for s in data["sections"]] == [
        ["[Overview / Preamble]"], ["Hand Made"], ["Hand Made", "Step"]]
    assert read_section(docs, "Hand Made", section="Step")["text"] == "## Step\n\nDo it."
    rc, data = cli_json(docs, "read", "hand made", "--section", "[overview / preamble]")
    assert rc == 0 and data["text"] == "Notes first." and data["lines"] == [1, 1]


def test_candidates_can_be_passed_back(docs):
    rc, err = cli_json(docs, "toc", "Reference")
    assert rc == 1
    for candidate in err["candidates"]:  # "Set@ver / Page"
        rc, data = cli_json(docs, "toc", candidate)
        assert rc == 0 and f"{data['doc_set']} / {data['page']}" == candidate
    SetWriter(docs, "Acme@1", origin="test").write_page(
        "Twice", "## Install\n\n### Setup\n\na\n\n## Configure\n\n### Setup\n\nb\n", source="t.md", key="t")
    rc, err = cli_json(docs, "read", "Twice", "--section", "Setup")
    assert rc == 1 and len(err["candidates"]) == 2
    for candidate in err["candidates"]:  # "A > B  (lines N-M)"
        rc, data = cli_json(docs, "read", "Twice", "--section", candidate)
        assert rc == 0 and candidate.endswith(f"(lines {data['lines'][0]}-{data['lines'][1]})")
    with pytest.raises(InputError):
        read_section(docs, "Acme@1 / ../x")


def test_closed_pipe_is_not_an_error(docs):
    import subprocess
    import sys

    SetWriter(docs, "Acme@1", origin="test").write_page(
        "Big", "".join(f"line {i}\n" for i in range(200_000)), source="b.md", key="b")
    proc = subprocess.Popen([sys.executable, "-m", "doc4llm", "read", "Big", "--docs-dir", str(docs)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline().startswith(b"[Acme@1 / ")
    proc.stdout.close()  # like `| head -1`
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=30) == 0
    assert "Traceback" not in stderr and "error" not in stderr


@pytest.mark.parametrize("where", ["inside", "elsewhere"])
def test_read_citation_opens_from_the_callers_directory(docs, tmp_path, where):
    """The `[... path:a-b ...]` citation line of `read` is a path that opens from the
    directory the command ran in, whether that is above the docs or somewhere else."""
    cwd = docs.parent if where == "inside" else tmp_path / "elsewhere"
    cwd.mkdir(exist_ok=True)
    proc = run_cli("read", "Getting Started", "--lines", "1:3", "--docs-dir", docs, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    cited = proc.stdout.splitlines()[0].split("  ")[1].rsplit(":", 1)[0]
    assert (cwd / cited).resolve() == (docs / "Acme@1" / "Getting Started" / "docContent.md").resolve()
    assert Path(cited).is_absolute() == (where == "elsewhere")


def test_a_file_name_two_pages_share_asks_for_the_path(tmp_path):
    """`type_adapter.md` is both api/type_adapter.md and concepts/type_adapter.md: the error
    names both paths instead of "no page named"."""
    src = tmp_path / "src"
    for folder in ("api", "concepts"):
        (src / folder).mkdir(parents=True)
        (src / folder / "adapter.md").write_text(f"# Adapter {folder}\n\nText about {folder}.\n")
    docs = tmp_path / "docs"
    assert run_cli("import", src, "--set", "demo@1", "--docs-dir", docs).returncode == 0
    proc = run_cli("read", "adapter.md", "--docs-dir", docs)
    assert proc.returncode != 0 and "2 pages have a source file named 'adapter.md'" in proc.stderr
    assert "demo@1 / api/adapter.md" in proc.stderr and "demo@1 / concepts/adapter.md" in proc.stderr
    ok = run_cli("read", "concepts/adapter.md", "--docs-dir", docs)
    assert ok.returncode == 0 and "Text about concepts." in ok.stdout


def test_a_line_range_that_runs_into_later_sections_names_them(docs):
    """A `--lines` read is cited by the section it starts in; the later sections it reaches
    are named with their lines, so the agent does not cite the first for the second's text."""
    whole = read_section(docs, "Getting Started", set_name="Acme@1")
    lines = whole["text"].split("\n")
    install = next(i for i, ln in enumerate(lines, 1) if ln == "## Install")
    macos = next(i for i, ln in enumerate(lines, 1) if ln == "### macOS")
    usage = next(i for i, ln in enumerate(lines, 1) if ln == "## Usage")
    data = read_section(docs, "Getting Started", set_name="Acme@1", lines=f"{install}:{usage}")
    assert data["heading_path"][-1] == "Install"
    assert [x["heading"] for x in data["also_sections"]] == ["Linux", "macOS", "Usage"]
    assert data["also_sections"][-1]["lines"] == [usage, usage]
    assert "also_sections" not in read_section(docs, "Getting Started", set_name="Acme@1",
                                               lines=f"{install}:{install + 1}")
    proc = run_cli("read", "Getting Started", "--set", "Acme@1", "--lines", f"{macos}:{usage}", "--docs-dir", docs)
    head = proc.stdout.split("\n", 1)[0]
    assert f"> macOS (then Usage {usage}-{usage})" in head
