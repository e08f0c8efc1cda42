"""A guide's outline beside the results, so an agent picks the step without a `toc` call.

Agent study (rounds 13-16, wickerline): agents ran `toc` after about 4 of 40 searches per
run, and in 9 of 10 cases on the how-to page (a guide: its folder, file or title says so)
that the first three results held, at whatever rank, to see the guide's steps before citing
one ("Running the import" or "Preparing the input"?). The outline is that `toc`, inline: the
guide's headings in page order with their line ranges. One guide per search: the one
holding two or more of the first three results, else the highest-ranked one. Only a page of
OUTLINE_MIN..OUTLINE_MAX sections: a bigger page is a reference, not a recipe, and its
outline would cost more than the `toc` call it saves.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

OUTLINE_MIN = 3
OUTLINE_MAX = 12
TOP = 3  # results whose pages are looked at
# a recipe of at most 12 sections is a few KB; a bigger file is not parsed on every search
OUTLINE_MAX_BYTES = 64_000
CONFIDENT = 80  # the render's "result 1 answers" line (results 2-3 shown bare from here)


def guide_outline(docs_dir: Path, results: list[dict], confidence: int) -> tuple[int, list[dict]] | None:
    """(index of the result the outline belongs to, its page's headings) or None. Headings
    are `{"heading", "lines", "children": [...]}`: the page's title and its top sections in
    page order, deeper ones nested under their section.

    Which guide (replayed on 1,500 logged study searches against the `toc` calls that
    followed them): one holding result 1 and another result, below confidence CONFIDENT (at
    or above it result 1 answered: 7 `toc` calls after 60 such searches); else the first
    guide that only results 2-3 come from (agents doubting result 1 looked at that guide's
    steps, at confidence 85-95 too). A guide holding only result 1 gets the neighbours line
    (search/pipeline.py), as before: 6 `toc` calls after 104 such searches."""
    from doc4llm.search.twins import page_kind

    top = results[:TOP]
    shared = Counter((r["doc_set"], r["page"]) for r in top)
    first = (top[0]["doc_set"], top[0]["page"]) if top else None
    for i, r in enumerate(top):
        if page_kind(r) != "how-to":
            continue
        key = (r["doc_set"], r["page"])
        n = shared[key]
        if key == first and (n < 2 or confidence >= CONFIDENT):
            continue
        headings = _page_headings(docs_dir, r)
        return (i, headings) if headings else None
    return None


def _page_headings(docs_dir: Path, result: dict) -> list[dict]:
    from doc4llm.corpus.model import DocSet

    doc_set = DocSet(Path(docs_dir) / result["doc_set"])
    page = doc_set.page(result["page"]) if doc_set.path.is_dir() else None
    try:
        if page is None or page.content_path.stat().st_size > OUTLINE_MAX_BYTES:
            return []
    except OSError:
        return []
    secs = [x for x in page.sections() if x.level > 0]
    if not OUTLINE_MIN <= len(secs) <= OUTLINE_MAX:
        return []
    base = min(x.level for x in secs)
    # a page's single top heading is its title: its sections are listed beside it, not in it
    titled = sum(1 for x in secs if x.level == base) == 1 and secs[0].level == base
    shown = base + 1 if titled else base
    out: list[dict] = []
    for x in secs:
        entry = {"heading": x.title, "lines": [x.start, x.end]}
        if x.level <= shown or not out:
            out.append(entry)
        else:
            out[-1].setdefault("children", []).append(entry)
    return out


def attach_outline(docs_dir: Path, results: list[dict], confidence: int) -> None:
    """Set `outline` on the one result it belongs to (dropping any a phrasing's own search
    set: a fused list picks its guide again)."""
    for r in results:
        r.pop("outline", None)
    found = guide_outline(docs_dir, results, confidence)
    if found:
        results[found[0]]["outline"] = found[1]
