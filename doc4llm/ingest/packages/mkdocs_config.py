"""mkdocs.yml from an archive, read as untrusted data.

- YAML tags are ignored (`!!python/name:...`, `!ENV`: never constructed, never run);
- aliases are not expanded: PyYAML shares the aliased object, and every walk here visits
  an object once (by identity) within a node budget, so a "billion laughs" `nav` or a
  recursive alias (`nav: &a [*a]`) costs as much as its text, and nothing is ever
  turned into a string whole;
- `docs_dir`, `nav` paths, `INHERIT` and include base paths must stay inside the archive:
  `docs_dir: /etc` or `nav: [{Home: /etc/passwd}]` is ignored with a note, never followed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

MAX_CONFIG_BYTES = 1024 * 1024
MAX_NODES = 50_000  # objects visited per walk of a loaded config
MAX_INHERIT = 3
PAGE_SUFFIXES = (".md", ".markdown", ".mdx")


def load_yaml(path: Path) -> object:
    """The document, tags ignored; None when it does not parse or is too large."""
    import yaml

    if path.stat().st_size > MAX_CONFIG_BYTES:
        return None

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)  # every unknown tag
    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    try:
        return yaml.load(path.read_text(encoding="utf-8", errors="replace"), Loader=Loader)
    except (yaml.YAMLError, RecursionError, ValueError):
        return None


def iter_nodes(node: object, budget: int = MAX_NODES):
    """(parent key, value) of every object under `node`, each visited once (aliases and
    cycles included), at most `budget` of them; iterative (no recursion limit)."""
    seen: set[int] = set()
    stack: list[tuple[object, object]] = [(None, node)]
    while stack and budget > 0:
        key, value = stack.pop()
        if isinstance(value, (list, dict)):
            if id(value) in seen:
                continue
            seen.add(id(value))
        budget -= 1
        yield key, value
        if isinstance(value, list):
            stack.extend((None, v) for v in reversed(value))
        elif isinstance(value, dict):
            stack.extend((k, v) for k, v in reversed(list(value.items())))


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, ValueError, RuntimeError):
        return False


def read_config(yml: Path, archive: Path, notes: list[str]) -> dict:
    """The config as a dict, `INHERIT` followed (inside the archive, bounded)."""
    data = load_yaml(yml)
    if not isinstance(data, dict):
        return {}
    rel = yml.relative_to(archive).as_posix()
    for _ in range(MAX_INHERIT):
        parent = data.get("INHERIT")
        if not isinstance(parent, str):
            break
        target = yml.parent / parent
        if not _inside(target, archive) or not target.is_file():
            notes.append(f"{rel}: INHERIT {parent[:80]!r} is not a file inside the archive: ignored")
            break
        base = load_yaml(target)
        if not isinstance(base, dict):
            break
        data = {**base, **{k: v for k, v in data.items() if k != "INHERIT"}}
    return data


@dataclass
class MkDocsProject:
    docs: Path  # docs_dir
    lang: str | None  # theme.language when not English
    nav: dict[str, str] = field(default_factory=dict)
    include_bases: list[Path] = field(default_factory=list)
    i18n_suffix: bool = False


def mkdocs_project(yml: Path, archive: Path, notes: list[str]) -> MkDocsProject | None:
    """The docs folder an mkdocs.yml names, with its nav titles, include bases and
    language; None when the folder is missing or outside the archive."""
    rel = yml.relative_to(archive).as_posix()
    data = read_config(yml, archive, notes)
    docs_dir = data.get("docs_dir", "docs")
    if not isinstance(docs_dir, str) or not docs_dir.strip():
        docs_dir = "docs"
    docs = yml.parent / docs_dir
    if not _inside(docs, archive):
        notes.append(f"{rel}: docs_dir {docs_dir[:80]!r} lies outside the archive: ignored")
        return None
    if not docs.is_dir():
        return None
    theme = data.get("theme")
    lang = theme.get("language") or theme.get("locale") if isinstance(theme, dict) else None
    lang = lang.lower().replace("_", "-") if isinstance(lang, str) and lang.lower() != "en" else None
    return MkDocsProject(docs, lang, nav_titles(data.get("nav"), docs, archive, rel, notes),
                         _include_bases(data.get("markdown_extensions"), yml.parent, archive),
                         _i18n_suffix(data.get("plugins")))


def nav_titles(nav: object, docs: Path, archive: Path, rel: str, notes: list[str]) -> dict[str, str]:
    """archive-relative path -> the title `nav` gives it; paths outside `docs_dir` and URLs
    are ignored (said once)."""
    out: dict[str, str] = {}
    outside = 0
    for title, value in iter_nodes(nav):
        if not isinstance(title, str) or not isinstance(value, str) or "://" in value or \
                not value.lower().endswith(PAGE_SUFFIXES):
            continue  # a link (`/az/`, `https://...`), not a page
        target = docs / value
        if not _inside(target, docs):
            outside += 1
            continue
        try:
            out[target.resolve().relative_to(archive.resolve()).as_posix()] = title
        except ValueError:
            outside += 1
    if outside:
        notes.append(f"{rel}: {outside} nav entries point outside docs_dir: ignored")
    return out


def _include_bases(exts: object, here: Path, archive: Path) -> list[Path]:
    """MkDocs' working folder, then the `base_path` of mdx_include / markdown_include /
    pymdownx.snippets (relative to it), inside the archive only."""
    bases = [here]
    for key, value in iter_nodes(exts, 2000):
        if key in ("base_path", "base_paths"):
            for p in [value] if isinstance(value, str) else value if isinstance(value, list) else []:
                if isinstance(p, str) and _inside(here / p, archive) and (here / p).is_dir():
                    bases.append(here / p)
    return bases


def _i18n_suffix(plugins: object) -> bool:
    """mkdocs-static-i18n in its default `suffix` structure (`index.fr.md`)."""
    for key, value in iter_nodes(plugins, 2000):
        if key == "i18n":
            structure = value.get("docs_structure", "suffix") if isinstance(value, dict) else "suffix"
            return structure == "suffix"
        if value == "i18n":
            return True
    return False


__all__ = ["MkDocsProject", "iter_nodes", "load_yaml", "mkdocs_project", "nav_titles"]
