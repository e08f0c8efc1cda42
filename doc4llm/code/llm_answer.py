"""One LLM call with a syntax check of the code it returns, and one repair round; then
the citation check every command shares (doc4llm.grounding).

`example` and `explain-error` both ask the model for text containing code; code that
does not parse is sent back once with its errors, and whatever remains broken is
reported as warnings rather than hidden. Requests run at temperature 0 (the same error
or task over the same sections gets the same answer). An answer none of whose claims is
in the sections given is not returned: the documented sections are (issue 35).
"""

from __future__ import annotations

from typing import Any

from doc4llm.code.prompts import REPAIR_CODE
from doc4llm.code.verify import answer_warnings
from doc4llm.errors import ExternalError
from doc4llm.grounding import Grounding, check


def ask_verified(llm: Any, messages: list[dict]) -> tuple[str, list[str], int]:
    """(answer text, warnings about its code, number of calls made)."""
    text, _ = llm.chat("synthesis", messages, temperature=0)
    warnings = answer_warnings(text)
    if not warnings:
        return text, [], 1
    retry = [*messages, {"role": "assistant", "content": text},
             {"role": "user", "content": REPAIR_CODE.format(problems="\n".join(f"- {w}" for w in warnings))}]
    try:
        repaired, _ = llm.chat("synthesis", retry, temperature=0)
    except ExternalError as exc:  # the first answer, flagged, beats none
        return text, [*warnings, f"the repair call failed: {exc.message}"], 2
    return repaired, answer_warnings(repaired), 2


def check_citations(text: str, sources: list[tuple[str, str]], *, question: str,
                    instructions: str) -> tuple[Grounding, list[str]]:
    """The grounding of an answer over its numbered (label, text) sources, and the warnings
    worth printing: citations that are not citations or name no source, an answer that
    cites nothing, instructions copied back."""
    found = check(text, {str(i): f"{label}\n{body}" for i, (label, body) in enumerate(sources, 1)},
                  question=question, instructions=instructions,
                  headers=[label for label, _ in sources])
    warnings = [w for w in found.warnings() if "claims are not found" not in w]
    if not found.cited:
        warnings.append("the answer cites none of the sources: check it against the sections listed")
    return found, warnings


def rejection(found: Grounding) -> str | None:
    """Why the answer is not returned at all (None: it is): none of its claims is in any
    of the sections given (or it makes none), or it only repeats the prompt."""
    if found.grounded or (found.absences and not found.claims):
        return None
    why = ("it makes no claim" if not found.claims else
           "none of its claims is in the sections given" if not any(c.found_in for c in found.claims)
           else "the claims of it that are in the sections given are not about the question")
    if found.echoed:
        why += "; it repeats the prompt's instructions"
    return f"the model's answer was not returned ({why}); the documented sections are listed instead"


def model_failure(exc: ExternalError) -> dict:
    """What a result carries when the configured model failed: the offline mode's
    sections stay, the failure becomes a warning and an `error` (exit 3), as in `ask`."""
    from doc4llm.secrets import redact

    message = redact(exc.message)
    return {"mode": "sections", "warnings": [f"model call failed, the documented sections are "
                                              f"kept: {message}"],
            "llm_error": {"type": type(exc).__name__, "exit_code": exc.exit_code,
                      "message": message}}
