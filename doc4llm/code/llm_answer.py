"""One LLM call with a syntax check of the code it returns, and one repair round.

`example` and `explain-error` both ask the model for text containing code; code that
does not parse is sent back once with its errors, and whatever remains broken is
reported as warnings rather than hidden.
"""

from __future__ import annotations

from typing import Any

from doc4llm.code.prompts import REPAIR_CODE
from doc4llm.code.verify import answer_warnings


def ask_verified(llm: Any, messages: list[dict]) -> tuple[str, list[str], int]:
    """(answer text, warnings about its code, number of calls made)."""
    text, _ = llm.chat("synthesis", messages)
    warnings = answer_warnings(text)
    if not warnings:
        return text, [], 1
    retry = [*messages, {"role": "assistant", "content": text},
             {"role": "user", "content": REPAIR_CODE.format(problems="\n".join(f"- {w}" for w in warnings))}]
    repaired, _ = llm.chat("synthesis", retry)
    return repaired, answer_warnings(repaired), 2
