"""Issue 29 item 7: terminal escape sequences in documentation never reach a terminal.

A page can carry OSC sequences (`ESC ] ... BEL`: set the window title, write the clipboard
with OSC 52, hide a link with OSC 8), DCS/APC strings and 8-bit C1 controls. The text
output of `search`, `read` and `toc` drops them all; `--json` keeps the text, escaped.
"""

from __future__ import annotations

import json
import re
import time

import pytest
from conftest import run_cli

from doc4llm.corpus.controls import strip_controls
from doc4llm.corpus.writer import SetWriter

SET = "Escapes@1"
OSC_TITLE = "\x1b]0;pwned title\x07"
OSC_CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x1b\\"
OSC_LINK = "\x1b]8;;https://evil.example/\x1b\\"
HOSTILE = (f"Rotate the signing keys{OSC_TITLE} every ninety days{OSC_CLIPBOARD} with the "
           f"{OSC_LINK}rotation tool\x1b]8;;\x1b\\ \x1bPq#0;2;0;0;0\x1b\\and \x1b_apc\x07the "
           f"\x9b2J\x9d0;c1 title\x9c scheduler \x1b[31mcolour\x1b[0m\x1bc done.")
ANY_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.fixture()
def docs(tmp_path):
    docs = tmp_path / "docs"
    w = SetWriter(docs, SET, origin="test")
    w.write_page("Key Rotation", f"## Rotating keys{OSC_TITLE}\n\n{HOSTILE}\n", source="keys.md", key="keys.md")
    w.finish({})
    return docs


def _visible(out: str) -> None:
    assert not ANY_CONTROL.search(out), repr(ANY_CONTROL.search(out).group())
    assert "pwned" not in out and "evil.example" not in out and "cm0gLXJmIH4" not in out


def test_search_text_output_has_no_control_sequences(docs):
    proc = run_cli("search", "rotate signing keys scheduler", "--docs-dir", docs, "--embedder", "none")
    assert proc.returncode == 0, proc.stderr
    _visible(proc.stdout)
    assert "Rotate the signing keys" in proc.stdout  # the best line, its sequences gone


def test_search_json_keeps_the_sequences_escaped(docs):
    proc = run_cli("search", "rotate signing keys scheduler", "--docs-dir", docs, "--embedder", "none", "--json")
    assert proc.returncode == 0, proc.stderr
    assert not ANY_CONTROL.search(proc.stdout.replace("\n", "")), "raw controls in --json"
    snippet = json.loads(proc.stdout)["results"][0]["snippet"]
    assert "\x1b]52;c;" in snippet or "\x1b]8;;" in snippet or "\x1b]0;" in snippet  # the data, unchanged
    assert "\\u001b" in proc.stdout and "\\u009b" in proc.stdout


def test_read_and_toc_text_output_have_no_control_sequences(docs):
    read = run_cli("read", "Key Rotation", "--docs-dir", docs)
    assert read.returncode == 0, read.stderr
    _visible(read.stdout)
    assert "Rotate the signing keys every ninety days with the rotation tool" in read.stdout
    toc = run_cli("toc", "Key Rotation", "--docs-dir", docs)
    assert toc.returncode == 0, toc.stderr
    _visible(toc.stdout)
    assert "Rotating keys" in toc.stdout
    as_json = json.loads(run_cli("read", "Key Rotation", "--docs-dir", docs, "--json").stdout)
    assert OSC_CLIPBOARD in as_json["text"]


@pytest.mark.parametrize("raw, shown", [
    ("a\x1b]0;title\x07b", "ab"),
    ("a\x1b]52;c;ZXZpbA==\x1b\\b", "ab"),
    ("\x1b]8;;https://x/\x1b\\link\x1b]8;;\x1b\\", "link"),
    ("\x1b[1;31mred\x1b[0m", "red"),
    ("\x9b2J\x9d0;t\x9cc1", "c1"),
    ("a\x1bPdata\x1b\\b\x1bXsos\x1b\\c\x1b^pm\x1b\\d\x1b_apc\x07e", "abcde"),
    ("\x1bcreset \x1b(Bcharset \x1b7saved", "reset charset saved"),
    ("keep\ttabs\nand lines\r\x00\x08\x7f", "keep\ttabs\nand lines"),
    ("unterminated \x1b]0;the rest is plain text", "unterminated 0;the rest is plain text"),
    ("plain text, unicode \u00e9\u4e2d\U0001f600", "plain text, unicode \u00e9\u4e2d\U0001f600"),
])
def test_strip_controls(raw, shown):
    assert strip_controls(raw) == shown


@pytest.mark.parametrize("make", [
    lambda n: "\x1b]" * n,
    lambda n: "\x9d" * n,
    lambda n: "\x1b]" + "a" * n,
    lambda n: "\x1b[" + "0" * n,
    lambda n: ("\x1b]0;" + "t" * 50) * (n // 54),
])
def test_strip_controls_is_linear(make):
    def cpu(text: str) -> float:
        best = float("inf")
        for _ in range(3):
            t0 = time.process_time()
            for _ in range(20):
                strip_controls(text)
            best = min(best, time.process_time() - t0)
        return best

    assert cpu(make(80_000)) / max(cpu(make(10_000)), 1e-6) < 30
