"""Answer synthesis grounded in the numbered sources, plus the checks on the result that
need no model: unclosed code fences, citations of sources that do not exist, and code
blocks that do not parse (tree-sitter, doc4llm.code.verify)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from doc4llm.answer.llm import LLMClient
from doc4llm.answer.prompts import synthesis_messages
from doc4llm.answer.sources import FENCE_MARKERS, SourceBook
from doc4llm.code.verify import answer_warnings

_CITATION = re.compile(r"\[(W?\d+)\]")
_NOT_COVERED = re.compile(r"\bdo(?:es)? not (?:cover|answer|mention|document)\b", re.IGNORECASE)
UNCITED = ("the answer cites none of the sources: it is unverified, check it against the "
           "sections listed (its confidence is capped)")


@dataclass
class Synthesis:
    text: str
    cited: list[str]  # refs actually cited, in first-use order ("1", "W2")
    warnings: list[str] = field(default_factory=list)

    @property
    def not_covered(self) -> bool:
        """The model said the sources do not answer, and cited nothing."""
        return not self.cited and bool(_NOT_COVERED.search(self.text))


def synthesize(client: LLMClient, question: str, query_type: str, book: SourceBook, *,
               previous_answer: str | None = None, focus: list[str] | None = None,
               summary: str | None = None) -> Synthesis:
    messages = synthesis_messages(question, query_type, book.to_prompt(),
                                  previous_answer=previous_answer, focus=focus, summary=summary)
    text, _ = client.chat("synthesis", messages)
    return check_answer(text.strip(), book)


def check_answer(text: str, book: SourceBook) -> Synthesis:
    warnings = []
    fences = sum(1 for line in text.splitlines() if line.lstrip().startswith(FENCE_MARKERS))
    if fences % 2:
        text += "\n```"
        warnings.append("the model left a code block open; it was closed, check it is complete")
    warnings += answer_warnings(text)
    known = book.citable_refs()
    cited: list[str] = []
    for ref in _CITATION.findall(text):
        if ref not in cited:
            cited.append(ref)
    unknown = [r for r in cited if r not in known]
    if unknown:
        warnings.append(f"the answer cites sources that do not exist: "
                        f"{', '.join(f'[{r}]' for r in unknown)}")
    result = Synthesis(text=text, cited=[r for r in cited if r in known], warnings=warnings)
    if not result.cited and not result.not_covered:
        result.warnings.append(UNCITED)
    return result
