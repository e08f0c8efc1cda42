"""Embeddings by content: a vector is stored under a hash of the embedder id and the exact
text it embedded, never under a section id or a file time.

Why: section ids change whenever a page is re-parsed (a `cp -r` copy, a checkout, a
renamed page or set folder, a page edit that leaves most sections alone), and the model
is the only slow part of indexing. With vectors keyed by what was embedded, a rebuilt
section whose text is unchanged gets its vector back from here; only new text reaches
the model. The per-set usearch/matrix files (vectors.py) stay keyed by section id, and
are rebuilt from this cache in a moment.

One SQLite file next to the index, `.doc4llm/vector_cache.sqlite` (WAL: a background
embedding job writes while `doc4llm index` or another job reads). It is only a cache: a
damaged file is moved aside and started afresh, a wrong-sized entry is a miss, and the
index's own format changes do not touch it. Entries are float16, the precision the
usearch and matrix files hold anyway, so a vector from here equals a fresh one there.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from doc4llm.index.store import index_dir, make_index_dir

if TYPE_CHECKING:
    import numpy as np

CACHE_FILE = "vector_cache.sqlite"
_LOOKUP_BATCH = 500  # keys per SELECT (SQLite's default variable limit is 32766; stay small)


def content_key(embedder_id: str, text: str) -> bytes:
    """16 bytes of sha256 over the embedder id and the text (a NUL between them)."""
    return hashlib.sha256(f"{embedder_id}\0{text}".encode("utf-8", "surrogatepass")).digest()[:16]


class VectorCache:
    """{content key: float16 vector} for one docs dir."""

    def __init__(self, docs_dir: Path):
        d = index_dir(docs_dir)
        make_index_dir(d)
        self.path = d / CACHE_FILE
        self.conn = self._open()

    def _open(self) -> sqlite3.Connection:
        try:
            return _connect(self.path)
        except sqlite3.DatabaseError as exc:  # a damaged cache: set it aside, start again
            print(f"doc4llm: vector cache {self.path} is unreadable ({exc}); starting a new one",
                  file=sys.stderr)
            for suffix in ("", "-wal", "-shm"):
                p = Path(str(self.path) + suffix)
                if p.exists():
                    os.replace(p, Path(str(p) + ".broken"))
            return _connect(self.path)

    def get_many(self, keys: Iterable[bytes], dim: int) -> dict[bytes, np.ndarray]:
        """The cached vectors among `keys` (float32 rows of `dim`); a wrong-sized or
        non-finite entry counts as missing (it is overwritten when re-embedded)."""
        import numpy as np

        keys = list(dict.fromkeys(keys))
        out: dict[bytes, np.ndarray] = {}
        for i in range(0, len(keys), _LOOKUP_BATCH):
            part = keys[i : i + _LOOKUP_BATCH]
            rows = self.conn.execute(
                f"SELECT key, vec FROM vecs WHERE key IN ({','.join('?' * len(part))})", part)
            for key, blob in rows:
                if blob is None or len(blob) != 2 * dim:
                    continue
                vec = np.frombuffer(blob, dtype=np.float16).astype(np.float32)
                if np.isfinite(vec).all():
                    out[bytes(key)] = vec
        return out

    def missing(self, keys: Iterable[bytes], dim: int) -> list[bytes]:
        keys = list(dict.fromkeys(keys))
        have = self.get_many(keys, dim)
        return [k for k in keys if k not in have]

    def put_many(self, items: Iterable[tuple[bytes, np.ndarray]]) -> None:
        """Store vectors in one transaction (a killed job keeps every earlier batch)."""
        import numpy as np

        rows = [(key, np.asarray(vec, dtype=np.float16).tobytes()) for key, vec in items]
        if not rows:
            return
        with self.conn:
            self.conn.executemany("INSERT OR REPLACE INTO vecs(key, vec) VALUES (?, ?)", rows)

    def prune(self, keep: set[bytes]) -> int:
        """Delete every entry not in `keep`; return how many went."""
        with self.conn:
            self.conn.execute("CREATE TEMP TABLE IF NOT EXISTS keep (key BLOB PRIMARY KEY) WITHOUT ROWID")
            self.conn.execute("DELETE FROM keep")
            self.conn.executemany("INSERT OR IGNORE INTO keep VALUES (?)", ((k,) for k in keep))
            gone = self.conn.execute("DELETE FROM vecs WHERE key NOT IN (SELECT key FROM keep)").rowcount
            self.conn.execute("DELETE FROM keep")
        return gone

    def __len__(self) -> int:
        return self.conn.execute("SELECT count(*) FROM vecs").fetchone()[0]

    def close(self) -> None:
        self.conn.close()


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("CREATE TABLE IF NOT EXISTS vecs (key BLOB PRIMARY KEY, vec BLOB NOT NULL) WITHOUT ROWID")
        conn.execute("SELECT count(*) FROM vecs LIMIT 1").fetchone()
    except sqlite3.DatabaseError:
        conn.close()
        raise
    return conn
