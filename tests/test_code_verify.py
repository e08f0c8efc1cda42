"""`doc4llm verify`: syntax errors with line and column, exit 1; unverified without grammar."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from doc4llm.code import grammars
from doc4llm.code.verify import answer_warnings, verify_code, verify_markdown, verify_text

ROOT = Path(__file__).resolve().parent.parent

GOOD = {
    "python": "def f(x):\n    return x * 2\n",
    "typescript": "export function f(x: number): number {\n  return x * 2;\n}\n",
    "javascript": "function f(x) {\n  return x * 2;\n}\n",
    "go": "package main\n\nfunc f(x int) int {\n\treturn x * 2\n}\n",
    "rust": "fn f(x: i32) -> i32 {\n    x * 2\n}\n",
    "bash": "for f in *.txt; do\n  echo \"$f\"\ndone\n",
    "json": '{"a": [1, 2], "b": {"c": null}}\n',
    "yaml": "a: 1\nb:\n  - x\n  - y\n",
}
# (code, line, column) of the first reported error
BROKEN = {
    "python": ("def f(x):\n    return (x * 2\n\ny = 3\n", 2, None),
    "typescript": ("function f(x: number {\n  return x;\n}\n", 1, None),
    "javascript": ("const a = [1, 2;\n", 1, None),
    "go": ("package main\n\nfunc main() {\n\tfmt.Println(\"hi\"\n}\n", None, None),
    "rust": ("fn main() {\n    let x = ;\n}\n", 2, None),
    "bash": ("if [ -f x ]; then\n  echo hi\n", None, None),
    "json": ('{\n  "a": 1,\n  "b": 2,\n}\n', 3, 9),
    "yaml": ("a: 1\n b: 2\nc: [1, 2\n", None, None),
}


@pytest.mark.parametrize("lang", sorted(GOOD))
def test_valid_code_is_ok(lang):
    report = verify_code(GOOD[lang], lang)
    assert report.status == "ok" and report.errors == []


@pytest.mark.parametrize("lang", sorted(BROKEN))
def test_broken_code_reports_line_and_column(lang):
    code, line, column = BROKEN[lang]
    report = verify_code(code, lang, first_line=10)
    assert report.status == "error" and report.errors
    first = report.errors[0]
    n = len(code.splitlines())
    assert 10 <= first.line <= 10 + n and first.column >= 1 and first.message
    if line is not None:
        assert first.line == 9 + line
    if column is not None:
        assert first.column == column


def test_unreliable_grammar_is_unverified():
    assert verify_code("graph TD\n    A-->B\n", "mermaid").status == "unverified"


def test_unknown_language_is_unverified():
    report = verify_code("graph TD; A-->B\n", "foolang")
    assert report.status == "unverified" and "no local grammar" in report.note


def test_grammar_that_would_need_a_download_is_unverified(monkeypatch):
    """tree-sitter-language-pack 1.x downloads grammars on first use: never at run time."""
    import tree_sitter_language_pack as pack

    def must_not_be_called(name):
        raise AssertionError("get_parser must not run for a grammar that is not on disk")

    monkeypatch.setattr(pack, "downloaded_languages", lambda: [], raising=False)
    monkeypatch.setattr(pack, "get_parser", must_not_be_called)
    grammars.parser_for.cache_clear()
    try:
        assert verify_code(GOOD["python"], "python").status == "unverified"
    finally:
        grammars.parser_for.cache_clear()


def test_markdown_blocks_with_absolute_lines_and_wrong_label():
    md = (
        "# Doc\n\n```python\ndef ok():\n    return 1\n```\n\n"
        "```javascript\ndef mislabelled():\n    return 1\n```\n\n"
        "```foolang\ngraph TD\n```\n\n"
        "    {\"indented\": true}\n"
    )
    reports = verify_markdown(md)
    assert [r.status for r in reports] == ["ok", "error", "unverified", "ok"]
    assert reports[0].lines == (4, 5)
    assert "parses cleanly as python" in reports[1].note and reports[1].errors[0].line == 9
    assert reports[3].lang == "json" and reports[3].lines == (17, 17)


def test_code_file_extension_names_the_language(tmp_path):
    assert verify_text("fn main() {}\n", filename="main.rs")[0].lang == "rust"
    assert verify_text("a: [1\n", filename="ci.yml")[0].status == "error"


def test_answer_warnings_name_the_broken_block():
    answer = "Use this:\n\n```python\ndef f(:\n    pass\n```\n\nand this:\n\n```bash\necho ok\n```\n"
    warnings = answer_warnings(answer)
    assert len(warnings) == 1 and "line 4" in warnings[0] and "python" in warnings[0]


def test_upstream_code_docs_verify_clean():
    for page in sorted((ROOT / "benchmarks" / "code" / "code_docs").glob("*.md")):
        reports = verify_markdown(page.read_text())
        assert all(r.status == "ok" for r in reports), (page.name, [r.to_dict() for r in reports if r.status != "ok"])


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "doc4llm", "verify", *args], input=stdin,
                          capture_output=True, text=True, timeout=60)


def test_cli_reports_errors_and_exits_1(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# T\n\n```python\ndef f(x):\n    return (x +\n```\n\n```bash\necho ok\n```\n")
    proc = _cli(str(page))
    assert proc.returncode == 1
    assert "error      python" in proc.stdout and "line 5, column" in proc.stdout
    assert "2 block(s): 1 ok, 1 error, 0 unverified" in proc.stdout


def test_cli_json_from_stdin_with_lang():
    proc = _cli("-", "--lang", "go", "--json", stdin="package main\nfunc main() {\n")
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["ok"] is False and data["counts"]["error"] == 1
    (block,) = data["blocks"]
    assert block["lang"] == "go" and block["errors"][0]["line"] == 2


def test_cli_unverified_language_exits_0():
    proc = _cli("-", "--lang", "brainfudge", "--json", stdin="+++[>++<-]\n")
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["blocks"][0]["status"] == "unverified"


def test_cli_clean_file_exits_0():
    proc = _cli(str(ROOT / "benchmarks" / "code" / "code_docs" / "gopool-worker-pool.md"))
    assert proc.returncode == 0 and "0 error" in proc.stdout


def test_cli_missing_file_is_bad_input(tmp_path):
    """Exit 1 means syntax errors; a missing input is bad input (2), as for `import`."""
    proc = _cli(str(tmp_path / "nope.md"), "--json")
    assert proc.returncode == 2 and json.loads(proc.stdout)["error"] == "InputError"
