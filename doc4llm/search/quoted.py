"""A question that is pasted text (an error message, a log line) is answered by the section
that quotes it.

Agents paste what they saw: `stitch exceeds max_stitch_bytes`, `selvedge predates retained
warp; re-spin required`. The error catalogue's entry holds that text verbatim in its
**Message:** line, while the config entry or the troubleshooting page that ranks above it
only shares its words (agent study, issue 34: the agent grepped to find the entry). When
one of the first three results holds the pasted text verbatim and result 1 does not, it
takes result 1's place; the others keep their order.

Only text that reads as a pasted message: at least three words and one sign of machine
text (an identifier, punctuation inside the line, a quote), not a question ("how do I
...?"), whose words could appear verbatim by chance, nor a command line with flags (the
sections quoting a command are its usage examples, which the ranking already weighs). Matching is on the section's prose (not its fenced code:
a transcript printing the message is an example), case-folded, without markdown emphasis
and code marks, whitespace folded; the user's own numbers at the end of a message
(`(300012 > 262144)`) are cut before matching, as the catalogue prints placeholders there.
"""

from __future__ import annotations

import re

from doc4llm.corpus.comments import without_fenced_code
from doc4llm.search.fusion import Candidate

QUOTE_RULE_DEPTH = 3  # the results an agent reads
MIN_WORDS = 3
MIN_CHARS = 16
MAX_CHARS = 300  # a longer paste is a log, not one message
_QUESTION = re.compile(r"^\s*(?:how|what|why|when|where|which|who|can|could|should|is|are|does|do|did|will|"
                       r"would|may|i|i'm|my|we|our)\b", re.I)
_MACHINE = re.compile(r"[_.:;=/<>()\[\]{}'\"`]|\b\w+-\w+\b|\b[A-Z]{2,}\d*\b")
# a command line (`uv sync --no-install-project`): sections quoting it are usage examples,
# which the ranking already weighs; not a message the docs print
_FLAG = re.compile(r"(?:^|\s)--?[A-Za-z]")
_MARKS = re.compile(r"[`*]+")
_SPACE = re.compile(r"\s+")


def _fold(text: str) -> str:
    return _SPACE.sub(" ", _MARKS.sub("", text)).strip().casefold()


def _prose(text: str) -> str:
    """The section's text outside fenced code blocks: a console transcript that prints the
    message is an example of it (Node's `'warning'` event shows a MaxListenersExceededWarning
    being printed); the entry that explains it quotes it in its text."""
    return without_fenced_code(text)


def pasted_text(query: str) -> str | None:
    """The query as text to find verbatim, or None when it reads as a question or prose."""
    q = query.strip().strip("'\"`").strip()
    if not MIN_CHARS <= len(q) <= MAX_CHARS or q.endswith("?") or _QUESTION.match(q):
        return None
    if not _MACHINE.search(q) or _FLAG.search(q):
        return None
    words = _fold(q).split(" ")
    digit = next((i for i, w in enumerate(words) if any(ch.isdigit() for ch in w)), len(words))
    cut = " ".join(words[:digit]).rstrip(" ([:=")  # the user's own numbers end the message
    if len(cut.split()) >= MIN_WORDS and len(cut) >= MIN_CHARS:
        return cut
    return " ".join(words) if len(words) >= MIN_WORDS else None


def quoted_first(query: str, head: list[Candidate], rows: dict[int, dict]) -> None:
    """Move the first of the top results that quotes the pasted query to rank 1, in place."""
    text = pasted_text(query)
    if text is None or len(head) < 2:
        return
    top = rows.get(head[0].sid)
    if top is None:
        return
    if text in _fold(_prose(top.get("text") or "")):
        head[0].parts["rerank.quotes_query"] = 1.0
        return
    for i, c in enumerate(head[1:QUOTE_RULE_DEPTH], 1):
        row = rows.get(c.sid)
        if row is not None and text in _fold(_prose(row.get("text") or "")):
            c.parts["rerank.quotes_query"] = 1.0
            c.score, head[0].score = head[0].score, c.score  # trade places: the scores stay sorted
            head[0], head[i] = head[i], head[0]
            head[1:i + 1] = sorted(head[1:i + 1], key=lambda x: -x.score)
            return
