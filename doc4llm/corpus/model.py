"""DocSet and Page: the md_docs folders as objects, read lazily.

Structure always comes from docContent.md (the authority for line ranges); docTOC.md
contributes anchor URLs when it has them, and a missing docTOC.md is not an error.
"""

from __future__ import annotations

import sys
from functools import cached_property
from pathlib import Path

from doc4llm.corpus.atomic import read_text_lossy
from doc4llm.corpus.paths import CONTENT_FILE, TOC_FILE, is_set_dir, validate_set_pattern
from doc4llm.corpus.sections import ParsedPage, Section, parse_page

# how the opening lines of a page without a title of its own are named: its file name is not
# a heading, and agents cited it as one ("type_adapter") where such an opening has none
NO_HEADING = "(page opening, no heading)"


def is_headingless_opening(page_untitled: bool, level: int | None, heading_path: list[str]) -> bool:
    """The section is the opening of a page named only by its file (no heading above it)."""
    return bool(page_untitled) and level == 1 and len(heading_path) == 1


class Page:
    def __init__(self, doc_set: DocSet, path: Path):
        self.doc_set = doc_set
        self.path = path
        self.name = path.name

    @property
    def content_path(self) -> Path:
        return self.path / CONTENT_FILE

    @property
    def toc_path(self) -> Path:
        return self.path / TOC_FILE

    @cached_property
    def text(self) -> str:
        text, lossy = read_text_lossy(self.content_path)
        if lossy:
            print(f"doc4llm: warning: {self.content_path} is not valid UTF-8; "
                  "invalid bytes replaced", file=sys.stderr)
        return text

    def lines(self) -> list[str]:
        return self.text.replace("\r\n", "\n").replace("\r", "\n").split("\n")

    @cached_property
    def parsed(self) -> ParsedPage:
        return parse_page(self.text)

    def sections(self) -> list[Section]:
        return self.parsed.sections

    @property
    def untitled(self) -> bool:
        """The page has no heading of its own: its title is its file name."""
        return self.name in self.doc_set.untitled_pages

    def headingless(self, section: Section) -> bool:
        return is_headingless_opening(self.untitled, section.level, section.heading_path)

    @property
    def title(self) -> str:
        return self.parsed.title or self.name

    @property
    def source(self) -> str | None:
        return self.parsed.source or self.doc_set.page_sources.get(self.name)

    @cached_property
    def section_urls(self) -> dict[int, str]:
        from doc4llm.corpus.toc import attach_urls, parse_toc

        entries = []
        if self.toc_path.is_file() and not self.toc_path.is_symlink():
            toc_text, _ = read_text_lossy(self.toc_path)
            _, _, entries = parse_toc(toc_text)
        return attach_urls(self.sections(), entries, self.source)

    def url_for(self, section: Section) -> str | None:
        return self.section_urls.get(section.index)


class DocSet:
    def __init__(self, path: Path):
        self.path = path
        self.name = path.name

    @cached_property
    def metadata(self) -> dict:
        from doc4llm.corpus.writer import load_set_metadata

        return load_set_metadata(self.path)

    @cached_property
    def page_sources(self) -> dict[str, str]:
        pages = self.metadata.get("pages") or {}
        out = {}
        if isinstance(pages, dict):
            for rec in pages.values():
                if isinstance(rec, dict) and rec.get("folder"):
                    out[rec["folder"]] = rec.get("url") or rec.get("source")
        return out

    @cached_property
    def page_kinds(self) -> dict[str, str]:
        """Page folder -> its kind when the set's metadata gives one (`extra: {kind:
        release-notes}`: package sets mark release notes, changelogs, contributor lists)."""
        pages = self.metadata.get("pages") or {}
        out = {}
        if isinstance(pages, dict):
            for rec in pages.values():
                extra = rec.get("extra") if isinstance(rec, dict) else None
                if isinstance(extra, dict) and isinstance(extra.get("kind"), str) and rec.get("folder"):
                    out[rec["folder"]] = extra["kind"]
        return out

    @cached_property
    def untitled_pages(self) -> frozenset[str]:
        """Page folders whose title is only their file name: their opening lines have no
        heading, and search and read say so instead of showing the file name as one."""
        from doc4llm.corpus.writer import UNTITLED

        pages = self.metadata.get("pages") or {}
        return frozenset(rec["folder"] for rec in (pages.values() if isinstance(pages, dict) else ())
                         if isinstance(rec, dict) and isinstance(rec.get("extra"), dict)
                         and rec["extra"].get(UNTITLED) is True and isinstance(rec.get("folder"), str))

    def pages(self) -> list[Page]:
        return [Page(self, p) for p in sorted(self.path.iterdir(), key=lambda p: p.name) if _is_page(p)]

    def page(self, name: str) -> Page | None:
        p = self.path / name
        return Page(self, p) if _is_page(p) else None


def _is_page(p: Path) -> bool:
    """A real page folder: symlinks (folder or docContent.md) could point outside the docs dir."""
    content = p / CONTENT_FILE
    try:
        return p.is_dir() and not p.is_symlink() and content.is_file() and not content.is_symlink()
    except OSError:  # e.g. a requested name too long for the filesystem: no such page
        return False


def list_sets(docs_dir: Path) -> list[DocSet]:
    docs_dir = Path(docs_dir)
    if not docs_dir.is_dir():
        return []
    return [DocSet(p) for p in sorted(docs_dir.iterdir(), key=lambda p: p.name)
            if is_set_dir(p) and not p.is_symlink()]


def select_sets(docs_dir: Path, patterns: list[str] | tuple[str, ...] | None) -> list[DocSet]:
    """`--set` values (exact names or globs, case-insensitive) -> sets; all when none given."""
    return select_from(list_sets(docs_dir), patterns, docs_dir)


def select_from(all_sets: list, patterns: list[str] | tuple[str, ...] | None, where: object = "") -> list:
    """`select_sets` over given sets (anything with a `.name`: a stateless reader's sets
    come from its index, not from folders)."""
    import fnmatch

    from doc4llm.errors import NotFoundError

    if not patterns:
        return list(all_sets)
    chosen: list[DocSet] = []
    for pat in patterns:
        validate_set_pattern(pat)
        hits = [s for s in all_sets if fnmatch.fnmatchcase(s.name.casefold(), pat.casefold())]
        if not hits and "@" not in pat:  # "OpenCode_Docs" means any version of it
            hits = [s for s in all_sets if fnmatch.fnmatchcase(s.name.split("@")[0].casefold(), pat.casefold())]
        if not hits:
            names = [s.name for s in all_sets]
            raise NotFoundError(
                f"no doc set matches {pat!r}" + ("" if names else f" (no doc sets in {where})"),
                candidates=names,
                hint="doc4llm sets lists them; import one with doc4llm import PATH --set NAME@VER",
            )
        chosen.extend(h for h in hits if h.name not in {c.name for c in chosen})
    return chosen
