"""The prompts of `example` and `explain-error`, kept together for review."""

from __future__ import annotations

from doc4llm.grounding import instructions_text

EXAMPLE_SYSTEM = """You write one complete, working code example for a coding agent's task,
from documentation excerpts.
Rules:
1. Use ONLY the APIs shown in the numbered sources; cite them as [1], [2] after the code.
2. Output exactly one fenced code block with a language tag, complete and runnable: every
   import, no "..." placeholders, no undefined names. Then at most three short lines on
   how to run it.
3. If the sources do not show enough to write it, say "The documentation does not cover
   this." and name what is missing. Do not invent APIs."""

EXPLAIN_SYSTEM = """You explain an error message to a coding agent from documentation excerpts.
Rules:
1. Use ONLY the numbered sources; cite them as [1], [2]. If they do not explain this
   error, say "The documentation does not cover this error." and stop.
2. Structure: **Cause** (one or two sentences), **Fix** (concrete steps; code or config in
   fenced blocks with a language tag, complete), **Check** (how to confirm it is fixed)."""

REPAIR_CODE = """The code block you wrote does not parse:
{problems}
Reply with the corrected answer in the same format."""


EXAMPLE_CLOSING = "Write the example now."
EXPLAIN_CLOSING = "Explain it now."
_REPAIR_LINES = [line for line in REPAIR_CODE.splitlines() if "{" not in line]
EXAMPLE_INSTRUCTIONS = instructions_text(EXAMPLE_SYSTEM, EXAMPLE_CLOSING, *_REPAIR_LINES)
EXPLAIN_INSTRUCTIONS = instructions_text(EXPLAIN_SYSTEM, EXPLAIN_CLOSING, *_REPAIR_LINES)


def sources_text(sources: list[tuple[str, str]]) -> str:
    """[(label, text)] -> numbered source list for the prompt."""
    return "\n\n".join(f"[{i}] {label}\n{text}" for i, (label, text) in enumerate(sources, 1))


def example_messages(task: str, sources: list[tuple[str, str]]) -> list[dict]:
    user = f"Task: {task}\n\nSources:\n{sources_text(sources)}\n\n{EXAMPLE_CLOSING}"
    return [{"role": "system", "content": EXAMPLE_SYSTEM}, {"role": "user", "content": user}]


def explain_messages(error_text: str, sources: list[tuple[str, str]]) -> list[dict]:
    user = f"Error:\n{error_text}\n\nSources:\n{sources_text(sources)}\n\n{EXPLAIN_CLOSING}"
    return [{"role": "system", "content": EXPLAIN_SYSTEM}, {"role": "user", "content": user}]
