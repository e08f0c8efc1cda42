"""Compact text output for agents: each result as `file:lines`, its heading path and the
lines that carry the query's words, so an agent can usually answer without a second call.

Measured with agents (docs/agent-study.md): the old output (a read command, a snippet and a
URL per result) sent agents to `--json` for the source file and cost three times ripgrep's
tokens. Here the source file and line range come first, like grep's `file:line`, and one
ready `read` command closes the output.
"""

from __future__ import annotations

from doc4llm.corpus.model import NO_HEADING
from doc4llm.corpus.sections import estimate_tokens
from doc4llm.reader import read_command
from doc4llm.search.confidence import STRONG

# best lines shown per result, by rank: the first result gets the most room
LINES_BY_RANK = (3, 1, 1)
# results 2-3 show one line to tell what they hold, not to answer from: shorter than result 1's
OTHER_LINE_CHARS = 84
# from this confidence results 2-3 show their heading path only: on the dev sets and the
# check set (154 answerable questions), result 1 was right 51 times in 54 at >= 80 and the
# answer was result 2 or 3 once; their lines were a third of such a search's text
OTHERS_BARE_FROM = 80
# a neighbour's heading is cited as written: cut at 32 characters, agents ran `toc` to learn
# the rest ("Unit tests with the memory adap…"); headings longer than this are rare
HEADING_CHARS = 60
ABSTAINED_SHOWN = 2  # an abstention still shows its two best candidates
# the ready `read` command is printed while result 1 may not answer: above this, agents
# answered from the lines shown and the line was spent tokens (agent study, round 2)
READ_HINT_BELOW = 60
# what the absent line says, literally: evidence, not a verdict (it settles a question only
# when the word is what the question asks about; the user's own values are never listed)
ABSENT = "no section contains: "


def _where(r: dict) -> str:
    """The page as an agent cites and reads it: its source file (a relative path), else
    the page folder name (a scraped page's source is a URL, which `url` carries)."""
    src = r.get("source") or ""
    if src and "://" not in src:
        return src
    return r["page"]


def _alnum(text: str) -> str:
    return "".join(c for c in text.casefold() if c.isalnum())


def _heading_path(r: dict) -> list[str]:
    """The heading path without its first element when that only repeats the page named
    just before it (`forward_annotations.md:55-239  forward_annotations > ...`): the same
    words twice on every result line cost tokens and say nothing."""
    if r.get("no_heading"):
        return [NO_HEADING]
    path = list(r.get("heading_path") or [])
    if len(path) > 1:
        where = _where(r).rsplit("/", 1)[-1]
        stem = where.rsplit(".", 1)[0] if "." in where else where
        if _alnum(path[0]) in (_alnum(stem), _alnum(r.get("page") or "")):
            path = path[1:]
    return path


def _result_block(r: dict, n_lines: int, show_set: bool, sure: bool = False, with_outline: bool = True) -> str:
    """`sure`: result 1 is confident, so its neighbours' headings are left out (its
    subsections stay: they settle "the page's intro or its step?"). A guide's outline is
    shown whatever the confidence (agents ran `toc` on it at confidence 85-95 too); it
    replaces result 1's neighbours, which it holds."""
    a, b = r["lines"]
    head = f"{r['rank']}. " + (f"{r['doc_set']} " if show_set else "") + f"{_where(r)}:{a}-{b} ~{r['tokens']}t  " \
        + " > ".join(_heading_path(r))
    inside = r.get("in_section")
    if inside:  # a code chunk: the lines of one symbol inside that section
        head += f"  (code in the section {inside['lines'][0]}-{inside['lines'][1]} ~{inside['tokens']}t)"
    out = [head]
    width = None if r["rank"] == 1 else OTHER_LINE_CHARS
    for ln in _shown_lines(r, n_lines):
        out.append(f"   {ln['line']}: {_clip(ln['text'], width)}")
    entry = r.get("entry")
    if entry and n_lines:  # a long section: the entry that matched, to read instead of all of it
        out.append(f"   entry: {entry['lines'][0]}-{entry['lines'][1]} ~{entry['tokens']}t (the section is ~{r['tokens']}t)")
    outline = r.get("outline") or []
    if outline and with_outline:  # a guide's steps: the `toc` agents ran to pick one (search/outline.py)
        out.append("   page outline: " + " · ".join(_heading_span(x) + _nested(x) for x in outline))
    near = [] if outline else r.get("nearby") or []
    children = bool(near) and all(x.get("child") for x in near)
    if near and n_lines and r["rank"] == 1 and (children or not sure):
        label = "subsections" if children else "next to it"
        out.append(f"   {label}: " + " · ".join(_heading_span(x) + _nested(x) for x in near))
    also = r.get("also_in") or []
    if also:
        pages = list(dict.fromkeys(x.get("source") or x["page"] for x in also))
        more = f" (+{len(pages) - 2})" if len(pages) > 2 else ""
        out.append(f"   same text also in: {', '.join(pages[:2])}{more}")
    return "\n".join(out)


def _shown_lines(r: dict, n: int) -> list[dict]:
    """`n` of the result's best lines in page order, the one with the most evidence among
    them (`top_line`): results 2-3 show one line, and the first in page order was often an
    example above the row that names what was asked (`--drop-rate`)."""
    lines = r.get("best_lines") or []
    if n >= len(lines) or r.get("top_line") is None:
        return lines[:n]
    top = [x for x in lines if x["line"] == r["top_line"]][:1]
    rest = [x for x in lines if x not in top][:max(0, n - len(top))]
    return sorted(top + rest, key=lambda x: x["line"]) if n else []


def _heading_span(entry: dict) -> str:
    return f"{_short(entry['heading'], HEADING_CHARS)} {entry['lines'][0]}-{entry['lines'][1]}"


def _nested(entry: dict) -> str:
    """A listed heading's own subsections: ` (Harness API 37-50, Python 52-63)`."""
    kids = entry.get("children") or []
    return " (" + ", ".join(_heading_span(k) for k in kids) + ")" if kids else ""


def _clip(text: str, limit: int | None) -> str:
    """A best line cut at a word before `limit` (its match sits near its start)."""
    if limit is None or len(text) <= limit:
        return text
    cut = text[:limit - 1]
    space = cut.rfind(" ", limit // 2)
    return (cut[:space] if space > 0 else cut).rstrip(" ,;:…") + "…"


def _short(text: str, limit: int = 32) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _header(result: dict, show_set: bool, numbers: bool = True, only_set: str | None = None) -> list[str]:
    """`numbers=False`: without the confidence figure (the MCP reply carries it as a field).
    `only_set`: every result shown comes from this set, though others were searched."""
    conf = result["confidence"]
    sets = result.get("sets") or []
    scope = f" · {sets[0]}" if len(sets) == 1 and not show_set else f" · from {only_set}" if only_set else ""
    if result["abstained"]:
        out = ["no section clearly answers this" + (f" (confidence {conf}/100)" if numbers else "") + ": "
               f"{result.get('confidence_explanation', '')}{scope}"]
        out += _absent_lines(result)
        if result["results"]:
            out.append("closest sections (weak; check before using):")
        return out
    why = result.get("confidence_explanation", "")
    if why == STRONG:  # the figure (or the MCP reply's confidence field) says it
        why = ""
    head = ": ".join(x for x in (f"confidence {conf}/100" if numbers else "", why) if x)
    first = (head + scope) if head else scope.removeprefix(" · ")
    out = [first] if first else []
    twins = result.get("twins")
    if twins:  # one line instead of a second read to choose between near-twins
        if twins.get("pointer"):  # a short entry that links to a shown section
            out.append(f"result 1 links to result {twins['read']} for the details: read {twins['read']}")
        else:
            pairs = ", ".join(f"{r} ({k or 'page'})" for r, k in zip(twins["ranks"], twins["kinds"], strict=True))
            out.append(f"same answer in {pairs}: read {twins['read']}, {twins['why']}")
    return out + _absent_lines(result)


def _absent_lines(result: dict) -> list[str]:
    """"no section contains: X" (evidence, not a verdict), and for a question that names a
    doc set, the words that set lacks although another set holds them."""
    cov = result.get("coverage") or {}
    missing = (result.get("guidance") or {}).get("missing") or cov.get("missing")
    out = [ABSENT + ", ".join(_short(w) + _no_amount(w) for w in missing[:5])] if missing else []
    scoped = cov.get("missing_in_named") or {}
    if scoped.get("words"):
        out.append(f"no {'/'.join(scoped['sets'])} section contains: " + ", ".join(_short(w) for w in scoped["words"][:5]))
    return out


def _no_amount(word: str) -> str:
    """A currency the docs lack was checked in its symbol form too (search/absence.py): say
    so, or the agent greps for `$[0-9]` to settle it (agent study, rounds 13-18)."""
    from doc4llm.search.absence import currency_symbol

    symbol = currency_symbol(word)
    return f" (nor any {symbol} amount)" if symbol else ""


def _cost(lines: list[str]) -> int:
    return sum(estimate_tokens("\n" + t) for t in lines)


def _fit(lines: list[str], budget: int, first: bool = True) -> list[str]:
    """The leading lines that fit the budget (the first one always, unless `first` is off)."""
    kept: list[str] = []
    used = 0
    for line in lines:
        used += estimate_tokens("\n" + line)
        if (kept or not first) and used > budget:
            break
        kept.append(line)
    return kept


def _read_hint(r: dict, docs_dir: str | None, reader: str) -> str:
    a, b = (r.get("entry") or r)["lines"]  # a long section's matching entry, else the section
    if reader == "mcp":  # the MCP tool call that reads the same lines
        return f"read_section page={_where(r)!r} sets={r['doc_set']!r} lines=[{a}, {b}]"
    return "read: " + read_command(_where(r), r["doc_set"], a, b, docs_dir)


def render_text(result: dict, *, max_tokens: int = 600, explain: bool = False, docs_dir: str | None = None,
                reader: str = "cli", numbers: bool = True) -> str:
    """`docs_dir`: the --docs-dir the user passed, repeated in the read command so that it
    runs as printed. `reader="mcp"`: the read hint is the `read_section` call (the MCP
    server sends this text as its reply)."""
    show_set = len(result.get("sets") or []) != 1
    shown = result["results"][:ABSTAINED_SHOWN] if result["abstained"] else result["results"]
    only_set = None
    if show_set and shown and len({r["doc_set"] for r in shown}) == 1:
        only_set, show_set = shown[0]["doc_set"], False  # said once in the header, not per result
    out = _header(result, show_set, numbers, only_set)
    if result.get("scope"):  # only present when the project or a named version left sets out
        out.append(f"scope: {result['scope']['note']}")
    if result.get("query_enriched"):
        out.append(f"follow-up: searched {result['query_enriched']!r}")
    results = result["results"][:ABSTAINED_SHOWN] if result["abstained"] else result["results"]
    if not results and not result["abstained"]:
        out.append("no results")
    tail = [f"warning: {w}" for w in result.get("warnings", [])]
    if results and not result["abstained"] and result["confidence"] < READ_HINT_BELOW:
        r = results[0]
        tail.insert(0, _read_hint(r, docs_dir, reader))
    if result["abstained"]:
        for s in ((result.get("guidance") or {}).get("suggested_searches") or [])[:1]:
            tail.append(f"web search: {s['query']}")
    more = "(+{n} more; raise max_tokens or pass detail=true)" if reader == "mcp" else \
        "(+{n} more; raise --max-tokens or use --json)"
    budget = max_tokens - estimate_tokens("\n" + more.format(n=len(results)))
    out, tail = _fit(out, budget), _fit(tail, budget - _cost(out), first=False)
    budget -= _cost(out) + _cost(tail)
    sure = not result["abstained"] and result["confidence"] >= READ_HINT_BELOW
    for i, r in enumerate(results):
        n_lines = 1 if result["abstained"] else LINES_BY_RANK[min(i, len(LINES_BY_RANK) - 1)]
        if i and result["confidence"] >= OTHERS_BARE_FROM and not result["abstained"]:
            n_lines = 0  # result 1 answers: the others by heading, as alternatives
        block = _result_block(r, n_lines, show_set, sure)
        if explain and r.get("explain"):
            block += "\n   score: " + " ".join(f"{k}={v}" for k, v in r["explain"].items())
        cost = estimate_tokens("\n" + block)
        if cost > budget:
            block = _result_block(r, 0, show_set, with_outline=False)
            cost = estimate_tokens("\n" + block)
            if cost > budget:
                out.append(more.format(n=len(results) - i))
                break
        out.append(block)
        budget -= cost
    return "\n".join(out + tail)
