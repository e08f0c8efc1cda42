"""Issue 33 items 1, 2, 4, 5 and 12: hostile docs inside a package archive (include bombs,
pandoc memory and time, mkdocs.yml alias bombs and paths outside the archive) finish with
bounded memory and a clear message, or a set built from what was within the limits.
Memory is measured in a subprocess (its own peak RSS and its children's); time as growth
between two input sizes (tests/growth.py), never against the clock."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fake_registries import sdist
from growth import assert_linear

from doc4llm.errors import ExternalError
from doc4llm.ingest.packages.includes import (
    MAX_EXPANDED_BYTES,
    PageIncludes,
    markdown_includes,
    mkdocs_includes,
    rst_includes,
)
from doc4llm.ingest.packages.mkdocs_config import load_yaml, mkdocs_project
from doc4llm.ingest.packages.rst import BudgetSpent, PandocBudget, rst_to_markdown, run_limited

MEASURE = """
import json, resource, sys
from pathlib import Path
from doc4llm.errors import Doc4llmError
from doc4llm.ingest.packages.package_docs import add_archive
try:
    r = add_archive(Path(sys.argv[1]), Path(sys.argv[2]))
    out = {"pages": r.pages, "warnings": r.warnings}
except Doc4llmError as exc:
    out = {"error": exc.message}
# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so a child of a big pytest
# process would report the parent's size
try:
    with open("/proc/self/status") as fh:
        out["rss_mb"] = next(int(x.split()[1]) for x in fh if x.startswith("VmHWM:")) / 1024
except OSError:  # no /proc: an upper bound
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out["child_rss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps(out))
"""


def measured_add(tmp_path: Path, files: dict[str, str], env: dict | None = None) -> dict:
    """`add` of an sdist holding `files`, in a subprocess: its result and peak RSS."""
    import os

    archive = tmp_path / "bomb-1.0.tar.gz"
    archive.write_bytes(sdist("bomb", "1.0", files))
    r = subprocess.run([sys.executable, "-c", MEASURE, str(archive), str(tmp_path / "md")],
                       capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})})
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


def alias_bomb(levels: int, width: int = 9) -> str:
    lines = ["site_name: bomb", "x0: &x0 [{Home: index.md}]"]
    lines += [f"x{i}: &x{i} [" + ", ".join([f"*x{i - 1}"] * width) + "]" for i in range(1, levels + 1)]
    return "\n".join(lines + [f"nav: *x{levels}"]) + "\n"


# -- item 1: include bombs ------------------------------------------------------------

def test_include_bombs_include_each_file_once_per_page(tmp_path):
    # 10x the bomb: a page including itself 1,200 times; a chain that fans out (50^6)
    (tmp_path / "bomb.rst").write_text(".. include:: bomb.rst\n" * 1200)
    for i in range(6):
        (tmp_path / f"l{i}.rst").write_text(f"Level {i}\n\n" + f".. include:: l{i + 1}.rst\n" * 50)
    (tmp_path / "l6.rst").write_text("leaf text\n")
    inc = PageIncludes(tmp_path, tmp_path / "bomb.rst")
    assert rst_includes((tmp_path / "bomb.rst").read_text(), tmp_path / "bomb.rst", inc).strip() == ""
    assert inc.dropped == 1200
    inc = PageIncludes(tmp_path, tmp_path / "page.rst")
    out = rst_includes(".. include:: l0.rst\n", tmp_path / "page.rst", inc)
    # each file is read and expanded once; its copies stop at the page's byte cap
    assert len(out) <= MAX_EXPANDED_BYTES + 1000 and inc.dropped > 0 and out.count("Level 0") == 1
    (tmp_path / "bomb.md").write_text('--8<-- "bomb.md"\n{! bomb.md !}\n' * 1200)
    (tmp_path / "myst.md").write_text("```{include} myst.md\n```\n" * 1200)
    inc = PageIncludes(tmp_path, tmp_path / "myst.md")
    assert markdown_includes((tmp_path / "myst.md").read_text(), tmp_path / "myst.md", inc, []).strip() == ""
    assert inc.dropped == 1200
    inc = PageIncludes(tmp_path, tmp_path / "page.md")
    out = mkdocs_includes((tmp_path / "bomb.md").read_text(), tmp_path / "page.md", inc, [])
    assert len(out) <= MAX_EXPANDED_BYTES + 3 * 2400 and inc.dropped >= 2400  # its own 2,400 cycles


def test_a_file_included_twice_on_a_page_appears_twice(tmp_path):
    # fastapi shows one example file several times on a page (`{!../docs_src/x.py!}`)
    (tmp_path / "ex.py").write_text("app = FastAPI()\n")
    inc = PageIncludes(tmp_path, tmp_path / "page.md")
    out = mkdocs_includes("```Python\n{!ex.py!}\n```\n\ntext\n\n```Python\n{!ex.py!}\n```\n", tmp_path / "page.md",
                          inc, [])
    assert out.count("app = FastAPI()") == 2 and inc.dropped == 0


def test_includes_stop_at_the_page_byte_cap(tmp_path):
    (tmp_path / "big.rst").write_text("x" * 600_000 + "\n")
    text = "".join(f".. include:: c{i}.rst\n" for i in range(10))
    for i in range(10):
        (tmp_path / f"c{i}.rst").write_text(".. include:: big.rst\n" if i == 0 else "y" * 600_000 + "\n")
    inc = PageIncludes(tmp_path, tmp_path / "page.rst")
    out = rst_includes(text, tmp_path / "page.rst", inc)
    assert len(out) <= MAX_EXPANDED_BYTES and inc.dropped >= 6


def test_include_expansion_is_linear_in_the_files_included(tmp_path):
    def make(n: int) -> tuple[Path, str]:
        d = tmp_path / str(n)
        d.mkdir(exist_ok=True)
        for i in range(n):
            (d / f"f{i}.rst").write_text("".join(f".. include:: f{j}.rst\n" for j in range(n)) + f"text {i}\n")
        return d, "".join(f".. include:: f{j}.rst\n" for j in range(n))

    def run(arg: tuple[Path, str]) -> None:
        d, text = arg
        rst_includes(text, d / "page.rst", PageIncludes(d, d / "page.rst"))
    # n files each including all n: work ~ n^2 lines read either way; expansion would be n^n
    assert_linear(run, make, 15, factor=2, limit=9, what="rst_includes fan-out")


def test_an_include_bomb_package_builds_with_bounded_memory(tmp_path):
    out = measured_add(tmp_path, {
        "docs/bomb.rst": "Bomb\n====\n\n" + ".. include:: bomb.rst\n" * 1200,
        "docs/bomb.md": '# Snippets\n\n' + '--8<-- "docs/bomb.md"\n' * 1200,
        "docs/other.rst": "Other\n=====\n\ntext\n"})
    assert out["pages"] >= 3 and out["rss_mb"] < 400, out
    assert any("includes left out" in w for w in out["warnings"])


# -- item 2: pandoc under limits ------------------------------------------------------

def test_pandoc_memory_is_capped(tmp_path):
    # the 1.2 KB sdist: |a| x200,000 replaced by "b " x1,000 drove pandoc to 5 GB
    bomb = "T\n=\n\n" + "|a| " * 200_000 + "\n\n.. |a| replace:: " + "b " * 1000
    out = measured_add(tmp_path, {"docs/index.rst": bomb, "docs/other.rst": "Other\n=====\n\ntext\n"},
                       env={"DOC4LLM_PANDOC_HEAP_MB": "64"})
    assert out["pages"] == 2 and out["child_rss_mb"] < 600, out
    assert any("could not convert within its limits" in w for w in out["warnings"]), out


def test_a_converter_is_stopped_at_its_output_and_cpu_limits():
    code, out, _, _, why = run_limited([sys.executable, "-c", "import sys\nwhile True: sys.stdout.write('x' * 65536)"],
                                       b"", 30, max_output=1_000_000)
    assert "output passed" in why and 1_000_000 < len(out) < 1_200_000
    code, _, _, used, why = run_limited([sys.executable, "-c", "while True: pass"], b"", 1)
    assert code != 0 and "CPU" in why and used < 3


# -- items 2 and 5: one time budget per package ---------------------------------------

def test_the_package_budget_keeps_late_pages_raw_and_says_so_once(tmp_path):
    with pytest.raises(BudgetSpent):
        rst_to_markdown("T\n=\n\ntext\n", PandocBudget(0))
    files = {f"docs/p{i}.rst": f"Page {i}\n======\n\n" + "Some *text* with ``code``.\n\n" * 200 for i in range(8)}
    out = measured_add(tmp_path, files, env={"DOC4LLM_PANDOC_BUDGET": "0.1"})
    assert out["pages"] == 8, out
    said = [w for w in out["warnings"] if "budget" in w]
    assert len(said) == 1 and "kept as raw text" in said[0], out["warnings"]
    titles = {p.name for p in (tmp_path / "md" / "bomb@1.0").iterdir()}
    assert {f"Page {i}" for i in range(8)} <= titles  # raw pages keep their titles


def test_pages_that_hit_their_limits_shrink_what_is_left_of_the_budget():
    # item 5: 40 pages that each take the whole per-page CPU limit would cost 40 x 10 s
    budget = PandocBudget(60)
    budget.charge(10)
    budget.note_raw(False)
    assert budget.remaining() == 50  # one page that failed: it may be the package's odd one
    budget.charge(10)
    budget.note_raw(False)
    assert budget.remaining() <= 5 and "cut to" in " ".join(budget.summary())


def test_pandoc_failures_are_errors_not_crashes(monkeypatch):
    monkeypatch.setenv("DOC4LLM_PANDOC_HEAP_MB", "32")
    with pytest.raises(ExternalError, match="heap cap"):
        rst_to_markdown("T\n=\n\n" + "|a| " * 200_000 + "\n\n.. |a| replace:: " + "b " * 1000,
                        PandocBudget(3))


# -- items 4 and 12: mkdocs.yml ---------------------------------------------------------

def test_mkdocs_alias_bombs_cost_what_their_text_costs(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n")

    def make(levels: int) -> Path:
        yml = tmp_path / f"mkdocs{levels}.yml"
        yml.write_text(alias_bomb(levels))
        return yml
    # 3 levels (9^3 nav entries) vs 12 levels (9^12): the same cost, not 9^9 times it
    assert_linear(lambda yml: mkdocs_project(yml, tmp_path, []), make, 3, factor=4, limit=10,
                  what="mkdocs.yml alias bomb")
    project = mkdocs_project(make(10), tmp_path, [])
    assert project is not None and project.nav == {"docs/index.md": "Home"}


@pytest.mark.parametrize("config, note", [
    ("docs_dir: /etc\nnav: [{Home: /etc/passwd}]\n", "docs_dir '/etc' lies outside the archive"),
    ("docs_dir: ../../..\n", "lies outside the archive"),
    ("nav: [{Home: ../../../etc/passwd.md}, {Ok: index.md}]\n", "1 nav entries point outside docs_dir"),
    ("nav: &a [{Home: index.md}, *a]\n", ""),
    ("INHERIT: /etc/mkdocs.yml\n", "INHERIT '/etc/mkdocs.yml' is not a file inside the archive"),
    ("nav: !!python/object/apply:os.system ['touch /tmp/pwned']\n", ""),
    ("[" * 1200 + "\n", ""),
])
def test_hostile_mkdocs_configs_are_ignored_with_a_note(tmp_path, config, note):
    root = tmp_path / "pkg"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "index.md").write_text("# Home\n")
    (root / "mkdocs.yml").write_text(config)
    notes: list[str] = []
    project = mkdocs_project(root / "mkdocs.yml", root, notes)
    if "outside the archive" in note:
        assert project is None
    else:
        assert project is not None and all(not v.startswith("/") for v in project.nav)
    assert (note in " ".join(notes)) if note else not notes
    assert load_yaml(root / "mkdocs.yml") is None or True  # never raises


def test_a_package_with_a_hostile_mkdocs_yml_still_builds(tmp_path):
    out = measured_add(tmp_path, {"mkdocs.yml": alias_bomb(10) + "docs_dir: /etc\n",
                                  "docs/index.md": "# Home\n\ntext\n"})
    assert out["pages"] >= 1 and any("outside the archive" in w for w in out["warnings"]), out
