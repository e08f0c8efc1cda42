"""Query analysis: deterministic and fast (regexes, no model).

Finds the query type (error, howto, concept, code_lookup, api_reference, general), the
technical terms (backticked, CamelCase, snake/SCREAMING_CASE, flags, paths, calls,
error codes), the domain words that name a doc set (from the set names themselves and
their metadata, never from a hard-coded table), the intent, and the content concepts
the results must cover.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from doc4llm.index.tokenize import STOPWORDS, is_identifier, stem, tokens

QUERY_TYPES = ("error", "howto", "concept", "code_lookup", "api_reference", "general")

_BACKTICK = re.compile(r"`([^`]+)`")
_ERROR_CODE = re.compile(r"\b(?:E[A-Z]{3,}|[A-Z]{2,}\d{2,}|[A-Z][a-zA-Z]+(?:Error|Exception)|\d{3}\s+(?:error|status))\b")
_ERROR_WORDS = re.compile(
    r"\b(error|errors|exception|traceback|fail(?:s|ed|ing|ure)?|crash(?:es|ed|ing)?|broken|not working|"
    r"doesn'?t work|won'?t|can'?t|cannot|unable|denied|refused|timeout|timed out|stuck|hangs?|"
    r"killed|panic|invalid|missing|not found|unexpected|warning|issue|problem|bug|fix)\b", re.I)
_HOWTO = re.compile(r"^\s*(how (do|can|to|should|would)|how'?s|steps? to|guide|tutorial|set ?up|setting up|"
                    r"configure|install|enable|disable|add|create|use|deploy|run|make|write|connect|"
                    r"migrate|upgrade|change|customi[sz]e|integrate)\b|\bhow (do|can|to)\b", re.I)
_CONCEPT = re.compile(r"^\s*(what (is|are|does)|why|explain|overview|concept|difference between|"
                      r"when (should|to)|what happens|understand|architecture|how does .* work)\b", re.I)
_API = re.compile(r"\b(api|endpoint|parameter|params?|argument|option|options|flag|flags|field|"
                  r"fields|schema|signature|return(s| value)?|type of|default value|config key|"
                  r"setting|settings|env(ironment)? var(iable)?s?|reference|property|properties)\b", re.I)


@dataclass
class QueryAnalysis:
    raw: str
    query_type: str
    terms: list[str]  # technical terms as written
    keywords: list[str]  # content words (lowercase, no stopwords)
    stems: list[str]  # stemmed tokens for matching
    domain_sets: list[str] = field(default_factory=list)  # sets named by the query
    domain_words: list[str] = field(default_factory=list)
    intent: str = ""
    identifier_only: bool = False
    values: list[str] = field(default_factory=list)  # the user's own values (values.py)
    # versions the question names to pick a set ("pydantic 1.10" -> "1.10", versions.py): they
    # say which docs to read, not that the question is about changes
    set_versions: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def concepts(self) -> list[str]:
        """What the results must cover: technical terms, else the content keywords."""
        if self.terms:
            extra = [k for k in self.keywords if not any(k in t.lower() for t in self.terms)]
            return self.terms + extra[:4]
        return self.keywords


# a path is tried only from the start of a run of name characters (`(?<![\w.\-])`): tried
# from every dot of a long run of dots, it rescanned the run each time (quadratic)
_TERM = re.compile(r"(?<![\w\-])(--?[A-Za-z][\w\-]*|(?<![\w.\-])[\w.\-]*+[/\\][\w./\\\-]+|"
                   r"[A-Za-z_][\w.]*\(\)|[A-Za-z_][\w.\-]*)")


def technical_terms(query: str) -> list[str]:
    found: list[str] = []
    for m in _BACKTICK.finditer(query):
        found.append(m.group(1).strip())
    rest = _BACKTICK.sub(" ", query)
    for m in _TERM.finditer(rest):
        raw = m.group(1).rstrip(".,;:!?")
        if len(raw) < 2:
            continue
        if (raw.startswith("-") or "/" in raw or raw.endswith("()") or is_identifier(raw)
                or _ERROR_CODE.fullmatch(raw)):
            if raw.lower() not in {t.lower() for t in found}:
                found.append(raw)
    return found


def _domain_aliases(set_name: str, metadata: dict | None) -> set[str]:
    """Words that name a set: its name parts (`OpenCode_Docs` -> opencode, open code),
    plus words from its source URL host (`code.claude.com` -> claude)."""
    base = set_name.split("@")[0]
    words = {w.lower() for w in re.split(r"[_\-\s.]+", base) if w}
    camel = re.findall(r"[A-Z][a-z]+|[a-z]+|[A-Z]+(?![a-z])", base.replace("_", " "))
    words |= {w.lower() for w in camel}
    generic = {"docs", "doc", "documentation", "latest", "dev", "main", "reference", "guide", "api", "code", "v"}
    aliases = {w for w in words if w not in generic and len(w) > 2}
    parts = [w for w in re.split(r"[_\-\s.@]+", base) if w and w.lower() not in generic]
    if parts:
        aliases.add("".join(parts).lower())  # "Claude_Code" -> "claudecode"; "OpenCode" -> "opencode"
    for origin in (metadata or {}).get("origins", {}).values() if metadata else []:
        url = origin.get("root_url") if isinstance(origin, dict) else None
        if url:
            host = re.sub(r"^https?://", "", url).split("/")[0]
            aliases |= {p for p in host.split(".") if p not in {"www", "docs", "com", "org", "io", "dev", "net"} and len(p) > 2}
    return aliases


def detect_domains(query: str, sets: list[tuple[str, dict | None]]) -> tuple[list[str], list[str]]:
    """(set names the query names, the words that named them)."""
    q = query.lower()
    qwords = set(re.findall(r"[a-z0-9]+", q))
    joined = re.sub(r"[^a-z0-9]", "", q)
    hits, words = [], []
    for name, meta in sets:
        for alias in _domain_aliases(name, meta):
            if alias in qwords or (len(alias) >= 6 and alias in joined):
                hits.append(name)
                words.append(alias)
                break
    # a generic word shared by every set (e.g. "code") names none of them
    if len(hits) == len(sets) and len(sets) > 1:
        return [], []
    return hits, sorted(set(words))


def classify(query: str, terms: list[str], keywords: list[str]) -> str:
    q = query.strip()
    if _ERROR_CODE.search(q) or re.search(r"\b(error|exception|traceback)\b", q, re.I) \
            or (_ERROR_WORDS.search(q) and not _CONCEPT.search(q)):
        return "error"
    only_terms = terms and len(keywords) <= 1 and len(q.split()) <= 4
    if only_terms:
        return "code_lookup"
    if _CONCEPT.search(q):
        return "concept"
    if _HOWTO.search(q):
        return "howto"
    if _API.search(q) or (terms and len(q.split()) <= 6):
        return "api_reference"
    if re.search(r"\b(example|snippet|sample code|code for)\b", q, re.I):
        return "code_lookup"
    return "general"


def intent_of(query: str, qtype: str, keywords: list[str]) -> str:
    topic = " ".join(keywords[:6])
    if qtype == "error":
        return f"fix error: {topic}"
    if qtype == "howto":
        verb = _HOWTO.search(query)
        return f"do: {topic}" if verb else topic
    if qtype == "concept":
        return f"understand: {topic}"
    if qtype == "code_lookup":
        return f"find code: {topic}"
    if qtype == "api_reference":
        return f"look up reference: {topic}"
    return topic


def analyze(query: str, sets: list[tuple[str, dict | None]] | None = None,
            forced_type: str | None = None) -> QueryAnalysis:
    terms = technical_terms(query)
    words = [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9']*", _BACKTICK.sub(" ", query))]
    keywords = []
    for w in words:
        w = w.strip("'")
        if len(w) > 1 and w not in STOPWORDS and w not in keywords:
            keywords.append(w)
    domain_sets, domain_words = detect_domains(query, sets or [])
    content_keywords = [k for k in keywords if k not in domain_words]
    term_text = " ".join(terms).lower()
    outside_terms = [k for k in content_keywords if k not in term_text]
    qtype = forced_type if forced_type in QUERY_TYPES else classify(query, terms, outside_terms)
    stems = list(dict.fromkeys(tokens(query)))
    identifier_only = bool(terms) and all(
        k in " ".join(terms).lower() or stem(k) in stems for k in content_keywords) and len(query.split()) <= 3
    from doc4llm.search.values import user_values

    return QueryAnalysis(
        values=user_values(query, error=qtype == "error"),
        raw=query,
        query_type=qtype,
        terms=terms,
        keywords=content_keywords,
        stems=stems,
        domain_sets=domain_sets,
        domain_words=domain_words,
        intent=intent_of(query, qtype, content_keywords),
        identifier_only=identifier_only,
    )
