"""The reader behind `/md-doc-reader`: a page's TOC, one section, a line range.

Page lookup: exact folder name, then case-insensitive, then fuzzy with "did you mean".
Section lookup: full heading path (with or without the page H1), then a trailing
fragment ("Stages > Decoder" or "Decoder"), then case-insensitive; ambiguity lists the
candidates. Everything returned carries line ranges and token counts for citation.
"""

from __future__ import annotations

from pathlib import Path

from doc4llm.corpus.model import DocSet, Page, select_sets
from doc4llm.corpus.paths import validate_page_name
from doc4llm.corpus.sections import Section, estimate_tokens
from doc4llm.errors import InputError, NotFoundError


def _rel(docs_dir: Path, path: Path) -> str:
    try:
        return str(path.relative_to(docs_dir.parent))
    except ValueError:
        return str(path)


def find_page(docs_dir: Path, name: str, set_patterns: list[str] | None = None) -> Page:
    name = validate_page_name(name.strip())
    sets: list[DocSet] = select_sets(docs_dir, set_patterns)
    if not sets:
        raise NotFoundError(f"no doc sets in {docs_dir}",
                            hint="import one: doc4llm import PATH --set NAME@VER")
    exact = [p for s in sets if (p := s.page(name))]
    if not exact:
        folded = name.casefold()
        exact = [p for s in sets for p in s.pages() if p.name.casefold() == folded]
    if len(exact) == 1:
        return exact[0]
    if len(exact) > 1:
        raise NotFoundError(f"page {name!r} exists in several sets; pass --set",
                            candidates=[f"{p.doc_set.name} / {p.name}" for p in exact])
    from rapidfuzz import fuzz, process

    pages = [p for s in sets for p in s.pages()]
    choices = {i: p.name for i, p in enumerate(pages)}
    best = process.extract(name, choices, scorer=fuzz.WRatio, limit=5, score_cutoff=50)
    raise NotFoundError(
        f"no page named {name!r}" + (" — did you mean one of these?" if best else ""),
        candidates=[f"{pages[i].doc_set.name} / {pages[i].name}" for _, _, i in best],
        hint="doc4llm sets lists the sets; page names are the folder names",
    )


def _match_sections(page: Page, query: str) -> list[Section]:
    secs = page.sections()
    want = [p.strip() for p in query.split(">") if p.strip()]
    if not want:
        raise InputError("--section is empty")
    title = page.title

    def paths(sec: Section) -> list[list[str]]:
        full = sec.heading_path
        out = [full, sec.address.split(" > ")]
        if full and full[0] == title:
            out.append(full[1:])
        return out

    for fold in (False, True):
        norm = (lambda s: s.casefold()) if fold else (lambda s: s)
        w = [norm(x) for x in want]
        full_hits = [s for s in secs if any([norm(x) for x in p] == w for p in paths(s))]
        if full_hits:
            return full_hits
        tail_hits = [s for s in secs if len(s.heading_path) >= len(w)
                     and [norm(x) for x in s.heading_path[-len(w):]] == w]
        if tail_hits:
            return tail_hits
    return []


def find_section(page: Page, query: str) -> Section:
    hits = _match_sections(page, query)
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise NotFoundError(
            f"section {query!r} is ambiguous in {page.name!r}",
            candidates=[f"{s.address}  (lines {s.start}-{s.end})" for s in hits],
            hint="pass the full heading path, e.g. --section \"A > B\"",
        )
    from rapidfuzz import fuzz, process

    choices = {s.index: s.address for s in page.sections()}
    best = process.extract(query, choices, scorer=fuzz.WRatio, limit=5, score_cutoff=50)
    raise NotFoundError(
        f"no section {query!r} in page {page.name!r}",
        candidates=[f"{page.sections()[i].address}" for _, _, i in best],
        hint=f"doc4llm toc {page.name!r} lists the sections",
    )


def get_toc(docs_dir: Path, page_name: str, set_name: str | list[str] | None = None) -> dict:
    docs_dir = Path(docs_dir)
    page = find_page(docs_dir, page_name, _as_list(set_name))
    entries = []
    for sec in page.sections():
        d = sec.to_dict()
        d["url"] = page.url_for(sec)
        entries.append(d)
    return {
        "doc_set": page.doc_set.name,
        "page": page.name,
        "title": page.title,
        "source": page.source,
        "toc_path": _rel(docs_dir, page.toc_path) if page.toc_path.is_file() else None,
        "content_path": _rel(docs_dir, page.content_path),
        "line_count": page.parsed.line_count,
        "tokens": sum(s.tokens for s in page.sections()),
        "sections": entries,
    }


def parse_line_range(spec: str, total: int) -> tuple[int, int]:
    try:
        a, _, b = spec.partition(":")
        start = int(a) if a.strip() else 1
        end = int(b) if b.strip() else total
    except ValueError:
        raise InputError(f"--lines {spec!r}: expected N:M (1-based, inclusive), e.g. 10:42") from None
    if start < 1 or end < start:
        raise InputError(f"--lines {spec!r}: need 1 <= N <= M")
    if start > total:
        raise InputError(f"--lines {spec!r}: the page has only {total} lines")
    return start, min(end, total)


def read_section(docs_dir: Path, page_name: str, *, set_name: str | list[str] | None = None,
                 section: str | None = None, lines: str | None = None,
                 with_subsections: bool = False) -> dict:
    docs_dir = Path(docs_dir)
    page = find_page(docs_dir, page_name, _as_list(set_name))
    all_lines = page.lines()
    if all_lines and all_lines[-1] == "":
        all_lines = all_lines[:-1]
    total = len(all_lines)
    sec = None
    if section and lines:
        raise InputError("use --section or --lines, not both")
    if section:
        sec = find_section(page, section)
        start, end = sec.start, (sec.subtree_end if with_subsections else sec.end)
    elif lines:
        start, end = parse_line_range(lines, total)
    else:
        start, end = 1, total
    text = "\n".join(all_lines[start - 1 : end])
    return {
        "doc_set": page.doc_set.name,
        "page": page.name,
        "title": page.title,
        "heading_path": sec.heading_path if sec else None,
        "url": page.url_for(sec) if sec else page.source,
        "source": page.source,
        "content_path": _rel(docs_dir, page.content_path),
        "lines": [start, end],
        "tokens": estimate_tokens(text),
        "text": text,
    }


def _as_list(v: str | list[str] | None) -> list[str] | None:
    if v is None or isinstance(v, list):
        return v
    return [v]
