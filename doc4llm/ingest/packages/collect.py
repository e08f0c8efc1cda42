"""A package's own prose: its docs, README (long description) and changelog.

Docs sources are found by what the archive holds (docs_sources.py: Sphinx projects,
mkdocs.yml, trees of markdown / reStructuredText). Markdown and MDX go through the same
rewrites as `doc4llm import`; reStructuredText (and `.txt` that is reStructuredText, as
Django's docs are) is converted by pandoc (rst.py) under one time budget per package,
with Sphinx autodoc directives filled from the package's API pages (autodoc.py).
Includes are resolved from the extracted archive only, each file at most once per page
(includes.py). MkDocs `nav` titles name pages that have no H1 of their own. Each docs
page is marked with its kind when it is release notes, a changelog or a contributor
list (page_kinds.py), and translations are read only when asked for (`--lang`).
"""

from __future__ import annotations

import email
import email.policy
import json
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from doc4llm.corpus.atomic import mostly_undecodable, read_text_lossy
from doc4llm.ingest.importer import page_title_and_body, prepare_markdown, titled_page
from doc4llm.ingest.packages.autodoc import ApiLookup, fill_autodoc, fill_mkdocstrings
from doc4llm.ingest.packages.docs_sources import MARKDOWN, RST, DocFile, find_docs, looks_rst
from doc4llm.ingest.packages.includes import PageIncludes, markdown_includes, rst_includes
from doc4llm.ingest.packages.page_kinds import CHANGELOG_KIND, LOW_KINDS, TRANSLATION, page_kind
from doc4llm.ingest.packages.pages import CHANGELOG, DOCS, README, DocPage
from doc4llm.ingest.packages.readme_markup import clean_readme
from doc4llm.ingest.packages.rst import BudgetSpent, PandocBudget, rst_to_markdown

CHANGELOG_STEMS = {"changelog", "changes", "history", "news", "releases", "release-notes", "release_notes"}
MAX_PAGES = 1500
CONVERT_WORKERS = max(1, min(4, os.cpu_count() or 1))
MAX_PAGE_BYTES = 2 * 1024 * 1024
README_PREFIX = 1500  # characters of a README and a long description that must match
STUB_BYTES = 2048  # a root changelog this small beside the docs' own ("MOVED", "see the docs")


@dataclass
class Converter:
    """What converting the pages of one package shares: the archive root, the files any
    page included, the pandoc budget, the API lookup for autodoc, counters for warnings."""
    root: Path
    included: set[Path] = field(default_factory=set)
    budget: PandocBudget = field(default_factory=PandocBudget)
    lookup: ApiLookup | None = None
    version: str | None = None  # what `|release|` / `|version|` stand for (Sphinx fills them in)
    dropped_includes: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _dropped(self, n: int) -> None:
        if n:
            with self._lock:  # pages convert in threads
                self.dropped_includes += n

    def to_markdown(self, text: str, suffix: str, here: Path, bases: list[Path] | None = None) -> str:
        suffix = suffix.lower()
        if suffix in RST:
            inc = PageIncludes(self.root, here, every=self.included)
            text = rst_includes(text, here, inc)
            self._dropped(inc.dropped)
            try:
                md = rst_to_markdown(text, self.budget)
            except BudgetSpent:
                self.budget.note_raw(True)
                return raw_rst(text)
            except Exception:  # noqa: BLE001 - one page pandoc rejects must not lose the others
                self.budget.note_raw(False)
                return raw_rst(text)
            if "##SUBST##" in md:
                md = _EMPTY_LINK.sub(r"\1", _SUBSTITUTION.sub(self._substitution, md))
            return fill_autodoc(_image_headings(md), self.lookup)
        if suffix in MARKDOWN:
            inc = PageIncludes(self.root, here, every=self.included)
            text = fill_mkdocstrings(markdown_includes(text, here, inc, bases or []), self.lookup)
            self._dropped(inc.dropped)
            return prepare_markdown(_image_headings(text), mdx=suffix == ".mdx")
        return text

    def _substitution(self, m: re.Match) -> str:
        """pandoc writes a substitution nobody defines in the page (Sphinx's `|release|`,
        conf.py's `rst_epilog`) as a link to `##SUBST##|name|`: the version for Sphinx's
        own, else the name."""
        name = m.group(2).strip()
        if name in ("release", "version") and self.version:
            return self.version if name == "release" else ".".join(self.version.split(".")[:2])
        return name

    def warnings(self) -> list[str]:
        out = self.budget.summary()
        if self.dropped_includes:
            out.append(f"{self.dropped_includes} includes left out (a file included again on the same page, "
                       "or a page past its size cap after includes)")
        return out


_SUBSTITUTION = re.compile(r"\[([^\[\]\n]{0,300})\]\(##SUBST##\|([^|)\n]{1,100})\|\)")
_EMPTY_LINK = re.compile(r"\[([^\[\]\n]{1,300})\]\(\)")  # `|name|_` with no target: the text
_IMAGE_HEADING = re.compile(r"^(#{1,6})[ \t]+!\[([^\[\]\n]{1,200})\]\([^()\n]{0,500}\)[ \t]*$", re.M)


def _image_headings(md: str) -> str:
    """A heading that is only an image (tornado's `|Tornado Web Server|` title, a README's
    `# ![Logo](logo.png)`) is titled by the image's alt text: it was `(untitled h1)`."""
    return _IMAGE_HEADING.sub(r"\1 \2", md) if "![" in md else md


_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+:._<>])\1{2,}[ \t]*$")


def raw_rst(text: str) -> str:
    """reStructuredText kept as written when pandoc did not convert it, with its section
    titles as markdown headings (levels in order of first use, as docutils assigns them)
    so the page keeps its title and sections; a line starting with `#` is escaped."""
    lines = text.split("\n")
    styles: list[tuple[str, bool]] = []
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        over = _ADORNMENT.match(line) and i + 2 < len(lines) and lines[i + 1].strip() \
            and lines[i + 2].strip() == line.strip()
        under = not over and line.strip() and not line.startswith((" ", "\t")) and i + 1 < len(lines) \
            and _ADORNMENT.match(lines[i + 1]) and len(lines[i + 1].rstrip()) >= len(line.rstrip()) - 1
        if over or under:
            title = (lines[i + 1] if over else line).strip()
            style = ((lines[i] if over else lines[i + 1]).strip()[0], bool(over))
            if style not in styles:
                styles.append(style)
            out.append("#" * min(styles.index(style) + 1, 6) + " " + title)
            i += 3 if over else 2
            continue
        line = _ROLE.sub(_role_text, line) if ":`" in line else line
        out.append("\\" + line if line.startswith("#") else line)
        i += 1
    return "\n".join(out)


_ROLE = re.compile(r":([\w:+-]{1,40}):`([^`\n]{1,300})`")
_PROSE_ROLES = {"ref", "doc", "term", "numref", "abbr", "dfn", "guilabel", "menuselection", "download"}


def _role_text(m: re.Match) -> str:
    """`:ref:`guide <x>`` -> guide, `:func:`~a.b`` -> `b` (as the pandoc filter reads them)."""
    role, text = m.group(1).rsplit(":", 1)[-1], m.group(2)
    label = text.rsplit("<", 1)[0].strip() if text.endswith(">") and "<" in text else text
    if label.startswith("~"):
        label = label[1:].rsplit(".", 1)[-1]
    label = label.lstrip("!") or text
    return label if role in _PROSE_ROLES else f"`{label}`"


def read_python_metadata(root: Path) -> dict:
    """PKG-INFO (sdist) or *.dist-info/METADATA (wheel): name, version, long description."""
    candidates = [root / "PKG-INFO"] + sorted(root.glob("*.dist-info/METADATA"))
    for path in candidates:
        if path.is_file() and path.stat().st_size < 20 * 1024 * 1024:
            text, _ = read_text_lossy(path)
            msg = email.message_from_string(text, policy=email.policy.compat32)
            body = msg.get_payload()
            desc = body if isinstance(body, str) and body.strip() else _folded_description(msg.get("Description"))
            return {"name": msg.get("Name"), "version": msg.get("Version"), "summary": msg.get("Summary"),
                    "description": desc or "", "content_type": (msg.get("Description-Content-Type") or "").lower(),
                    "file": path.relative_to(root).as_posix()}
    return {}


def _folded_description(value: str | None) -> str:
    """Metadata 1.x keeps the description in a header, continuation lines prefixed `       |`."""
    if not value:
        return ""
    lines = value.splitlines()
    out = [lines[0]] + [re.sub(r"^ {7}\|", "", ln) if ln.startswith("       |") else ln.strip() for ln in lines[1:]]
    return "\n".join(out)


def read_npm_metadata(root: Path) -> dict:
    path = root / "package.json"
    if not path.is_file() or path.stat().st_size > 5 * 1024 * 1024:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (ValueError, RecursionError):  # [ x 200,000: RecursionError (issue 33)
        return {}
    return data if isinstance(data, dict) else {}


def readme_page(root: Path, meta: dict, ecosystem: str, package: str, conv: Converter) -> DocPage | None:
    """The long description (PyPI) or the README file (npm, or an sdist without one)."""
    desc = (meta.get("description") or "").strip() if ecosystem == "pypi" else ""
    if desc and _included_readme(root, desc, conv):
        return None  # a docs page includes the README it is (arrow's, jsonschema's docs/index.rst)
    if desc and desc.upper() != "UNKNOWN":
        ctype = meta.get("content_type") or "text/x-rst"
        suffix = ".md" if "markdown" in ctype else ".rst" if "rst" in ctype else ".txt"
        try:
            body = clean_readme(conv.to_markdown(desc, suffix, root / "PKG-INFO"))
        except Exception:  # noqa: BLE001 - a README that does not convert stays as written
            body = desc
        title, body = page_title_and_body(body, f"{package} README")
        if not _titled_by_first_heading(body, title):
            title = f"{package} README"
        return DocPage(title, body, f"{meta.get('file', 'PKG-INFO')} (long description)", "readme", README)
    # `README.md` before `README-es.md` (dotenv ships its Spanish translation beside it)
    readmes = sorted((p for p in root.iterdir() if p.is_file() and p.name.lower().startswith("readme")),
                     key=lambda p: (p.name.lower().split(".", 1)[0] != "readme", p.suffix.lower() not in MARKDOWN | RST,
                                    p.name))
    for path in readmes:
        page = file_page(path, root, README, f"{package} README", conv, clean=clean_readme)
        if page:
            return retitled(page, f"{package} README", _names_the_readme)
    return None


_VERSION_TITLE = re.compile(r"^\W{0,3}(?:v?\d+\.\d|\[?v?\d+\.\d|master\b|main\b|unreleased\b|next\b|head\b)", re.I)


def _names_the_readme(title: str, body: str) -> bool:
    """An H1 names a README when it is its only H1 and has words: koa's only H1 is its last
    section (`# License`), @types/node's four H1s (`# Installation`, `# Summary`...) are
    sections, redux's is a logo (`# <a><img ...></a>`)."""
    from doc4llm.corpus.sections import parse_page

    heads = [s for s in parse_page(body).sections if s.level > 0]
    h1s = [s for s in heads if s.level == 1]
    # the H1 stays in the body when something stood above it (immer's logo): then it must
    # be the first heading and the only H1
    return not title.startswith("(untitled h") and (not h1s or (len(h1s) == 1 and heads[0] is h1s[0]
                                                                and h1s[0].title == title))


def _names_the_changelog(title: str, body: str) -> bool:
    """A changelog's first H1 is often its newest release (`1.11.0 (2022-03-14)`, `Master
    (Unreleased)`): the page is the changelog, not that release."""
    return not _VERSION_TITLE.match(title)


def retitled(page: DocPage, fallback: str, names_page) -> DocPage:
    """`page` titled `fallback` when the H1 that titled it does not name the page; the H1
    goes back at the top of the body when it had been taken off as the title."""
    if page.untitled:
        return page
    title = page.title.rstrip(" \t·|-–—:")
    if names_page(title, page.body) and title:
        page.title = title
        return page
    from doc4llm.corpus.sections import parse_page

    kept = any(s.level == 1 and s.title == page.title for s in parse_page(page.body).sections)
    if not kept and not page.title.startswith("(untitled h"):  # taken off the top as the title
        page.body = f"# {page.title}\n\n{page.body.lstrip(chr(10))}"
    page.title = fallback
    return page


def _included_readme(root: Path, desc: str, conv: Converter) -> bool:
    """A docs page included a root README file whose text is the long description: the
    README page would repeat that docs page (under the same title, `X (2)`)."""
    want = " ".join(desc.split())[:README_PREFIX]  # the opening: build hooks append to the rest
    for path in root.iterdir():
        if path.is_file() and path.name.lower().startswith("readme") and path.resolve() in conv.included \
                and path.stat().st_size <= MAX_PAGE_BYTES:
            text, _ = read_text_lossy(path)
            if " ".join(text.split())[:README_PREFIX] == want:
                return True
    return False


def _titled_by_first_heading(body: str, title: str) -> bool:
    """False when the H1 that gave the title comes after other headings: black's long
    description is its README (`## Installation`...) then `# Change Log`."""
    from doc4llm.corpus.sections import parse_page

    heads = [s for s in parse_page(body).sections if s.level > 0]
    h1 = next((i for i, s in enumerate(heads) if s.level == 1 and s.title == title), None)
    return h1 is None or h1 == 0  # None: the H1 was the page's top line (taken off as its title)


def file_page(path: Path, root: Path, origin: str, fallback: str, conv: Converter,
              doc: DocFile | None = None, clean=None) -> DocPage | None:
    if path.stat().st_size > MAX_PAGE_BYTES:
        return None
    text, lossy = read_text_lossy(path)
    if "\x00" in text or (lossy and mostly_undecodable(text)):
        return None
    rel = path.relative_to(root).as_posix()
    suffix = path.suffix.lower()
    if suffix not in MARKDOWN | RST:
        suffix = ".rst" if doc is not None and doc.root.kind == "sphinx" or looks_rst(text[:4000]) else ".md"
    md = conv.to_markdown(text, suffix, path, doc.root.include_bases if doc else None)
    md = clean(md) if clean else md  # a README's badges and HTML layout (readme_markup.py)
    nav = doc.root.nav.get(_rel_resolved(path, root)) if doc else None
    title, body, own = titled_page(md, nav or fallback)
    if not body.strip() and not title:
        return None
    page = DocPage(title, body, rel, f"{origin}:{rel}", origin, untitled=not own and not nav)
    if doc is not None:
        page.kind = page_kind(path.relative_to(doc.root.path).as_posix(), title)
        if doc.lang:
            page.kind, page.lang = TRANSLATION, doc.lang
    elif origin == CHANGELOG:
        page.kind = CHANGELOG_KIND
    return page


def _rel_resolved(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return ""


def changelog_pages(root: Path, package: str, conv: Converter, docs: list[DocPage] | None = None) -> list[DocPage]:
    """CHANGES / CHANGELOG / HISTORY... at the archive root, unless a docs page includes it,
    or it is a stub (under 2 KB) pointing at the docs' own changelog page."""
    docs_log = any(p.kind == CHANGELOG_KIND for p in docs or [])
    out = []
    for path in sorted(root.iterdir()):
        if not path.is_file() or path.resolve() in conv.included:
            continue
        if docs_log and path.stat().st_size < STUB_BYTES:
            continue
        stem = path.name.lower().split(".", 1)[0]
        if stem in CHANGELOG_STEMS and (path.suffix.lower() in MARKDOWN | RST | {".txt", ""}):
            page = file_page(path, root, CHANGELOG, f"{package} changelog", conv)
            if page:
                out.append(retitled(page, f"{package} changelog", _names_the_changelog))
    return out


def docs_pages(root: Path, conv: Converter, warnings: list[str], langs: set[str] | None = None) -> list[DocPage]:
    """The pages of every docs source in the archive (default language, plus `langs`)."""
    found = find_docs(root, langs)
    warnings.extend(found.notes)
    if found.skipped_translations:
        warnings.append(f"{found.skipped_translations} translated pages left out "
                        f"({', '.join(found.languages[:12])}{'...' if len(found.languages) > 12 else ''}); "
                        "--lang LANG adds them")
    # narrative pages convert first: if the pandoc budget runs out, release notes stay raw
    files = sorted(found.files, key=lambda d: page_kind(d.path.relative_to(d.root.path).as_posix()) in LOW_KINDS)
    if len(files) > MAX_PAGES:
        warnings.append(f"the docs have {len(files)} pages; the first {MAX_PAGES} are kept")
        files = files[:MAX_PAGES]
    order = {id(d): i for i, d in enumerate(found.files)}  # roots in turn, each in folder order
    pages: list[tuple[int, DocPage]] = []
    # pandoc runs as a subprocess per page: a few at once (threads wait on the processes);
    # pages are put back in folder order, so the set is the same whatever finishes first
    with ThreadPoolExecutor(max_workers=CONVERT_WORKERS) as pool:
        done = pool.map(lambda d: file_page(d.path, root, DOCS, d.path.stem, conv, d), files)
        for d, page in zip(files, done, strict=True):
            if page is None:
                warnings.append(f"{d.path.relative_to(root).as_posix()}: skipped (binary or too large)")
                continue
            pages.append((order[id(d)], page))
    out = [p for _, p in sorted(pages, key=lambda x: x[0])]
    _qualify_shared_titles(out)
    return out


def _qualify_shared_titles(pages: list[DocPage]) -> None:
    """Pages that share a title are told apart by their folder: polars' four
    `reference/{dataframe,lazyframe,series,expressions}/aggregation.rst` were `Aggregation`,
    `Aggregation (2)`, `(3)`, `(4)`; now `Aggregation (dataframe)`, `Aggregation (series)`...
    Left as they are when the folders do not tell them apart either."""
    by_title: dict[str, list[DocPage]] = {}
    for page in pages:
        by_title.setdefault(page.title.casefold(), []).append(page)
    for group in by_title.values():
        if len(group) < 2:
            continue
        parents = [PurePosixPath(p.source).parent.name for p in group]
        if all(parents) and len({x.casefold() for x in parents}) == len(parents):
            for page, parent in zip(group, parents, strict=True):
                page.title = f"{page.title} ({parent})"
