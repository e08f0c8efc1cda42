"""One page of a package's docs before it is written, and where it came from."""

from __future__ import annotations

from dataclasses import dataclass, field

README, DOCS, CHANGELOG, API = "readme", "docs", "changelog", "api"


@dataclass
class DocPage:
    title: str
    body: str
    source: str  # path inside the archive (or `PKG-INFO` for the long description)
    key: str  # stable identity across rebuilds
    origin: str  # readme | docs | changelog | api
    # written into the page's `extra:` record in doc4llm-set.yaml: `origin` archive | repo |
    # site with `path` / `repo` + `tag` + `path` / `url` (see upstream.py)
    extra: dict = field(default_factory=dict)
    kind: str | None = None  # release-notes | changelog | contributors | translation (page_kinds.py)
    lang: str | None = None  # a translation's language
    untitled: bool = False  # no title of its own: named by its file, its opening has no heading
