"""robots.txt per RFC 9309: groups by user agent, `*` and `$` wildcards, longest match.

The standard library's `urllib.robotparser` has no wildcards and uses first-match
order, which misreads common docs-site rules like `Disallow: /*.json$`; this small
parser follows the RFC (and reads Crawl-delay and Sitemap lines too).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit


@dataclass
class RobotsRules:
    """The rules that apply to our user agent; empty means everything is allowed."""

    rules: list[tuple[bool, str, re.Pattern]] = field(default_factory=list)  # (allow, raw, regex)
    crawl_delay: float | None = None
    sitemaps: list[str] = field(default_factory=list)
    disallow_all: bool = False  # robots.txt unreachable with a server error (RFC 9309 2.3.1.4)

    def allowed(self, url: str) -> bool:
        if self.disallow_all:
            return False
        parts = urlsplit(url)
        target = unquote(parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        best: tuple[int, bool] | None = None
        for allow, raw, regex in self.rules:
            if regex.match(target):
                rank = (len(raw), allow)  # longest wins; on a tie, allow wins
                if best is None or rank > best:
                    best = rank
        return True if best is None else best[1]


def _pattern(raw: str) -> re.Pattern:
    anchored = raw.endswith("$")
    body = raw[:-1] if anchored else raw
    regex = "".join(".*" if ch == "*" else re.escape(ch) for ch in unquote(body))
    return re.compile(regex + ("$" if anchored else ""))


def parse_robots(text: str, agent_token: str) -> RobotsRules:
    """Rules of the group naming our product token (`doc4llm`, case-insensitive), else `*`."""
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
    rules = RobotsRules(sitemaps=sitemaps)
    for lines in chosen:
        for name, value in lines:
            if name == "crawl-delay":
                try:
                    rules.crawl_delay = float(value)
                except ValueError:
                    pass
            elif value:  # an empty Disallow allows everything: no rule needed
                rules.rules.append((name == "allow", value, _pattern(value)))
    return rules
