"""What a search reports as absent ("no section contains: X"), judged on topics (issue 34).

The line is evidence, not a verdict: it names what no section holds, so an agent need not
grep to confirm it; it settles the question only when X is what the question asks about.
It never lists the user's own values or a word the docs spell otherwise (absence.py
decides those). Names and terms are listed at any confidence; words outside everyday English
too ("backoff"); a weak search (abstained, or under WEAK_BELOW) that found none of those lists the
question's everyday absent words and, when every word is
documented, the phrase its most specific word never forms in the docs ("download in
parallel"); a question that names one doc set answered from another lists what the named
set lacks ("does uv send telemetry").
"""

from __future__ import annotations

import re
import sqlite3

from doc4llm.index.tokenize import STOPWORDS, fold_identifier, tokens
from doc4llm.search.absence import _df

WEAK_BELOW = 60  # under this confidence (as guidance) the question's other absent words are named
PHRASE_BELOW = 25  # and under this one, with no absent word, the phrase no section forms
RARE_DF, RARE_SHARE = 3, 0.003  # "most specific": in at most this many sections (or this share)
_FRAME = re.compile(r"^(?:what|how|why|where|when|which|who)'?s?$|^v?\d+(?:\.\d+)*$")
# words that are never what a question asks the docs about: adverbs, counts, time spans
NOT_TOPICS = frozenset("""
ever never already still yet meanwhile anyway again even maybe perhaps instead actually really
basically simply quickly currently recently usually often sometimes always somehow otherwise
hundred hundreds thousand thousands million millions billion dozen dozens couple few lots
today tomorrow yesterday tonight week weeks month months year years day days hour hours minute
minutes night morning evening ago later soon every each all any some many much most several whole
entire last next first other another
""".split())
NEAR = 2  # tokens between two words written as one topic ("download in parallel", "parallel downloads")


def _sections(conn, sets: list[str]) -> int:
    from doc4llm.index.lexstats import section_count

    return section_count(conn, sets)


def absent_name_phrases(conn, qa, sets: list[str], skip: set[str]) -> list[str]:
    """A name of several capitalised words ("Django REST", "Azure DevOps Server") whose
    words the docs use but never together: the docs do not cover that product."""
    out = []
    for tok_run in re.finditer(r"(?:(?<=\s)|^)((?:[A-Z][\w]*)(?: [A-Z][\w]*){1,4})", qa.raw):
        span = tok_run.group(1)
        words = span.split()
        if tok_run.start(1) == 0:  # a capital that only starts the sentence
            words = words[1:]
        if len(words) < 2 or any(w.casefold() in STOPWORDS or w in skip for w in words):
            continue
        forms = [" ".join(tokens(w)) for w in words]
        if not all(forms) or not all(_df(conn, f, sets) for f in forms):
            continue  # an absent word is reported on its own
        if not _df(conn, " ".join(forms), sets):
            out.append(" ".join(words))
    return out


def _near_count(conn, a: str, b: str, sets: list[str]) -> int:
    if not isinstance(conn, sqlite3.Connection):
        return 1  # cannot check: say nothing
    marks = ",".join("?" * len(set(sets)))
    q = f'NEAR("{a}" "{b}", {NEAR})'
    try:
        row = conn.execute(f"SELECT count(*) FROM sec_fts f JOIN sections s ON s.id = f.rowid "
                           f"WHERE sec_fts MATCH ? AND +s.set_name IN ({marks})", [q, *sorted(set(sets))]).fetchone()
    except sqlite3.Error:
        return 1
    return int(row[0]) if row else 1


def absent_phrase(conn, qa, sets: list[str], skip: set[str], top_rows: list[dict] | None = None) -> str:
    """The question's most specific documented word written, in the question, next to a
    word no section ever puts near it ("download in parallel": uv documents downloads and
    parallel builds, never the two together): the span as the question writes it."""
    words = [(m.group(0), m.start(), m.end()) for m in re.finditer(r"[A-Za-z][A-Za-z0-9\-]*", qa.raw)]
    # plain lower-case content words (a capitalised run is a name: absent_name_phrases), not
    # adverbs or past forms ("silently", "started"), quantifiers or time spans
    content = [(w, a, b) for w, a, b in words if w.islower() and len(w) >= 4 and w not in STOPWORDS
               and w not in {d.casefold() for d in qa.domain_words} and w not in skip
               and w not in NOT_TOPICS and not w.endswith(("ly", "ed")) and not _FRAME.match(w)]
    if len(content) < 2:
        return ""
    scored = []
    for i, (w, _, _) in enumerate(content):
        form = " ".join(tokens(w))
        df = _df(conn, form, sets) if form else 0
        if df:
            scored.append((df, i, form))
    if not scored:
        return ""
    df, i, form = min(scored)
    if df > max(RARE_DF, RARE_SHARE * _sections(conn, sets)):
        return ""  # a common word's neighbours say nothing about a gap
    held = " ".join(f"{r.get('tok_title') or ''} {r.get('tok_path') or ''} {r.get('tok_body') or ''}"
                    for r in top_rows or []).split()
    if form.split()[0] in held:
        return ""  # the results hold the question's most specific word: they are about it
    for j in (i + 1, i - 1):
        if not 0 <= j < len(content):
            continue
        other = " ".join(tokens(content[j][0]))
        if not other or not _df(conn, other, sets):
            continue
        a, b = (i, j) if i < j else (j, i)
        if qa.raw[content[a][2]:content[b][1]].strip(" ") not in {"", "in", "of", "for", "with", "on"}:
            continue  # not one phrase in the question
        x, y = form.split()[0], other.split()[0]
        if _near_count(conn, x, y, sets) == 0:
            return qa.raw[content[a][1]:content[b][2]]
    return ""


def absent_topics(conn, qa, cov: dict, sets: list[str], confidence: int, abstained: bool,
                  any_results: bool, top_rows: list[dict] | None = None) -> list[str]:
    """What the search reports as "no section contains": the names and terms the docs never
    mention (never the user's own values, never a word the docs spell otherwise); when the
    search is weak (abstained, or confidence under WEAK_BELOW) also the question's other
    absent words and the phrase its most specific word never forms in the docs; when the
    question names a doc set another set answered, the words that set lacks."""
    from doc4llm.search.confidence import names_something

    own = set(cov.get("own_values") or [])
    absent = [w for w in (cov.get("absent_from_docs") or ([] if any_results else cov.get("uncovered") or []))
              if w not in own]
    from doc4llm.search.english import is_common_word

    # names, terms and words outside everyday English ("backoff", "telemetry") at any
    # confidence: an everyday word ("phone") the docs may simply phrase otherwise
    named = [*(cov.get("strong_absent") or []), *(cov.get("absent_names") or []),
             *(w for w in absent if w in qa.terms or names_something(w, qa)
               or not is_common_word(w) and w.casefold() not in NOT_TOPICS and not _FRAME.match(w.casefold()))]
    weak = abstained or confidence < WEAK_BELOW
    if weak and not named:  # nothing more telling explains a weak search: its everyday gaps
        named += [w for w in absent
                  if not _FRAME.match(w.casefold()) and w.casefold() not in NOT_TOPICS and w not in named]
    named += [p for p in absent_name_phrases(conn, qa, sets, own) if p not in named]
    in_named: list[str] = []
    named = _dedupe(named)
    off = cov.get("off_domain")
    domain = [s for s in qa.domain_sets if s in sets]
    if domain and set(domain) != set(sets):  # "does uv send telemetry": the words the named docs lack
        in_named = [w for w in _absent_in(conn, qa, domain, own) if w.casefold() not in seen(named)]
    if (abstained or confidence < PHRASE_BELOW) and not named and not absent:
        phrase = absent_phrase(conn, qa, domain if off and domain else sets, own, top_rows)
        if phrase:
            named.append(phrase)
    cov["missing_in_named"] = {"sets": domain, "words": in_named} if in_named else None
    return _dedupe(named)


def seen(words: list[str]) -> set[str]:
    return {w.casefold().lstrip("-") for w in words}


def _dedupe(words: list[str]) -> list[str]:
    """One entry per word whatever its case (`PyInstaller`, `pyinstaller`), and no bare
    word beside its flag or name (`offline` beside `--offline`)."""
    out: list[str] = []
    for w in words:
        key = w.casefold().lstrip("-")
        if any(key == o.casefold().lstrip("-") or key in re.split(r"[^a-z0-9]+", o.casefold()) for o in out):
            continue
        out.append(w)
    return out


def _absent_in(conn, qa, scope: list[str], own: set[str]) -> list[str]:
    """The question's names and uncommon words that no section of `scope` holds (never the
    user's own values, a word spelt otherwise there, or a word inside a named term)."""
    from doc4llm.search.absence import documented_variant, is_own_value, possessed_word
    from doc4llm.search.english import is_common_word

    products = {d.casefold() for d in qa.domain_words}
    term_words = " ".join(qa.terms).casefold()
    out = []
    for w in [*qa.terms, *qa.keywords]:
        low = w.casefold()
        if w in own or low in products or _FRAME.match(low) or low in NOT_TOPICS:
            continue
        if w not in qa.terms and (low in term_words or is_common_word(w)):
            continue
        form = fold_identifier(w) if w in qa.terms else " ".join(tokens(w))
        if not form or _df(conn, form, scope):
            continue
        if w in qa.terms and "." in w and _df(conn, fold_identifier(w.rsplit(".", 1)[-1]), scope):
            continue
        if is_own_value(conn, w, qa.values, scope, products) or possessed_word(w, qa.raw) \
                or documented_variant(conn, w, scope) is not None:
            continue
        out.append(w)
    return out
