"""`doc4llm index`: bring the lexical index and the vectors of the chosen sets up to date."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path

from doc4llm.corpus.model import select_sets
from doc4llm.errors import NotFoundError
from doc4llm.index.build import WRITER_WAIT_S, sync


def build_index(docs_dir: Path, sets: list[str] | None = None, *, embedder: str | None = None,
                vectors: bool = True, progress: Callable[[str], None] | None = None) -> dict:
    t0 = time.perf_counter()
    chosen = select_sets(docs_dir, sets)
    if not chosen:
        raise NotFoundError(f"no doc sets in {docs_dir}", hint="import one: doc4llm import PATH --set NAME@VER")
    # a writer waits its turn; an explicit index run scans every page (no freshness shortcut)
    conn, report = sync(docs_dir, chosen, progress=progress, wait=WRITER_WAIT_S, full=True)
    out: dict = {"lexical": report.to_dict(), "vectors": {}}
    if vectors:
        from filelock import Timeout

        from doc4llm.config import setting
        from doc4llm.index.background import embed_sets, job_lock
        from doc4llm.index.embedders import get_embedder

        # `doc4llm index` is the one place that may take every core for the model
        emb = get_embedder(embedder or os.environ.get("DOC4LLM_EMBEDDER") or setting("search", "embedder"),
                           threads=os.cpu_count() or 1)
        if emb is not None:
            out["embedder"] = emb.id
            lock = job_lock(docs_dir, timeout=1)
            try:
                lock.acquire()
            except Timeout:  # a background job started by a search: it does the same work
                if progress:
                    progress("waiting for the background embedding job to finish (.doc4llm/embed.log)")
                lock = job_lock(docs_dir, timeout=-1)
                lock.acquire()
            try:
                made = embed_sets(docs_dir, [ds.name for ds in chosen], emb, _every(progress), conn=conn,
                                  prune=sets is None)
            finally:
                lock.release()
            out.update(made)
    from doc4llm.index.qdrant_store import configured, mirror

    if configured():  # experimental: mirror the index and its vectors into Qdrant
        out["qdrant"] = mirror(conn, docs_dir, progress)
    conn.close()
    out["seconds"] = round(time.perf_counter() - t0, 3)
    return out


def index_after_ingest(docs_dir: Path, written: list[str], present: list[str] = (), *, removed: bool = False,
                       progress: Callable[[str], None] | None = None):
    """The lexical index of sets `add`/`sync` just wrote, so the first search after them
    answers as fast as any other (it indexed 2,182 pages itself: 20.5 s after a 19-package
    sync). Sets in `present` that the index does not hold yet are indexed too; `removed`:
    sets went away and are purged. Returns the index SyncReport, or None when there was
    nothing to do (a second sync writes nothing, the index included). Vectors stay the
    background job's, started by the first search as before."""
    from doc4llm.corpus.model import list_sets
    from doc4llm.index.freshness import Memos
    from doc4llm.index.store import index_dir

    wanted = set(written)
    if present:  # what the last scans recorded (opening the database would write to the folder)
        have = set(Memos(docs_dir).data) if (index_dir(docs_dir) / "index.sqlite").is_file() else set()
        wanted |= {name for name in present if name not in have}
    if not wanted and not removed:
        return None
    chosen = [s for s in list_sets(docs_dir) if s.name in wanted]
    conn, report = sync(docs_dir, chosen, progress=progress, wait=WRITER_WAIT_S, full=True)
    conn.close()
    return report


_COUNTER = re.compile(r"\b(\d+)/(\d+) sections\b")


def _every(progress: Callable[[str], None] | None, seconds: float = 2.0) -> Callable[[str], None] | None:
    """Throttle counter lines ("... 40/1566 sections") to one every few seconds; other
    messages (a rebuild and why) and the last count of a task (N/N) always pass, so the
    count a task ends on is the one printed."""
    if progress is None:
        return None
    last = [0.0]

    def emit(msg: str) -> None:
        now = time.monotonic()
        counter = _COUNTER.search(msg)
        if not counter or counter.group(1) == counter.group(2):
            progress(msg)
        elif now - last[0] >= seconds:
            last[0] = now
            progress(msg)

    return emit
