"""What the docs lack, judged on topics rather than tokens (issue 34).

A question's word that no section holds is one of three things:

- **the user's own value** (values.py by shape, plus what needs the index here): an env
  var whose prefix no documented name shares (`MYAPP_DATABASE_URL`, `ACME_PAT`), an
  instance of a documented template (`UV_INDEX_ACME_INTERNAL_PASSWORD` where the docs
  write `UV_INDEX_INTERNAL_PROXY_PASSWORD`), the last part of a documented dotted prefix
  (`import.meta.env.API_SECRET`), a case-style twin of another value (`favouriteColour`
  beside `favourite_colour`). Never reported, never counted against a section;
- **a spelling or syntax variant** of a documented word: British/American (`behaviour`,
  `customise`, `modelling`, `colored`), hyphen and slash forms (`lower-case`,
  `try/except`): the word is present, written otherwise;
- **a topic the docs lack** (`PyInstaller`, `backoff`, `telemetry`): reported as "no
  section contains X".

Everything here is a handful of index look-ups per absent word (document frequencies,
one bounded prefix scan), none for a question whose words are all documented.
"""

from __future__ import annotations

import re
import sqlite3

from doc4llm.index.tokenize import STOPWORDS, fold_identifier, stem, tokens

_SCREAMING = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_SNAKE_OR_SCREAM = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+")
_PREFIX_ROWS = 40  # sections scanned for a template's documented instances


def _df(conn, form: str, sets: list[str]) -> int:
    from doc4llm.index.lexstats import doc_freq

    return doc_freq(conn, form, sets) if form else 0


def _prefix_tokens(conn, prefix: str, sets: list[str]) -> list[str]:
    """Index tokens that start with `prefix` (an identifier's folded leading parts), from
    at most _PREFIX_ROWS sections; [] on a backend without SQLite FTS5."""
    if not isinstance(conn, sqlite3.Connection) or not re.fullmatch(r"[a-z0-9_]{2,80}", prefix) or not sets:
        return []
    marks = ",".join("?" * len(set(sets)))
    try:
        rows = conn.execute(
            f"SELECT f.body, f.title, f.path FROM sec_fts f JOIN sections s ON s.id = f.rowid "
            f"WHERE sec_fts MATCH ? AND +s.set_name IN ({marks}) LIMIT {_PREFIX_ROWS}",
            [f'"{prefix}"*', *sorted(set(sets))]).fetchall()
    except sqlite3.Error:
        return []
    out: set[str] = set()
    for row in rows:
        for col in row:
            out.update(t for t in (col or "").split() if t.startswith(prefix))
    return sorted(out)


# -- spelling and syntax variants ------------------------------------------------------

_BRIT_AM = (("isation", "ization"), ("ise", "ize"), ("ising", "izing"), ("ised", "ized"), ("iser", "izer"),
            ("yse", "yze"), ("our", "or"), ("tre", "ter"), ("ogue", "og"), ("ence", "ense"))


# short forms a developer writes for a word the docs spell out ("repo", "org's", "env")
ABBREVIATIONS = {
    "org": ("organization", "organisation"), "orgs": ("organizations", "organisations"),
    "repo": ("repository",), "repos": ("repositories",), "env": ("environment",), "envs": ("environments",),
    "config": ("configuration",), "configs": ("configurations",), "auth": ("authentication", "authorization"),
    "app": ("application",), "apps": ("applications",), "db": ("database",), "dbs": ("databases",),
    "dir": ("directory",), "dirs": ("directories",), "docs": ("documentation",), "info": ("information",),
    "pkg": ("package",), "pkgs": ("packages",), "deps": ("dependencies",), "dep": ("dependency",),
    "msg": ("message",), "msgs": ("messages",), "var": ("variable",), "vars": ("variables",),
    "param": ("parameter",), "params": ("parameters",), "arg": ("argument",), "args": ("arguments",),
    "lib": ("library",), "libs": ("libraries",), "k8s": ("kubernetes",), "perf": ("performance",),
    "prod": ("production",), "dev": ("development",), "temp": ("temporary",), "tmp": ("temporary",),
    "attr": ("attribute",), "attrs": ("attributes",), "impl": ("implementation",), "init": ("initialize",),
    "spec": ("specification",), "specs": ("specifications",), "sync": ("synchronize",), "async": ("asynchronous",),
}


def variant_forms(word: str) -> list[str]:
    """Other spellings of a word: British/American (`behaviour` <-> `behavior`, `customise`
    <-> `customize`, `modelling` <-> `modeling`), and for hyphen and slash forms the
    joined and spaced ones (`lower-case` -> `lowercase`, `lower case`; `try/except` ->
    `try except`). Candidates only: the caller keeps one the docs hold."""
    w = word.casefold()
    out: list[str] = []
    if w.endswith(("'s", "’s")):  # "org's": the word itself
        w = w[:-2]
        out.append(w)
    out += ABBREVIATIONS.get(w, ())
    if re.fullmatch(r"[a-z]+(?:[-/][a-z]+){1,3}", w):
        parts = re.split(r"[-/]", w)
        out += ["".join(parts), " ".join(parts)]
        return [v for v in dict.fromkeys(out) if v != word.casefold()]
    if not w.isalpha() or len(w) < 4:
        return out
    for brit, am in _BRIT_AM:
        for a, b in ((brit, am), (am, brit)):
            i = w.find(a, 2)
            while i != -1:
                out.append(w[:i] + b + w[i + len(a):])
                i = w.find(a, i + 1)
    m = re.fullmatch(r"(.*[aeiou])(ll|l)(ing|ed|er|ers)", w)
    if m:
        out.append(m.group(1) + ("l" if m.group(2) == "ll" else "ll") + m.group(3))
    return [v for v in dict.fromkeys(out) if v != word.casefold()]


# a currency's name and the symbol docs write amounts with ("$49/month" holds no "usd"):
# the index keeps no symbols, so the sections' text is scanned for an amount (once per
# absent currency word, bounded by the searched sets' text)
CURRENCY_SYMBOLS = {
    "usd": "$", "dollar": "$", "dollars": "$", "cad": "$", "aud": "$", "eur": "€", "euro": "€",
    "euros": "€", "gbp": "£", "sterling": "£", "jpy": "¥", "yen": "¥", "inr": "₹", "rupee": "₹", "rupees": "₹",
}


def currency_symbol(word: str) -> str | None:
    return CURRENCY_SYMBOLS.get(word.casefold())


def _amount_in_text(conn, symbol: str, sets: list[str]) -> bool:
    """Some section of `sets` writes an amount with `symbol` (`$49`, `49 €`). True on a
    backend without the sections' text in SQLite: unchecked, the currency is not reported
    absent (the absent line says the symbol form was checked)."""
    if not sets:
        return False
    if not isinstance(conn, sqlite3.Connection):
        return True
    marks = ",".join("?" * len(set(sets)))
    globs = [f"*{symbol}[0-9]*", f"*{symbol} [0-9]*", f"*[0-9]{symbol}*", f"*[0-9] {symbol}*"]
    where = " OR ".join("text GLOB ?" for _ in globs)
    try:
        row = conn.execute(f"SELECT 1 FROM sections WHERE set_name IN ({marks}) AND ({where}) LIMIT 1",
                           [*sorted(set(sets)), *globs]).fetchone()
    except sqlite3.Error:
        return True  # unchecked: not reported absent
    return row is not None


def documented_variant(conn, word: str, sets: list[str]) -> str | None:
    """The index form (stem, or a phrase of stems) of a documented spelling of `word`; for a
    slash form (`try/except`, `pytest/ruff`) the words themselves when each is documented;
    for a currency (`usd`, `euros`) its symbol when some section writes an amount with it."""
    symbol = currency_symbol(word)
    if symbol and _amount_in_text(conn, symbol, sets):
        return symbol
    if re.fullmatch(r"[A-Za-z]+(?:/[A-Za-z]+){1,3}", word.strip("`")):
        stems = [stem(p.casefold()) for p in word.strip("`").split("/")]
        if all(_df(conn, x, sets) for x in stems):
            return " ".join(stems)
    for v in variant_forms(word):
        form = " ".join(tokens(v)) if " " in v else stem(v)
        if form and _df(conn, form, sets):
            return form
    return None


# -- the user's own values that need the index ---------------------------------------

def _parts(name: str) -> list[str]:
    return [p for p in re.split(r"[_.]", name.strip("`").removesuffix("()").lower()) if p]


def documented_template(conn, term: str, sets: list[str]) -> bool:
    """`UV_INDEX_ACME_INTERNAL_PASSWORD` where the docs write `UV_INDEX_INTERNAL_PROXY_PASSWORD`
    (or `UV_INDEX_{NAME}_PASSWORD`): the same leading two parts and last part around
    another middle, so the middle is the user's own name."""
    parts = _parts(term)
    if len(parts) < 4 or not _SNAKE_OR_SCREAM.fullmatch(term.strip("`")):
        return False
    head, tail = "_".join(parts[:2]) + "_", "_" + parts[-1]
    for tok in _prefix_tokens(conn, head, sets):
        middle = tok[len(head):len(tok) - len(tail)] if tok.endswith(tail) else ""
        if middle and tok != fold_identifier(term):
            return True
    return False


def documented_prefix(conn, term: str, sets: list[str]) -> bool:
    """`import.meta.env.API_SECRET` where the docs write `import.meta.env.VITE_KEY`: every
    part but the last is a documented name's prefix, so the last part is the user's."""
    t = term.strip("`").removesuffix("()")
    if "." not in t or "/" in t:
        return False
    head = t.rsplit(".", 1)[0]
    if head.count(".") < 1:
        return False  # `Comment.body`: one part is no documented family
    prefix = fold_identifier(head) + "_"
    return bool(_prefix_tokens(conn, prefix, sets)) or bool(_df(conn, fold_identifier(head), sets))


def own_env_var(conn, term: str, sets: list[str], products: set[str]) -> bool:
    """`MYAPP_DATABASE_URL`, `ACME_PAT`, `API_TOKEN`: an environment variable whose first
    part is no product's name and no documented variable's prefix is the user's own
    (`UV_HTTP_TIMEOUT` is uv's: the docs document other `UV_` variables)."""
    t = term.strip("`")
    if not _SCREAMING.fullmatch(t):
        return False
    first = t.split("_", 1)[0].lower()
    if first in products or len(first) < 2:
        return False
    return not _prefix_tokens(conn, first + "_", sets)


def same_name_as_value(term: str, values: list[str]) -> bool:
    """`favouriteColour` beside the value `favourite_colour`: one name in two case styles."""
    key = re.sub(r"[^a-z0-9]", "", term.casefold())
    return len(key) >= 4 and any(re.sub(r"[^a-z0-9]", "", v.casefold()) == key for v in values)


def is_own_value(conn, word: str, values: list[str], sets: list[str], products: set[str]) -> bool:
    """An absent query word or term that is the user's own value (module docstring)."""
    from doc4llm.search.values import covers

    return (covers(values, word) or same_name_as_value(word, values)
            or documented_template(conn, word, sets) or documented_prefix(conn, word, sets)
            or own_env_var(conn, word, sets, products))


def possessed_word(word: str, raw: str) -> bool:
    """A plain English word right after my/our/your ("for my accountant"): the user's own
    thing, not what the docs should cover. Names after a possessive stay names ("my LDAP
    server", "my Okta tenant")."""
    from doc4llm.search.english import is_english

    if not word.isalpha() or not word.islower() or not is_english(word):
        return False
    toks = [t.strip(".,;:!?()\"'`").casefold() for t in raw.split()]
    for i, t in enumerate(toks):
        if t == word and i > 0 and toks[i - 1] in {"my", "our", "your", "their"}:
            return raw.split()[i].strip(".,;:!?()\"'`") == word
    return False


def content_words(raw: str) -> list[str]:
    return [w for w in re.findall(r"[a-z][a-z0-9']*", raw.casefold()) if w not in STOPWORDS]


def verbatim_present(conn, term: str, sets: list[str]) -> bool:
    """A flag (`--outdated`) written as such in some section: the index holds a flag as
    its bare word, so `--outdated` matched the prose "outdated". Checked on the sections
    that hold the word (LIKE over those rows only); True when it cannot be checked."""
    t = term.strip("`")
    word = t.lstrip("-")
    if not isinstance(conn, sqlite3.Connection) or not t.startswith("-") or not re.fullmatch(r"[\w\-]{1,60}", word):
        return True
    form = " ".join(tokens(word)) or word.lower()
    marks = ",".join("?" * len(set(sets)))
    pattern = "%" + t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    try:
        row = conn.execute(
            f"SELECT 1 FROM sec_fts f JOIN sections s ON s.id = f.rowid WHERE sec_fts MATCH ? "
            f"AND s.text LIKE ? ESCAPE '\\' AND +s.set_name IN ({marks}) LIMIT 1",
            ['"' + form.replace('"', "") + '"', pattern, *sorted(set(sets))]).fetchone()
    except sqlite3.Error:
        return True
    return row is not None
