"""Fence labels are normalised; unlabelled code is detected and confirmed by a parse."""

from __future__ import annotations

import pytest

from doc4llm.code.blocks import find_code_blocks
from doc4llm.code.langdetect import detect_language, normalize_label, resolve_language

SAMPLES = {
    "python": "import os\n\n\ndef main(argv):\n    for arg in argv:\n        print(os.path.basename(arg))\n",
    "typescript": "interface User {\n  id: number;\n  name: string;\n}\n\nexport function greet(u: User): string {\n  return `hi ${u.name}`;\n}\n",
    "javascript": "const fs = require('fs');\n\nfunction load(path) {\n  return JSON.parse(fs.readFileSync(path, 'utf8'));\n}\nconsole.log(load('a.json'));\n",
    "go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tx := 3\n\tfmt.Println(x)\n}\n",
    "rust": "use std::io;\n\nfn main() {\n    let mut line = String::new();\n    io::stdin().read_line(&mut line).unwrap();\n}\n",
    "bash": "#!/usr/bin/env bash\nset -e\nexport PORT=8080\nnpm install\nif [ -f .env ]; then\n  source .env\nfi\n",
    "json": '{\n  "name": "demo",\n  "version": "1.0.0",\n  "scripts": {"test": "jest"}\n}\n',
    "yaml": "name: ci\non:\n  push:\n    branches: [main]\njobs:\n  test:\n    runs-on: ubuntu-latest\n",
}


@pytest.mark.parametrize("lang", sorted(SAMPLES))
def test_detects_unlabelled_code(lang):
    assert detect_language(SAMPLES[lang]) == lang


@pytest.mark.parametrize(
    "label,expected",
    [("py", "python"), ("Python3", "python"), ("ts", "typescript"), ("sh", "bash"), ("console", "bash"),
     ("yml", "yaml"), ("jsonc", "json"), ("golang", "go"), ("rs", "rust"), ("{.python}", "python"),
     ('python title="x.py"', "python"), ("text", None), ("", None), ("mermaid", "mermaid")],
)
def test_normalize_label(label, expected):
    assert normalize_label(label) == expected


def test_prose_and_prompts_are_not_code():
    assert detect_language("> add a hello world function to the main file\n") is None
    assert detect_language(" 1. Head over to the console, create an account, and generate a key.\n") is None


def test_wrong_label_is_corrected_when_the_text_parses_as_another_language():
    guess = resolve_language("javascript", SAMPLES["python"])
    assert guess.lang == "python" and guess.label_mismatch and guess.label == "javascript"


def test_right_label_with_broken_code_keeps_the_label():
    guess = resolve_language("python", "def f(:\n    pass\n")
    assert guess.lang == "python" and not guess.label_mismatch


def test_unknown_label_is_kept():
    guess = resolve_language("foolang", "anything at all")
    assert guess.lang == "foolang" and not guess.detected


def test_filename_line_above_a_block_hints_the_language():
    md = "Create the tool:\n\n.opencode/tools/database.ts\n    \n    import { tool } from \"x\"\n    export default tool({})\n"
    (block,) = find_code_blocks(md)
    assert block.filename == ".opencode/tools/database.ts" and block.hint == "ts"
    assert resolve_language(block.hint, block.code).lang == "typescript"
