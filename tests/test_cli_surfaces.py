"""CLI details a user meets first: progress, exit codes, help, completion, `where`."""

from __future__ import annotations

import io
import json
import re
import time
from pathlib import Path

import click
import pytest
from conftest import MDMEM, run_cli

from doc4llm.cli import main
from doc4llm.cli.progress import Progress


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_is_a_bar_with_rate_and_time_left() -> None:
    stream = FakeTTY()
    with Progress(stream) as progress:
        for done in (25, 50, 75, 82):
            progress(f"indexed {done}/82 pages")
            time.sleep(0.02)
        progress("a plain message")
    out = stream.getvalue()
    assert "\r" in out and "82/82" in out and "pages/s" in out
    assert re.search(r"\[\d\d:\d\d<\d\d:\d\d", out), "elapsed<remaining"
    assert "doc4llm: a plain message" in out


def test_progress_in_a_pipe_is_plain_lines_with_rate() -> None:
    stream = io.StringIO()
    with Progress(stream) as progress:
        progress("Docs@1: embedded 10/100 sections")
        time.sleep(0.6)
        progress("Docs@1: embedded 40/100 sections")
        progress("another process is updating the index; using the current index")
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert lines[0] == "doc4llm: Docs@1: embedded 10/100 sections"
    assert re.fullmatch(r"doc4llm: Docs@1: embedded 40/100 sections  \(\d+\.\d sections/s, ~\d+s left\)",
                        lines[1]), lines[1]
    assert lines[2].endswith("using the current index")


def test_progress_counts_an_open_ended_task() -> None:
    stream, tty = io.StringIO(), FakeTTY()
    Progress(stream).count("scraped", "pages", 3, note="https://x.test/a")
    assert stream.getvalue() == "doc4llm: scraped 3 pages  https://x.test/a\n"
    with Progress(tty) as bar:
        bar.count("scraped", "pages", 3, note="https://x.test/a")
    assert "scraped: 3 pages" in tty.getvalue() and "x.test/a" in tty.getvalue()


def test_index_progress_without_a_terminal(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    assert run_cli("import", MDMEM / "corpus", "--set", "M@1", "--docs-dir", docs).returncode == 0
    proc = run_cli("index", "--no-vectors", "--docs-dir", docs, env={"DOC4LLM_EMBEDDER": "none"})
    assert proc.returncode == 0, proc.stderr
    assert "\r" not in proc.stderr and "indexed 7/7 pages" in proc.stderr
    assert proc.stdout.startswith("lexical: +7")


def test_missing_input_files_are_bad_input_everywhere(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    assert run_cli("verify", missing).returncode == 2
    assert run_cli("import", missing, "--set", "A@1", "--docs-dir", tmp_path / "d").returncode == 2


@pytest.mark.parametrize("name", sorted(main.list_commands(click.Context(main))))
def test_every_option_has_help(name: str) -> None:
    command = main.get_command(click.Context(main), name)
    commands = command.commands.values() if isinstance(command, click.Group) else [command]
    for cmd in commands:
        for param in cmd.params:
            if isinstance(param, click.Option):
                assert param.help, f"doc4llm {name} {param.opts[0]} has no help"


def test_scrape_help_tells_the_delay_cap() -> None:
    proc = run_cli("scrape", "--help")
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    assert "--max-pages" in text and "--concurrency" in text and "~10 pages/s" in text


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_shell_completion_script(shell: str) -> None:
    proc = run_cli(env={"_DOC4LLM_COMPLETE": f"{shell}_source"})
    assert proc.returncode == 0 and "_DOC4LLM_COMPLETE" in proc.stdout, proc.stderr


def test_bash_completion_lists_commands() -> None:
    proc = run_cli(env={"_DOC4LLM_COMPLETE": "bash_complete", "COMP_WORDS": "doc4llm se",
                        "COMP_CWORD": "1"})
    assert {"plain,search", "plain,sets", "plain,serve"} <= set(proc.stdout.split())


def test_where_prints_the_absolute_docs_root(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    assert run_cli("import", MDMEM / "corpus", "--set", "M@1", "--docs-dir", docs).returncode == 0
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "doc4llm.yaml").write_text(f"docs_dir: {docs}\n")
    proc = run_cli("where", "--json", cwd=tmp_path / "project")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["docs_dir"] == str(docs.resolve()) and data["from"] == "doc4llm.yaml"
    assert data["sets"] == ["M@1"]
    empty = run_cli("where", cwd=tmp_path)
    assert empty.returncode == 1 and empty.stdout.strip() == str((tmp_path / "md_docs").resolve())
    assert "no doc sets" in empty.stderr
    sets = json.loads(run_cli("sets", "--json", "--docs-dir", docs).stdout)
    assert sets["sets"][0]["path"] == str((docs / "M@1").resolve())
