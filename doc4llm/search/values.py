"""The user's own values in a question, recognised from its shape (no index needed).

Docs cannot contain the names a developer chose: their env var `MYAPP_DATABASE_URL`, their
model `UserProfile`, their index `acme-internal`, the path `./scripts/backup_db.py`, the URL
`https://github.com/myorg/mytool`. Reporting such a word as "not in these docs" over a right
first result told agents the docs do not answer (issue 34: seven questions in three agent
studies). A value is recognised by the question's shape:

- a URL or a path (`./posts`, `~/.claude/x.sh`, `packages/payments-core`, `a/b.md`);
- a placeholder: `<your-project>`, `{name}`, `${API_TOKEN}`, `$HOME`, `YOUR_KEY`, `MY_TOKEN`,
  `username.github.io/my-repo`;
- a quoted example string (`"hello world"`, 'foo');
- a name after a possessive or naming cue: "my index acme-internal", "a theme called
  midnight-ocean", "named code-reviewer", "my secret ACME_PAT";
- a code-shaped name next to a noun for something users define: "the `password_hash`
  field", "my Order model", "the `pet_type` field", "a key like tracking_id".

A question that is only the name (`MYAPP_DATABASE_URL`) asks about it: it has no values.
Whether the docs document part of a compound (`UV_INDEX_ACME_INTERNAL_PASSWORD`,
`import.meta.env.API_SECRET`) needs the index: absence.py decides that.
"""

from __future__ import annotations

import re

from doc4llm.index.tokenize import STOPWORDS, is_identifier

# things a developer names themselves (their model, field, index, project, ...): a
# capitalised or code-shaped word beside one of these is the user's, not the product's
USER_KINDS = frozenset("""
model models class classes type types schema schemas dataclass struct enum field fields attribute attributes
property properties column columns table tables collection collections document documents record records
key keys variable variables var vars secret secrets function functions method methods endpoint endpoints
route routes handler handlers script scripts file files folder folders directory directories dir dirs path
repo repos repository repositories project projects package packages module modules app apps application
service services site bucket buckets branch branches queue queues topic topics channel channels job jobs
task tasks workflow workflows step steps alias profile user username org organization organisation team
tenant workspace member members agent agents theme themes hook hooks tool tools plugin plugins index
indexes indices server servers database databases db container containers image images cluster namespace
datetime timestamp string value values argument arguments parameter parameters param params env token
tokens form forms view views component components page pages subscription subscriptions swatch shuttle
bolt device devices domain host hostname account bot command commands subcommand
""".split())

_POSSESSIVE = {"my", "our", "your", "their"}
KIND_WINDOW = 4  # words either side in which a user kind makes a code-shaped name the user's
_NAMING = {"called", "named", "name"}
_SCHEME = re.compile(r"[a-z][a-z0-9+.\-]{0,20}://|git\+|www\.", re.I)
_HOST = re.compile(r"[\w\-]{1,63}(?:\.[\w\-]{1,63}){0,8}\.[a-z]{2,6}(?::\d{1,5})?", re.I)
_PLACEHOLDER = re.compile(r"<[^<>\s]{1,60}>|\$\{[^}\s]{1,60}\}|\{[A-Za-z_][\w.\-]{0,60}\}|\$[A-Z_][A-Z0-9_]{1,60}")
_USER_PREFIX = re.compile(r"^(?:my|your|our|foo|bar|baz|example|sample|test|dummy|fake|acme)(?:[_\-.]|$)", re.I)
_USER_WORD = re.compile(r"(?:^|[_\-./])(?:my|your|username|user-?name|yourname|xxx+|foo|bar|baz)(?:[_\-./]|$)", re.I)
_QUOTED = re.compile(r"(?<![\w`])([\"'“‘])([^\"'“”‘’`\n]{1,80})([\"'”’])(?!\w)")
_TOKEN = re.compile(r"`[^`]+`|[^\s`]+")
_EDGE = "\"'()[]{},;:!?“”‘’"


def _bare(tok: str) -> str:
    tok = tok.strip(_EDGE)
    tok = tok.rstrip(".") if not tok.startswith(".") or tok.count(".") > 1 else tok
    if tok.endswith("'s") or tok.endswith("’s"):
        tok = tok[:-2]
    return tok.strip("`").strip(_EDGE) if tok.startswith("`") else tok


def is_url(tok: str) -> bool:
    """`https://x.org/a`, `git+https://...`, `www.x.org`, `github.com/org/repo` (checked
    per whitespace token: linear in the question's length)."""
    t = tok.strip("`").rstrip(".,;:!?)")
    if _SCHEME.match(t):
        return True
    host, slash, _ = t.partition("/")
    return bool(slash) and bool(_HOST.fullmatch(host))


def is_pathlike(tok: str) -> bool:
    """A path or URL: `./posts`, `~/x`, `/etc/ssl/a.pem`, `packages/core`, `a.b/c` (not
    `try/except` or `and/or`: two plain words joined by a slash are a phrase)."""
    t = tok.strip("`")
    if is_url(t) or t.startswith(("./", "../", "~/", "/", "\\")) and len(t) > 1:
        return True
    if "/" not in t and "\\" not in t:
        return False
    parts = [p for p in re.split(r"[/\\]", t) if p]
    if len(parts) >= 2 and all(p.isalpha() for p in parts) and len(parts) <= 3:
        return False  # try/except, read/write
    return len(parts) >= 2


def _code_shaped(tok: str) -> bool:
    return is_identifier(tok) or bool(re.search(r"[a-z][A-Z]|\d|[_.]", tok)) and len(tok) > 1


def _capitalised(tok: str, index: int) -> bool:
    return index > 0 and tok[:1].isupper() and not tok.isupper() and tok.isalnum()


def user_values(raw: str, error: bool = False) -> list[str]:
    """The question's own values, as written (see the module docstring); empty when the
    question is nothing but names. `error`: an error question, whose quoted text is what a
    program printed (the subject, not an example the user made up)."""
    found: list[str] = []

    def add(v: str) -> None:
        v = v.strip()
        if v and len(v) >= 2 and v.casefold() not in {f.casefold() for f in found}:
            found.append(v)

    for tok in raw.split():
        if is_url(tok):
            add(tok.strip("`").strip(_EDGE).rstrip(".,;:!?)"))
    for m in _PLACEHOLDER.finditer(raw):
        add(m.group(0))
    for m in _QUOTED.finditer(raw) if not error else ():
        if m.group(1) != "'" or " " in m.group(2) or not raw[max(0, m.start() - 1):m.start()].isalpha():
            add(m.group(2))
    toks = [m.group(0) for m in _TOKEN.finditer(raw)]
    bare = [_bare(t) for t in toks]
    low = [b.casefold() for b in bare]
    content = [b for b in low if b and b not in STOPWORDS and b.isascii()]
    if len(content) <= 1:
        return []  # the question is the name: it asks about it
    names_only = len(content) <= 3 and len(raw.split()) <= 4
    for i, (tok, b) in enumerate(zip(toks, bare, strict=True)):
        if not b:
            continue
        quoted = tok.startswith("`")
        if is_url(b):
            continue  # added whole above
        if is_pathlike(b):
            add(b)
            continue
        if _USER_PREFIX.match(b) and (_code_shaped(b) or "-" in b) or _USER_WORD.search(b) and (
                _code_shaped(b) or "-" in b or "." in b):
            add(b)
            continue
        shaped = quoted or _code_shaped(b)
        named = "-" in b[1:] and not b.startswith("-")  # acme-internal, billing-api
        cap = _capitalised(b, i)
        # a field-like name (`owner_id`, `favouriteColour`, `site_id`), not a product's
        # name written in capitals (PyInstaller, MessagePack, GraphQL)
        field = "_" in b.strip("_") or bool(re.match(r"[a-z]+[A-Z]", b)) or quoted and b[:1].islower()
        if not (shaped or named or cap):
            continue
        prev = low[max(0, i - 3):i]
        near = low[max(0, i - KIND_WINDOW):i] + low[i + 1:i + 1 + KIND_WINDOW]
        possessive = any(w in _POSSESSIVE for w in prev)
        # "called X", "named X": whatever X looks like
        if low[i - 1:i] and low[i - 1] in _NAMING:
            add(b)
            continue
        # "my index acme-internal", "my secret ACME_PAT", "my model `UserProfile`",
        # "my collection `field_reports`": a possessive, then a user kind, then the name
        if possessive and prev[-1:] and prev[-1] in USER_KINDS and (shaped or named or cap):
            add(b)
            continue
        # "a base class AppModel", "a field `favourite_colour`": a user kind, then a code-shaped name
        if shaped and prev[-1:] and prev[-1] in USER_KINDS and not names_only:
            add(b)
            continue
        # "my Order model", "the `password_hash` field", "the created_at datetime",
        # "my billing-api service": the name right before a user kind
        if low[i + 1:i + 2] and low[i + 1] in USER_KINDS and not names_only and (
                field or (shaped or named or cap) and possessive):
            add(b)
            continue
        # a code-shaped name among user kinds ("sets owner_id on every new document",
        # "a local index on `site_id`", "a key like tracking_id")
        if field and any(w in USER_KINDS for w in near) and not names_only:
            add(b)
            continue
        # "for my Cat and Dog models": capitalised names joined by and/or before a user kind
        if cap and possessive and any(w in USER_KINDS for w in low[i + 1:i + 4]):
            add(b)
    return found


def covers(values: list[str], word: str) -> bool:
    """`word` (a query keyword or term) is one of the values or part of one."""
    w = word.casefold().strip("`")
    if len(w) < 2:
        return False
    for v in values:
        v = v.casefold()
        if w == v:
            return True
        if len(w) >= 2 and re.search(r"(?:^|[^a-z0-9])" + re.escape(w) + r"(?:$|[^a-z0-9])", v):
            return True
    return False
