"""The reader behind `/md-doc-reader`: a page's TOC, one section, a line range.

Page lookup: exact folder name, then case-insensitive (and Unicode-form-insensitive),
then fuzzy with "did you mean"; `Set@ver / Page` (the form candidates are listed in)
selects the set. Section lookup: the unique address (`A > B (2)` for a repeated heading),
then the full heading path (with or without the page H1, or the folder name in its
place), then a trailing fragment ("Stages > Decoder" or "Decoder"); each exact, then
case-insensitive; ambiguity lists the candidates, which can be passed back as they are.
Everything returned carries line ranges and token counts for citation.
"""

from __future__ import annotations

import os
import re
import shlex
import unicodedata
from pathlib import Path

from doc4llm.corpus.model import NO_HEADING, DocSet, Page, select_sets
from doc4llm.corpus.paths import validate_page_name
from doc4llm.corpus.sections import Section, estimate_tokens
from doc4llm.errors import InputError, NotFoundError

_QUALIFIED = re.compile(r"^([^/\\\x00@]++@[^/\\\x00]+?) / (.+)$")  # up to the first `@`: linear
_LINES_SUFFIX = re.compile(r"(?<!\s)\s++\(lines \d++-\d++\)\s*+$")  # one try per space run


def _rel(docs_dir: Path, path: Path) -> str:
    """A path that opens from the caller's working directory: relative under it (short,
    as search results cite), else absolute (never relative to the docs dir's parent)."""
    path = path.resolve()
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def scope_args(sets: list[str] | tuple[str, ...] | None, docs_dir: str | None) -> str:
    """` --set S ... --docs-dir D` as the command that prints a suggestion was given them,
    so the suggested command searches the same docs (issue 35)."""
    out = "".join(f" --set {shlex.quote(s)}" for s in sets or [])
    return out + (f" --docs-dir {shlex.quote(str(docs_dir))}" if docs_dir else "")


def read_command(page: str, doc_set: str, start: int, end: int, docs_dir: str | None = None) -> str:
    """The `doc4llm read` command for these lines, safe to paste into a shell: every value
    quoted, and `--` before a page whose name starts with '-' (`-rf` is not an option)."""
    where = f" --docs-dir {shlex.quote(docs_dir)}" if docs_dir else ""
    opts = f"--set {shlex.quote(doc_set)} --lines {start}:{end}{where}"
    if page.startswith("-"):
        return f"doc4llm read {opts} -- {shlex.quote(page)}"
    return f"doc4llm read {shlex.quote(page)} {opts}"


def find_page(docs_dir: Path, name: str, set_patterns: list[str] | None = None) -> Page:
    qualified = _QUALIFIED.match(name.strip())
    if qualified:  # "Set@ver / Page", the form candidates are listed in
        set_patterns = [qualified.group(1)]
        name = qualified.group(2)
    by_source = _pages_by_source(docs_dir, name.strip(), set_patterns)
    if len(by_source) == 1:
        return by_source[0]
    if len(by_source) > 1:
        raise NotFoundError(f"source {name!r} is a page in several sets; pass --set",
                            candidates=[f"{p.doc_set.name} / {p.name}" for p in by_source])
    if ("/" in name or "\\" in name) and not os.path.isabs(name.strip()) and ".." not in name.split("/"):
        # a source file no page records (a page folder name never holds a separator)
        raise NotFoundError(f"no page whose source file is {name.strip()!r}" + (
            f" in {', '.join(set_patterns)}" if set_patterns else ""),
            hint="search results name pages by their source file; doc4llm toc --set NAME@VER lists a set's pages")
    name = validate_page_name(name.strip())
    sets: list[DocSet] = select_sets(docs_dir, set_patterns)
    if not sets:
        missing = "" if docs_dir.is_dir() else " (the folder does not exist)"
        raise NotFoundError(f"no doc sets in {docs_dir}{missing}",
                            hint="pass --docs-dir or set DOC4LLM_DOCS_DIR; "
                                 "import a set with doc4llm import PATH --set NAME@VER")
    exact = [p for s in sets if (p := s.page(name))]
    if not exact:  # case and Unicode form (NFC vs NFD input) do not matter
        folded = _fold(name)
        exact = [p for s in sets for p in s.pages() if _fold(p.name) == folded]
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
    query = _LINES_SUFFIX.sub("", query)  # a pasted candidate "A > B  (lines 3-9)"
    want = [p.strip() for p in query.split(">") if p.strip()]
    if not want:
        raise InputError("--section is empty")
    tops = {page.title, page.name}  # the H1, or the folder name standing in for it

    def forms(path: list[str]) -> list[list[str]]:
        if len(path) > 1 and path[0] in tops:
            return [path, path[1:], [page.name, *path[1:]]]
        return [path]

    # The unique address (`A > B (2)`) first, then the heading path (duplicates share it),
    # then a trailing fragment; each exact, then case-insensitive.
    keys = [lambda s: forms([x.strip() for x in s.address.split(" > ")]),
            lambda s: forms(s.heading_path)]
    for fold in (False, True):
        norm = (lambda s: s.casefold()) if fold else (lambda s: s)
        w = [norm(x) for x in want]
        for key in keys:
            hits = [s for s in secs if any([norm(x) for x in p] == w for p in key(s))]
            if hits:
                return hits
        hits = [s for s in secs if any(len(p) >= len(w) and [norm(x) for x in p[-len(w):]] == w
                                       for k in keys for p in k(s))]
        if hits:
            return hits
    return []


def find_section(page: Page, query: str) -> Section:
    if " ".join(query.split()) == NO_HEADING:  # as search and toc name such an opening
        opening = next((s for s in page.sections() if page.headingless(s)), None)
        if opening is not None:
            return opening
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


def _pages_by_source(docs_dir: Path, name: str, set_patterns: list[str] | None) -> list[Page]:
    """Pages whose recorded source is `name` (`guides/install.md`, as search results cite
    them). Only compared with what the set metadata records: never joined into a path."""
    if not name or "\x00" in name:
        return []
    out, by_base = [], []
    for doc_set in select_sets(docs_dir, set_patterns):
        for folder, src in doc_set.page_sources.items():
            if not src or (page := doc_set.page(folder)) is None:
                continue
            if src == name:
                out.append(page)
            elif "/" not in name and src.rsplit("/", 1)[-1] == name:  # `data-model.md` alone
                by_base.append(page)
    if not out and len(by_base) > 1:  # `type_adapter.md` in api/ and concepts/: say which
        raise NotFoundError(f"{len(by_base)} pages have a source file named {name!r}; pass its path",
                            candidates=[f"{p.doc_set.name} / {p.source}" for p in by_base[:10]])
    return out or by_base


def get_toc(docs_dir: Path, page_name: str, set_name: str | list[str] | None = None) -> dict:
    docs_dir = Path(docs_dir)
    page = find_page(docs_dir, page_name, _as_list(set_name))
    entries = []
    for sec in page.sections():
        d = sec.to_dict()
        d["url"] = page.url_for(sec)
        if page.headingless(sec):
            d["no_heading"] = True
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


def get_outline(docs_dir: Path, set_patterns: list[str] | None, depth: int = 2) -> dict:
    """A set's outline: each page's source, title and size, and its headings down to
    `depth` levels below the page's own (1 = its top sections), with line ranges and the
    tokens under each: a map to navigate a set without opening its pages."""
    docs_dir = Path(docs_dir)
    if depth < 1:
        raise InputError("--depth must be at least 1")
    sets = select_sets(docs_dir, set_patterns)
    if not sets:
        raise NotFoundError(f"no doc sets in {docs_dir}", hint="doc4llm sets lists them")
    if len(sets) > 1:
        raise InputError("the outline is of one doc set; pass --set NAME@VER",
                         candidates=[s.name for s in sets])
    doc_set = sets[0]
    pages = []
    for page in doc_set.pages():
        secs = page.sections()
        tops = [x for x in secs if x.level > 0]
        base = min((x.level for x in tops), default=1)
        if sum(1 for x in tops if x.level == base) == 1:  # the page's H1: list what is under it
            base += 1
        heads = [{"heading": x.title, "level": x.level - base + 1, "lines": [x.start, x.subtree_end],
                  "tokens": sum(y.tokens for y in secs if x.start <= y.start <= x.subtree_end)}
                 for x in tops if base <= x.level < base + depth]
        pages.append({"page": page.name, "title": page.title, "source": page.source,
                      "tokens": sum(x.tokens for x in secs), "headings": heads})
    pages.sort(key=lambda p: (p["source"] or p["page"]).casefold())
    return {"doc_set": doc_set.name, "pages": pages, "tokens": sum(p["tokens"] for p in pages)}


def _fold(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()


def parse_line_range(spec: str, total: int) -> tuple[int, int]:
    """`N:M` (inclusive), `N:` to the end, `:M` from the start, `N` one line."""
    try:
        a, colon, b = spec.partition(":")
        start = int(a) if a.strip() else 1
        end = int(b) if b.strip() else (total if colon else start)
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
    if section is not None and lines is not None:
        raise InputError("use --section or --lines, not both")
    # an empty --section/--lines is a mistake (a variable that was not set), not "the page"
    if section is not None and not section.strip():
        raise InputError("--section is empty", hint=f"doc4llm toc {shlex.quote(page.name)} lists the sections")
    if lines is not None and not lines.strip():
        raise InputError("--lines is empty", hint="for example --lines 10:40")
    if section is not None:
        sec = find_section(page, section)
        start, end = sec.start, (sec.subtree_end if with_subsections else sec.end)
    elif lines is not None:
        start, end = parse_line_range(lines, total)
    else:
        start, end = 1, total
    text = "\n".join(all_lines[start - 1 : end])
    where = sec if sec is not None else _section_holding(page, start) if lines is not None else None
    out = {
        "doc_set": page.doc_set.name,
        "page": page.name,
        "title": page.title,
        "heading_path": where.heading_path if where else None,
        "url": page.url_for(sec) if sec else _page_url(page),
        "source": page.source,
        "content_path": _rel(docs_dir, page.content_path),
        "lines": [start, end],
        "tokens": estimate_tokens(text),
        "text": text,
    }
    if where is not None and page.headingless(where):
        out["no_heading"] = True
    if lines is not None:
        # a range that runs into later sections is cited by its first one: name the others,
        # or an agent cites "Reversible steps" for lines that hold "Why expand, then contract"
        more = [{"heading": x.title, "lines": [x.start, min(x.end, end)]}
                for x in page.sections() if start < x.start <= end and x.level > 0]
        if more:
            out["also_sections"] = more
    return out


def _section_holding(page: Page, line: int) -> Section | None:
    """The section a line range starts in, so a `--lines` read cites its heading too."""
    found = None
    for sec in page.sections():
        if sec.start > line:
            break
        found = sec
    return found


def _page_url(page: Page) -> str | None:
    """The page's URL; an imported page's source is a file path, not a URL."""
    src = page.source
    return src if src and src.startswith(("http://", "https://")) else None


def _as_list(v: str | list[str] | None) -> list[str] | None:
    if v is None or isinstance(v, list):
        return v
    return [v]
