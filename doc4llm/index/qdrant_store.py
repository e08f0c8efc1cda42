"""EXPERIMENTAL: the retrieval primitives of a doc4llm index held in Qdrant.

The default index is embedded (SQLite FTS5 + usearch files). For a team or a fleet that
already runs Qdrant (docs/fleet.md), this module mirrors an index into one Qdrant
collection and answers the primitives the ranking code needs, with the same numbers:

- `bm25(stems, sets, limit)`: FTS5's BM25 (column weights 6 / 2.5 / 1, k1 1.2, b 0.75)
  as a sparse dot product: each section stores one sparse vector whose values are its
  BM25 term weights (FTS5's saturation of the column-weighted term frequency, with the
  section's total token count and the collection's mean), and the query carries FTS5's
  IDF of each of its tokens, so the scores equal SQLite's (tests check it);
- `doc_freq(token, sets)`, `section_count(sets)`: exact counts with payload filters;
- `vector_search(kind, vector, k, sets)`: dense cosine search on the named vectors
  `body` / `head` (the usearch vectors of the same sections);
- payload `set`, `page`, `type`, `level` (keyword/integer payload indexes) filter every
  query by doc set, page or content type.

Selection: `index.backend: qdrant` in doc4llm.yaml, or `DOC4LLM_QDRANT_URL` (a server or
cluster) / `DOC4LLM_QDRANT_PATH` (qdrant-client's local mode, same API, no server).
`doc4llm index` then mirrors the index into the collection and records what it mirrored;
while that record matches the SQLite index, a search takes its BM25 signal and its
vector searches from Qdrant (else from SQLite and usearch, as by default). The grep
levels, section rows and counts still read the local index: README, Benchmarks →
"Qdrant backend", lists what is missing.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import warnings
import zlib
from collections import Counter

K1, B = 1.2, 0.75
WEIGHTS = (6.0, 2.5, 1.0)  # title, path, body: the weights of levels.bm25
COLLECTION = "doc4llm"
BATCH = 256


def token_id(token: str) -> int:
    """A stable sparse index for a token (crc32; a collision merges two rare tokens)."""
    return zlib.crc32(token.encode("utf-8"))


def fts5_idf(n_docs: int, df: int) -> float:
    """FTS5's BM25 IDF (fts5_aux.c): log((N - n + 0.5) / (n + 0.5)), floored at 1e-6."""
    idf = math.log((n_docs - df + 0.5) / (df + 0.5))
    return idf if idf > 0 else 1e-6


def configured() -> dict | None:
    """{"url": ...} or {"path": ...} when the Qdrant backend is selected, else None."""
    url, path = os.environ.get("DOC4LLM_QDRANT_URL"), os.environ.get("DOC4LLM_QDRANT_PATH")
    if not (url or path):
        from doc4llm.config import setting

        if (setting("index", "backend") or "sqlite") != "qdrant":
            return None
        url, path = setting("index", "qdrant_url"), setting("index", "qdrant_path")
    if url:
        return {"url": url}
    return {"path": path or os.path.expanduser("~/.cache/doc4llm/qdrant")}


class QdrantIndex:
    """One collection: a point per section (id = the section id of the SQLite index)."""

    def __init__(self, client, collection: str = COLLECTION):
        self.client = client
        self.collection = collection
        self.counts: dict[tuple, int] = {}  # counts per mirrored state (cleared on a new one)
        self.state: object = None

    @classmethod
    def open(cls, *, url: str | None = None, path: str | None = None, collection: str = COLLECTION):
        from qdrant_client import QdrantClient

        client = QdrantClient(url=url) if url else QdrantClient(path=path)
        return cls(client, collection)

    # -- building ----------------------------------------------------------------
    def export(self, conn: sqlite3.Connection, dense: dict[str, tuple] | None = None) -> int:
        """Replace the collection with the sections of the SQLite index (all sets: BM25's
        N and mean length are index-wide, as in FTS5). `dense` maps "body"/"head" to
        (section ids, float vectors). Returns the number of points written."""
        from qdrant_client import models

        rows = conn.execute(
            "SELECT s.id, s.set_name, s.page, s.level, s.content_type, f.title, f.path, f.body"
            " FROM sections s JOIN sec_fts f ON f.rowid = s.id ORDER BY s.id").fetchall()
        lengths = [sum(len(c.split()) for c in r[5:8]) for r in rows]
        avgdl = (sum(lengths) / len(lengths)) if rows else 1.0
        vec_of: dict[str, dict[int, list[float]]] = {}
        for kind, (keys, vecs) in (dense or {}).items():
            vec_of[kind] = {int(k): [float(x) for x in v] for k, v in zip(keys, vecs, strict=True)}
        dims = {kind: len(next(iter(v.values()))) for kind, v in vec_of.items() if v}
        self.counts.clear()
        if self.client.collection_exists(self.collection):
            self.client.delete_collection(self.collection)
        self.client.create_collection(
            self.collection,
            vectors_config={k: models.VectorParams(size=d, distance=models.Distance.COSINE) for k, d in dims.items()},
            sparse_vectors_config={"bm25": models.SparseVectorParams()})
        with warnings.catch_warnings():  # local mode ignores payload indexes (and says so)
            warnings.simplefilter("ignore")
            for field, schema in (("set", models.PayloadSchemaType.KEYWORD), ("page", models.PayloadSchemaType.KEYWORD),
                                  ("type", models.PayloadSchemaType.KEYWORD), ("toks", models.PayloadSchemaType.KEYWORD),
                                  ("level", models.PayloadSchemaType.INTEGER)):
                self.client.create_payload_index(self.collection, field, schema)
        points = []
        for r, dl in zip(rows, lengths, strict=True):
            tf: Counter = Counter()
            for w, col in zip(WEIGHTS, r[5:8], strict=True):
                for t in col.split():
                    tf[t] += w
            ids: dict[int, float] = {}
            norm = K1 * (1 - B + B * dl / avgdl)
            for t, f in tf.items():
                ids[token_id(t)] = ids.get(token_id(t), 0.0) + f * (K1 + 1) / (f + norm)
            vector: dict = {"bm25": models.SparseVector(indices=list(ids), values=list(ids.values()))}
            for kind in dims:
                if r[0] in vec_of[kind]:
                    vector[kind] = vec_of[kind][r[0]]
            points.append(models.PointStruct(id=r[0], vector=vector, payload={
                "set": r[1], "page": r[2], "level": r[3], "type": r[4] or "prose", "toks": sorted(tf)}))
            if len(points) >= BATCH:
                self.client.upsert(self.collection, points)
                points = []
        if points:
            self.client.upsert(self.collection, points)
        return len(rows)

    # -- primitives ----------------------------------------------------------------
    @staticmethod
    def _filter(sets: list[str] | None, **eq):
        from qdrant_client import models

        must = [models.FieldCondition(key="set", match=models.MatchAny(any=list(sets)))] if sets else []
        for key, value in eq.items():
            must.append(models.FieldCondition(key=key, match=models.MatchValue(value=value)))
        return models.Filter(must=must) if must else None

    def _count(self, key: tuple, flt) -> int:
        if key not in self.counts:
            self.counts[key] = self.client.count(self.collection, count_filter=flt, exact=True).count
        return self.counts[key]

    def section_count(self, sets: list[str] | None = None) -> int:
        return self._count(("n", tuple(sorted(sets or []))), self._filter(sets))

    def doc_freq(self, token: str, sets: list[str] | None = None) -> int:
        return self._count(("df", token, tuple(sorted(sets or []))), self._filter(sets, toks=token))

    def bm25(self, stems: list[str], sets: list[str], limit: int = 80) -> dict[int, float]:
        """{section id: FTS5 BM25 score} of the sections of `sets` holding any stem."""
        from qdrant_client import models

        uniq = list(dict.fromkeys(t for t in stems if t))
        if not uniq or not sets:
            return {}
        n = self.section_count()
        weights: dict[int, float] = {}
        for t in uniq:
            df = self.doc_freq(t)
            if df:
                weights[token_id(t)] = weights.get(token_id(t), 0.0) + fts5_idf(n, df)
        if not weights:
            return {}
        res = self.client.query_points(
            self.collection, query=models.SparseVector(indices=list(weights), values=list(weights.values())),
            using="bm25", query_filter=self._filter(sets), limit=limit)
        return {int(p.id): float(p.score) for p in res.points}

    def vector_search(self, kind: str, vector, k: int, sets: list[str] | None = None,
                      content_type: str | None = None) -> list[tuple[int, float]]:
        """(section id, cosine similarity) best first, within the sets (and type)."""
        eq = {"type": content_type} if content_type else {}
        res = self.client.query_points(self.collection, query=[float(x) for x in vector], using=kind,
                                       query_filter=self._filter(sets, **eq), limit=k)
        return [(int(p.id), float(p.score)) for p in res.points]

    def close(self) -> None:
        self.client.close()


# -- selection: which searches use the mirror ---------------------------------------
EXPORT_KEY = "qdrant_export"
_OPEN: dict[str, QdrantIndex] = {}  # local mode allows one client per path per process


def index_stamp(conn: sqlite3.Connection) -> list[int]:
    """[sections, max section id, vectors, vector generations]: every index update changes
    it (rewritten pages get new ids; each vector save bumps its set's generation)."""
    row = conn.execute("SELECT count(*), coalesce(max(id), 0) FROM sections").fetchone()
    vec = conn.execute("SELECT (SELECT count(*) FROM vec_done), coalesce(sum(generation), 0) FROM vec_sets").fetchone()
    return [int(row[0]), int(row[1]), int(vec[0]), int(vec[1])]


def open_configured(where: dict) -> QdrantIndex:
    key = json.dumps(where, sort_keys=True)
    if key not in _OPEN:
        if not _OPEN:  # close before interpreter teardown (the client's __del__ fails there)
            import atexit

            atexit.register(close_all)
        _OPEN[key] = QdrantIndex.open(**where)
    return _OPEN[key]


def close_all() -> None:
    for store in _OPEN.values():
        try:
            store.close()
        except Exception:  # closing is best effort
            pass
    _OPEN.clear()


def mirror(conn: sqlite3.Connection, docs_dir, progress=None) -> int | None:
    """`doc4llm index`: mirror the index into the configured Qdrant (None when not configured)."""
    where = configured()
    if where is None:
        return None
    store = open_configured(where)
    row = conn.execute("SELECT value FROM meta WHERE key=?", (EXPORT_KEY,)).fetchone()
    stamp = index_stamp(conn)
    if row and _matches(json.loads(row[0]), where, stamp):
        return 0
    dense = _dense_vectors(docs_dir, conn)
    n = store.export(conn, dense)
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                 (EXPORT_KEY, json.dumps({"where": where, "stamp": stamp, "dense": sorted(dense)})))
    if progress:
        progress(f"mirrored {n} sections into Qdrant ({next(iter(where.values()))})")
    return n


def for_search(conn: sqlite3.Connection) -> QdrantIndex | None:
    """The Qdrant mirror when it is configured and holds exactly this index, else None."""
    where = configured()
    if where is None:
        return None
    row = conn.execute("SELECT value FROM meta WHERE key=?", (EXPORT_KEY,)).fetchone()
    stamp = index_stamp(conn)
    if not row or not _matches(json.loads(row[0]), where, stamp):
        return None  # not mirrored yet, or the index changed since: SQLite answers
    store = open_configured(where)
    if store.state != stamp:
        store.counts.clear()
        store.state = stamp
    return store


def _matches(record: dict, where: dict, stamp: list[int]) -> bool:
    return record.get("where") == where and record.get("stamp") == stamp


def vector_indexes(conn: sqlite3.Connection, set_name: str) -> dict | None:
    """{kind: index} serving a set's vectors from the mirror, shaped like the usearch
    indexes `vectors.search_vectors` reads; None when not configured or not mirrored."""
    store = for_search(conn)
    if store is None:
        return None
    row = conn.execute("SELECT value FROM meta WHERE key=?", (EXPORT_KEY,)).fetchone()
    kinds = json.loads(row[0]).get("dense") or []
    n = conn.execute("SELECT count(*) FROM vec_done WHERE set_name=?", (set_name,)).fetchone()[0]
    return {k: _KindIndex(store, k, set_name, n) for k in kinds} if kinds and n else None


class _KindIndex:
    """One vector kind of one set in Qdrant, searched like a usearch index."""

    def __init__(self, store: QdrantIndex, kind: str, set_name: str, n: int):
        self.store, self.kind, self.set_name, self.n = store, kind, set_name, n

    def __len__(self) -> int:
        return self.n

    def search(self, query, k: int):
        hits = self.store.vector_search(self.kind, query, k, [self.set_name])
        return _Matches([h[0] for h in hits], [1.0 - h[1] for h in hits])


class _Matches:
    def __init__(self, keys: list[int], distances: list[float]):
        self.keys, self.distances = keys, distances


def _dense_vectors(docs_dir, conn: sqlite3.Connection) -> dict[str, tuple]:
    """The current usearch vectors of every set with vectors: {kind: (ids, vectors)}."""
    import numpy as np

    from doc4llm.index.vectors import load_indexes

    keys: dict[str, list] = {}
    vecs: dict[str, list] = {}
    for name, emb in conn.execute("SELECT set_name, embedder FROM vec_sets WHERE generation > 0").fetchall():
        idx = load_indexes(docs_dir, conn, name, emb, for_update=True)
        for kind, ix in (idx or {}).items():
            ks = np.asarray(ix.keys, dtype=np.uint64)
            if len(ks):
                keys.setdefault(kind, []).extend(int(k) for k in ks)
                vecs.setdefault(kind, []).extend(np.asarray(ix.get(ks), dtype=np.float32))
    return {k: (keys[k], vecs[k]) for k in keys}
