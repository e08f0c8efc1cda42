"""Every prompt `ask` sends, in one place, so wording changes are reviewed together."""

from __future__ import annotations

import json

from doc4llm.grounding import instructions_text

SYNTHESIS_SYSTEM = """You answer a coding agent's question from documentation excerpts.
Rules:
1. Use ONLY the numbered sources given. Cite every claim with its source marker: [1], [2]
   for local documentation, [W1], [W2] for web pages. Never invent a marker.
2. Prefer local documentation; use web sources only for what the local docs lack, and say so.
3. Copy code blocks complete (all lines, imports included) inside fenced blocks with a
   language tag. Never shorten code with "..." and never leave a fence open.
4. If the sources do not answer the question, say plainly "The documentation does not
   cover this." and state what is missing. Do not guess.
5. Be concise: the answer first, then the details an agent needs to act."""

EVALUATOR_SYSTEM = """You are a strict evaluator of documentation answers for coding agents.
Decide whether the current answer fully and correctly answers the question from its sources,
and what to do next. Reply with ONE JSON object and nothing else:
{
  "assessment": {"answersQuestion": true|false,
                 "completeness": "complete"|"partial"|"minimal"|"wrong",
                 "specificIssues": [str], "confidence": 0-100},
  "decision": {"action": "RETURN_ANSWER"|"QUERY_MORE_DOCS"|"SEARCH_WEB"|"REFINE_ANSWER",
               "reason": str,
               "details": {"queries": [str], "focusAreas": [str]}},
  "contextCompression": {"establishedFacts": [str], "gaps": [str],
                         "stillNeeded": [str], "summary": str}
}
Actions: RETURN_ANSWER when the answer is sufficient (or nothing more can help);
QUERY_MORE_DOCS with 1-2 short keyword queries when the local docs likely hold the missing part;
SEARCH_WEB with 1-2 web queries when the local docs do not cover it;
REFINE_ANSWER with focusAreas when the sources suffice but the answer is wrong, vague or uncited.
Only choose an action listed as available. "confidence" is how sure you are that the current
answer is correct and complete."""

REPAIR_USER = """Your previous reply was not valid for the required format: {error}
Reply again with ONLY the JSON object in the required format, no prose, no code fence."""


_CLOSING = "Write the answer now, citing sources as instructed."
_SCAFFOLD = ["Your previous answer, to improve (keep what is correct):", "Fix or add:",
             "What the evaluation established so far:", _CLOSING]
SYNTHESIS_INSTRUCTIONS = instructions_text(SYNTHESIS_SYSTEM, *_SCAFFOLD)


def synthesis_messages(question: str, query_type: str, evidence: str, *,
                       previous_answer: str | None = None, focus: list[str] | None = None,
                       summary: str | None = None) -> list[dict]:
    parts = [f"Question ({query_type}): {question}", "", "Sources:", evidence or "(none)"]
    if previous_answer:
        parts += ["", "Your previous answer, to improve (keep what is correct):", previous_answer]
    if focus:
        parts += ["", "Fix or add:"] + [f"- {f}" for f in focus]
    if summary:
        parts += ["", f"What the evaluation established so far: {summary}"]
    parts += ["", _CLOSING]
    return [{"role": "system", "content": SYNTHESIS_SYSTEM},
            {"role": "user", "content": "\n".join(parts)}]


def evaluator_messages(question: str, query_type: str, answer: str, sources: list[str],
                       previous: dict | None, available: dict) -> list[dict]:
    parts = [f"Question ({query_type}): {question}", "", "Current answer:", answer[:6000], "",
             "Sources the answer could use:"] + [f"- {s}" for s in sources]
    if previous:
        parts += ["", "Context from earlier steps:", json.dumps(previous, ensure_ascii=False)]
    parts += ["", "Available actions and remaining budget:", json.dumps(available), "",
              "Evaluate the answer and decide. JSON only."]
    return [{"role": "system", "content": EVALUATOR_SYSTEM},
            {"role": "user", "content": "\n".join(parts)}]


# Seed 004: what makes a section relevant depends on what kind of question it is.
RERANK_GUIDELINES = {
    "concept": "Prefer sections that EXPLAIN the concept (definitions, examples, context) over "
               "ones that merely mention it; deprioritize bare API signatures and changelogs.",
    "howto": "Prefer step-by-step guides with complete code examples and prerequisites; "
             "deprioritize overviews without practical steps.",
    "error": "Prefer sections naming this error or its symptoms, troubleshooting sections and "
             "concrete fixes; deprioritize general material.",
    "code_lookup": "Prefer sections with code whose function/class/option names match the "
                   "query exactly; complete implementations over fragments.",
    "api_reference": "Prefer reference sections with matching signatures, parameters, return "
                     "types and options; deprioritize tutorials without API details.",
    "general": "Prefer sections that directly answer the query.",
}
RERANK_PREVIEW_CHARS = {"concept": 3000, "howto": 2000, "error": 2000, "code_lookup": 2000,
                        "api_reference": 2000, "general": 1500}


def rerank_messages(query: str, query_type: str, docs: list[tuple[str, str]]) -> list[dict]:
    """`docs`: (title, preview) in the local order; the model scores each of them."""
    guide = RERANK_GUIDELINES.get(query_type, RERANK_GUIDELINES["general"])
    listing = "\n\n".join(f"[{i}] {title}\n{preview}" for i, (title, preview) in enumerate(docs))
    user = (f"Query ({query_type}): {query}\n\nDocuments:\n{listing}\n\nGuidelines: {guide}\n\n"
            f"Reply with a JSON object only: {{\"scores\": [...]}} with exactly {len(docs)} "
            f"integers, one relevance score from 0 (irrelevant) to 10 (answers the query) for "
            f"each document, in the order listed, e.g. {{\"scores\": [7, 2, 9]}} for three.")
    return [{"role": "system", "content": "You score documentation sections by relevance."},
            {"role": "user", "content": user}]
