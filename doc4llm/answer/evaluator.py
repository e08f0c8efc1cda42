"""The evaluator (seed 002): the model judges the current answer and picks the next action.

Its JSON is validated here; malformed output gets exactly one repair request, then an
EvaluationError, on which the loop returns the current answer with a warning.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field

from doc4llm.answer.llm import LLMClient
from doc4llm.answer.prompts import REPAIR_USER, evaluator_messages
from doc4llm.errors import ExternalError

ACTIONS = ("RETURN_ANSWER", "QUERY_MORE_DOCS", "SEARCH_WEB", "REFINE_ANSWER")
COMPLETENESS = ("complete", "partial", "minimal", "wrong")
_FENCED = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


class EvaluationError(ExternalError):
    """The evaluator's reply could not be used, even after one repair attempt."""


@dataclass
class Evaluation:
    answers_question: bool
    completeness: str
    issues: list[str]
    confidence: int
    action: str
    reason: str
    queries: list[str] = field(default_factory=list)
    focus_areas: list[str] = field(default_factory=list)
    established_facts: list[str] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    still_needed: list[str] = field(default_factory=list)
    summary: str = ""
    repaired: bool = False

    def compressed(self) -> dict:
        """What the next step carries forward instead of the whole history."""
        return {"establishedFacts": self.established_facts, "gaps": self.gaps,
                "stillNeeded": self.still_needed, "summary": self.summary}

    def to_dict(self) -> dict:
        return asdict(self)


def evaluate(client: LLMClient, *, question: str, query_type: str, answer: str,
             sources: list[str], previous: dict | None, available: dict) -> Evaluation:
    messages = evaluator_messages(question, query_type, answer, sources, previous, available)
    reply, _ = client.chat("evaluation", messages, json_mode=True)
    try:
        return parse_evaluation(reply)
    except ValueError as first:
        messages += [{"role": "assistant", "content": reply},
                     {"role": "user", "content": REPAIR_USER.format(error=first)}]
        reply, _ = client.chat("evaluation", messages, json_mode=True)
        try:
            evaluation = parse_evaluation(reply)
        except ValueError as second:
            raise EvaluationError(f"evaluator output unusable after one repair: {second}") from None
        evaluation.repaired = True
        return evaluation


def parse_evaluation(reply: str) -> Evaluation:
    """Evaluation from the model's reply; ValueError says what is wrong (fed to the repair)."""
    text = (reply or "").strip()
    fenced = _FENCED.search(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at char {exc.pos})") from None
    if not isinstance(data, dict):
        raise ValueError("the reply must be a JSON object")
    assessment = _obj(data, "assessment")
    decision = _obj(data, "decision")
    compression = data.get("contextCompression") or {}
    if not isinstance(compression, dict):
        raise ValueError("contextCompression must be an object")
    action = str(decision.get("action", "")).strip().upper()
    if action not in ACTIONS:
        raise ValueError(f"decision.action must be one of {', '.join(ACTIONS)}, got {action!r}")
    details = decision.get("details") or decision.get("actionDetails") or {}
    if not isinstance(details, dict):
        raise ValueError("decision.details must be an object")
    completeness = str(assessment.get("completeness", "partial")).lower()
    if completeness not in COMPLETENESS:
        completeness = "partial"
    evaluation = Evaluation(
        answers_question=bool(assessment.get("answersQuestion", False)),
        completeness=completeness,
        issues=_strings(assessment.get("specificIssues")),
        confidence=_confidence(assessment.get("confidence",
                                              assessment.get("confidenceInAssessment"))),
        action=action,
        reason=str(decision.get("reason") or ""),
        queries=_strings(details.get("queries")),
        focus_areas=_strings(details.get("focusAreas")),
        established_facts=_strings(compression.get("establishedFacts")),
        gaps=_strings(compression.get("gaps") or compression.get("identifiedGaps")),
        still_needed=_strings(compression.get("stillNeeded")),
        summary=str(compression.get("summary") or ""),
    )
    if action in ("QUERY_MORE_DOCS", "SEARCH_WEB") and not evaluation.queries:
        raise ValueError(f"{action} needs decision.details.queries (a list of strings)")
    return evaluation


def _obj(data: dict, key: str) -> dict:
    value = data.get(key)
    if not isinstance(value, dict):
        raise ValueError(f"missing object {key!r}")
    return value


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return []


def _confidence(value: object) -> int:
    try:
        return max(0, min(100, int(round(float(value)))))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError("assessment.confidence must be a number 0-100") from None
