"""Answer synthesis grounded in the numbered sources, plus the checks on the result that
need no model: unclosed code fences, code blocks that do not parse (tree-sitter,
doc4llm.code.verify), and which of its claims the cited sections hold
(doc4llm.grounding: citations that are citations, claims found in the sources cited,
no prompt copied back).

Requested at temperature 0, like the evaluator and the reranker: the same question over
the same sections gets the same answer, and so the same status, on every run."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from doc4llm.answer.llm import LLMClient
from doc4llm.answer.prompts import SYNTHESIS_INSTRUCTIONS, synthesis_messages
from doc4llm.answer.sources import FENCE_MARKERS, SourceBook
from doc4llm.code.verify import answer_warnings
from doc4llm.grounding import Grounding, check

_NOT_COVERED = re.compile(r"\bdo(?:es)? not (?:cover|answer|mention|document)\b", re.IGNORECASE)
UNCITED = ("the answer cites none of the sources: check it against the sections listed "
           "(its confidence is capped)")


@dataclass
class Synthesis:
    text: str
    cited: list[str]  # refs cited in its prose, in first-use order ("1", "W2")
    warnings: list[str] = field(default_factory=list)
    grounding: Grounding = field(default_factory=Grounding)

    @property
    def not_covered(self) -> bool:
        """The model said the sources do not answer, and claimed nothing else (an answer
        that also claims what no section holds is `unsupported`, and not returned)."""
        return (not self.grounding.claims
                and bool(self.grounding.absences or _NOT_COVERED.search(self.text)))

    @property
    def verified(self) -> bool:
        """Every claim cites a source whose text holds it (doc4llm.grounding)."""
        return self.grounding.verified

    @property
    def unsupported(self) -> bool:
        """No claim of it is in any source (or it makes none): not an answer from the docs."""
        return not self.not_covered and not self.grounding.grounded


def synthesize(client: LLMClient, question: str, query_type: str, book: SourceBook, *,
               previous_answer: str | None = None, focus: list[str] | None = None,
               summary: str | None = None) -> Synthesis:
    messages = synthesis_messages(question, query_type, book.to_prompt(),
                                  previous_answer=previous_answer, focus=focus, summary=summary)
    text, _ = client.chat("synthesis", messages, temperature=0)
    return check_answer(text.strip(), book, question=question)


def check_answer(text: str, book: SourceBook, *, question: str = "") -> Synthesis:
    warnings = []
    fences = sum(1 for line in text.splitlines() if line.lstrip().startswith(FENCE_MARKERS))
    if fences % 2:
        text += "\n```"
        warnings.append("the model left a code block open; it was closed, check it is complete")
    warnings += answer_warnings(text)
    grounding = check(text, book.texts(), question=question, instructions=SYNTHESIS_INSTRUCTIONS,
                      headers=book.headers())
    result = Synthesis(text=text, cited=grounding.cited, warnings=warnings, grounding=grounding)
    if result.not_covered:
        return result
    result.warnings += grounding.warnings()
    if not result.cited:
        result.warnings.append(UNCITED)
    return result
