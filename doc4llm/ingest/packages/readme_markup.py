"""A README as an agent reads it: without badges, logos and HTML layout.

READMEs are written for a repository's front page: rows of status badges
(`[![npm](https://img.shields.io/...)](...)`, 361 images in webpack's), logos, and
HTML for centring (`<div align="center">`, `<p><a href><img></a></p>`, `<h1>` inside
it). None of it says anything to an agent, and a title in `<h1>` was no heading. Here:

- HTML blocks (a run of lines opening with a tag, up to a blank line, outside code) become
  markdown through markdownify (`<h1>` a heading, `<a>` a link, `<b>` bold);
- an image inside a link (`[![alt](src)](href)`, also reference-style), an image from a
  badge service and one without alt text are dropped; other images stay;
- inline `<img>` in a line is dropped, `<a href="u">text</a>` becomes `[text](u)`, `<br>`
  a space;
- the blank lines left behind collapse to one.

One pass over the lines; every pattern is bounded (no backtracking over long text).
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")
_BLOCK_START = re.compile(r"^[ \t]{0,3}</?(?:p|div|a|img|h[1-6]|picture|source|br|table|center|span|b|strong|"
                          r"details|summary|sup|sub|ul|ol|li|hr)\b", re.I)
_LINKED_IMAGE = re.compile(r"\[!\[[^\]\n]{0,500}\](?:\([^)\s]{0,2000}(?:[ \t]+\"[^\"\n]{0,300}\")?\)|\[[^\]\n]{0,200}\])\]"
                           r"(?:\([^)\s]{0,2000}\)|\[[^\]\n]{0,200}\])")
_IMAGE = re.compile(r"!\[([^\]\n]{0,500})\](?:\(([^)\s]{0,2000})(?:[ \t]+\"[^\"\n]{0,300}\")?\)|\[([^\]\n]{0,200})\])")
_REF_DEF = re.compile(r"^[ \t]{0,3}\[([^\]\n]{1,200})\]:[ \t]*(\S{1,2000})")
_IMG_TAG = re.compile(r"<img\b[^>]{0,3000}>", re.I)
_A_TAG = re.compile(r"<a\s([^>]{0,2000})>([^<]{0,500})</a>", re.I)  # one way to match: no backtracking
_HREF = re.compile(r"href=[\"']([^\"'>]{0,2000})[\"']", re.I)
MAX_LINE = 10_000  # longer lines are not README prose: left as they are
_BR = re.compile(r"<br\s{0,5}/?>", re.I)
BADGE_HOSTS = ("shields.io", "badge", "travis-ci", "coveralls.io", "codecov.io", "circleci.com", "appveyor.com",
               "david-dm.org", "snyk.io", "packagephobia", "bundlephobia", "opencollective.com", "gitter.im",
               "codeclimate.com", "app.fossa", "deepscan.io", "dependabot", "img.badgesize", "npmjs.com/npm/",
               "nodei.co", "/actions/workflows/", "/workflows/", "saucelabs.com", "github.com/sponsors", "discord",
               "twitter.com/intent", "img.twitter")


def clean_readme(text: str) -> str:
    """`text` (a markdown README) without badges, linked logos and HTML layout."""
    lines = text.replace("\r\n", "\n").split("\n")
    refs = {m.group(1).lower(): m.group(2) for ln in lines if (m := _REF_DEF.match(ln))}
    out: list[str] = []
    fence: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _FENCE.match(line)
        if fence is not None or m:
            if fence is None:
                fence = m.group(1)
            elif line.lstrip().startswith(fence):
                fence = None
            out.append(line)
            i += 1
            continue
        if _BLOCK_START.match(line):
            j = i
            while j < len(lines) and lines[j].strip() and not _FENCE.match(lines[j]):
                j += 1
            out.extend(_html_block("\n".join(lines[i:j]), refs).split("\n"))
            i = j
            continue
        out.append(_inline(line, refs))
        i += 1
    return _collapse(_without_badge_refs(out, refs))


def _without_badge_refs(lines: list[str], refs: dict[str, str]) -> list[str]:
    """Reference definitions of badge images, and those nothing refers to any more (the
    `[npm-url]: ...` of a removed `[![npm][npm-image]][npm-url]`), dropped."""
    used: set[str] = set()
    for ln in lines:
        if "][" in ln and not _REF_DEF.match(ln):
            used.update(m.group(1).lower() for m in _REF_USE.finditer(ln))
        if "[" in ln and not _REF_DEF.match(ln):
            used.update(m.group(1).lower() for m in _SHORT_REF.finditer(ln))
    out = []
    for ln in lines:
        m = _REF_DEF.match(ln)
        if m and (_badge(m.group(2)) or m.group(1).lower() not in used):
            continue
        out.append(ln)
    return out


_SHORT_REF = re.compile(r"\[([^\]\n]{1,200})\](?![(:\[])")


def _html_block(html: str, refs: dict[str, str]) -> str:
    from markdownify import markdownify

    try:
        md = markdownify(html, heading_style="ATX", bullets="-", escape_underscores=False, escape_asterisks=False)
    except Exception:  # noqa: BLE001 - HTML that does not convert stays as written
        md = html
    return "\n".join(_inline(ln, refs) for ln in md.strip("\n").split("\n"))


_REF_USE = re.compile(r"\]\[([^\]\n]{1,200})\]")


def _inline(line: str, refs: dict[str, str]) -> str:
    if len(line) > MAX_LINE:
        return line
    before = line
    if "<" in line:
        line = _IMG_TAG.sub("", line)
        line = _A_TAG.sub(_a_link, line)
        line = _BR.sub(" ", line)
    if "![" in line:
        line = _LINKED_IMAGE.sub("", line)
        line = _IMAGE.sub(lambda m: "" if not m.group(1).strip() or  # no alt text: says nothing
                          _badge(m.group(2) or refs.get((m.group(3) or m.group(1)).lower(), "")) else m.group(0), line)
    if line != before and not line.strip(" \t|·-#"):
        return ""  # a row of badges, a heading that was only a logo
    return line


def _a_link(m: re.Match) -> str:
    """`<a href="u">text</a>` -> `[text](u)`; an anchor left without text (its image gone) -> ''."""
    text, href = m.group(2).strip(), _HREF.search(m.group(1))
    if not text:
        return ""
    return f"[{text}]({href.group(1)})" if href else text


def _badge(src: str) -> bool:
    low = src.lower()
    return any(h in low for h in BADGE_HOSTS)


def _collapse(lines: list[str]) -> str:
    out: list[str] = []
    for ln in lines:
        if not ln.strip() and out and not out[-1].strip():
            continue
        out.append(ln)
    return "\n".join(out).strip("\n") + "\n"
