"""robots.txt per RFC 9309: groups by user agent, `*` and `$` wildcards, longest match.

The standard library's `urllib.robotparser` has no wildcards and uses first-match
order, which misreads common docs-site rules like `Disallow: /*.json$`; this small
parser follows the RFC (and reads Crawl-delay and Sitemap lines too).

robots.txt is untrusted input, so matching is linear: a rule is split on `*` and its
pieces are found in order with `str.find` (a regex `.*` per `*` backtracked: 98 s for
one URL against `/*a*a*a*a*a*a*a*a*b`), rules are bucketed by their literal start so a
URL only meets the rules that can apply to it (_Bucket), and only the first 500 KiB of the file
are read (as Google does; RFC 9309 2.5 asks parsers to read at least that much).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from doc4llm.ingest.scrape.urls import server_path

MAX_ROBOTS_BYTES = 500 * 1024


@dataclass(frozen=True)
class Rule:
    """One Allow/Disallow line: its path split on `*` (percent-decoded), `$` anchoring."""

    allow: bool
    raw: str
    pieces: tuple[str, ...]
    anchored: bool

    @classmethod
    def parse(cls, allow: bool, raw: str) -> Rule:
        anchored = raw.endswith("$")
        body = unquote(raw[:-1] if anchored else raw)
        return cls(allow, raw, tuple(body.split("*")), anchored)

    def matches(self, target: str) -> bool:
        """Does the rule match `target` (path and query)? O(len(target) + len(rule)):
        the pieces between stars are found leftmost, in order; with `$` the last piece
        must end the target (and start after the earlier ones)."""
        first, *rest = self.pieces
        if not target.startswith(first):
            return False
        if not rest:
            return len(target) == len(first) if self.anchored else True
        pos = len(first)
        *middle, last = rest
        for piece in middle:
            at = target.find(piece, pos)
            if at < 0:
                return False
            pos = at + len(piece)
        if self.anchored:
            return target.endswith(last) and len(target) - len(last) >= pos
        return target.find(last, pos) >= 0


class _Bucket:
    """The rules sharing one literal start, longest (strongest) first.

    A small bucket is scanned rule by rule. A big one (a hostile robots.txt can put 40k
    rules like `/*a1`, `/*a2`... behind `/`) is indexed by each rule's longest piece after
    the start: only rules whose piece occurs in the URL are tried, and those are found
    by looking up the URL's substrings of the pieces' lengths, not by visiting every rule.
    Either way a URL costs at most one check per rule, and the file is capped at 500 KiB."""

    SCAN_MAX = 32

    def __init__(self, rules: list[Rule]):
        self.rules = sorted(rules, key=lambda r: (len(r.raw), r.allow), reverse=True)
        self.order = {id(r): i for i, r in enumerate(self.rules)}
        self.by_piece: dict[str, list[Rule]] = {}
        self.always: list[Rule] = []  # rules with no piece to look for
        if len(self.rules) > self.SCAN_MAX:
            for rule in self.rules:
                key = max(rule.pieces[1:], key=len, default="")
                (self.by_piece.setdefault(key, []) if key else self.always).append(rule)
        self.lengths = sorted({len(k) for k in self.by_piece})

    def candidates(self, target: str, start: int) -> list[Rule]:
        """The rules that may match `target`, strongest first: at most every rule, and
        never more lookups than there are rules (a long URL against many piece lengths
        is cheaper to scan)."""
        if not self.by_piece:
            return self.rules
        tail = len(target)
        lookups = sum(tail - start - m + 1 for m in self.lengths if m <= tail - start)
        if lookups >= len(self.rules):
            return self.rules
        found: dict[int, Rule] = {id(r): r for r in self.always}
        for m in self.lengths:
            if m > tail - start:
                break
            for i in range(start, tail - m + 1):
                for rule in self.by_piece.get(target[i : i + m], ()):
                    found[id(rule)] = rule
        return sorted(found.values(), key=lambda r: self.order[id(r)])


@dataclass
class RobotsRules:
    """The rules that apply to our user agent; empty means everything is allowed."""

    rules: list[Rule] = field(default_factory=list)
    crawl_delay: float | None = None
    sitemaps: list[str] = field(default_factory=list)
    disallow_all: bool = False  # robots.txt unreachable with a server error (RFC 9309 2.3.1.4)
    truncated_at: int | None = None  # bytes read of a longer robots.txt (MAX_ROBOTS_BYTES)
    _by_start: dict[str, _Bucket] | None = field(default=None, repr=False, compare=False)
    _start_lengths: list[int] = field(default_factory=list, repr=False, compare=False)

    def add(self, allow: bool, raw: str) -> None:
        self.rules.append(Rule.parse(allow, raw))
        self._by_start = None

    def _buckets(self) -> tuple[dict[str, _Bucket], list[int]]:
        """Rules by their literal start (the text before the first `*`), and the distinct
        start lengths: a URL meets only the buckets of its own prefixes."""
        if self._by_start is None:
            by_start: dict[str, list[Rule]] = {}
            for rule in self.rules:
                by_start.setdefault(rule.pieces[0], []).append(rule)
            self._by_start = {start: _Bucket(rules) for start, rules in by_start.items()}
            self._start_lengths = sorted({len(s) for s in by_start})
        return self._by_start, self._start_lengths

    def allowed(self, url: str) -> bool:
        if self.disallow_all:
            return False
        parts = urlsplit(url)
        # the path as the server resolves it: `/docs/x/..%2Fprivate` is `/docs/private`
        target = unquote(server_path(parts.path or "/")) + (f"?{parts.query}" if parts.query else "")
        by_start, lengths = self._buckets()
        best: tuple[int, bool] | None = None
        for n in lengths:
            if n > len(target):
                break
            bucket = by_start.get(target[:n])
            if bucket is None:
                continue
            for rule in bucket.candidates(target, n):
                rank = (len(rule.raw), rule.allow)  # longest wins; on a tie, allow wins
                if best is not None and rank <= best:
                    break  # strongest first: nothing after this one can win
                if rule.matches(target):
                    best = rank
                    break
        return True if best is None else best[1]


def _capped(text: str) -> tuple[str, int | None]:
    """The first MAX_ROBOTS_BYTES of `text` (UTF-8), cut at a line end; and the cut, if any."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= MAX_ROBOTS_BYTES:
        return text, None
    head = data[:MAX_ROBOTS_BYTES]
    cut = head.rfind(b"\n")
    head = head[: cut + 1] if cut >= 0 else head
    return head.decode("utf-8", "ignore"), len(head)


def parse_robots(text: str, agent_token: str) -> RobotsRules:
    """Rules of the group naming our product token (`doc4llm`, case-insensitive), else `*`."""
    text, truncated_at = _capped(text)
    groups: list[tuple[list[str], list[tuple[str, str]]]] = []
    sitemaps: list[str] = []
    current: tuple[list[str], list[tuple[str, str]]] | None = None
    last_was_agent = False
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if ":" not in line:
            continue
        name, value = (s.strip() for s in line.split(":", 1))
        name = name.lower()
        if name == "sitemap":
            if value:
                sitemaps.append(value)
            continue
        if name == "user-agent":
            if current is None or not last_was_agent:
                current = ([], [])
                groups.append(current)
            current[0].append(value.lower())
            last_was_agent = True
            continue
        last_was_agent = False
        if current is not None and name in ("allow", "disallow", "crawl-delay"):
            current[1].append((name, value))

    token = agent_token.split("/", 1)[0].strip().lower()
    chosen = [lines for agents, lines in groups if token in agents]
    if not chosen:
        chosen = [lines for agents, lines in groups if "*" in agents]
    rules = RobotsRules(sitemaps=sitemaps, truncated_at=truncated_at)
    for lines in chosen:
        for name, value in lines:
            if name == "crawl-delay":
                try:
                    rules.crawl_delay = float(value)
                except ValueError:
                    pass
            elif value:  # an empty Disallow allows everything: no rule needed
                rules.add(name == "allow", value)
    return rules
