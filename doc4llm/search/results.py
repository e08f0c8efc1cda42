"""Turn ranked candidates into contract results: paths, line ranges, snippets, dedupe."""

from __future__ import annotations

import re
from pathlib import Path

from doc4llm.corpus.comments import blank_html_comments, is_anchor_line
from doc4llm.corpus.model import is_headingless_opening
from doc4llm.corpus.paths import CONTENT_FILE, TOC_FILE
from doc4llm.corpus.sections import estimate_tokens
from doc4llm.index.tokenize import tokens
from doc4llm.search.features import term_pattern

SNIPPET_CHARS = 280


def passages(text: str, first_line: int) -> list[tuple[int, int, str]]:
    """Split a section into passages (paragraphs, list items, code blocks, table rows
    grouped), each with its absolute line range."""
    lines = text.split("\n")
    out: list[tuple[int, int, str]] = []
    buf: list[str] = []
    start = 0
    in_code = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            if not in_code:
                if buf:
                    out.append((start, i - 1, "\n".join(buf)))
                buf, start, in_code = [line], i, True
                continue
            buf.append(line)
            out.append((start, i, "\n".join(buf)))
            buf, in_code = [], False
            continue
        if in_code:
            buf.append(line)
            continue
        new_item = bool(buf) and bool(re.match(r"\s*([-*+]|\d+\.)\s", line))
        if not stripped or new_item:
            if buf:
                out.append((start, i - 1, "\n".join(buf)))
            buf, start = ([line], i) if stripped else ([], i + 1)
            continue
        if not buf:
            start = i
        buf.append(line)
    if buf:
        out.append((start, len(lines) - 1, "\n".join(buf)))
    return [(first_line + a, first_line + b, t) for a, b, t in out if t.strip()]


def best_passage(text: str, first_line: int, query_stems: list[str], terms: list[str]) -> tuple[str, list[int]]:
    """The passage that matched: most query terms (exact identifiers count triple)."""
    ps = passages(blank_html_comments(text), first_line)
    body = [p for p in ps if not re.match(r"^\s{0,3}#{1,6}\s", p[2]) and not is_anchor_line(p[2])] or ps
    if not body:
        return "", [first_line, first_line]
    pats = [term_pattern(t) for t in terms]
    want = set(query_stems)

    def score(p: tuple[int, int, str]) -> float:
        toks = set(tokens(p[2]))
        return len(want & toks) + 3 * sum(1 for pat in pats if pat.search(p[2])) - 0.001 * p[0]

    best = max(body, key=score) if want or pats else body[0]
    return best[2], [best[0], best[1]]


BEST_LINE_CHARS = 110  # a best line is cut around its first matched word
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
# bare tags, table rules, the page header's source line
# a line that is only a name (a link's or code span's text under a quote or list marker: the
# "API Documentation" pointer MkDocs pages open with) says the name exists, not what it does
_BARE_NAME = re.compile(r"\s*(?:>\s*)*(?:[-*+]\s+)?`[^`\n]+`\s*")
BARE_NAME_WEIGHT = 0.5
_MARKUP = re.compile(r"^\s*(<[^>]*>\s*)+$|^\s*[|:\- ]+$|^>?\s*\*\*(Source|原文链接)\*\*")


def best_lines(text: str, first_line: int, weights: dict[str, float], terms: list[str],
               n: int = 3) -> list[dict]:
    """The section's `n` lines with the most query evidence (each query word weighted by
    its IDF over the searched sets; a named term counts as the rarest word, twice), in page
    order with their line numbers: what an agent needs to judge a result without reading it.
    A section that shares no word with the query (found by meaning) shows its first line."""
    lines = blank_html_comments(text).split("\n")
    pats = [term_pattern(t) for t in terms]
    top_w = max(weights.values(), default=1.0)
    scored: list[tuple[float, int, str, int]] = []
    fallback: list[tuple[int, str, int]] = []
    for i, line in enumerate(lines):
        if not line.strip() or _FENCE.match(line) or _HEADING.match(line) or _MARKUP.match(line) \
                or is_anchor_line(line):
            continue
        if not fallback:
            fallback.append((first_line + i, line, 0))
        toks = set(tokens(line))
        score = sum(w for t, w in weights.items() if t in toks)
        col = -1
        for pat in pats:
            m = pat.search(line)
            if m:
                score += 2 * top_w
                col = m.start() if col < 0 else min(col, m.start())
        if score > 0 and _BARE_NAME.fullmatch(plain_line(line)):
            score *= BARE_NAME_WEIGHT  # a sentence with the same words says more
        if score > 0:
            if col < 0:
                low = line.casefold()
                hits = [low.find(t) for t, w in weights.items() if t in toks]
                col = min((h for h in hits if h >= 0), default=0)
            scored.append((score, first_line + i, line, col))
    if not scored:
        chosen = fallback
        top = fallback[0][0] if fallback else None
    else:
        best = sorted(scored, key=lambda x: (-x[0], x[1]))[:n]
        top = best[0][1]
        chosen = sorted(((no, line, col) for _, no, line, col in best))
    return [{"line": no, "text": cut_line(line, col), **({"top": True} if no == top and scored else {})}
            for no, line, col in chosen]


LONG_SECTION = 800  # tokens: over this, the best lines point into the matching entry
ENTRY_MAX_LINES = 60


def entry_of(text: str, first_line: int, line_no: int) -> tuple[int, int] | None:
    """The entry of a long section that holds line `line_no` (absolute): its paragraph,
    list item, table row or code block (`passages`), with a definition list's term line
    ("term" then ": definition") and a one-line term's indented or ":" body joined to it.
    None when the entry is the whole section or longer than ENTRY_MAX_LINES."""
    ps = passages(blank_html_comments(text), first_line)
    for i, (a, b, body) in enumerate(ps):
        if not a <= line_no <= b:
            continue
        if body.lstrip().startswith("|") and b - a > 2:
            return line_no, line_no  # a table: the matching row
        if body.lstrip().startswith(":") and i > 0 and ps[i - 1][1] >= a - 2:
            a = ps[i - 1][0]  # the definition's term
        elif a == b and i + 1 < len(ps) and ps[i + 1][0] <= b + 2 and (
                ps[i + 1][2].lstrip().startswith(":") or ps[i + 1][2][:1] in (" ", "\t")):
            b = ps[i + 1][1]  # a term line, then its definition
        last = first_line + text.count("\n")
        if (a, b) == (first_line, last) or b - a + 1 > ENTRY_MAX_LINES:
            return None
        return a, b
    return None


# a markdown link or image shown as its text (`[`Field()`][pydantic.Field]` -> `Field()`), and
# HTML line breaks as spaces: the targets cost a best line half its characters and answer nothing
_LINK = re.compile(r"!?\[([^\[\]\n]*)\](?:\([^()\s]*(?:\s+\"[^\"\n]*\")?\)|\[[^\[\]\n]*\])")
_BR = re.compile(r"<br\s*/?>", re.I)


def plain_line(line: str) -> str:
    """A line as an agent reads it in a result: links as their text, no `<br>`."""
    return _BR.sub(" ", _LINK.sub(r"\1", line))


def cut_line(line: str, col: int, limit: int = BEST_LINE_CHARS) -> str:
    """One line, whitespace folded, links as their text, at most `limit` characters
    around column `col`."""
    col = len(plain_line(line[:col]))
    line = plain_line(line)
    lead = len(line) - len(line.lstrip())
    text = " ".join(line.split())
    col = max(0, col - lead)
    if len(text) <= limit:
        return text
    start = max(0, min(col - limit // 4, len(text) - limit))
    if start:
        space = text.find(" ", start, max(start, col))
        start = space + 1 if space != -1 else start
    end = start + limit
    if end < len(text):
        space = text.rfind(" ", start + limit // 2, end)
        end = space if space != -1 else end
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def shorten(text: str, limit: int = SNIPPET_CHARS) -> str:
    text = re.sub(r"[ \t]+", " ", text.strip())
    text = re.sub(r"\n{2,}", "\n", text)
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut + " …"


REPEAT_JACCARD = 0.9  # word-set overlap at which two same-titled sections say the same thing


def _fingerprint(row: dict) -> tuple[str, frozenset[str], int]:
    """(own heading, word set, word count) from the tokens the index stored for the body."""
    if row.get("tok_body") is not None:
        words = row["tok_body"].split()
    else:
        text = blank_html_comments(row["text"] or "")
        words = tokens(" ".join(ln for ln in text.split("\n") if not re.match(r"\s{0,3}#{1,6}\s", ln)))
    return (" ".join((row["title"] or "").casefold().split()), frozenset(words), len(words))


def collapse_repeats(ranked: list[tuple], rows: dict[int, dict]) -> list[tuple[tuple, list[dict]]]:
    """Generated reference docs repeat one entry on many pages (npm documents `save-exact`
    on every command that takes it; a CLI reference lists `--offline` under each command).
    Sections with the same own heading and (nearly) the same words are one answer: the
    best-ranked stays, the others become its `also_in`, and their slots go to the next
    distinct results."""
    kept: list[tuple[tuple, list[dict], tuple]] = []
    for item in ranked:
        row = rows[item[0].sid]
        fp = _fingerprint(row)
        for _, also, kfp in kept:
            if fp[0] and fp[0] == kfp[0] and fp[2] >= 5 and kfp[2] >= 5:
                inter = len(fp[1] & kfp[1])
                union = len(fp[1] | kfp[1]) or 1
                if inter / union >= REPEAT_JACCARD:
                    also.append({"doc_set": row["set_name"], "page": row["page"],
                                 "heading_path": row["heading_path"], "source": row.get("page_source"),
                                 "lines": [row["start"], row["end"]]})
                    break
        else:
            kept.append((item, [], fp))
    return [(item, also) for item, also, _ in kept]


def rel_path(docs_dir: Path, *parts: str) -> str:
    p = docs_dir.joinpath(*parts)
    try:
        return str(p.relative_to(Path.cwd()))
    except ValueError:
        return str(p)


def to_result(rank: int, cand, row: dict, docs_dir: Path, query_stems: list[str], terms: list[str],
              relevance: str, explain: bool, chunk: tuple[int, int] | None = None,
              weights: dict[str, float] | None = None) -> dict:
    snippet, where = best_passage(row["text"] or "", row["start"], query_stems, terms)
    lines = [row["start"], row["end"]]
    tok = row["tokens"]
    inside = None
    if chunk:  # a code symbol's own chunk, not the whole block
        lines = [max(chunk[0], row["start"]), min(chunk[1], row["end"])]
        seg = "\n".join((row["text"] or "").split("\n")[lines[0] - row["start"] : lines[1] - row["start"] + 1])
        tok = estimate_tokens(seg)
        snippet = seg
        if lines != [row["start"], row["end"]]:
            # the chunk is code inside the headed section: say so, or a 2-line range under a
            # heading reads as a parsing fault (an agent said so, round 14)
            inside = {"lines": [row["start"], row["end"]], "tokens": row["tokens"]}
    res = {
        "rank": rank,
        "doc_set": row["set_name"],
        "page": row["page"],
        "heading_path": row["heading_path"],
        "source": row.get("page_source"),
        "url": row["url"],
        "toc_path": rel_path(docs_dir, row["set_name"], row["page"], TOC_FILE),
        "content_path": rel_path(docs_dir, row["set_name"], row["page"], CONTENT_FILE),
        "lines": lines,
        "tokens": tok,
        "score": round(cand.score, 4),
        "relevance": relevance,
        "found_by": cand.found_by,
        "snippet": shorten(snippet),
        "snippet_lines": where if not chunk else lines,
        "content_type": row.get("content_type"),
    }
    if inside:
        res["in_section"] = inside
    if chunk:
        res["best_lines"] = best_lines(snippet, lines[0], weights or {}, terms)
    else:
        res["best_lines"] = best_lines(row["text"] or "", row["start"], weights or {s: 1.0 for s in query_stems},
                                       terms)
        top = next((b["line"] for b in res["best_lines"] if b.get("top")), None)
        if tok > LONG_SECTION and top is not None:  # read the matching entry, not 400 lines
            span = entry_of(row["text"] or "", row["start"], top)
            if span:
                seg = "\n".join((row["text"] or "").split("\n")[span[0] - row["start"]: span[1] - row["start"] + 1])
                res["entry"] = {"lines": list(span), "tokens": estimate_tokens(seg)}
    top = next((b["line"] for b in res["best_lines"] if b.pop("top", None)), None)
    if top is not None and len(res["best_lines"]) > 1:
        res["top_line"] = top  # the line with the most evidence: the one shown when only one is
    if is_headingless_opening(row.get("page_untitled"), row.get("level"), row["heading_path"]):
        res["no_heading"] = True  # the page's opening lines; its "title" is only its file name
    if explain:
        res["explain"] = {k: round(v, 4) for k, v in cand.parts.items()}
        res["explain_raw"] = {k: round(v, 4) for k, v in cand.raw.items()}
    return res
