"""Conversation context across CLI calls: follow-up detection and query enrichment.

A session is a small JSON file (`.doc4llm/sessions/<name>.json`) holding the last few
queries with their doc sets, expiring after a TTL. A follow-up ("what about its
timeout?", "and for opencode?") borrows the previous query's topic words and doc sets.
The MCP server keeps the same structure in memory.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from doc4llm.corpus.atomic import atomic_write_text
from doc4llm.index.store import index_dir

TTL_SECONDS = 30 * 60
_MARKER = re.compile(r"^\s*(and|also|what about|how about|then|same for|what if|but)\b", re.I)
_PRONOUN = re.compile(r"\b(it|its|them|those|these|that one|this one|the same)\b", re.I)


@dataclass
class Session:
    name: str
    turns: list[dict] = field(default_factory=list)

    def is_follow_up(self, query: str) -> bool:
        if not self.turns:
            return False
        words = len(query.split())
        return (words <= 8 and bool(_MARKER.search(query))) or (words <= 6 and bool(_PRONOUN.search(query)))

    def enrich(self, query: str) -> tuple[str, str | None]:
        """(query to search, context used or None)."""
        if not self.is_follow_up(query):
            return query, None
        prev = self.turns[-1]
        topic = " ".join(w for w in prev.get("keywords", [])[:4] if w.lower() not in query.lower())
        return (f"{query} {topic}".strip(), prev["query"]) if topic else (query, None)

    def record(self, query: str, result: dict) -> None:
        self.turns.append({"query": query, "keywords": result.get("analysis", {}).get("keywords", []),
                           "sets": [r["doc_set"] for r in result.get("results", [])[:2]], "t": time.time()})
        self.turns = self.turns[-5:]


def _path(docs_dir: Path, name: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:64] or "default"
    return index_dir(docs_dir) / "sessions" / f"{safe}.json"


def load_session(docs_dir: Path, name: str) -> Session:
    p = _path(docs_dir, name)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
        turns = [t for t in data.get("turns", []) if time.time() - t.get("t", 0) < TTL_SECONDS]
        return Session(name, turns)
    except (OSError, ValueError, AttributeError):
        return Session(name)


def save_session(docs_dir: Path, session: Session) -> None:
    try:
        atomic_write_text(_path(docs_dir, session.name), json.dumps({"turns": session.turns}))
    except OSError:
        pass  # a read-only docs dir just has no memory
