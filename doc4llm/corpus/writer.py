"""Write pages of a doc set: naming, collisions, idempotence, pruning, set metadata.

Every ingest path (import, scrape, saved web results) goes through `SetWriter`, so the
rules of DESIGN.md live in one place:

- a page's folder is its sanitized title, made unique within the set (` (2)`, ...);
- a page is identified across runs by its `key` (source path or canonical URL) and its
  `origin` (import / scrape / web), recorded in `doc4llm-set.yaml`;
- folders this origin did not create are never touched, never overwritten;
- an unchanged page is not rewritten (same bytes -> no write);
- every file is written atomically;
- titles, sources and set metadata are written without control characters (an escape
  sequence in an archive's file name never reaches docContent.md or doc4llm-set.yaml).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from doc4llm import __version__
from doc4llm.corpus.atomic import atomic_write_text
from doc4llm.corpus.controls import clean_name
from doc4llm.corpus.paths import (
    CONTENT_FILE,
    SET_META_FILE,
    TOC_FILE,
    safe_join,
    sanitize_folder_name,
    unique_folder_name,
    validate_set_name,
)
from doc4llm.corpus.sections import parse_page
from doc4llm.corpus.toc import render_toc
from doc4llm.errors import InputError

# a page record's `extra:` flag: the page has no title of its own (no front matter title, no
# heading), so its title is its file name and its opening lines have no heading
UNTITLED = "untitled"


@dataclass
class PageWrite:
    folder: str
    status: str  # created | updated | unchanged


def render_content(title: str, source: str, body: str) -> str:
    """docContent.md: `# Title`, the source line, `---`, then the body."""
    title = " ".join(clean_name(title).split()) or "Untitled"
    source = clean_name(source)
    body = body.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    return f"# {title}\n\n> **Source**: {source}\n\n---\n\n{body}\n"


def load_set_metadata(set_dir: Path) -> dict:
    """The set's doc4llm-set.yaml ({} when missing or unreadable). A docs dir may come
    from anywhere: read within the YAML budget (no alias bomb, no deep nesting)."""
    from doc4llm.corpus.safe_yaml import YamlError, load_yaml

    path = set_dir / SET_META_FILE
    if not path.is_file():
        return {}
    try:
        data = load_yaml(path.read_text(encoding="utf-8", errors="replace"), str(path)) or {}
    except YamlError:
        return {}
    return data if isinstance(data, dict) else {}


def _clean_key(key: str) -> str:
    """A page's identity as recorded: the same key always gives the same record, and no
    control character (from an archive's file name) reaches doc4llm-set.yaml."""
    return clean_name(key) if any(c < " " or "\x7f" <= c <= "\x9f" or "\ud800" <= c <= "\udfff"
                                  for c in key) else key


def _clean_values(value: object, depth: int = 0) -> object:
    """Strings of set metadata without control characters, at any depth (bounded)."""
    if isinstance(value, str):
        return clean_name(value, one_line=False) if any(
            c < " " or "\x7f" <= c <= "\x9f" or "\ud800" <= c <= "\udfff" for c in value) else value
    if depth > 20:
        return value
    if isinstance(value, dict):
        return {k: _clean_values(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_values(v, depth + 1) for v in value]
    return value


class SetWriter:
    """Writes pages of one doc set for one origin."""

    def __init__(self, docs_dir: Path, set_name: str, *, origin: str):
        validate_set_name(set_name)
        self.docs_dir = Path(docs_dir).resolve()
        self.set_name = set_name
        self.origin = origin
        self.set_dir = safe_join(self.docs_dir, set_name)
        if self.set_dir.exists() and not self.set_dir.is_dir():
            raise InputError(f"{self.set_dir} exists and is not a folder")
        self.set_dir.mkdir(parents=True, exist_ok=True)
        self.meta = load_set_metadata(self.set_dir)
        self.meta.setdefault("pages", {})
        # every name in the set folder, casefolded (files too: no clash), listed once:
        # re-listing per page made importing n pages O(n^2)
        self._taken = {p.name.casefold() for p in self.set_dir.iterdir()}

    # -- records ---------------------------------------------------------------
    def _records(self) -> dict:
        pages = self.meta["pages"]
        return pages if isinstance(pages, dict) else {}

    def _rec_id(self, key: str) -> str:
        return f"{self.origin}:{_clean_key(key)}"

    def page_record(self, key: str) -> dict | None:
        return self._records().get(self._rec_id(key))

    def keys(self) -> set[str]:
        prefix = f"{self.origin}:"
        return {k[len(prefix) :] for k in self._records() if k.startswith(prefix)}

    # -- writing ---------------------------------------------------------------
    def write_page(self, title: str, body_md: str, *, source: str, key: str,
                   url: str | None = None, extra: dict | None = None,
                   slug_anchors: bool = True) -> PageWrite:
        """Write one page; `slug_anchors=False` for pages converted from HTML, whose anchors
        are only the ids the page really has (see `render_toc`)."""
        title, source = clean_name(title), clean_name(source)
        record = self.page_record(key)
        folder = record.get("folder") if record else None
        if folder and not (self.set_dir / folder).is_dir():
            folder = None  # deleted by hand: recreate (possibly under a new name)
        if not folder:
            folder = self._orphan_for(title, source)
        if not folder:
            folder = unique_folder_name(sanitize_folder_name(title), self._taken, folded=True)
        page_dir = safe_join(self.set_dir, folder)

        content = render_content(title, source, body_md)
        parsed = parse_page(content)
        toc = render_toc(" ".join(title.split()) or "Untitled", source, parsed.sections,
                         url, parsed.line_count, slug_anchors=slug_anchors)
        status = "created" if not page_dir.exists() else "unchanged"
        page_dir.mkdir(parents=True, exist_ok=True)
        try:
            for name, text in ((CONTENT_FILE, content), (TOC_FILE, toc)):
                path = page_dir / name
                if path.is_file() and path.read_bytes() == text.encode("utf-8"):
                    continue
                atomic_write_text(path, text)
                if status == "unchanged":
                    status = "updated"
        except BaseException:
            if status == "created":  # no half-written page: a folder without both files goes
                shutil.rmtree(page_dir, ignore_errors=True)
            raise
        if status == "updated":  # a rewrite in place changes no folder: touch the set's
            try:  # freshness signal (index/freshness.py) so searches re-scan it at once
                os.utime(self.set_dir)
            except OSError:
                pass
        self._taken.add(folder.casefold())
        rec = {
            "folder": folder,
            "origin": self.origin,
            "key": _clean_key(key),
            "title": title,
            "source": source,
            "hash": hashlib.sha256(content.encode("utf-8")).hexdigest()[:16],
        }
        if url:
            rec["url"] = url
        if extra:
            rec["extra"] = _clean_values(extra)  # origins hold archive paths and URLs
        self._records()[self._rec_id(key)] = rec
        return PageWrite(folder, status)

    def _orphan_for(self, title: str, source: str) -> str | None:
        """A folder this writer made in a run that died before `finish` recorded it:
        same title-derived name, no record, and a docContent.md with this exact source line.
        Adopting it avoids a `Title (2)` copy after a crash."""
        recorded = {r.get("folder") for r in self._records().values() if isinstance(r, dict)}
        base = sanitize_folder_name(title)
        for n in range(1, 20):
            name = base if n == 1 else f"{base} ({n})"
            page_dir = self.set_dir / name
            if not page_dir.is_dir():
                if n > 1:
                    return None
                continue
            if name in recorded:
                continue
            try:
                with open(page_dir / CONTENT_FILE, encoding="utf-8", errors="replace") as fh:
                    head = [next(fh, "") for _ in range(4)]
            except OSError:
                continue
            if f"> **Source**: {source}\n" in head:
                return name
        return None

    def update_extra(self, key: str, extra: dict) -> None:
        """Refresh a page's stored extra data (e.g. a new ETag) without rewriting it."""
        rec = self.page_record(key)
        if rec is not None:
            rec["extra"] = _clean_values({**(rec.get("extra") or {}), **extra})

    def prune(self, keep_keys: set[str]) -> list[str]:
        """Remove pages this origin wrote earlier whose key is not in `keep_keys`."""
        removed = []
        records = self._records()
        for key in sorted(self.keys() - {_clean_key(k) for k in keep_keys}):
            rec = records.pop(self._rec_id(key))
            folder = rec.get("folder")
            if not folder:
                continue
            page_dir = safe_join(self.set_dir, folder)
            if page_dir.is_dir() and page_dir.parent == self.set_dir:
                shutil.rmtree(page_dir)
                removed.append(folder)
        return removed

    def finish(self, metadata: dict | None = None) -> Path:
        import yaml

        self.meta["name"] = self.set_name
        self.meta["tool_version"] = __version__
        self.meta["updated"] = datetime.now(UTC).isoformat(timespec="seconds")
        origins = self.meta.setdefault("origins", {})
        origins[self.origin] = {**(origins.get(self.origin) or {}), **(metadata or {})}
        self.meta["page_count"] = sum(
            1 for p in self.set_dir.iterdir() if p.is_dir() and (p / CONTENT_FILE).is_file()
        )
        for k, v in self.meta.items():  # page records are cleaned as they are made
            if k != "pages":
                self.meta[k] = _clean_values(v)
        path = self.set_dir / SET_META_FILE
        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        atomic_write_text(path, yaml.dump(self.meta, Dumper=dumper, allow_unicode=True, sort_keys=False))
        return path
