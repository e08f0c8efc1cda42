"""Keep the web pages `ask` found as a local doc set (--save-web SET), so the next
search answers from disk. Written through SetWriter (origin "web"), like any other ingest."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from doc4llm.answer.sources import WebSource
from doc4llm.corpus.writer import SetWriter


def save_web_results(docs_dir: Path, set_name: str, web: list[WebSource], question: str) -> list[dict]:
    """Write one page per web source (key = its URL); returns [{url, folder, status}]."""
    writer = SetWriter(docs_dir, set_name, origin="web")
    written = []
    for source in web:
        page = writer.write_page(source.title, source.content, source=source.url,
                                 key=source.url, url=source.url,
                                 extra={"query": source.query, "asked": question})
        written.append({"url": source.url, "folder": page.folder, "status": page.status})
    writer.finish({"saved": datetime.now(UTC).isoformat(timespec="seconds"),
                   "last_question": question})
    return written
