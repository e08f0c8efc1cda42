"""The evaluator (seed 002): the model judges the current answer and picks the next action.

Its reply is requested in `evaluation_schema`, at temperature 0 and with a token budget
its bounded fields fit in. The reply is validated against the same
schema; malformed output gets exactly one repair request, then an EvaluationError, on
which the loop returns the current answer as doc4llm's own checks leave it.

A reply that parses is not yet a signal: `contradiction` reads it against itself (issue
35: a 135M model answered "answersQuestion: true, complete, confidence 0" to every answer,
with reasons saying "The answer is not complete."). A verdict that contradicts its own
fields is ignored; the loop then decides from retrieval and the citation check, and says so.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from doc4llm.answer.llm import LLMClient
from doc4llm.answer.prompts import REPAIR_USER, evaluator_messages
from doc4llm.answer.structured import clip_to_schema, extract_json, str_list, validate
from doc4llm.errors import ExternalError

ACTIONS = ("RETURN_ANSWER", "QUERY_MORE_DOCS", "SEARCH_WEB", "REFINE_ANSWER")
COMPLETENESS = ("complete", "partial", "minimal", "wrong")
MAX_TOKENS = 700  # the schema's bounded fields fit in ~450 tokens


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
    ignored: str = ""  # why this verdict carries no signal (see contradiction); "" = usable

    def compressed(self) -> dict:
        """What the next step carries forward instead of the whole history."""
        return {"establishedFacts": self.established_facts, "gaps": self.gaps,
                "stillNeeded": self.still_needed, "summary": self.summary}

    def to_dict(self) -> dict:
        return asdict(self)


def evaluate(client: LLMClient, *, question: str, query_type: str, answer: str,
             sources: list[str], previous: dict | None, available: dict) -> Evaluation:
    messages = evaluator_messages(question, query_type, answer, sources, previous, available)
    # every action stays in the schema: one the loop cannot run (no web key, budget spent)
    # is still worth knowing, it ends the loop with the evaluator's queries as guidance
    schema = evaluation_schema()
    reply = _ask(client, messages, schema)
    try:
        return parse_evaluation(reply, schema)
    except ValueError as first:
        messages += [{"role": "assistant", "content": reply},
                     {"role": "user", "content": REPAIR_USER.format(error=first)}]
        reply = _ask(client, messages, schema)
        try:
            evaluation = parse_evaluation(reply, schema)
        except ValueError as second:
            raise EvaluationError(f"evaluator output unusable after one repair: {second}") from None
        evaluation.repaired = True
        return evaluation


def evaluation_schema(actions: tuple[str, ...] | list[str] = ACTIONS) -> dict:
    """The evaluator's reply shape (`actions`: the ones it may choose)."""
    return {
        "type": "object",
        "properties": {
            "assessment": {
                "type": "object",
                "properties": {
                    "answersQuestion": {"type": "boolean"},
                    "completeness": {"type": "string", "enum": list(COMPLETENESS)},
                    "specificIssues": str_list(),
                    "confidence": {"type": "integer", "minimum": 0, "maximum": 100},
                },
                "required": ["answersQuestion", "completeness", "confidence"],
            },
            "decision": {
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": [a for a in ACTIONS if a in actions]},
                    "reason": {"type": "string", "maxLength": 240},
                    "details": {"type": "object",
                                "properties": {"queries": str_list(2, 100),
                                               "focusAreas": str_list()},
                                "required": ["queries"]},
                },
                "required": ["action", "reason", "details"],
            },
            "contextCompression": {
                "type": "object",
                "properties": {"establishedFacts": str_list(), "gaps": str_list(),
                               "stillNeeded": str_list(),
                               "summary": {"type": "string", "maxLength": 240}},
            },
        },
        "required": ["assessment", "decision"],
    }


def _ask(client: LLMClient, messages: list[dict], schema: dict) -> str:
    reply, _ = client.chat("evaluation", messages, schema=schema, schema_name="evaluation",
                           max_tokens=MAX_TOKENS, temperature=0)
    return reply


def parse_evaluation(reply: str, schema: dict | None = None) -> Evaluation:
    """Evaluation from the model's reply, checked against `schema` (default: every action
    allowed) after harmless spelling fixes; ValueError says what is wrong (fed to the repair)."""
    schema = schema or evaluation_schema()
    data = extract_json(reply)
    if not isinstance(data, dict):
        raise ValueError("the reply must be a JSON object")
    data = clip_to_schema(_normalised(data), schema)
    validate(data, schema)
    assessment, decision = data["assessment"], data["decision"]
    details = decision["details"]
    compression = data.get("contextCompression") or {}
    evaluation = Evaluation(
        answers_question=assessment["answersQuestion"],
        completeness=assessment["completeness"],
        issues=_strings(assessment.get("specificIssues")),
        confidence=assessment["confidence"],
        action=decision["action"],
        reason=decision["reason"],
        queries=_strings(details.get("queries")),
        focus_areas=_strings(details.get("focusAreas")),
        established_facts=_strings(compression.get("establishedFacts")),
        gaps=_strings(compression.get("gaps")),
        still_needed=_strings(compression.get("stillNeeded")),
        summary=str(compression.get("summary") or ""),
    )
    if evaluation.action in ("QUERY_MORE_DOCS", "SEARCH_WEB") and not evaluation.queries:
        # a small model often names what is missing but leaves queries empty: search for that
        evaluation.queries = (evaluation.still_needed or evaluation.gaps
                              or evaluation.focus_areas)[:2]
        if not evaluation.queries:
            raise ValueError(f"{evaluation.action} needs decision.details.queries "
                             "(a list of strings)")
    evaluation.ignored = contradiction(evaluation)
    return evaluation


LOW_CONFIDENCE = 20  # "complete" with less than this is no verdict
HIGH_CONFIDENCE = 85  # "does not answer" with this much is no verdict either
# reasons that say the answer falls short (bounded: linear on any reply)
_SAYS_SHORT = re.compile(
    r"\b(?:incomplete|incorrect|inaccurate|irrelevant|unanswered|wrong"
    r"|(?:is|are|was|seems|appears)\s{1,3}not\s{1,3}(?:complete|correct|accurate|relevant|sufficient|enough)"
    r"|(?:does|do|did)\s{0,3}(?:not|n't)\s{1,3}(?:fully\s{1,3})?(?:answer|address|cover|explain|mention)"
    r"|fails?\s{1,3}to\s{1,3}(?:answer|address|cover))\b", re.IGNORECASE)


def contradiction(ev: Evaluation) -> str:
    """Why the verdict contradicts its own fields ("" when it does not): it says the answer
    answers the question and is complete with almost no confidence, or answers it while
    calling it minimal/wrong, or does not answer it while calling it complete or being very
    sure, or its reasons say the answer falls short while it judged it complete."""
    if ev.answers_question and ev.completeness == "complete" and ev.confidence < LOW_CONFIDENCE:
        return f"it calls the answer complete with confidence {ev.confidence}"
    if ev.answers_question and ev.completeness in ("minimal", "wrong"):
        return f"it says the answer answers the question but calls it {ev.completeness}"
    if not ev.answers_question and ev.completeness == "complete":
        return "it calls the answer complete but says it does not answer the question"
    if not ev.answers_question and ev.confidence >= HIGH_CONFIDENCE and ev.action == "RETURN_ANSWER":
        return (f"it returns an answer it says does not answer the question, "
                f"with confidence {ev.confidence}")
    if ev.answers_question and ev.completeness == "complete":
        for text in [ev.reason, *ev.issues]:
            m = _SAYS_SHORT.search(text or "")
            if m:
                return f"it calls the answer complete, but its reasons say {(text or '').strip()[:80]!r}"
    return ""


def _normalised(data: dict) -> dict:
    """Spellings the old prompt and larger models use, mapped onto the schema's: action in
    any case, `actionDetails`, a confidence as 85.0 or "85", one string for a list."""
    data = dict(data)
    assessment = data.get("assessment")
    if isinstance(assessment, dict):
        assessment = dict(assessment)
        assessment.setdefault("answersQuestion", False)  # unknown: the cautious reading
        assessment.setdefault("completeness", "partial")
        if "confidence" not in assessment and "confidenceInAssessment" in assessment:
            assessment["confidence"] = assessment["confidenceInAssessment"]
        if isinstance(assessment.get("confidence"), (float, str)):
            try:
                assessment["confidence"] = int(round(float(assessment["confidence"])))
            except ValueError:
                pass
        if isinstance(assessment.get("completeness"), str):
            value = assessment["completeness"].strip().lower()
            assessment["completeness"] = value if value in COMPLETENESS else "partial"
        data["assessment"] = assessment
    decision = data.get("decision")
    if isinstance(decision, dict):
        decision = dict(decision)
        if isinstance(decision.get("action"), str):
            decision["action"] = decision["action"].strip().upper()
        if "details" not in decision:
            decision["details"] = decision.get("actionDetails") or {}
        if isinstance(decision["details"], dict):
            details = dict(decision["details"])
            details.setdefault("queries", [])
            for key in ("queries", "focusAreas"):
                if isinstance(details.get(key), str):
                    details[key] = [details[key]]
            decision["details"] = details
        decision.setdefault("reason", "")
        data["decision"] = decision
    compression = data.get("contextCompression")
    if isinstance(compression, dict) and "gaps" not in compression and "identifiedGaps" in compression:
        data["contextCompression"] = {**compression, "gaps": compression["identifiedGaps"]}
    return data


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return []
