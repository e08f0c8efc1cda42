"""Links between pages of a set crawled from a loopback or private host.

A site scraped from `http://127.0.0.1:8000/` (a local build, a test server, a mirror)
writes every internal link with that host, which points nowhere once the server is gone.
After the crawl, such links to pages of the set become doc4llm paths,
`<../Page Folder/docContent.md#anchor>`, which an agent can open and grep follows;
links to pages the crawl did not keep stay as written. The pass is a bounded regex over
each page (linear), and a page whose links are already rewritten is not touched again.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from doc4llm.corpus.paths import CONTENT_FILE
from doc4llm.corpus.writer import SetWriter
from doc4llm.ingest.scrape.urls import canonical_url

_HEADER_END = "\n\n---\n\n"


def is_local_host(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local


def rewrite_local_links(writer: SetWriter, root_url: str) -> int:
    """Rewrite links to `root_url`'s origin in every scraped page of the set; return the
    number of pages rewritten."""
    parts = urlsplit(root_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    records = {k: r for k, r in writer._records().items() if isinstance(r, dict) and r.get("origin") == writer.origin}
    folders = {r["key"]: r["folder"] for r in records.values() if r.get("key") and r.get("folder")}
    link = re.compile(r"\]\(<?(" + re.escape(origin) + r"(?:/[^\s()<>]{0,2000})?)>?(\s+\"[^\"\n]{0,300}\")?\)")

    def replace(m: re.Match) -> str:
        target = m.group(1)
        base, _, frag = target.partition("#")
        folder = folders.get(canonical_url(base) or base)
        if not folder:
            return m.group(0)
        path = f"../{folder}/{CONTENT_FILE}" + (f"#{frag}" if frag else "")
        return f"](<{path}>{m.group(2) or ''})"

    changed = 0
    for rec in records.values():
        folder = rec.get("folder")
        page = writer.set_dir / folder / CONTENT_FILE if folder else None
        if page is None or not page.is_file():
            continue
        text = page.read_text(encoding="utf-8", errors="replace")
        cut = text.find(_HEADER_END)
        if cut < 0 or origin not in text[cut:]:
            continue
        body = text[cut + len(_HEADER_END):]
        new_body = link.sub(replace, body)
        if new_body == body:
            continue
        extra = rec.get("extra") or {}
        writer.write_page(rec.get("title") or folder, new_body, source=rec.get("source") or rec["key"],
                          key=rec["key"], url=rec.get("url"), extra=extra,
                          slug_anchors=extra.get("kind") != "html")
        changed += 1
    return changed
