"""What a package set holds, in one line, and what it lacks, in one warning each.

`add`, `sync` and `sets` print the same line (`pydantic@2.7.4  docs 0 · API 112 pages ·
readme · changelog`) from the same record, which the set keeps in doc4llm-set.yaml
(`package.holds`, `package.missing`), so a set's gaps are visible long after it was built.
"""

from __future__ import annotations

from collections import Counter

from doc4llm.ingest.packages.pages import API, CHANGELOG, DOCS, README, DocPage


def holdings(pages: list[DocPage], api_sections: int) -> dict:
    """Counts per kind of page, and where the narrative docs came from."""
    kinds = Counter(p.origin for p in pages)
    where = Counter(str(p.extra.get("origin", "archive")) for p in pages if p.origin == DOCS)
    out = {"docs": kinds.get(DOCS, 0), "api": kinds.get(API, 0), "api_sections": api_sections,
           "readme": kinds.get(README, 0) > 0, "changelog": kinds.get(CHANGELOG, 0) > 0,
           "docs_from": dict(sorted(where.items()))}
    upstream = next((p.extra for p in pages if p.origin == DOCS and p.extra.get("origin") in ("repo", "site")), None)
    if upstream:
        if upstream["origin"] == "repo":
            out["docs_source"] = f"{upstream['repo']}@{upstream['tag']}"
        else:
            out["docs_source"] = upstream.get("site") or upstream["url"]
            if upstream.get("versioned") is False:
                out["docs_unversioned"] = True
    return out


def missing(holds: dict, docs_looked: str, api_looked: str = "archive") -> list[str]:
    """One sentence per kind of content the set lacks, naming where it was looked for."""
    out = []
    if not holds.get("docs"):
        out.append(f"no narrative docs (looked at: {docs_looked})")
    if not holds.get("api"):
        out.append(f"no API reference (looked at: {api_looked})")
    return out


def holdings_line(set_name: str, holds: dict | None) -> str:
    """`pydantic@2.7.4  docs 0 · API 112 pages · readme · changelog`."""
    if not isinstance(holds, dict):
        return set_name
    docs = f"docs {holds.get('docs', 0)}"
    src = holds.get("docs_source")
    if src and holds.get("docs"):
        docs += f" from {src}" + (" (current, not this version)" if holds.get("docs_unversioned") else "")
    api = holds.get("api", 0)
    parts = [docs, f"API {api} page{'' if api == 1 else 's'}"]
    if holds.get("readme"):
        parts.append("readme")
    if holds.get("changelog"):
        parts.append("changelog")
    return f"{set_name}  " + " · ".join(parts)
