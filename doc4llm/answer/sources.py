"""The numbered evidence an answer may cite: local doc sections [n] and web pages [Wn].

Local docs and web results are numbered apart so that an agent (and the text output)
can always tell what came from the user's own docs from what came from the internet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from doc4llm.corpus.paths import CONTENT_FILE, safe_join

FENCE_MARKERS = ("```", "~~~")
CONTINUES = "[... section continues: read its full line range]"


@dataclass
class DocSource:
    ref: str
    doc_set: str
    page: str
    heading_path: list[str]
    lines: list[int]
    url: str | None
    source: str | None
    content_path: str | None
    relevance: str
    text: str
    found_by_query: str

    @property
    def title(self) -> str:
        return " > ".join(self.heading_path) or self.page

    def to_dict(self) -> dict:
        return {
            "ref": f"[{self.ref}]", "type": "doc", "doc_set": self.doc_set, "page": self.page,
            "heading_path": self.heading_path, "lines": self.lines, "url": self.url,
            "source": self.source, "content_path": self.content_path,
            "relevance": self.relevance, "query": self.found_by_query,
        }


@dataclass
class WebSource:
    ref: str
    title: str
    url: str
    content: str
    score: float | None
    query: str

    def to_dict(self) -> dict:
        return {"ref": f"[{self.ref}]", "type": "web", "title": self.title, "url": self.url,
                "score": self.score, "query": self.query}


@dataclass
class SourceBook:
    docs: list[DocSource] = field(default_factory=list)
    web: list[WebSource] = field(default_factory=list)
    docs_in_prompt: bool = True  # False when retrieval abstained: listed, never answered from

    def add_doc(self, result: dict, text: str, query: str) -> DocSource | None:
        """Add a search result (contract dict) unless the same section is already in."""
        key = (result["doc_set"], result["page"], tuple(result["lines"]))
        if any((d.doc_set, d.page, tuple(d.lines)) == key for d in self.docs):
            return None
        doc = DocSource(
            ref=str(len(self.docs) + 1), doc_set=result["doc_set"], page=result["page"],
            heading_path=list(result.get("heading_path") or []), lines=list(result["lines"]),
            url=result.get("url"), source=result.get("source"),
            content_path=result.get("content_path"), relevance=result.get("relevance", "low"),
            text=text, found_by_query=query)
        self.docs.append(doc)
        return doc

    def add_web(self, title: str, url: str, content: str, score: float | None,
                query: str) -> WebSource | None:
        if not url or any(w.url == url for w in self.web):
            return None
        web = WebSource(ref=f"W{len(self.web) + 1}", title=title or url, url=url,
                        content=content, score=score, query=query)
        self.web.append(web)
        return web

    def to_prompt(self) -> str:
        """The evidence block the synthesis prompt cites from."""
        parts = []
        for d, where in zip(self.citable_docs(), self.headers(), strict=False):
            url = f"\nURL: {d.url}" if d.url else ""
            parts.append(f"[{d.ref}] {where} (lines {d.lines[0]}-{d.lines[1]}){url}\n{d.text}")
        for w in self.web:
            parts.append(f"[{w.ref}] WEB: {w.title}\nURL: {w.url}\n{w.content}")
        return "\n\n-----\n\n".join(parts)

    def headers(self) -> list[str]:
        """Each citable section's header line as the prompt shows it (a model that copies
        one back has not cited anything)."""
        return [f"{d.doc_set} / {d.page} / {d.title}" for d in self.citable_docs()] + [f"WEB: {w.title}" for w in self.web]

    def texts(self) -> dict[str, str]:
        """ref -> the text the model was given under it (what a citation must match)."""
        out = {d.ref: f"{d.title}\n{d.text}" for d in self.citable_docs()}
        out.update({w.ref: f"{w.title}\n{w.content}" for w in self.web})
        return out

    def citable_docs(self) -> list[DocSource]:
        return self.docs if self.docs_in_prompt else []

    def citable_refs(self) -> set[str]:
        return {d.ref for d in self.citable_docs()} | {w.ref for w in self.web}

    def to_dicts(self) -> list[dict]:
        return [d.to_dict() for d in self.docs] + [w.to_dict() for w in self.web]


def read_section_text(docs_dir: Path, result: dict, char_budget: int) -> str:
    """The section's lines from docContent.md, clipped so the model never sees (and never
    copies) half a code block."""
    path = safe_join(docs_dir, result["doc_set"], result["page"], CONTENT_FILE)
    start, end = result["lines"]
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()[start - 1:end]
    return clip_outside_fences(lines, char_budget)


def clip_outside_fences(lines: list[str], char_budget: int) -> str:
    """Stop at the budget, but only between code blocks: a block under way is finished
    (up to 4x the budget, where it is closed with a marker)."""
    kept: list[str] = []
    size = 0
    in_fence = False
    for line in lines:
        grown = size + len(line) + 1
        if grown > char_budget and not in_fence:
            return "\n".join(kept + [CONTINUES])
        if grown > 4 * char_budget:
            return "\n".join(kept + ["```", CONTINUES])
        kept.append(line)
        size = grown
        if line.lstrip().startswith(FENCE_MARKERS):
            in_fence = not in_fence
    return "\n".join(kept)
