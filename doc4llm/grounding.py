"""Which claims of a model's answer its numbered sources hold, decided without a model.

A model may write `[1]` anywhere; doc4llm counts it as a citation only in prose: not in
code (a fenced block or an inline span: `buffer[3]`), not glued to a name (`items[0]`), not
as a list or line marker (`1. [1] ...`), not in a source header copied from the prompt
(`[2] Set@1 / Page / Heading (lines 3-9)`). A claim (a sentence with at least two content
words) is supported by source n when most of its content words that the question does not
already contain occur in source n's text (stemmed, with the index's own tokenizer), and,
below that share, when it also repeats a two-word phrase of it. A list item without a
citation takes those of the sentence introducing the list ("Set these [1]:"), a table row
or a code block those of the answer (code: most of its names must occur in them). An
answer is `verified` when it makes claims, every one is supported by a source it cites,
and nothing of it repeats the prompt's instructions; it is `grounded` (an answer from the
sources at all) when some claim is supported, or is held by some source and shares a word
with the question. Used by `ask` (doc4llm.answer) and by `explain-error` / `example`
(doc4llm.code), so one rule decides what every command calls grounded (docs/ask.md).

Everything here is linear in the answer and the sources: one pass over the lines, set
lookups per word; every regex is bounded (no nested or unbounded repetition to backtrack).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from doc4llm.index.tokenize import STOPWORDS, is_identifier, stem, tokens

FENCES = ("```", "~~~")
MIN_CLAIM_WORDS = 2  # content words that make a sentence a claim
SUPPORT_SHARE = 0.6  # of a claim's new words found in the source
PHRASE_SHARE = 0.4  # ... or this much, with a shared two-word phrase
CODE_SHARE = 0.6  # of a code block's names found in the cited sources
ECHO_WORDS = 5  # a run of this many words of the instructions is an echo
SHOWN = 160  # characters of a sentence quoted in a warning

# "[1]", "[W2]", "[1, 2]": bounded, so the scan is linear
_GROUP = re.compile(r"\[\s{0,2}(W?\d{1,3}(?:\s{0,2},\s{0,2}W?\d{1,3}){0,9})\s{0,2}\]")
_REF = re.compile(r"W?\d{1,3}")
_LIST_MARKER = re.compile(r"(?:[-*+]|\d{1,3}[.)])[ \t]+")
_HEADER_SHAPE = re.compile(r"\(lines \d{1,7}-\d{1,7}\)|^url:|^web:", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])[ \t]+")
_NORM = re.compile(r"[^a-z0-9]+")
_GLUED_BEFORE = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_)([]")
_NAMED = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,60}")
# a sentence that says what the sources lack (bounded gaps: linear)
_ABSENCE = re.compile(
    r"\b(?:docs?|documentation|sources?|sections?|excerpts?)\b[^.!?\n]{0,40}?"
    r"\b(?:do(?:es)?\s{1,3}not|don't|doesn't|never)\s{1,3}(?:say|cover|mention|document|explain|"
    r"describe|answer|show|specify|state|include)", re.IGNORECASE)

# words about the answer itself, not about the docs' subject
_META = {stem(w) for w in (
    "answer answers question questions source sources document documents documentation docs "
    "doc section sections cite cites cited citation citations information provide provides "
    "provided mention mentions mentioned describe describes described explain explains "
    "explained refer refers following note notes see shown show shows says said given "
    "instructed instruction instructions write written now").split()}


@dataclass
class Claim:
    text: str  # as written, citations included
    kind: str  # "prose" | "code"
    refs: list[str] = field(default_factory=list)  # sources it cites (that exist)
    supported_by: list[str] = field(default_factory=list)  # cited sources that hold it
    found_in: list[str] = field(default_factory=list)  # any source that holds it
    why: str = ""  # why it is not supported, when it is not
    on_topic: bool = False  # shares a content word with the question

    @property
    def supported(self) -> bool:
        return bool(self.supported_by)

    def short(self) -> str:
        text = " ".join(self.text.split())
        return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


@dataclass
class Grounding:
    claims: list[Claim] = field(default_factory=list)
    cited: list[str] = field(default_factory=list)  # refs cited by claims, first-use order
    unknown: list[str] = field(default_factory=list)  # refs cited that no source has
    not_citations: list[str] = field(default_factory=list)  # "[3] in `buffer[3]` (code)"
    echoed: list[str] = field(default_factory=list)  # sentences copied from the prompt
    missing_names: list[str] = field(default_factory=list)  # question names no source uses
    absences: list[str] = field(default_factory=list)  # "the docs do not say ...": a gap named

    @property
    def verified(self) -> bool:
        """Claims made, each cited and supported by a cited source, no prompt echoed."""
        return (bool(self.claims) and not self.echoed
                and all(c.supported for c in self.claims))

    @property
    def grounded(self) -> bool:
        """Some claim is an answer from the sources: supported by a source it cites, or held
        by some source and about the question (a section copied back that shares no word
        with the question answers nothing)."""
        return any(c.supported or (c.found_in and c.on_topic) for c in self.claims)

    @property
    def supported(self) -> list[Claim]:
        return [c for c in self.claims if c.supported]

    def unsupported(self) -> list[Claim]:
        return [c for c in self.claims if not c.supported]

    def summary(self) -> dict:
        """What the check found, short enough for an agent to read."""
        bad = self.unsupported()
        return {"claims": len(self.claims), "supported": len(self.claims) - len(bad),
                "unsupported": [{"text": c.short(), "why": c.why} for c in bad[:3]],
                "notCitations": self.not_citations[:3], "echoed": [_short(e) for e in self.echoed[:2]]}

    def warnings(self) -> list[str]:
        """One line per kind of problem, naming an example."""
        out = []
        if self.echoed:
            out.append(f"the answer repeats the prompt's instructions ({_short(self.echoed[0])!r}): "
                       "that part is not an answer")
        if self.unknown:
            out.append("the answer cites sources that do not exist: "
                       + ", ".join(f"[{r}]" for r in self.unknown))
        if self.not_citations:
            out.append(f"not counted as citations: {'; '.join(self.not_citations[:3])}")
        bad = self.unsupported()
        if bad and self.claims and len(bad) < len(self.claims):
            out.append(f"{len(bad)} of {len(self.claims)} claims are not found in the sections they "
                       f"cite, e.g. {bad[0].short()!r} ({bad[0].why}): check them")
        if self.missing_names:
            names = self.missing_names[:3]
            verb = "is" if len(names) == 1 else "are"
            out.append(f"{', '.join(names)} {verb} in none of the sections: the docs found do not "
                       "answer that part of the question")
        return out


def check(text: str, sources: dict[str, str], *, question: str = "",
          instructions: str = "", headers: list[str] | None = None) -> Grounding:
    """The claims of `text` checked against `sources` (ref -> text, "1" / "W1").
    `instructions`: the prompt's own wording (system rules and scaffolding, not the
    sources), so that an answer copying it is caught; `headers`: the source headers as
    the prompt showed them, so that a copied header is not read as a cited claim."""
    result = Grounding()
    known = set(sources)
    question_words = set(_content(question))
    source_words = {ref: set(tokens(body)) for ref, body in sources.items()}
    source_pairs = {ref: _pairs(_phrase_words(body)) for ref, body in sources.items()}
    header_keys = [k for k in (_norm(h) for h in headers or []) if len(k.split()) >= 2]
    shingles = _shingles(instructions)
    units, code_blocks, loose = _split(text, result, header_keys)
    for r in [*(r for u in units for r in u.refs), *loose]:
        if r not in known and r not in result.unknown:
            result.unknown.append(r)
    cited_anywhere = [r for r in dict.fromkeys([*(r for u in units for r in u.refs), *loose])
                      if r in known]
    for unit in units:
        sentence = unit.text
        # a list item under "Do this [1]:" and a table row are covered by what cites them
        unit_refs = unit.refs or unit.inherited or (cited_anywhere if unit.kind == "table" else [])
        if shingles and _echoes(sentence, shingles):
            result.echoed.append(sentence)
            continue
        if _ABSENCE.search(sentence):
            result.absences.append(sentence)  # "The docs do not say how ...": no claim on them
            continue
        words = _content(_uncited(sentence))
        if len(words) < MIN_CLAIM_WORDS:
            continue  # "Here is how:", "See [1].": no claim to check
        refs = [r for r in unit_refs if r in known]
        claim = Claim(text=sentence, kind="prose", refs=refs,
                      on_topic=bool(question_words & set(words)))
        new = set(words) - question_words
        phrase = _pairs(_phrase_words(_uncited(sentence)))
        if not new:
            claim.why = "it only repeats the question"
        else:
            claim.found_in = [ref for ref in sources
                              if _holds(new, phrase, source_words[ref], source_pairs[ref])]
            claim.supported_by = [r for r in refs if r in claim.found_in]
            claim.why = ("" if claim.supported_by else
                         "it cites no source" if not refs else
                         f"its words are not in {', '.join(f'[{r}]' for r in refs)}")
        result.claims.append(claim)
    for code in code_blocks:
        names = _code_names(code)
        if len(names) < MIN_CLAIM_WORDS:
            continue
        # code is often assembled from several sections: held by the sources together
        claim = Claim(text=code, kind="code", refs=cited_anywhere,
                      on_topic=bool(question_words & names))
        if _code_held(names, [source_words[r] for r in sources]):
            claim.found_in = [ref for ref in sources if names & source_words[ref]]
        if cited_anywhere and _code_held(names, [source_words[r] for r in cited_anywhere]):
            claim.supported_by = [r for r in cited_anywhere if names & source_words[r]]
        claim.why = ("" if claim.supported_by else "the answer cites no source" if not cited_anywhere
                     else "most of its names are in none of the cited sources")
        result.claims.append(claim)
    result.cited = cited_anywhere
    result.missing_names = missing_names(question, list(sources.values()))
    return result


_QUOTED = re.compile(r'"[^"]{0,200}"')


def instructions_text(system: str, *scaffold: str) -> str:
    """A prompt's own wording that an answer must not copy back: its rules and scaffolding
    lines, without the phrases the rules ask the model to say ("The documentation does not
    cover this.")."""
    return "\n".join([_QUOTED.sub(" ", system), *scaffold])


def missing_names(question: str, sources: list[str]) -> list[str]:
    """Names in the question (`S3`, `PostgreSQL`, `Okta`, `HELIOS_X`, `--flag`: letters with
    digits, capitals past the first letter or the first word, code punctuation) that no
    source contains."""
    written: set[str] = set()
    for body in sources:
        written.update(w.strip(".-+") for w in _NAMED.findall(body.lower()))
    out = []
    for i, m in enumerate(_NAMED.finditer(question)):
        raw = m.group(0).strip(".-+")
        if len(raw) < 2:
            continue
        named = ((any(c.isdigit() for c in raw) and any(c.isalpha() for c in raw))
                 or any(c.isupper() for c in raw[1:]) or (i > 0 and raw[0].isupper())
                 or question[max(0, m.start() - 2):m.start()] == "--" or "_" in raw
                 or is_identifier(raw))
        if named and raw.lower() not in written and raw not in out:
            out.append(raw)
    return out


@dataclass
class _Unit:
    refs: list[str]  # what the sentence itself cites
    text: str
    kind: str  # "prose" | "list" | "table"
    inherited: list[str] = field(default_factory=list)  # the citations of "Do this [1]:"


def _split(text: str, result: Grounding, header_keys: list[str]) -> tuple[list[_Unit], list[str], list[str]]:
    """Sentence units of the prose (list items and table rows marked as such), the code
    blocks' text, and citations that close no sentence (a `[1]` line under a code block).
    Markers, code and copied headers are taken out here and noted in `result.not_citations`."""
    paragraphs: list[tuple[str, list[str]]] = []
    code_blocks: list[str] = []
    current: list[str] = []
    kind = "prose"
    code: list[str] | None = None

    def flush() -> None:
        nonlocal current
        if current:
            paragraphs.append((kind, current))
            current = []

    for raw in (text or "").splitlines():
        stripped = raw.strip()
        if stripped.startswith(FENCES):
            if code is None:
                code = []
                flush()
            else:
                code_blocks.append("\n".join(code))
                for m in _GROUP.finditer("\n".join(code)):
                    _note(result, m.group(0), "inside a code block")
                code = None
            continue
        if code is not None:
            code.append(raw)
            continue
        starts_item = bool(_LIST_MARKER.match(stripped))
        if not stripped or stripped.startswith(("#", "|")) or starts_item:
            flush()
            if not stripped or stripped.startswith("#"):
                kind = "prose"
                continue  # a heading names a part of the answer; it claims nothing
            kind = "table" if stripped.startswith("|") else "list"
        if _is_header(stripped, header_keys):
            for m in _GROUP.finditer(stripped):
                _note(result, m.group(0), "a copied source header")
            continue
        wrapped = bool(current) and not current[-1].rstrip().endswith((".", ":", "!", "?"))
        # a line that continues a sentence ("... is a result of the\n[1] ...") starts
        # with a citation, not a marker
        line = stripped if wrapped and _GROUP.match(stripped) else _drop_marker(stripped, result)
        if line is None:
            continue
        current.append(line)
        if kind == "table":  # a table row is a unit of its own
            flush()
    if code is not None:  # an unclosed block is still code
        code_blocks.append("\n".join(code))
    flush()
    units: list[_Unit] = []
    loose: list[str] = []
    intro: list[str] = []  # the refs of a prose sentence ending in ":", for the list after it
    for para_kind, para in paragraphs:
        for sentence in _SENTENCE_END.split(" ".join(para)):
            refs, rest = _leading_refs(sentence)
            if refs:  # "... tag. [2] Next ...": [2] closes the previous sentence
                target = units[-1].refs if units else loose
                target.extend(r for r in refs if r not in target)
            if not rest.strip():
                continue
            units.append(_Unit(_citations(rest, result), rest, para_kind,
                               list(intro) if para_kind == "list" else []))
        if para_kind == "prose" and units:
            last = units[-1]
            intro = list(last.refs) if _uncited(last.text).rstrip().endswith(":") else []
    return units, code_blocks, loose


def _drop_marker(line: str, result: Grounding) -> str | None:
    """The line without a leading list marker and a bracketed number used as one
    (`1. [1] Run it`, `[2] Title`); None when nothing is left. A line of citations
    alone (`[1], [2]` under a code block) is kept: it cites."""
    m = _LIST_MARKER.match(line)
    after = line[m.end():] if m else line
    lead = _GROUP.match(after)
    if lead is None:
        return line
    rest = after[lead.end():].strip(" .,:;-")
    if not rest and m is None:
        return line  # citations alone on their line
    _note(result, lead.group(0), "a list marker" if m else "at the start of a line: a marker")
    if not rest:
        return None
    return (line[: m.end()] if m else "") + rest


def _is_header(line: str, header_keys: list[str]) -> bool:
    if _HEADER_SHAPE.search(line):
        return True
    key = _norm(line)
    return any(h in key for h in header_keys)


def _leading_refs(sentence: str) -> tuple[list[str], str]:
    refs: list[str] = []
    rest = sentence
    while True:
        m = _GROUP.match(rest.lstrip(" ,;"))
        if m is None:
            return refs, rest
        refs += _REF.findall(m.group(1))
        rest = rest.lstrip(" ,;")[m.end():]


def _citations(sentence: str, result: Grounding) -> list[str]:
    """The refs a sentence cites: bracketed numbers in its prose, not in inline code and
    not glued to a name before them or followed by `(` (a markdown link)."""
    refs: list[str] = []
    masked = _mask_code(sentence)
    last_end = -1
    for m in _GROUP.finditer(masked):
        before = masked[m.start() - 1] if m.start() else ""
        after = masked[m.end()] if m.end() < len(masked) else ""
        if m.start() == last_end or (before not in _GLUED_BEFORE and after != "("):
            refs += [r for r in _REF.findall(m.group(1)) if r not in refs]
            last_end = m.end()
        else:
            _note(result, _around(masked, m), "part of a name or a link")
    for m in _GROUP.finditer(sentence):
        if masked[m.start()] != "[":
            _note(result, m.group(0), "inside inline code")
    return refs


def _mask_code(text: str) -> str:
    """`text` with inline code spans blanked (same length): a linear scan of backticks."""
    parts = text.split("`")
    if len(parts) < 3:
        return text
    out = []
    closed = len(parts) % 2 == 1  # an odd count of backticks leaves the last one open
    for i, part in enumerate(parts):
        code = i % 2 == 1 and (closed or i < len(parts) - 1)
        out.append(" " * len(part) if code else part)
    return "`".join(out)


def _uncited(sentence: str) -> str:
    return _GROUP.sub(" ", sentence)


def _content(text: str) -> list[str]:
    return [t for t in tokens(text) if t not in _META]


def _holds(new: set[str], phrase: set[tuple[str, str]], source: set[str],
           pairs: set[tuple[str, str]]) -> bool:
    """Most new words of the claim are in the source, or many are and a phrase is too."""
    found = len(new & source)
    needed = MIN_CLAIM_WORDS if len(new) >= MIN_CLAIM_WORDS else 1
    if found < needed:
        return False
    if len(new) == 1 and not _specific(next(iter(new))):
        return False  # one everyday word in common says nothing
    share = found / len(new)
    if share >= SUPPORT_SHARE:
        return True
    return share >= PHRASE_SHARE and bool(phrase & pairs)


def _code_held(names: set[str], sources: list[set[str]]) -> bool:
    held = set().union(*sources) if sources else set()
    return len(names & held) >= CODE_SHARE * len(names)


def _specific(word: str) -> bool:
    return "_" in word or any(c.isdigit() for c in word) or len(word) >= 8


def _pairs(words: list[str]) -> set[tuple[str, str]]:
    return set(zip(words, words[1:], strict=False))


_PHRASE_WORD = re.compile(r"[a-z0-9][a-z0-9_]{0,80}")


def _phrase_words(text: str) -> list[str]:
    """Words in order for phrase matching: a name stays one word (`HELIOS_STORE_POOL_MAX`;
    the index's tokens would split it, and its own parts would then make a "phrase")."""
    return [stem(w) for w in _PHRASE_WORD.findall(text.lower())
            if w not in STOPWORDS and stem(w) not in _META]


def _code_names(code: str) -> set[str]:
    """The words of a code block that say what it does (keywords of most languages and
    one-letter names left out)."""
    return {t for t in tokens(code) if len(t) > 2 and t not in _CODE_COMMON}


_CODE_COMMON = {stem(w) for w in (
    "import from def return class function const let var new true false none null self "
    "print echo async await export default public private static void int str string "
    "else elif while for end then").split()}


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = _norm(text).split()
    return {tuple(words[i:i + ECHO_WORDS]) for i in range(len(words) - ECHO_WORDS + 1)}


def _echoes(sentence: str, shingles: set[tuple[str, ...]]) -> bool:
    words = _norm(_uncited(sentence)).split()
    return any(tuple(words[i:i + ECHO_WORDS]) in shingles for i in range(len(words) - ECHO_WORDS + 1))


def _norm(text: str) -> str:
    return " ".join(_NORM.sub(" ", text.lower()).split())


def _note(result: Grounding, token: str, why: str) -> None:
    entry = f"{' '.join(token.split())[:40]} ({why})"
    if entry not in result.not_citations:
        result.not_citations.append(entry)


def _around(text: str, m: re.Match) -> str:
    start = max(0, m.start() - 12)
    return text[start:m.end()].split()[-1] if text[start:m.end()].split() else m.group(0)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."
