"""Syntax verification of code with tree-sitter: errors with line and column.

Used by `doc4llm verify`, by `ask` on the code blocks of its answers and by `example`
on what it assembles. Languages without a local grammar are reported "unverified",
never silently "ok". A block whose fence label names one language while the text
parses cleanly as another is an error too: copied into a file of the labelled type it
would not run.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from doc4llm.code import grammars
from doc4llm.code.blocks import find_code_blocks
from doc4llm.code.langdetect import ALIASES, detect_language, normalize_label, resolve_language

MAX_ERRORS = 20
# Grammars that reject common valid input (mermaid's lacks the `graph TD` form): their
# verdict would be a false alarm, so their code is reported unverified.
UNRELIABLE_GRAMMARS = frozenset({"mermaid"})
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")


@dataclass
class SyntaxIssue:
    line: int  # 1-based, absolute in the verified input
    column: int  # 1-based
    message: str


@dataclass
class BlockReport:
    """The verdict on one piece of code."""

    status: str  # 'ok' | 'error' | 'unverified'
    lang: str | None
    lines: tuple[int, int]
    label: str | None = None
    errors: list[SyntaxIssue] = field(default_factory=list)
    note: str | None = None

    def to_dict(self) -> dict:
        data = asdict(self)
        data["lines"] = list(self.lines)
        return data


def verify_code(code: str, lang: str | None, first_line: int = 1, label: str | None = None) -> BlockReport:
    """Parse `code` as `lang`; errors carry absolute lines (`first_line` = code's line 1)."""
    n_lines = max(1, len(code.splitlines()))
    span = (first_line, first_line + n_lines - 1)
    if lang is None:
        return BlockReport("unverified", None, span, label, note="language not recognised")
    if lang in UNRELIABLE_GRAMMARS:
        return BlockReport("unverified", lang, span, label, note=f"the {lang} grammar is not reliable enough to verify")
    tree = grammars.parse(code, lang)
    if tree is None:
        return BlockReport("unverified", lang, span, label, note=f"no local grammar for {lang}")
    issues = [_issue(node, first_line) for node in grammars.error_nodes(tree, MAX_ERRORS)]
    if not issues and tree.root_node.has_error:  # defensive: flagged but not located
        issues = [SyntaxIssue(first_line, 1, "syntax error")]
    return BlockReport("error" if issues else "ok", lang, span, label, issues)


def _issue(node, first_line: int) -> SyntaxIssue:
    row, col = node.start_point
    if node.is_missing:
        message = f"missing {node.type!r}"
    else:
        snippet = (node.text or b"").decode("utf-8", "replace").strip().splitlines()
        near = snippet[0][:40] if snippet else ""
        message = f"syntax error near {near!r}" if near else "syntax error"
    return SyntaxIssue(first_line + row, col + 1, message)


def verify_markdown(text: str) -> list[BlockReport]:
    """Every code block of a markdown text (lines absolute in `text`)."""
    reports = []
    for block in find_code_blocks(text):
        guess = resolve_language(block.hint, block.code)
        if guess.label_mismatch:
            labelled = normalize_label(guess.label)
            report = verify_code(block.code, labelled, block.start, block.label)
            report.note = f"labelled {guess.label!r} but the code parses cleanly as {guess.lang}"
            report.status = "error"
        elif block.label and guess.lang is None:
            report = verify_code(block.code, None, block.start, block.label)
            report.note = f"plain text ({block.label})"
        else:
            report = verify_code(block.code, guess.lang, block.start, block.label)
            if guess.detected and guess.lang:
                report.note = f"language detected: {guess.lang}"
        reports.append(report)
    return reports


def verify_text(text: str, *, lang: str | None = None, filename: str | None = None) -> list[BlockReport]:
    """Verify a file's text: as code in `lang`, as markdown, or as code of its extension.

    Without `lang`, a `.md` file (or any input with a code fence) is markdown; a known
    code extension names the language; anything else is detected.
    """
    if lang:
        return [verify_code(text, normalize_label(lang) or lang.lower(), label=lang)]
    name = (filename or "").lower()
    if name.endswith(MARKDOWN_SUFFIXES) or _has_fence(text):
        return verify_markdown(text)
    suffix = name.rsplit(".", 1)[1] if "." in name.rsplit("/", 1)[-1] else ""
    if suffix in ALIASES:
        return [verify_code(text, ALIASES[suffix])]
    return [verify_code(text, detect_language(text))]


def _has_fence(text: str) -> bool:
    return any(line.lstrip().startswith(("```", "~~~")) for line in text.splitlines())


def answer_warnings(markdown: str) -> list[str]:
    """One warning per broken code block in an LLM answer (for `ask` and `example`)."""
    warnings = []
    for report in verify_markdown(markdown):
        if report.status != "error":
            continue
        first = report.errors[0] if report.errors else None
        where = f" at line {first.line}, column {first.column}: {first.message}" if first else ""
        extra = f" ({report.note})" if report.note else ""
        warnings.append(f"code block ({report.lang or report.label}) lines {report.lines[0]}-{report.lines[1]} has a syntax error{where}{extra}")
    return warnings
