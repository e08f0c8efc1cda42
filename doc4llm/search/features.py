"""Ranking features of one candidate section, each on a 0..1 scale.

The learned ranker (ranker.py) scores candidates with a linear model over these; the
weights are fitted by `benchmarks/search/fit_ranker.py` with leave-one-corpus-out validation.
Every feature is cheap: token streams stored at index time, a few regexes, and one
query per search for the page-level facts (page kind, page title tokens).

- fused, bm25, vector, head, L1, L2, L3.2, symbol: the first-stage signals (fusion.py)
- exact: the query's technical terms found verbatim in the section
- heading: share of query keywords in the section's own heading
- coverage: share of query keywords in the section's text or heading path
- page_match: share of query keywords in the page title or file name
- slug: the query *is* the page's name (`npm ci` -> page `npm-ci`) or a heading's
- prefer: the section's content type is the one the query type prefers
- exact_ref: the query's identifiers found in a reference section (table, option list)
- intro: the page's intro (its top section); empty: a heading with no text of its own
- depth, length: how deep the section sits and how much text it has
- changes: the page is release notes / a changelog / a blog post, and the query does
  not ask about versions or changes
"""

from __future__ import annotations

import math
import re

from doc4llm.index.tokenize import stem, tokens
from doc4llm.search.analyze import QueryAnalysis
from doc4llm.search.fusion import Candidate

SIGNALS = ("fused", "bm25", "vector", "head", "L1", "L2", "L3.2", "symbol")

_CHANGES_NAME = re.compile(
    r"(?:^|[\s/_\-.(])(change[\s_-]?log|changes|release[\s_-]?notes?|releases|history|news|"
    r"what'?s[\s_-]?new|blog|announcements?)(?:$|[\s/_\-.)])", re.I)
_VERSION_HEADING = re.compile(
    r"^\s*(?:\[?v(?:ersion)?\s*)?\d+\.\d+(?:\.\d+)?(?:[\w.+-]{0,20})?\]?(?:\s|$|\(|-|—)|"
    r"^\s*\d{4}-\d{2}-\d{2}\b|^\s*(?:release|version)\s+v?\d", re.I)
_MIGRATION_NAME = re.compile(r"(?:^|[\s/_\-.(])(migrat\w*|upgrad\w*)", re.I)
_CHANGE_HEADING = re.compile(
    r"\b(changes?\s+(?:to|in)|changed|removed|deprecated|moved|renamed|no\s+longer|breaking|"
    r"new\s+in|introduction\s+of|v\d+)\b", re.I)
# a question about the product's versions, not one that only says "version" ("bump the
# minor version of my project", "test against several Python versions")
_ASKS_CHANGES = re.compile(
    r"\b(change ?log|release notes?|released?|changed|changes|new in|what'?s new|"
    r"deprecat\w*|removed in|breaking|upgrad\w*|migrat\w*|history|since|"
    r"(?:in|since|from|newer|older|latest|new|previous|next|old)\s+versions?|"
    r"versions?\s+(?:v?\d|added|introduced|removed|changed))\b|\bv?\d+\.\d+", re.I)
_VERSION = re.compile(r"(?<![\w.])v?(\d{1,4})\.(\d{1,4})(?:\.(\d{1,4}))?(?![.\d])")

_PAGE_CACHE: dict[tuple[int, str], dict] = {}
CHANGE_KINDS = {"release-notes", "changelog", "contributors"}  # `extra: {kind: ...}` in doc4llm-set.yaml


# a section with fewer words of its own is only a heading over its sub-sections
EMPTY_WORDS = 5


def asks_about_changes(query: str, set_versions: list[str] | tuple[str, ...] = ()) -> bool:
    """The query asks about versions or changes; `set_versions` (the versions that picked
    the searched set, "our project is on pydantic 1.10") do not count as such."""
    for v in set_versions:
        query = re.sub(rf"(?<![\w.])v?{re.escape(v)}(?![\w])", " ", query, flags=re.I)
    return bool(_ASKS_CHANGES.search(query))


def _alnum(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.casefold())


def page_facts(conn, page_ids: list[int]) -> dict[int, dict]:
    """{page id: {"changes", "title_toks", "names", "error_catalog"}} (cached per page version)."""
    ids = sorted(set(page_ids))
    if not ids:
        return {}
    from doc4llm.index.backend import backend_of

    index = backend_of(conn)
    out: dict[int, dict] = {}
    todo = []
    for r in index.pages(ids):
        key = (r["id"], r["sig"] or "")
        if key in _PAGE_CACHE:
            out[r["id"]] = _PAGE_CACHE[key]
        else:
            todo.append(r)
    if todo:
        heads = index.page_headings([r["id"] for r in todo])
        if len(_PAGE_CACHE) > 20000:
            _PAGE_CACHE.clear()
        for r in todo:
            facts = _classify_page(r["title"] or "", r["page"] or "", r["source"] or "",
                                   heads.get(r["id"], []), r.get("kind"))
            _PAGE_CACHE[(r["id"], r["sig"] or "")] = facts
            out[r["id"]] = facts
    return out


def _classify_page(title: str, page: str, source: str, headings: list[str], kind: str | None = None) -> dict:
    stem_name = re.sub(r"\.(md|mdx|markdown|rst|txt|html?)$", "", source.rstrip("/").split("/")[-1].split("#")[0])
    names = {n for n in (_alnum(title), _alnum(page), _alnum(stem_name)) if n}
    by_name = any(_CHANGES_NAME.search(" " + t + " ") for t in (title, page, source.split("?")[0]))
    versioned = sum(1 for h in headings if _VERSION_HEADING.match(h))
    by_shape = versioned >= 3 and versioned >= 0.4 * len(headings)
    # A guide for moving between versions of the same product (pydantic's "Migration guide",
    # "Migrating to 1.0") is a changelog in prose: its sections are named for what changed.
    # A guide for moving from another tool ("Migrating from pip") has ordinary headings.
    if not (by_name or by_shape) and any(_MIGRATION_NAME.search(" " + t) for t in (title, page, stem_name)):
        changed = sum(1 for h in headings if _CHANGE_HEADING.search(h))
        by_shape = bool(re.search(r"\bv?\d+(?:\.\d+)*\b", title)) or (
            changed >= 3 and changed >= 0.2 * len(headings))
    toks = set(tokens(f"{title} {page} {stem_name}"))
    # an error catalog: a page about errors whose entries are headed by their codes
    # (pydantic's `int_parsing`, Node's `ERR_INVALID_ARG_TYPE`)
    coded = sum(1 for h in headings if _CODE_HEADING.fullmatch(h.strip()))
    catalog = coded >= 15 and coded >= 0.5 * len(headings) and "error" in f"{title} {page} {stem_name}".casefold()
    # the set's metadata says so: package sets mark release notes (pytest's `announce/`
    # pages, titled `pytest-8.2.0`), changelogs and contributor lists
    by_kind = kind in CHANGE_KINDS
    return {"changes": bool(by_name or by_shape or by_kind), "title_toks": toks, "names": names, "error_catalog": catalog}


_CODE_HEADING = re.compile(r"`?[A-Za-z][A-Za-z0-9]*(?:[_.][A-Za-z0-9]+)+`?")


def keyword_stems(qa: QueryAnalysis) -> list[str]:
    """The index tokens a section must carry to cover the query: each technical term as one
    whole token (`url_path_for`, not `url` + `path`), and the stems of the other keywords.
    Splitting an identifier into its parts would let any section about URLs and paths
    cover a question about `url_path_for`."""
    out: list[str] = []
    term_text = " ".join(qa.terms).lower()
    for t in qa.terms:
        toks = tokens(t)
        if toks and toks[0] not in out:
            out.append(toks[0])
    for k in qa.keywords:
        if k in term_text:
            continue
        s = stem(k)
        if s not in out:
            out.append(s)
    return out


def term_pattern(term: str) -> re.Pattern:
    t = term.strip("`")
    if t.endswith("()"):
        t = t[:-2]
    return re.compile(r"(?<![\w\-])" + re.escape(t) + r"(?![\w\-])", re.I)


def keyword_idf(conn, stems: list[str], sets: list[str]) -> dict[str, float]:
    """IDF of each keyword stem over the chosen sets' sections (cached FTS counts)."""
    from doc4llm.index.lexstats import doc_freq, section_count

    if not stems or not sets:
        return {}
    n = section_count(conn, sets) or 1
    return {s: math.log(1 + n / (1 + doc_freq(conn, s, sets))) for s in stems}


def candidate_features(qa: QueryAnalysis, c: Candidate, row: dict, page: dict | None,
                       prefer: str | None, asks_changes: bool, query_key: str,
                       idf: dict[str, float] | None = None) -> dict[str, float]:
    f: dict[str, float] = {"fused": c.score}
    for name in SIGNALS[1:]:
        f[name] = c.parts.get(name, 0.0)
    text = row["text"] or ""
    heads = " ".join(row["heading_path"])
    term_hits = [bool(term_pattern(t).search(text)) for t in qa.terms]
    f["exact"] = sum(term_hits) / len(qa.terms) if qa.terms else 0.0
    owners = {_alnum((row.get("set_name") or "").split("@")[0]), _alnum(row.get("page") or "")} - {""}
    forms = {t: _local_forms(t, owners) for t in qa.terms}
    head_hits = {tokens(t)[0] if tokens(t) else t: any(term_pattern(x).search(heads) for x in forms[t])
                 for t in qa.terms}
    body_hits = {tokens(t)[0] if tokens(t) else t: h for t, h in zip(qa.terms, term_hits, strict=True)}
    kws = keyword_stems(qa)
    head_toks = set((row.get("tok_title") or "").split()) or set(tokens(row["title"] or ""))
    path_toks = set((row.get("tok_path") or "").split())
    body_toks = set((row.get("tok_body") or "").split())

    own_title = row["title"] or ""
    own_term = {tokens(t)[0] if tokens(t) else t: any(term_pattern(x).search(own_title) for x in forms[t])
                for t in qa.terms}
    own_hits = {k: own_term[k] if k in own_term else k in head_toks for k in kws}

    def in_head(k: str) -> bool:  # a term is matched as written, a keyword by its stem
        return head_hits[k] if k in head_hits else (k in head_toks or k in path_toks)

    def in_body(k: str) -> bool:
        return body_hits[k] if k in body_hits else k in body_toks

    if kws:
        f["heading"] = sum(1 for k in kws if (head_hits[k] if k in head_hits else k in head_toks)) / len(kws)
        f["coverage"] = sum(1 for k in kws if in_body(k) or in_head(k)) / len(kws)
    else:
        f["heading"] = f["coverage"] = 0.0
    idf = idf or {}
    total = sum(idf.get(k, 0.0) for k in kws)
    if total > 0:
        f["wcoverage"] = sum(idf.get(k, 0.0) for k in kws if in_body(k) or in_head(k)) / total
        f["wheading"] = sum(idf.get(k, 0.0) for k in kws if in_head(k)) / total
        f["wbody"] = sum(idf.get(k, 0.0) for k in kws if in_body(k)) / total
        # the section's own heading, not inherited from its ancestors: `fs.readFile(...)`
        # itself, not its sub-section "File descriptors"
        f["own_head"] = sum(idf.get(k, 0.0) for k in kws if own_hits[k]) / total
    else:
        f["wcoverage"] = f["wheading"] = f["wbody"] = f["own_head"] = 0.0
    page = page or {}
    f["page_match"] = (sum(1 for k in kws if k in page.get("title_toks", ())) / len(kws)) if kws else 0.0
    f["slug"] = 1.0 if query_key and (query_key in page.get("names", ()) or query_key == _alnum(row["title"] or "")) else 0.0
    f["prefer"] = 1.0 if prefer and row.get("content_type") == prefer else 0.0
    # a reference table or option list that names the identifier is its canonical answer
    f["exact_ref"] = f["exact"] if row.get("content_type") == "api-reference" else 0.0
    words = row.get("words") or 0
    f["empty"] = 1.0 if words < EMPTY_WORDS else 0.0
    f["intro"] = 1.0 if row.get("level") and len(row["heading_path"]) == 1 else 0.0
    f["depth"] = min(len(row["heading_path"]), 6) / 6.0
    f["length"] = min(1.0, math.log1p(words) / math.log(2000))
    f["changes"] = 1.0 if page.get("changes") and not asks_changes else 0.0
    # "what's new in hatch 1.16?" -> the notes headed "Hatch v1.16.0", not 1.17's
    f["version_match"] = 1.0 if asks_changes and _same_version(qa.raw, own_title) else 0.0
    # an error code's entry answers a question that quotes the error or names the code
    f["err_catalog"] = 1.0 if (page.get("error_catalog") and qa.query_type != "error"
                               and not qa.identifier_only) else 0.0
    # a query that is only a name (`fs.readFile`) asks for the entry whose own heading is
    # that name, not the sub-sections that inherit it in their path
    names = entry_names(qa)
    f["named_entry"] = 1.0 if names and all(
        names_entry(t, own_title) or _names_member(t, own_title, owners) for t in names) else 0.0
    if f["changes"]:  # a release note headed `app.url_path_for()` is news about it, not its entry
        f["named_entry"] = f["own_head"] = f["wheading"] = 0.0
    return f


def _same_version(query: str, heads: str) -> bool:
    """A version the query names (1.16, v2.0.1) is in this heading (1.16 names 1.16.0
    and 1.16.5 too): the entry for that release, not its sub-sections."""
    want = {m.groups() for m in _VERSION.finditer(query)}
    if not want:
        return False
    for m in _VERSION.finditer(heads):
        major, minor, patch = m.groups()
        if any(w[0] == major and w[1] == minor and w[2] in (None, patch) for w in want):
            return True
    return False


_ONE_NAME = re.compile(r"[A-Za-z][\w-]{2,60}")


def entry_names(qa: QueryAnalysis) -> list[str]:
    """The names a name-only query asks for: its identifiers (`fs.readFile`), or its one
    word (`mixin`, an option documented under the heading "`mixin` (Function)")."""
    if qa.identifier_only and qa.terms:
        return qa.terms
    raw = qa.raw.strip().strip("`")
    return [raw] if _ONE_NAME.fullmatch(raw) else []


# `uv.lock`, `fastify.d.ts`: a file named after the project, not a member of it
_FILE_SUFFIX = re.compile(r"(lock|json|ya?ml|toml|md|txt|ini|cfg|conf|env|js|mjs|cjs|ts|py|d\.ts)", re.I)


def _member_of(term: str, owners: set[str]) -> str:
    """`listen` for `fastify.listen` when `fastify` is the doc set or the page: docs drop
    the owner they are about from their headings."""
    owner, dot, member = term.strip("`").partition(".")
    if not dot or not member or _alnum(owner) not in owners or _FILE_SUFFIX.fullmatch(member):
        return ""
    return member


def _local_forms(term: str, owners: set[str]) -> list[str]:
    """`fastify.listen` as the docs of fastify write it in headings: also `listen`."""
    member = _member_of(term, owners)
    return [term, member] if member else [term]


def _names_member(term: str, title: str, owners: set[str]) -> bool:
    """`fastify.listen` names the heading `listen` (or `.listen()`), see _member_of."""
    member = _member_of(term, owners)
    return bool(member) and names_entry(member, title)


_SIGNATURE = re.compile(r"[(\[][^()\[\]]{0,200}[)\]]")


def names_entry(term: str, title: str) -> bool:
    """The heading is the entry for `term`: the name, maybe with its signature and one
    kind word (`fs.readFile(path[, options])`, `Class: fs.Dir`, `new Agent([options])`),
    not a heading that merely mentions it ("Example - Agent instantiation")."""
    m = term_pattern(term).search(title)
    if not m or re.match(r"\.\w", title[m.end():]):
        return False  # `Agent.close()` is a member of `Agent`, not its entry
    rest = title[: m.start()] + " " + title[m.end():]
    for _ in range(3):  # nested brackets: `([, options])`
        rest = _SIGNATURE.sub(" ", rest)
    return len(re.findall(r"[^\W_]+", rest)) <= 1


def query_key(qa: QueryAnalysis) -> str:
    """The query reduced to letters and digits, when it is short enough to be a name."""
    return _alnum(qa.raw) if len(qa.raw.split()) <= 4 and len(_alnum(qa.raw)) >= 3 else ""
