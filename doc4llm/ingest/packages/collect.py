"""A package's own prose: its docs folder, README (long description) and changelog.

Markdown and MDX go through the same rewrites as `doc4llm import`; reStructuredText is
converted by pandoc (rst.py). MkDocs includes (`{! file !}`, `--8<-- "file"`) and Sphinx
`.. include::` are resolved from the extracted archive, never from outside it. MkDocs
`nav` titles name pages that have no H1 of their own.
"""

from __future__ import annotations

import email
import email.policy
import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from doc4llm.corpus.atomic import mostly_undecodable, read_text_lossy
from doc4llm.ingest.importer import page_title_and_body, prepare_markdown
from doc4llm.ingest.packages.pages import CHANGELOG, DOCS, README, DocPage
from doc4llm.ingest.packages.rst import resolve_includes, rst_to_markdown

DOCS_DIRS = ("docs", "doc", "documentation")
SKIP_DIRS = {"_build", "_static", "_templates", "_themes", "_ext", "node_modules", "locale", "locales",
             "build", "site", "__pycache__", "venv", ".venv"}
SPHINX_GENERATED = {"genindex", "py-modindex", "modindex", "search"}
MARKDOWN = {".md", ".markdown", ".mdx"}
RST = {".rst", ".rest"}
CHANGELOG_STEMS = {"changelog", "changes", "history", "news", "releases", "release-notes", "release_notes"}
MAX_PAGES = 1500
CONVERT_WORKERS = max(1, min(4, os.cpu_count() or 1))
MAX_PAGE_BYTES = 2 * 1024 * 1024
_SNIPPET_LINE = re.compile(r"""^(\s*)-{1,}8<-{1,}\s+["']([^"'\n]{1,300})["']\s*$""")
_MD_INCLUDE = re.compile(r"\{!\s*([^!}\n]{1,300}?)\s*!\}")


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


def to_markdown(text: str, suffix: str, here: Path, root: Path, included: set[Path]) -> str:
    suffix = suffix.lower()
    if suffix in RST:
        return rst_to_markdown(resolve_includes(text, here, root, seen=included))
    if suffix in MARKDOWN:
        return prepare_markdown(resolve_mkdocs_includes(text, here, root, included), mdx=suffix == ".mdx")
    return text


def resolve_mkdocs_includes(text: str, here: Path, root: Path, included: set[Path], depth: int = 0) -> str:
    """`--8<-- "path"` (pymdownx.snippets) and `{! path !}` (markdown-include), looked up
    next to the file, then from the archive root (MkDocs' base path), inside it only."""
    if depth > 3 or ("8<" not in text and "{!" not in text):
        return text

    def load(target: str) -> str | None:
        target = target.strip()
        for base in (here.parent, root):
            path = (base / target).resolve()
            if path.is_relative_to(root.resolve()) and path.is_file() and path.stat().st_size <= MAX_PAGE_BYTES:
                included.add(path)
                body, _ = read_text_lossy(path)
                return resolve_mkdocs_includes(body, path, root, included, depth + 1)
        return None

    out = []
    for line in text.split("\n"):
        m = _SNIPPET_LINE.match(line)
        if m:
            body = load(m.group(2))
            out.append(body if body is not None else line)
            continue
        if "{!" in line:
            line = _MD_INCLUDE.sub(lambda mm: load(mm.group(1)) or mm.group(0), line)
        out.append(line)
    return "\n".join(out)


def readme_page(root: Path, meta: dict, ecosystem: str, package: str, included: set[Path]) -> DocPage | None:
    """The long description (PyPI) or the README file (npm, or an sdist without one)."""
    desc = (meta.get("description") or "").strip() if ecosystem == "pypi" else ""
    if desc and desc.upper() != "UNKNOWN":
        ctype = meta.get("content_type") or "text/x-rst"
        suffix = ".md" if "markdown" in ctype else ".rst" if "rst" in ctype else ".txt"
        try:
            body = to_markdown(desc, suffix, root / "PKG-INFO", root, included)
        except Exception:  # noqa: BLE001 - a README pandoc rejects stays as written
            body = desc
        title, body = page_title_and_body(body, f"{package} README")
        return DocPage(title, body, f"{meta.get('file', 'PKG-INFO')} (long description)", "readme", README)
    readmes = sorted((p for p in root.iterdir() if p.is_file() and p.name.lower().startswith("readme")),
                     key=lambda p: (p.suffix.lower() not in MARKDOWN | RST, p.name))
    for path in readmes:
        page = file_page(path, root, README, f"{package} README", included)
        if page:
            return page
    return None


def file_page(path: Path, root: Path, origin: str, fallback: str, included: set[Path],
              nav_titles: dict[str, str] | None = None) -> DocPage | None:
    if path.stat().st_size > MAX_PAGE_BYTES:
        return None
    text, lossy = read_text_lossy(path)
    if "\x00" in text or (lossy and mostly_undecodable(text)):
        return None
    rel = path.relative_to(root).as_posix()
    suffix = path.suffix.lower()
    if suffix not in MARKDOWN | RST:
        suffix = ".rst" if _looks_rst(text) else ".md"
    try:
        md = to_markdown(text, suffix, path, root, included)
    except Exception:  # noqa: BLE001 - one page pandoc rejects must not lose the others
        md = text
    nav = (nav_titles or {}).get(rel)
    title, body = page_title_and_body(md, nav or fallback)
    if not body.strip() and not title:
        return None
    return DocPage(title, body, rel, f"{origin}:{rel}", origin)


def _looks_rst(text: str) -> bool:
    head = text[:4000]
    return bool(re.search(r"^(=+|-+|~+|\*+)\s*$", head, re.MULTILINE)) and "```" not in head


def changelog_pages(root: Path, package: str, included: set[Path]) -> list[DocPage]:
    out = []
    for path in sorted(root.iterdir()):
        if not path.is_file() or path.resolve() in included:
            continue
        stem = path.name.lower().split(".", 1)[0]
        if stem in CHANGELOG_STEMS and (path.suffix.lower() in MARKDOWN | RST | {".txt", ""}):
            page = file_page(path, root, CHANGELOG, f"{package} changelog", included)
            if page:
                out.append(page)
    return out


def find_docs_dir(root: Path) -> Path | None:
    by_lower = {p.name.lower(): p for p in root.iterdir() if p.is_dir()}
    for name in DOCS_DIRS:
        if name in by_lower:
            return by_lower[name]
    return None


def mkdocs_nav_titles(root: Path, docs: Path) -> dict[str, str]:
    """rel path (from the archive root) -> the title MkDocs' `nav` gives that page."""
    import yaml

    conf = root / "mkdocs.yml"
    if not conf.is_file():
        conf = root / "mkdocs.yaml"
    if not conf.is_file() or conf.stat().st_size > 1024 * 1024:
        return {}

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)  # !!python/name:... etc.
    try:
        data = yaml.load(conf.read_text(encoding="utf-8", errors="replace"), Loader=Loader) or {}
    except yaml.YAMLError:
        return {}
    docs_dir = root / str(data.get("docs_dir") or docs.name) if isinstance(data, dict) else docs
    out: dict[str, str] = {}

    def walk(node: object) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for title, value in node.items():
                if isinstance(value, str) and isinstance(title, str):
                    out[(docs_dir / value).relative_to(root).as_posix()] = title
                else:
                    walk(value)

    walk(data.get("nav") if isinstance(data, dict) else None)
    return out


def docs_pages(root: Path, included: set[Path], warnings: list[str]) -> list[DocPage]:
    docs = find_docs_dir(root)
    if docs is None:
        return []
    nav = mkdocs_nav_titles(root, docs)
    sphinx = any((d / "conf.py").is_file() for d in (docs, docs / "source", docs / "src"))
    files: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(docs):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            suffix = path.suffix.lower()
            if suffix not in MARKDOWN | RST or name.startswith(".") or (sphinx and path.stem in SPHINX_GENERATED):
                continue
            files.append(path)
    if len(files) > MAX_PAGES:
        warnings.append(f"{docs.name}/ has {len(files)} pages; the first {MAX_PAGES} are kept")
        files = files[:MAX_PAGES]
    pages = []
    # pandoc runs as a subprocess per page: a few at once (threads wait on the processes);
    # results keep the folder order, so the set is the same whatever finishes first
    with ThreadPoolExecutor(max_workers=CONVERT_WORKERS) as pool:
        done = pool.map(lambda path: file_page(path, root, DOCS, path.stem, included, nav), files)
        for path, page in zip(files, done, strict=True):
            if page is None:
                warnings.append(f"{path.relative_to(root).as_posix()}: skipped (binary or too large)")
                continue
            pages.append(page)
    return pages
