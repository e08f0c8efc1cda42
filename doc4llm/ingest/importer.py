"""`doc4llm import`: a local markdown folder (or one file) becomes a doc set.

Pages are kept as written, headings included (the section scanner reads plain titles
from them), except MkDocs admonitions and content tabs, rewritten line for line into
quotes and labelled blocks so that their bodies read as text (see mkdocs_blocks.py),
MyST directives and roles, rewritten as the built site shows them (myst_blocks.py,
myst_roles.py), and MDX pages' import/export statements and component tags (see
mdx_blocks.py)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from doc4llm.corpus.atomic import mostly_undecodable, read_text_lossy
from doc4llm.corpus.comments import is_anchor_line
from doc4llm.corpus.sections import parse_page
from doc4llm.corpus.writer import UNTITLED, SetWriter
from doc4llm.errors import InputError
from doc4llm.ingest.mdx_blocks import rewrite_mdx
from doc4llm.ingest.mkdocs_blocks import rewrite_mkdocs_blocks
from doc4llm.ingest.mkdocs_inline import rewrite_mkdocs_inline
from doc4llm.ingest.myst_blocks import rewrite_myst_blocks
from doc4llm.ingest.myst_roles import rewrite_myst_roles

MARKDOWN_SUFFIXES = {".md", ".markdown", ".mdx"}
SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv"}
DEFAULT_MAX_BYTES = 20 * 1024 * 1024


@dataclass
class ImportSummary:
    set_name: str
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)  # {path, reason}
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "set": self.set_name,
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "pruned": self.pruned,
            "skipped": self.skipped,
            "warnings": self.warnings,
            "counts": {k: len(getattr(self, k)) for k in ("created", "updated", "unchanged", "pruned", "skipped")},
        }


def printable_name(name: str) -> str:
    """A file name as UTF-8 text: bytes that are not UTF-8 (which Python carries as lone
    surrogates and cannot write) become `\\xff` escapes. The escaped form is what a page
    records as its source and key, so a re-import finds the same page again."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def find_markdown_files(root: Path, max_bytes: int, skipped: list[dict]) -> list[Path]:
    """Markdown files under `root`, skipping hidden, vendored and symlinked folders."""
    files: list[Path] = []

    def unlistable(err: OSError) -> None:
        rel = printable_name(Path(err.filename).relative_to(root).as_posix()) if err.filename else "?"
        skipped.append({"path": rel, "reason": f"cannot list folder: {err.strerror}", "folder": True})

    for dirpath, dirnames, filenames in os.walk(root, onerror=unlistable, followlinks=False):
        base = Path(dirpath)
        keep = []
        for d in sorted(dirnames):
            full = base / d
            if d.startswith(".") or d in SKIP_DIRS:
                continue
            if full.is_symlink():
                skipped.append({"path": printable_name(str(full.relative_to(root))), "reason": "symlinked folder"})
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            path = base / name
            if path.suffix.lower() not in MARKDOWN_SUFFIXES or name.startswith("."):
                continue
            if path.is_symlink() and not path.resolve().is_relative_to(root):
                skipped.append({"path": printable_name(str(path.relative_to(root))),
                                "reason": "symlink out of the folder"})
                continue
            if not path.is_file():  # a dangling symlink, a FIFO...: must not abort the import
                skipped.append({"path": printable_name(str(path.relative_to(root))), "reason": "not a regular file"})
                continue
            size = path.stat().st_size
            if size > max_bytes:
                skipped.append({"path": printable_name(str(path.relative_to(root))),
                                "reason": f"larger than {max_bytes // (1024 * 1024)} MB ({size} bytes)"})
                continue
            files.append(path)
    return files


def page_title_and_body(text: str, fallback: str) -> tuple[str, str]:
    """Title: front matter title, else first H1, else file name (or the page's first heading
    when it is that name). Body: text without front matter, and without its leading H1 when
    that H1 is the title (the header repeats it), also when only anchors (`(label)=`,
    `<a id>`) stand above it."""
    title, body, _ = titled_page(text, fallback)
    return title, body


def titled_page(text: str, fallback: str) -> tuple[str, str, bool]:
    """`page_title_and_body` and whether the page names itself (front matter or a heading):
    when it does not, its title is only `fallback` and its opening lines have no heading
    (search and read say so, and a citation names none)."""
    parsed = parse_page(text)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    fm_title = parsed.front_matter.get("title")
    h1 = next((s for s in parsed.sections if s.level == 1), None)
    title = (fm_title.strip() if isinstance(fm_title, str) and fm_title.strip() else None) \
        or (h1.title if h1 else None) or fallback
    body_start = 0
    if parsed.front_matter or (lines and lines[0].strip() == "---"):
        from doc4llm.corpus.sections import _front_matter

        body_start, _ = _front_matter(lines)
    first = next((s for s in parsed.sections if s.level > 0), None)  # after a preamble of anchors
    # No H1 and no front-matter title, and the page opens with its own name as a lower
    # heading (fastify's `## Reply` under an HTML banner): that heading is the title, as
    # the page writes it ("`Content-Type` Parser" for ContentTypeParser.md), not a section
    # that every heading path would repeat ("Reply > Reply > Reply > Methods").
    named_lower = (first is not None and first.level > 1 and h1 is None and title == fallback
                   and _same_name(first.title, fallback))
    if named_lower:
        title = first.title
    own = named_lower or h1 is not None or bool(isinstance(fm_title, str) and fm_title.strip())
    if first is not None and (named_lower or (first.level == 1 and first.title == title)) \
            and first.start - 1 >= body_start \
            and all(not s.strip() or is_anchor_line(s) or (named_lower and s.lstrip().startswith("<"))
                    for s in lines[body_start:first.start - 1]) \
            and lines[first.start - 1].lstrip().startswith("#"):
        del lines[first.start - 1]  # anchors above it (`(label)=`) stay: they name the page
    body = "\n".join(lines[body_start:])
    return title, _with_summary(parsed.front_matter, body), own


def _same_name(heading: str, file_stem: str) -> bool:
    """`Content-Type` Parser names ContentTypeParser.md; HTTP/2 names HTTP2.md."""
    def letters(x: str) -> str:
        return "".join(ch for ch in x.casefold() if ch.isalnum())

    return bool(letters(heading)) and letters(heading) == letters(file_stem)


def _with_summary(front: dict, body: str) -> str:
    """Keep the front matter's one-line summary (`description:`, Docusaurus/Hugo/Jekyll)
    as the page's first paragraph: it is the page's own answer to "what is this", and
    pages such as npm's command docs have no other intro text."""
    desc = next((front.get(k) for k in ("description", "summary") if isinstance(front.get(k), str)), None)
    desc = " ".join((desc or "").split())[:500]
    if not desc or desc.casefold() in " ".join(body[:2000].split()).casefold():
        return body
    if desc[0] in "#>-*+=|`~<:" or re.match(r"\d+[.)](\s|$)", desc):
        desc = "\\" + desc  # plain text, never a heading, quote, list or fence
    return f"{desc}\n\n{body.lstrip(chr(10))}"


def prepare_markdown(text: str, *, mdx: bool = False) -> str:
    """The import rewrites of a markdown page (MDX, MkDocs, MyST), shared with package docs."""
    if mdx:
        text = rewrite_mdx(text)
    # line-for-line rewrites first: a role in the H1 must be gone when it becomes the title
    text = rewrite_mkdocs_inline(rewrite_mkdocs_blocks(text))
    return rewrite_myst_roles(rewrite_myst_blocks(text))


def import_path(path: Path, docs_dir: Path, set_name: str, *, prune: bool = False,
                max_bytes: int = DEFAULT_MAX_BYTES,
                progress: Callable[[int, int, str], None] | None = None) -> ImportSummary:
    src = Path(path).expanduser()
    if not src.exists():
        raise InputError(f"{printable_name(str(src))} does not exist")
    src = src.resolve()
    shown_src = printable_name(str(src))
    docs_dir = Path(docs_dir).resolve()
    if src == docs_dir or docs_dir in src.parents:
        raise InputError(f"{shown_src} is inside the docs dir {docs_dir}: import from a folder outside it")
    summary = ImportSummary(set_name)
    if src.is_file():
        if src.suffix.lower() not in MARKDOWN_SUFFIXES:
            raise InputError(f"{printable_name(src.name)} is not a markdown file (.md, .markdown or .mdx)")
        if src.stat().st_size > max_bytes:
            raise InputError(f"{printable_name(src.name)} is larger than the {max_bytes // (1024 * 1024)} MB limit")
        root, files = src.parent, [src]
    else:
        root, files = src, find_markdown_files(src, max_bytes, summary.skipped)
    if not files:
        skipped = "; ".join(f"{s['path']}: {s['reason']}" for s in summary.skipped[:5])
        raise InputError(f"no markdown files (.md, .markdown, .mdx) to import in {shown_src}"
                         + (f" (skipped {skipped})" if skipped else ""))

    writer = SetWriter(docs_dir, set_name, origin=f"import:{shown_src}")
    keys: set[str] = set()
    for i, file in enumerate(files, 1):
        raw_rel = file.relative_to(root).as_posix()
        rel = printable_name(raw_rel)
        if rel != raw_rel:
            summary.warnings.append(f"{rel}: file name is not valid UTF-8; recorded with \\x escapes")
        text, lossy = read_text_lossy(file)
        if "\x00" in text:
            summary.skipped.append({"path": rel, "reason": "binary content (NUL bytes)"})
            continue
        if lossy and mostly_undecodable(text):
            summary.skipped.append({"path": rel, "reason": "binary content (mostly bytes that are not text)"})
            continue
        if lossy:
            summary.warnings.append(f"{rel}: not valid UTF-8, invalid bytes replaced")
        title, body, own = titled_page(prepare_markdown(text, mdx=file.suffix.lower() == ".mdx"),
                                       printable_name(file.stem))
        result = writer.write_page(title, body, source=rel, key=rel, extra=None if own else {UNTITLED: True})
        keys.add(rel)
        getattr(summary, result.status).append(result.folder)
        if progress:
            progress(i, len(files), rel)
    if prune:  # a page goes only when the walk could have found its file and did not
        found = {s["path"] for s in summary.skipped if not s.get("folder")}
        hidden = tuple(s["path"] + "/" for s in summary.skipped if s.get("folder"))
        summary.pruned = writer.prune(keys | found | {k for k in writer.keys() if k.startswith(hidden)})
    writer.finish({"root": shown_src, "imported": datetime.now(UTC).isoformat(timespec="seconds"),
                   "files": len(keys)})
    for w in summary.warnings:
        print(f"doc4llm: warning: {w}", file=sys.stderr)
    return summary
