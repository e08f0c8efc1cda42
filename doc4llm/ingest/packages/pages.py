"""One page of a package's docs before it is written, and where it came from."""

from __future__ import annotations

from dataclasses import dataclass

README, DOCS, CHANGELOG, API = "readme", "docs", "changelog", "api"


@dataclass
class DocPage:
    title: str
    body: str
    source: str  # path inside the archive (or `PKG-INFO` for the long description)
    key: str  # stable identity across rebuilds
    origin: str  # readme | docs | changelog | api
    kind: str | None = None  # release-notes | changelog | contributors | translation (page_kinds.py)
    lang: str | None = None  # a translation's language
