"""A markdown page published by the site (llms.txt link, .md alternate) -> title and body.

Such pages need no content heuristics; they only lose their front matter and their first
`# Title` (the writer adds its own), and get their relative links made absolute.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

from doc4llm.ingest.scrape.urls import canonical_url

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)
# the value is trimmed in Python: a lazy `(.*?)` before `\s*$` rescanned every trailing space
_FM_TITLE = re.compile(r"^title:[ \t]*(.*)$", re.MULTILINE)
_LINK = re.compile(r"(!?\[[^\[\]\n]*\]\()\s*+<?([^)\s>]++)>?")  # text stops at `[`: linear
_FENCE = re.compile(r"^\s*(```|~~~)")


def looks_like_html(text: str) -> bool:
    """A server that answers every path with its SPA shell returns HTML for `page.md`."""
    head = text.lstrip()[:200].lower()
    return head.startswith(("<!doctype", "<html", "<head", "<body"))


def _unquote(value: str) -> str:
    """A front-matter scalar without its surrounding whitespace and one pair of quotes."""
    value = value.strip()
    if value[:1] in ("'", '"'):
        value = value[1:]
    if value[-1:] in ("'", '"'):
        value = value[:-1]
    return value.strip()


def convert_markdown(text: str, url: str, fallback_title: str = "") -> tuple[str, str, list[str]]:
    """(title, body, absolute links) of a markdown page fetched from `url`."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    title = ""
    front = _FRONT_MATTER.match(text)
    if front:
        match = _FM_TITLE.search(front.group(1))
        title = _unquote(match.group(1)) if match else ""
        text = text[front.end():]
    lines = text.split("\n")
    out: list[str] = []
    links: list[str] = []
    in_fence = False
    for line in lines:
        if _FENCE.match(line):
            in_fence = not in_fence
            out.append(line)
            continue
        if not in_fence:
            heading = _h1_title(line)
            if heading and not _has_text(out):
                title = title or heading
                if heading == title:
                    continue  # the writer renders `# Title` itself
            line = _LINK.sub(lambda m: _absolute(m, url, links), line)
        out.append(line)
    body = "\n".join(out).strip("\n") + "\n"
    return title or fallback_title, body, links


def _h1_title(line: str) -> str | None:
    """`# Title ##` -> "Title"; string scans, linear on a line of any length."""
    if len(line) < 2 or line[0] != "#" or not line[1].isspace():
        return None
    rest = line[1:].strip()
    return rest.rstrip("#").rstrip() or rest or None


def _has_text(lines: list[str]) -> bool:
    return any(line.strip() for line in lines)


def _absolute(match: re.Match, base: str, links: list[str]) -> str:
    href = match.group(2)
    if href.startswith("#"):
        return match.group(0)
    absolute = urljoin(base, href)
    canonical = canonical_url(absolute)
    if canonical and not match.group(1).startswith("!"):
        links.append(canonical)
    return f"{match.group(1)}{absolute}"
