"""One LLM call with a syntax check of the code it returns, and one repair round.

`example` and `explain-error` both ask the model for text containing code; code that
does not parse is sent back once with its errors, and whatever remains broken is
reported as warnings rather than hidden.
"""

from __future__ import annotations

import re
from typing import Any

from doc4llm.code.prompts import REPAIR_CODE
from doc4llm.code.verify import answer_warnings
from doc4llm.errors import ExternalError

_CITATION = re.compile(r"\[(\d{1,3})\]")


def ask_verified(llm: Any, messages: list[dict]) -> tuple[str, list[str], int]:
    """(answer text, warnings about its code, number of calls made)."""
    text, _ = llm.chat("synthesis", messages)
    warnings = answer_warnings(text)
    if not warnings:
        return text, [], 1
    retry = [*messages, {"role": "assistant", "content": text},
             {"role": "user", "content": REPAIR_CODE.format(problems="\n".join(f"- {w}" for w in warnings))}]
    try:
        repaired, _ = llm.chat("synthesis", retry)
    except ExternalError as exc:  # the first answer, flagged, beats none
        return text, [*warnings, f"the repair call failed: {exc.message}"], 2
    return repaired, answer_warnings(repaired), 2


def citation_warnings(text: str, n_sources: int) -> list[str]:
    """A flag when the answer cites none of its n numbered sources, or cites one that
    does not exist."""
    refs = {int(r) for r in _CITATION.findall(text or "")}
    unknown = sorted(r for r in refs if not 1 <= r <= n_sources)
    out = []
    if unknown:
        out.append(f"the answer cites sources that do not exist: {', '.join(f'[{r}]' for r in unknown)}")
    if not refs - set(unknown):
        out.append("the answer cites none of the sources: it is unverified, check it against "
                   "the sections listed")
    return out


def model_failure(exc: ExternalError) -> dict:
    """What a result carries when the configured model failed: the offline mode's
    sections stay, the failure becomes a warning and an `error` (exit 3), as in `ask`."""
    from doc4llm.secrets import redact

    message = redact(exc.message)
    return {"mode": "sections", "warnings": [f"model call failed, the documented sections are "
                                              f"kept: {message}"],
            "llm_error": {"type": type(exc).__name__, "exit_code": exc.exit_code,
                      "message": message}}
