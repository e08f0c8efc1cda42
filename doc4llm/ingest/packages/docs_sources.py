"""Where a package archive keeps its documentation, found by what the folders contain.

A docs source is one of:

- a Sphinx project: a `conf.py` beside its root document (`index.rst`, `contents.txt`,
  the `root_doc`/`master_doc` it names), wherever it lies (`doc/build`, `docs/source`,
  `doc/en`); `conf.py` is read as text, never run, for `source_suffix` (Django's `.txt`),
  `root_doc`, `language` and `exclude_patterns`;
- a MkDocs project: an `mkdocs.yml` and its `docs_dir` (mkdocs_config.py reads it);
- else a top-level folder that is mostly markdown / reStructuredText files (`.txt` read
  when it reads as reStructuredText), not a Python package, test, source or fragment
  folder.

Folders are not skipped by name when they are the docs root (SQLAlchemy's Sphinx source
is `doc/build`); what is skipped inside a root is build output found by its content
(`.buildinfo`, `searchindex.js`, `objects.inv`: Sphinx HTML; `sitemap.xml` with
`search/`: a MkDocs site), Sphinx's `_build`/`_static`/`_templates`/`_sources` folders,
message catalogs (`locale/`) and nested projects (read as their own source).

Translations are told apart by configuration (`language` in conf.py, `theme.language`,
the i18n plugin), by sibling projects in language folders (`docs/en/mkdocs.yml`,
`docs/es/mkdocs.yml`), by language folders inside a root that mirror its pages
(`docs/ja/...`) and by MkDocs i18n suffixes (`index.fr.md`). The default language
(English, or the only language there is) is always read; others only when asked.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from doc4llm.corpus.atomic import read_text_lossy
from doc4llm.ingest.packages.mkdocs_config import mkdocs_project

MARKDOWN = {".md", ".markdown", ".mdx"}
RST = {".rst", ".rest"}
TEXT = {".txt"}
# folders that never hold a project's docs: tests (Sphinx's own `tests/roots/*/conf.py`,
# MkDocs' `tests/integration/*/mkdocs.yml`), examples, dependencies, caches, metadata
NOT_DOCS = {"tests", "test", "testing", "testdata", "test_data", "fixtures", "__fixtures__", "node_modules",
            "__pycache__", "site-packages", "venv", ".venv", "vendor", "_vendor", "third_party",
            "examples", "example", "samples", "sample"}  # an example project's docs are not the package's
# inside a root: Sphinx's build, theme and extension folders; message catalogs
SKIP_IN_ROOT = {"_build", "_static", "_templates", "_themes", "_theme", "_ext", "_sources", "locale", "locales",
                "node_modules", "__pycache__", "venv", ".venv"}
SPHINX_GENERATED = {"genindex", "py-modindex", "modindex", "search"}
MAX_CONF_BYTES = 512 * 1024
MAX_TXT_SNIFFS = 500  # `.txt` files of top-level folders read to see whether they are reStructuredText
MIN_OWN_PAGES = 3  # a folder whose own files are mostly pages is a docs tree with at least this many
PACKAGE = -10**9  # a file count no docs tree reaches: marks a Python package folder
_FRAGMENT = re.compile(r"^[+\w-]*\d+[\w-]*\.\w+(\.\d+)?\.(md|rst|txt)$")  # towncrier: 1234.feature.rst
# ISO 639-1 codes: a folder or suffix named by one may be a translation
LANGS = set("""aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv
cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id
ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh
mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa
sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz
ve vi vo wa wo xh yi yo za zh zu""".split())
_STRING = re.compile(r"'([^'\n]{0,200})'|\"([^\"\n]{0,200})\"")
_LANG_NAME = re.compile(r"^([a-z]{2})(?:[_-](?:[a-z]{2}|[a-z]{4}|\d{3}))?$", re.I)
_SHORT_NAME = re.compile(r"^[a-z]{2,3}(?:[_-][a-z0-9]{2,4})?$", re.I)


def lang_of_name(name: str) -> str | None:
    """`ja`, `pt_BR`, `zh-hans` -> the code as written (lower case); None otherwise."""
    m = _LANG_NAME.match(name)
    return name.lower().replace("_", "-") if m and m.group(1).lower() in LANGS else None


def lang_matches(lang: str, wanted: set[str]) -> bool:
    """`--lang pt` takes `pt-br`; `--lang all` takes every language."""
    lang = lang.lower().replace("_", "-")
    return "all" in wanted or lang in wanted or lang.split("-")[0] in wanted


@dataclass
class DocsRoot:
    path: Path
    kind: str  # sphinx | mkdocs | tree
    suffixes: set[str]
    lang: str | None = None  # None: the project's default language
    config: Path | None = None
    excludes: list[str] = field(default_factory=list)  # Sphinx exclude_patterns (relative globs)
    nav: dict[str, str] = field(default_factory=dict)  # archive-relative path -> MkDocs nav title
    include_bases: list[Path] = field(default_factory=list)  # MkDocs include base paths
    i18n_suffix: bool = False  # MkDocs i18n `index.fr.md` files
    notes: list[str] = field(default_factory=list)


@dataclass
class DocFile:
    path: Path
    root: DocsRoot
    lang: str | None = None  # None: default language


@dataclass
class Found:
    files: list[DocFile]
    roots: list[DocsRoot]
    languages: list[str]  # translations seen (whether read or not)
    skipped_translations: int = 0
    notes: list[str] = field(default_factory=list)


def _conf_strings(text: str, name: str) -> list[str] | None:
    """String literals assigned to `name` at the start of a line in conf.py (a str, list,
    tuple or dict of them); None when it is not assigned. Read as text: conf.py never runs."""
    m = re.search(rf"^{name}\s*(?:\+)?=\s*", text, re.M)
    if not m:
        return None
    rest = text[m.end():m.end() + 2000]
    if rest[:1] in "[({":
        close = {"[": "]", "(": ")", "{": "}"}[rest[0]]
        end = rest.find(close)
        rest = rest[:end if end >= 0 else len(rest)]
    else:
        rest = rest.split("\n", 1)[0]
    return [a or b for a, b in _STRING.findall(rest)]


def sphinx_root(conf: Path) -> DocsRoot | None:
    """A Sphinx project when `conf.py` sits beside its root document."""
    if conf.stat().st_size > MAX_CONF_BYTES:
        return None
    text, _ = read_text_lossy(conf)
    suffixes = {s.lower() for s in (_conf_strings(text, "source_suffix") or []) if s.startswith(".")}
    if not suffixes:
        suffixes = {".rst"}
    if "myst" in text:  # myst_parser / myst_nb read markdown sources
        suffixes |= {".md"}
    roots = [s for s in (_conf_strings(text, "root_doc") or _conf_strings(text, "master_doc") or []) if s]
    here = conf.parent
    names = roots[:1] + ["index", "contents"]
    if not any((here / f"{n}{s}").is_file() for n in names for s in suffixes | {".rst", ".txt", ".md"}):
        return None
    if any((here / f"{n}.txt").is_file() for n in names) and not any(
            (here / f"{n}{s}").is_file() for n in names for s in suffixes):
        suffixes |= {".txt"}
    lang = (_conf_strings(text, "language") or [None])[0]
    lang = lang.lower().replace("_", "-") if lang and lang.lower() != "en" else None
    excludes = [e for e in (_conf_strings(text, "exclude_patterns") or []) if e]
    return DocsRoot(here, "sphinx", suffixes & (MARKDOWN | RST | TEXT), lang, conf, excludes)


def _is_build_output(names: set[str]) -> bool:
    """Sphinx HTML (`.buildinfo`, `searchindex.js`, `objects.inv`) or a MkDocs site."""
    return bool(names & {".buildinfo", "searchindex.js", "objects.inv"}) or \
        ("sitemap.xml" in names and "search" in names) or "doctrees" in names


def _walk(root: Path, skip: set[str] = NOT_DOCS):
    """os.walk without hidden folders, symlinks or the `skip` folders."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d.lower() not in skip
                             and not d.endswith((".dist-info", ".egg-info")))
        yield Path(dirpath), dirnames, filenames


def find_docs(root: Path, wanted_langs: set[str] | None = None) -> Found:
    """Every docs source of an extracted archive and the page files to read from them."""
    wanted = {w.lower().replace("_", "-") for w in (wanted_langs or set())}
    roots: list[DocsRoot] = []
    notes: list[str] = []
    top_dirs: dict[str, list[int]] = {}  # top-level folder -> [doc files, all files, fragments]
    own: dict[str, list[int]] = {}  # top-level folder -> [doc files, all files] directly inside it
    txt_budget = [MAX_TXT_SNIFFS]
    for here, dirnames, filenames in _walk(root):
        names = set(filenames)
        rel = here.relative_to(root)
        if "conf.py" in names and not _is_build_output(names | set(dirnames)):
            found = sphinx_root(here / "conf.py")
            if found:
                roots.append(found)
        for yml in ("mkdocs.yml", "mkdocs.yaml"):
            if yml in names:
                project = mkdocs_project(here / yml, root, notes)
                if project:
                    roots.append(DocsRoot(project.docs, "mkdocs", set(MARKDOWN), project.lang, here / yml,
                                          nav=project.nav, include_bases=project.include_bases,
                                          i18n_suffix=project.i18n_suffix))
                break
        if rel.parts:
            counts = top_dirs.setdefault(rel.parts[0], [0, 0, 0])
            if len(rel.parts) == 1 and "__init__.py" in names:
                counts[1] = PACKAGE  # a Python package: its .md/.rst files are not a docs tree
            direct = own.setdefault(rel.parts[0], [0, 0]) if len(rel.parts) == 1 else None
            for name in filenames:
                counts[1] += 1
                suffix = os.path.splitext(name)[1].lower()
                if suffix in MARKDOWN | RST:  # `.txt` pages are read from a tree, not what makes one
                    counts[0] += 1
                    counts[2] += bool(_FRAGMENT.match(name))
                if direct is not None:
                    direct[1] += 1
                    direct[0] += suffix in MARKDOWN | RST or (suffix in TEXT and _sniff_rst(here / name, txt_budget))
    roots = _dedupe(roots)
    if not roots:
        for name, (docs, total, fragments) in sorted(top_dirs.items()):
            direct_docs, direct_total = own.get(name, (0, 0))
            # mostly docs, or a folder whose own files are mostly docs: lxml's `doc/` holds 25
            # reStructuredText `.txt` pages beside a built HTML copy and slide decks
            mostly = (docs >= 1 and docs * 3 >= total > 0) or \
                (direct_docs >= MIN_OWN_PAGES and direct_docs * 2 >= direct_total and total > 0)
            if mostly and fragments * 2 < max(docs, 1) and \
                    name.lower() not in {"src", "lib", "dist", "build", "examples", "example", "benchmarks"}:
                roots.append(DocsRoot(root / name, "tree", MARKDOWN | RST | TEXT))
    _languages_of_siblings(roots)
    _languages_of_tagged_copies(roots)
    if roots and all(r.lang is not None for r in roots):  # no English: the biggest project's language
        main = _ordered(roots)[0].lang
        for r in roots:
            r.lang = None if r.lang == main else r.lang
    files: list[DocFile] = []
    languages: set[str] = set()
    skipped = 0
    nested = {r.path for r in roots}
    for r in _ordered(roots):
        if r.lang is not None:
            languages.add(r.lang)
            if not lang_matches(r.lang, wanted):
                skipped += sum(1 for _ in _root_files(r, nested))
                continue
        for path, lang in _with_languages(r, list(_root_files(r, nested))):
            if lang is not None:
                languages.add(lang)
                if not lang_matches(lang, wanted):
                    skipped += 1
                    continue
            files.append(DocFile(path, r, lang or r.lang))
    return Found(files, roots, sorted(languages), skipped, notes)


def _dedupe(roots: list[DocsRoot]) -> list[DocsRoot]:
    """One root per folder: a folder that is both a Sphinx source and an mkdocs.yml
    `docs_dir` is read once, with both projects' file types and the MkDocs nav titles."""
    out: dict[Path, DocsRoot] = {}
    for r in sorted(roots, key=lambda r: r.kind != "sphinx"):
        first = out.setdefault(r.path.resolve(), r)
        if first is not r:
            first.suffixes |= r.suffixes
            first.nav = first.nav or r.nav
            first.include_bases = first.include_bases or r.include_bases
            first.i18n_suffix = first.i18n_suffix or r.i18n_suffix
    return list(out.values())


def _languages_of_siblings(roots: list[DocsRoot]) -> None:
    """Projects side by side in short-named folders (`docs/en`, `docs/es`, `docs/em`) are
    one project's languages: the folder names them, `en` (else the first) is the default."""
    by_parent: dict[tuple[Path, str], list[DocsRoot]] = {}
    for r in roots:
        folder = (r.config.parent if r.config else r.path)
        by_parent.setdefault((folder.parent, r.kind), []).append(r)
    for group in by_parent.values():
        if len(group) < 2:
            continue
        named = [r for r in group if _SHORT_NAME.match((r.config.parent if r.config else r.path).name)]
        # at least two real language codes: sympy's `doc/api` and `doc/src` are two projects
        # with short names, not two languages (its whole `src` manual was left out)
        if len(named) < 2 or sum(1 for r in named if lang_of_name(
                (r.config.parent if r.config else r.path).name)) < 2:
            continue
        langs = {id(r): (r.config.parent if r.config else r.path).name.lower().replace("_", "-") for r in named}
        default = next((r for r in named if langs[id(r)] == "en"), None) or \
            next((r for r in named if r.lang is None), named[0])
        for r in named:
            r.lang = None if r is default else langs[id(r)]


_LANG_ALIASES = {"jp": "ja", "cn": "zh-cn", "kr": "ko", "br": "pt-br"}  # country codes used for languages
_TAGGED = re.compile(r"^(.+?)[._-]([A-Za-z]{2,7})$")


def _lang_tag(tag: str) -> str | None:
    """`ru`, `pt_BR`, `ptbr` (two codes run together), `jp` (a country code used for a
    language) -> the language; None otherwise."""
    tag = tag.lower()
    if tag in _LANG_ALIASES:
        return _LANG_ALIASES[tag]
    if lang_of_name(tag):
        return lang_of_name(tag)
    if len(tag) == 4 and tag[:2] in LANGS and tag.isalpha():
        return f"{tag[:2]}-{tag[2:]}"
    return None


def _languages_of_tagged_copies(roots: list[DocsRoot]) -> None:
    """A project in a folder named like another project's plus a language tag is its
    translation: Beautiful Soup's `doc.ru/source`, `doc.zh/source`, `doc.ptbr/source`
    beside `doc/source` (their conf.py files do not say `language`)."""
    paths = {r.path.resolve(): r for r in roots}
    for r in roots:
        if r.lang is not None:
            continue
        parts = r.path.resolve().parts
        for i, part in enumerate(parts):
            m = _TAGGED.match(part)
            lang = _lang_tag(m.group(2)) if m else None
            if lang and Path(*parts[:i], m.group(1), *parts[i + 1:]) in paths:
                r.lang = lang
                break


def _ordered(roots: list[DocsRoot]) -> list[DocsRoot]:
    """Default-language roots first, the biggest project first (numpy's `doc/source` before
    `doc/neps`), then by path."""
    def size(r: DocsRoot) -> int:
        return sum(1 for _, _, names in _walk(r.path) for n in names if os.path.splitext(n)[1].lower() in r.suffixes)
    return sorted(roots, key=lambda r: (r.lang is not None, -size(r), str(r.path)))


def _root_files(r: DocsRoot, nested: set[Path]):
    """The page files of one root, in folder order."""
    for here, dirnames, filenames in _walk(r.path, SKIP_IN_ROOT):  # a docs folder named `examples` or
        names = set(filenames) | set(dirnames)                    # `testing` is docs (Django's)
        if here != r.path and (_is_build_output(names) or here in nested):
            dirnames[:] = []
            continue
        keep = []
        for d in dirnames:
            sub = here / d
            if d.lower() in SKIP_IN_ROOT or sub in nested or sub.is_symlink():
                continue
            if r.kind == "sphinx" and _excluded(sub.relative_to(r.path).as_posix(), r.excludes):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            path = here / name
            stem, suffix = os.path.splitext(name)
            suffix = suffix.lower()
            if name.startswith(".") or path.is_symlink() or suffix not in r.suffixes:
                continue
            if r.kind == "sphinx":
                if stem in SPHINX_GENERATED or _excluded(path.relative_to(r.path).as_posix(), r.excludes):
                    continue
            if suffix in TEXT:
                lower = name.lower()
                if lower.startswith(("requirements", "robots", "license", "spelling")) or \
                        (r.kind != "sphinx" and not _txt_is_rst(path)):
                    continue
            yield path


def _sniff_rst(path: Path, budget: list[int]) -> bool:
    """`_txt_is_rst` for at most `budget[0]` files of a whole archive (each reads 4 KB)."""
    name = path.name.lower()
    if budget[0] <= 0 or name.startswith(("requirements", "license", "licence", "robots", "spelling")):
        return False
    budget[0] -= 1
    return _txt_is_rst(path)


_EN_WORDS = {"the", "and", "of", "to", "is", "in", "that", "for", "with", "this", "be", "are", "it", "as", "by",
             "on", "you", "can", "an", "or", "not", "if", "from"}


def _reads_english(path: Path) -> bool:
    """The file's opening reads as English (or has too few words to tell): common English
    words make at least a tenth of its words, as they do in any English prose."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(8000).decode("utf-8", "replace").lower()
    except OSError:
        return True
    words = re.findall(r"[^\W\d_]+", head)
    if len(words) < 30:
        return True
    return sum(1 for w in words if w in _EN_WORDS) * 10 >= len(words)


def _txt_is_rst(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(4000).decode("utf-8", "replace")
    except OSError:
        return False
    return looks_rst(head)


def looks_rst(head: str) -> bool:
    """Section adornments (`====` under a title) or directives, and no markdown fences."""
    if "```" in head:
        return False
    return bool(re.search(r"^(=+|-+|~+|\*+|\^+)[ \t]*$", head, re.M)) or \
        bool(re.search(r"^\.\. [\w:-]+::", head, re.M))


def _excluded(rel: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(rel, p.rstrip("/") + "/*") for p in patterns)


def _with_languages(r: DocsRoot, paths: list[Path]) -> list[tuple[Path, str | None]]:
    """Each file with its language: a language folder that mirrors the root's own pages
    (`docs/ja/index.md` beside `docs/index.md`, or two such folders side by side), or an
    i18n suffix (`index.fr.md` beside `index.md`)."""
    rels = [p.relative_to(r.path) for p in paths]
    by_parent: dict[Path, set[str]] = {}
    for rel in rels:
        by_parent.setdefault(rel.parent, set()).add(rel.name)
    lang_dirs: dict[str, str] = {}  # first folder under the root -> language
    firsts: dict[str, list[Path]] = {}
    for rel in rels:
        if len(rel.parts) > 1:
            firsts.setdefault(rel.parts[0], []).append(rel)
    candidates = {d: lang_of_name(d) for d in firsts if lang_of_name(d)}
    own = {rel.as_posix() for rel in rels if len(rel.parts) == 1 or rel.parts[0] not in candidates}
    for d, lang in candidates.items():
        inner = [Path(*rel.parts[1:]).as_posix() for rel in firsts[d]]
        mirrored = sum(1 for x in inner if x in own)
        if len(candidates) >= 2 or (inner and mirrored * 3 >= len(inner)):
            lang_dirs[d] = lang or d
    names = {rel.as_posix() for rel in rels}
    suffix_langs: dict[tuple[Path, str], set[str]] = {}  # (folder, base name) -> `.fr`, `.de` suffixes
    for rel in rels:
        parts = rel.name.split(".")
        if len(parts) >= 3 and lang_of_name(parts[-2]):
            suffix_langs.setdefault((rel.parent, ".".join(parts[:-2])), set()).add(parts[-2])
    out = []
    for path, rel in zip(paths, rels, strict=True):
        lang = lang_dirs.get(rel.parts[0]) if len(rel.parts) > 1 else None
        if lang is None:
            parts = rel.name.split(".")
            base = (rel.parent, ".".join(parts[:-2]))
            # `README.ru.rst` beside `README.rst` (zope.interface's Sphinx docs) is its translation
            mirrored = len(parts) >= 3 and (rel.parent / f"{base[1]}.{parts[-1]}").as_posix() in names
            if len(parts) >= 3 and lang_of_name(parts[-2]) and (
                    (r.kind != "sphinx" and (r.i18n_suffix or len(suffix_langs.get(base, ())) >= 2))
                    # the text must say so too: sphinx-apidoc's `pkg.io.rst` beside `pkg.rst` is English
                    or (mirrored and parts[-2].lower() != "en" and not _reads_english(path))):
                lang = lang_of_name(parts[-2])
        if lang is not None and r.lang is None and lang == "en":
            lang = None  # `docs/en/` beside `docs/fr/`: English is the default
        out.append((path, lang))
    return out
