"""Index state per set for `doc4llm sets` (read-only; never builds anything)."""

from __future__ import annotations

from pathlib import Path

from doc4llm.index.store import open_store
from doc4llm.index.vectors import check_vectors


def index_states(docs_dir: Path) -> dict[str, str]:
    conn = open_store(docs_dir, create=False)
    if conn is None:
        return {}
    try:
        out = {}
        for name, n in conn.execute("SELECT set_name, count(*) FROM sections GROUP BY set_name"):
            done = conn.execute("SELECT count(*) FROM vec_done WHERE set_name=?", (name,)).fetchone()[0]
            emb = conn.execute("SELECT embedder FROM vec_sets WHERE set_name=?", (name,)).fetchone()
            # which embedder made the vectors: another one (--embedder) cannot use them
            made_by = f" ({emb[0]})" if emb and emb[0] else ""
            problem = check_vectors(docs_dir, conn, name)  # checksums, or shape and count
            if problem:  # damaged vectors are not counted as done: search cannot use them
                out[name] = (f"{n} sections, vectors DAMAGED{made_by} ({problem}; "
                             "`doc4llm index` rebuilds them)")
            else:
                out[name] = f"{n} sections, vectors {done}/{n}{made_by}"
        return out
    finally:
        conn.close()
