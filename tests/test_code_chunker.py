"""Code blocks are split at symbol boundaries with absolute line ranges."""

from __future__ import annotations

from pathlib import Path

import pytest
from growth import assert_linear

from doc4llm.code import CodeChunk, chunks_for_section
from doc4llm.code.chunker import MAX_LINES, chunk_code

CODE_DOCS = Path(__file__).resolve().parent.parent / "benchmarks" / "code" / "code_docs"


def _doc(name: str) -> tuple[str, list[str]]:
    text = (CODE_DOCS / name).read_text(encoding="utf-8")
    return text, text.splitlines()


def _by_symbol(chunks: list[CodeChunk], symbol: str) -> CodeChunk:
    hits = [c for c in chunks if symbol in c.symbols]
    assert hits, f"{symbol} not in {[c.symbols for c in chunks]}"
    return hits[0]


def _assert_lines_match(chunk: CodeChunk, lines: list[str], first_line: int = 1) -> None:
    """The chunk's text is exactly its line range of the document (de-indented)."""
    doc = [line.strip() for line in lines[chunk.start - first_line : chunk.end - first_line + 1]]
    assert doc == [line.strip() for line in chunk.text.splitlines()]


def test_python_function_is_its_own_chunk_with_exact_lines():
    text, lines = _doc("retrykit-guide.md")
    chunks = chunks_for_section(text, 1)
    chunk = _by_symbol(chunks, "compute_backoff_delay")
    assert chunk.kind == "function" and chunk.lang == "python"
    assert lines[chunk.start - 1].startswith("def compute_backoff_delay(")
    assert lines[chunk.end - 1].strip() == 'raise ValueError(f"unknown jitter mode: {jitter!r}")'
    assert chunk.end - chunk.start < 40  # not the 230-line block around it
    for c in chunks:
        _assert_lines_match(c, lines)


def test_offset_makes_lines_absolute():
    text, lines = _doc("retrykit-guide.md")
    section = "\n".join(lines[29:])  # a section starting at line 30 of docContent.md
    chunk = _by_symbol(chunks_for_section(section, 30), "compute_backoff_delay")
    assert lines[chunk.start - 1].startswith("def compute_backoff_delay(")


def test_python_imports_classes_and_methods():
    text, _ = _doc("retrykit-guide.md")
    chunks = chunks_for_section(text, 1)
    kinds = {c.kind for c in chunks}
    assert {"imports", "function", "class", "method"} <= kinds
    # RetryPolicy is short: one class chunk that still names its methods.
    policy = _by_symbol(chunks, "RetryPolicy")
    assert policy.kind == "class" and "RetryPolicy.with_overrides" in policy.symbols
    # CircuitBreaker is long: header + one chunk per method, covering the class.
    call = _by_symbol(chunks, "CircuitBreaker.call")
    assert call.kind == "method" and call.text.lstrip().startswith("def call(")
    assert "__init__" not in call.symbols


def test_never_splits_inside_a_function():
    text, _ = _doc("retrykit-guide.md")
    code = text.split("## The library source", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    from doc4llm.code import grammars

    tree = grammars.parse(code, "python")
    chunks = chunk_code(code, "python", 1)
    for node in tree.root_node.named_children:
        if node.type in ("function_definition", "decorated_definition"):
            first, last = node.start_point[0] + 1, node.end_point[0] + 1
            assert any(c.start <= first and last <= c.end for c in chunks), node.text[:40]


def test_typescript_chunks():
    text, lines = _doc("fetchkit-typescript-client.md")
    chunks = chunks_for_section(text, 1)
    assert _by_symbol(chunks, "joinUrl").kind == "function"  # const joinUrl = (...) =>
    assert _by_symbol(chunks, "RequestOptions").kind == "class"  # interface
    request = _by_symbol(chunks, "HttpClient.request")
    assert request.kind == "method" and "async request<T>" in request.text
    assert any(c.kind == "imports" and c.lang == "typescript" for c in chunks)
    js = _by_symbol(chunks, "main")
    assert js.lang == "javascript"
    for c in chunks:
        _assert_lines_match(c, lines)


def test_go_methods_are_qualified_by_receiver():
    text, lines = _doc("gopool-worker-pool.md")
    chunks = chunks_for_section(text, 1)
    submit = _by_symbol(chunks, "Pool.Submit")
    assert submit.kind == "method" and "Submit" in submit.symbols
    assert lines[submit.start - 1].startswith("// Submit queues a job")  # leading comment kept
    imports = next(c for c in chunks if c.kind == "imports")
    assert "package gopool" in imports.text and '"context"' in imports.text
    assert _by_symbol(chunks, "NewPool").kind == "function"


def test_rust_impl_methods_and_functions():
    text, _ = _doc("confique-rust-config.md")
    chunks = chunks_for_section(text, 1)
    assert _by_symbol(chunks, "parse_duration").kind == "function"
    load = _by_symbol(chunks, "Config.load")
    assert load.kind == "method" and load.text.lstrip().startswith("/// Load from a file")
    assert any(c.kind == "imports" and c.lang == "rust" for c in chunks)
    assert _by_symbol(chunks, "Config").kind == "class"


def test_indented_shell_block_with_filename_hint():
    text, lines = _doc("shipit-deployment-scripts.md")
    chunks = chunks_for_section(text, 1)
    health = _by_symbol(chunks, "wait_for_health")
    assert health.lang == "bash" and health.kind == "function"
    assert lines[health.start - 1] == "    wait_for_health() {"
    langs = {c.lang for c in chunks}
    assert {"bash", "yaml", "json"} <= langs


def test_large_json_splits_at_keys_and_covers_everything():
    body = ",\n".join(f'  "key{i}": {{\n    "value": {i},\n    "enabled": true\n  }}' for i in range(400))
    code = "{\n" + body + "\n}\n"
    chunks = chunk_code(code, "json", 10)
    assert len(chunks) > 10
    assert all(c.end - c.start + 1 <= MAX_LINES for c in chunks)
    covered = set()
    for c in chunks:
        covered.update(range(c.start, c.end + 1))
    n = len(code.splitlines())
    assert set(range(10, 10 + n)) == covered


def test_yaml_document_splits_at_top_level_keys():
    code = "".join(f"job{i}:\n  runs-on: ubuntu-latest\n  steps:\n    - run: make test{i}\n" for i in range(60))
    chunks = chunk_code(code, "yaml", 1)
    assert len(chunks) > 3 and all(c.end - c.start + 1 <= MAX_LINES for c in chunks)
    assert chunks[0].start == 1 and chunks[-1].end == len(code.splitlines())


def test_five_thousand_line_block_is_chunked_in_linear_time_and_complete():
    fns = "".join(
        f"def handler_{i}(event, context):\n    value = event.get('x', {i})\n    return value * 2\n\n\n"
        for i in range(1000)
    )
    code = "import json\nimport os\n\n\n" + fns
    assert len(code.splitlines()) >= 5000
    md = f"## Handlers\n\n```python\n{code}```\n"
    chunks = chunks_for_section(md, 100)
    functions = [c for c in chunks if c.kind == "function"]
    assert len(functions) == 1000
    h = _by_symbol(chunks, "handler_537")
    assert h.end - h.start == 2 and h.text.startswith("def handler_537(")
    assert chunks[0].kind == "imports" and chunks[0].start == 103

    def block(n: int) -> str:
        return "## H\n\n```python\nimport os\n\n\n" + "".join(
            f"def handler_{i}(event, context):\n    return event.get('x', {i}) * 2\n\n\n" for i in range(n)) + "```\n"

    assert_linear(lambda md: chunks_for_section(md, 100), block, 250, what="chunker")


def test_wrong_label_is_chunked_as_the_real_language():
    md = "```javascript\nimport os\n\ndef read_config(path):\n    with open(path) as f:\n        return f.read()\n" + "\n".join(
        f"def helper_{i}():\n    return {i}\n" for i in range(12)) + "```\n"
    chunks = chunks_for_section(md, 1)
    assert all(c.lang == "python" for c in chunks)
    assert _by_symbol(chunks, "read_config").kind == "function"


def test_unknown_language_falls_back_to_paragraphs():
    para = "\n".join(f"step {i} do the thing" for i in range(30))
    md = f"```foolang\n{para}\n\n{para}\n```\n"
    chunks = chunks_for_section(md, 1)
    assert chunks and all(c.lang == "foolang" and c.kind == "block" and not c.symbols for c in chunks)
    assert chunks[0].start == 2 and chunks[-1].end == 62


def test_broken_code_still_chunks():
    code = "def ok():\n    return 1\n\n" * 10 + "def broken(:\n    pass\n" + "\ndef after():\n    return 2\n" * 5
    chunks = chunk_code(code, "python", 1)
    assert chunks
    assert _by_symbol(chunks, "ok").kind == "function"


@pytest.mark.parametrize("label", [None, "text"])
def test_prose_like_indented_blocks_have_no_language(label):
    md = ("```text\n" if label else "") + "> commit my changes with a descriptive message\n" + ("```\n" if label else "")
    if not label:
        md = "Para.\n\n    > commit my changes with a descriptive message\n"
    chunks = chunks_for_section(md, 1)
    assert len(chunks) == 1 and chunks[0].lang is None and chunks[0].kind == "block"


def test_prose_section_has_no_chunks():
    assert chunks_for_section("## Intro\n\nJust words.\n\n* a list\n    * nested item\n", 5) == []
