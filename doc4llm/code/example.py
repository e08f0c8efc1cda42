"""`doc4llm example TASK`: a working code example from the docs.

Code-first retrieval: search with the code_lookup query type; the code pieces of the
results and of the pages they come from (the right page often answers in prose first
and shows the code a few sections later) are ranked by the page's search score times
the share of the task's words in the piece and its heading. Imports that the docs wrote
once, in a neighbouring section, are added back and the assembled code is verified.
With an LLM configured the best pieces are synthesised into one example, which is
verified the same way (with one repair round).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from doc4llm.code.llm_answer import ask_verified, check_citations, model_failure, rejection
from doc4llm.code.prompts import EXAMPLE_INSTRUCTIONS, example_messages
from doc4llm.code.retrieval import (
    CodePiece,
    code_pieces,
    missing_imports,
    page_pieces,
    read_command,
)
from doc4llm.code.verify import verify_code
from doc4llm.errors import ExternalError
from doc4llm.reader import scope_args

SEARCH_K = 10
EXPANDED_PAGES = 3  # pages of the top results whose other code is considered too
DIRECT_HIT_BONUS = 1.2
DEFINITION_BONUS = 1.1
SUBSTANTIAL_LINES = 12  # shorter pieces (accessors, constants) make weaker examples
EXAMPLE_HEADING_BONUS = 1.15  # "Quick example", "Usage": the docs' own examples
_EXAMPLE_HEADING = re.compile(r"\b(example|usage|quick ?start|getting started|tutorial|how to)", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"<[A-Za-z][\w -]{0,30}>")  # `claude mcp add <name> <url>`
_STOPWORDS = frozenset(
    "the and for with how use using can into from that this what when where which your you "
    "does make create write get set add example code".split()
)
ALTERNATIVES = 3
MIN_LINES = 2
LLM_SOURCES = 4
SOURCE_CHARS = 6000


def working_example(task: str, *, docs_dir: Path, sets: list[str] | None = None,
                    llm: Any = None, searcher: Any = None, docs_arg: str | None = None) -> dict:
    """The example as a JSON-ready dict: `example` (lang, code, status, errors, source,
    completed_imports) or None, `answer` (the LLM's markdown, or None offline),
    `alternatives`, `warnings`, `guidance`, and the search's `confidence`. `docs_arg`:
    the --docs-dir given, repeated (with `sets`) in the suggested commands."""
    if searcher is None:
        from doc4llm.search.engine import Searcher

        searcher = Searcher(docs_dir)
    found = searcher.search(task, sets=sets, k=SEARCH_K, query_type="code_lookup")
    pieces = rank_pieces(docs_dir, task, found["results"])
    out: dict = {
        "task": task, "mode": "sections", "confidence": found["confidence"],
        "example": None, "answer": None, "alternatives": [], "warnings": [], "guidance": [],
        "search_guidance": found.get("guidance"),
    }
    if not pieces:
        out["guidance"] = [
            "No code in the sections found for this task.",
            *(f"Read: {read_command(r['page'], r['doc_set'], *r['lines'], docs_arg)}"
              for r in found["results"][:3]),
            f"Try: doc4llm search {shlex.quote(task)} --json{scope_args(sets, docs_arg)}, "
            "or name the function/class you need.",
        ]
        return out
    best = pieces[0]
    out["example"] = _assemble(docs_dir, best, docs_arg)
    out["alternatives"] = [{**p.location(docs_arg), "lang": p.lang, "symbols": p.symbols}
                           for p in pieces[1 : 1 + ALTERNATIVES]]
    if out["example"]["status"] == "error":
        placeholders = _PLACEHOLDER.search(out["example"]["code"])
        out["warnings"].append(
            f"the documented code has placeholders such as {placeholders.group(0)}: fill them in"
            if placeholders else f"the documented code does not parse as {best.lang}; check it before use")
    if llm is not None:
        sources = [(_label(p), p.text[:SOURCE_CHARS]) for p in pieces[:LLM_SOURCES]]
        try:
            answer, warnings, calls = ask_verified(llm, example_messages(task, sources))
        except ExternalError as exc:  # the documented example stays; exit 3 (issue 29.5)
            failure = model_failure(exc)
            out["warnings"] += failure.pop("warnings")
            out.update(failure)
        else:
            found, cite_warnings = check_citations(answer, sources, question=task,
                                                   instructions=EXAMPLE_INSTRUCTIONS)
            out.update(llm_calls=calls, verified=found.verified, citation_check=found.summary())
            refused = rejection(found)
            if refused:
                out["warnings"] += [refused, *cite_warnings]
            else:
                out.update(mode="llm", answer=answer,
                           sources=[p.location(docs_arg) for p in pieces[:LLM_SOURCES]])
                out["warnings"] += warnings + cite_warnings
    out["guidance"] = [f"Source: {best.location(docs_arg)['read']}"]
    if out["example"]["completed_imports"]:
        out["guidance"].append("Imports were added from neighbouring sections of the same page.")
    return out


def rank_pieces(docs_dir: Path, task: str, results: list[dict]) -> list[CodePiece]:
    """Code of the results and of their pages, best first."""
    page_score: dict[tuple[str, str], float] = {}
    for r in results:
        key = (r["doc_set"], r["page"])
        page_score[key] = max(page_score.get(key, 0.0), float(r.get("score") or 0.0))
    candidates: dict[tuple, tuple[float, CodePiece]] = {}
    pages = list(page_score)[:EXPANDED_PAGES]
    direct = [(p, DIRECT_HIT_BONUS) for r in results for p in code_pieces(docs_dir, r)]
    around = [(p, 1.0) for ds, pg in pages for p in page_pieces(docs_dir, ds, pg)]
    words = _task_words(task)
    for piece, bonus in direct + around:
        if not _is_example(piece):
            continue
        key = (piece.doc_set, piece.page, piece.start, piece.end)
        score = page_score[(piece.doc_set, piece.page)] * bonus * (0.5 + _overlap(words, piece))
        if _example_heading(piece):
            score *= EXAMPLE_HEADING_BONUS
        if any(k in ("function", "class", "method") for k in piece.kinds):
            score *= DEFINITION_BONUS  # a whole function beats loose statements
        score *= 0.6 + 0.4 * min(1.0, len(piece.text.splitlines()) / SUBSTANTIAL_LINES)
        if key not in candidates or candidates[key][0] < score:
            candidates[key] = (score, piece)
    return [p for _, p in sorted(candidates.values(), key=lambda sp: -sp[0])]


def _task_words(task: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]{3,}", _split_identifiers(task)) if w not in _STOPWORDS}


def _split_identifiers(text: str) -> str:
    """`computeBackoff_delay` -> 'compute backoff delay' (lower case)."""
    return re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text).replace("_", " ").lower()


def _overlap(words: set[str], piece: CodePiece) -> float:
    """Share of the task's words (allowing plural/tense endings) found in the piece's
    code and symbols, averaged with the share found in its section's own title."""
    if not words:
        return 0.0
    code = _share(words, " ".join([piece.text, *piece.symbols]))
    title = _share(words, piece.heading_path[-1]) if piece.heading_path else 0.0
    return (code + title) / 2


def _share(words: set[str], text: str) -> float:
    tokens = set(re.findall(r"[a-z0-9]+", _split_identifiers(text)))
    hits = 0
    for w in words:
        stem = w[:-1] if len(w) > 4 else w
        hits += any(t.startswith(stem) and len(t) - len(w) <= 3 for t in tokens)
    return hits / len(words)


def _example_heading(piece: CodePiece) -> bool:
    return bool(piece.heading_path) and bool(_EXAMPLE_HEADING.search(piece.heading_path[-1]))


def _is_example(piece: CodePiece) -> bool:
    """Code worth showing: a known language, and a definition or a few lines of code
    (not just imports, not a lone docstring or one-line constant)."""
    if piece.lang is None or piece.kinds == ["imports"]:
        return False
    defines = any(k in ("function", "class", "method") for k in piece.kinds)
    return defines or sum(1 for line in piece.text.splitlines() if line.strip()) >= MIN_LINES


def _assemble(docs_dir: Path, piece: CodePiece, docs_arg: str | None = None) -> dict:
    imports = missing_imports(docs_dir, piece)
    code = piece.text
    if imports:
        code = "\n".join(text for text, _, _ in imports) + "\n\n" + code
    report = verify_code(code, piece.lang)
    return {
        "lang": piece.lang, "code": code, "symbols": piece.symbols,
        "status": report.status, "errors": [vars(e) for e in report.errors], "note": report.note,
        "source": piece.location(docs_arg),
        "completed_imports": [{"text": text, "lines": [start, end]} for text, start, end in imports],
    }


def _label(piece: CodePiece) -> str:
    return f"{piece.doc_set} / {' > '.join(piece.heading_path)} (lines {piece.start}-{piece.end}, {piece.lang})"
