"""Tokens for the lexical index and the query: words stemmed, code identifiers kept whole
*and* split.

`HELIOS_STORE_POOL_MAX` -> helios_store_pool_max, helios, store, pool, max
`--dry-run`             -> dry_run, dry, run
`kubectl rollout status`-> kubectl, rollout, status
`rate()`                -> rate
`maxItemErrors`         -> maxitemerrors, max, item, error

Whole identifiers are lowercased with `-`/`.` folded to `_` so that SQLite FTS5
(`unicode61 tokenchars '_'`) keeps them as one token.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-./]*[A-Za-z0-9_]|[A-Za-z0-9]")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_SPLIT = re.compile(r"[_\-./]+")

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers him his how i if in into is it its itself
    just me more most my no nor not now of off on once only or other our ours out over own
    same she should so some such than that the their theirs them then there these they this
    those through to too under until up very was we were what when where which while who whom
    why will with would you your yours get got use using used want need make way thing things
    one also like does doesn't don't can't i'm it's there's let lets""".split()
)


@lru_cache(maxsize=1)
def _stemmer():
    try:
        import Stemmer

        return Stemmer.Stemmer("english")
    except ImportError:  # pragma: no cover - declared dependency
        return None


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    s = _stemmer()
    return s.stemWord(word) if s else word


_INNER_CAP = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]{2}")  # fooBar; CORSMiddleware, SQLite (not APIs)
_LONG_CAPS = re.compile(r"[A-Z][A-Z0-9]{3,}")  # ENOSPC, SIGHUP; not RAM, CPU, API
_DOTTED = re.compile(r"\w\.\w")
_NUMBER = re.compile(r"[\d.]+")
_FOLD = re.compile(r"[\-./]+")


def is_identifier(raw: str) -> bool:
    """Code-shaped: has _ or -, inner capitals (also an acronym run into a word:
    `JSONResponse`, whose parts alone would never match a query for `jsonresponse`), dots
    between words, or is ALL CAPS >= 4."""
    if len(raw) < 2:
        return False
    if "_" in raw or raw.startswith("-") or _INNER_CAP.search(raw):
        return True
    if _LONG_CAPS.fullmatch(raw):
        return True
    return bool(_DOTTED.search(raw) and not _NUMBER.fullmatch(raw))


def _parts(raw: str) -> list[str]:
    out = []
    for chunk in _SPLIT.split(raw):
        out.extend(p.lower() for p in _CAMEL.findall(chunk))
    return [p for p in out if p]


_LETTERS_DIGITS = re.compile(r"[A-Za-z]+|\d+")


def fold_identifier(raw: str) -> str:
    return _FOLD.sub("_", raw.strip("-./")).lower()


@lru_cache(maxsize=200_000)
def _word_tokens(raw: str, keep_stopwords: bool) -> tuple[str, ...]:
    """Tokens of one word as written (cached: documents repeat their words)."""
    ident = is_identifier(raw) or "-" in raw[1:]
    # camel-case splitting is for code: a plain word keeps its letters together, so the
    # plural acronyms of prose (`APIs`, `URLs`, `IDs`) stem to `api`, `url`, `id` rather
    # than splitting as `AP` + `Is`
    parts = _parts(raw) if ident else [p.lower() for p in _LETTERS_DIGITS.findall(raw)]
    if ident and len(parts) > 1:
        out = [fold_identifier(raw)]
    elif ident and len(parts) == 1:
        s = stem(parts[0])
        return (parts[0], s) if s != parts[0] else (parts[0],)
    else:
        out = []
    out.extend(stem(p) for p in parts if keep_stopwords or p not in STOPWORDS)
    return tuple(out)


def tokens(text: str, *, keep_stopwords: bool = False) -> list[str]:
    """Index/query tokens for `text`."""
    out: list[str] = []
    for m in _WORD.finditer(text):
        raw = m.group(0).strip(".-/")
        if not raw:
            continue
        if m.start() >= 2 and text[m.start() - 2 : m.start()] == "--":
            raw = "--" + raw
        out.extend(_word_tokens(raw, keep_stopwords))
    return out


def identifiers(text: str) -> list[str]:
    """Code-shaped tokens as written (for exact, word-bounded matching)."""
    found = []
    for m in re.finditer(
        r"(?<![\w\-])--?[A-Za-z][\w\-]*|(?<![\w\-])[A-Za-z_][\w.]*(?:\(\))?", text
    ):
        raw = m.group(0).rstrip(".")
        if raw.startswith("-") or is_identifier(raw.replace("()", "")) or raw.endswith("()"):
            found.append(raw)
    return found


def is_strong_identifier(raw: str) -> bool:
    """Unmistakably code: snake/kebab/dotted/camel, a flag, a call, or long ALL CAPS.
    Such a term missing from every doc means the docs do not cover it."""
    raw = raw.strip("`")
    return bool(re.search(r"[_.]|^--?\w|\(\)$|[a-z][A-Z]|[A-Za-z]\d|^[A-Z]{5,}$", raw)) and len(raw) > 3
