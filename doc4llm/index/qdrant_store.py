"""EXPERIMENTAL: a doc4llm index held in Qdrant, so readers need no local index.

The default index is embedded (SQLite FTS5 + usearch files). For a team or a fleet that
already runs Qdrant (docs/fleet.md), `doc4llm index` publishes each doc set into Qdrant
and `QdrantBackend` answers every primitive of index/backend.py from it, with the same
numbers as SQLite:

- one collection per doc set version, `<prefix>_<set>_<hash>_v<N>`, read through the
  alias `<prefix>_<set>_<hash>`; a manifest collection `<prefix>__sets` holds one
  record per set (its alias, section and token counts, vector kinds, summary). Re-indexing
  one set never rewrites another.
- a point per section (id = the indexer's section id): the section row (title, heading
  path, line ranges, text, page facts, stored tokens) in the payload, keyword payloads
  for the grep levels (`tptoks` title+path tokens for L2, `ttoks` / `tpre` title tokens
  and 4-character prefixes for L1, `btoks` body tokens, `toks` all tokens, `slnames`
  code symbols), and three vectors: sparse `bm25` (FTS5's BM25 term weights, column
  weights 6 / 2.5 / 1, k1 1.2, b 0.75), sparse `bm25_body` (body-only BM25 for L3.2), dense
  `body` / `head` when the set has vectors.
- BM25 = sparse dot product with FTS5's IDF carried by the query. The term weights
  depend on the mean section length of the whole index, which changes when any set
  changes; each set records the mean it was built with (`avgdl`), and when it differs
  from today's, twice the candidates are fetched and rescored exactly from their stored
  tokens, so the scores stay FTS5's without rewriting the other sets (the candidate list
  is then near-exact: a small drift of the length normalisation reorders few sections;
  a set is rebuilt once its mean is more than REPIN_DRIFT away).

Updates are incremental: each point carries a hash of its payload and vectors; only
changed points are upserted and vanished ones deleted, in the live collection. A first
export, a change of vector kinds or dimensions, `rebuild=True` or a drifted mean builds
version N+1 in a new collection and then switches the alias in one atomic operation
(`update_collection_aliases`, which local mode supports too); readers resolve aliases per
query, so they see version N or N+1, never a half-built one; version N is deleted by the
next rebuild (a grace period for queries in flight).

Selection: `index.backend: qdrant` in doc4llm.yaml, or `DOC4LLM_QDRANT_URL` (a server or
cluster; API key from `DOC4LLM_QDRANT_API_KEY`) / `DOC4LLM_QDRANT_PATH` (qdrant-client's
local mode, same API, no server). `DOC4LLM_QDRANT_PREFIX` names the collections.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sqlite3
import warnings
import zlib
from collections import Counter

from doc4llm.index.backend import TITLE_CANDIDATES_MAX

K1, B = 1.2, 0.75
WEIGHTS = (6.0, 2.5, 1.0)  # title, path, body: the weights of the bm25 level
BODY_WEIGHTS = (0.0, 0.0, 1.0)  # L3.2 orders its candidates by body-only BM25
PREFIX_CHARS = 4  # the title-prefix index of L1 (search/levels.PREFIX_CHARS)
BATCH = 256
REPIN_DRIFT = 0.10  # rebuild a set when the index's mean length moved this much since
SCROLL_PAGE = 1024
EXPORT_KEY = "qdrant_export"
ROW_KEYS = ("id", "page_id", "set_name", "page", "idx", "title", "level", "heading_path", "start", "end",
            "subtree_end", "tokens", "words", "anchor", "url", "content_type", "text", "parent_id",
            "page_title", "page_source", "page_kind", "page_untitled", "tok_title", "tok_path", "tok_body")



def token_id(token: str) -> int:
    """A stable sparse index for a token (crc32; a collision merges two rare tokens)."""
    return zlib.crc32(token.encode("utf-8"))


def fts5_idf(n_docs: int, df: int) -> float:
    """FTS5's BM25 IDF (fts5_aux.c): log((N - n + 0.5) / (n + 0.5)), floored at 1e-6."""
    idf = math.log((n_docs - df + 0.5) / (df + 0.5))
    return idf if idf > 0 else 1e-6


def fts_tokens(text: str) -> list[str]:
    """How FTS5's unicode61 tokenizer (tokenchars '_') splits a query token."""
    return re.findall(r"\w+", text.lower())


def _tf(cols: tuple[str, str, str], weights: tuple[float, float, float]) -> tuple[Counter, int]:
    """(column-weighted term frequencies, section length in tokens) as FTS5 counts them."""
    tf: Counter = Counter()
    dl = 0
    for w, col in zip(weights, cols, strict=True):
        toks = col.split()
        dl += len(toks)
        if w:
            for t in toks:
                tf[t] += w
    return tf, dl


def _saturate(f: float, dl: int, avgdl: float) -> float:
    return f * (K1 + 1) / (f + K1 * (1 - B + B * dl / avgdl))


def bm25_score(cols: tuple[str, str, str], idf: dict[str, float], weights: tuple, avgdl: float) -> float:
    """FTS5's bm25() of one section for a query {token: IDF} (the exact rescoring)."""
    tf, dl = _tf(cols, weights)
    return sum(i * _saturate(tf[t], dl, avgdl) for t, i in idf.items() if tf.get(t))


def _sparse(cols: tuple[str, str, str], weights: tuple, avgdl: float):
    from qdrant_client import models

    tf, dl = _tf(cols, weights)
    ids: dict[int, float] = {}
    for t, f in tf.items():
        if f:
            ids[token_id(t)] = ids.get(token_id(t), 0.0) + _saturate(f, dl, avgdl)
    return models.SparseVector(indices=list(ids), values=list(ids.values()))


def configured() -> dict | None:
    """{"url": ...} or {"path": ...} when the Qdrant backend is selected, else None (no
    secret in it: it is recorded in the index)."""
    url, path = os.environ.get("DOC4LLM_QDRANT_URL"), os.environ.get("DOC4LLM_QDRANT_PATH")
    if not (url or path):
        from doc4llm.config import setting

        if (setting("index", "backend") or "sqlite") != "qdrant":
            return None
        url, path = setting("index", "qdrant_url"), setting("index", "qdrant_path")
    if url:
        return {"url": url}
    return {"path": path or os.path.expanduser("~/.cache/doc4llm/qdrant")}


def prefix() -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", os.environ.get("DOC4LLM_QDRANT_PREFIX") or "doc4llm")


def alias_of(set_name: str, pre: str | None = None) -> str:
    """A collection alias per set: readable, and unique (a hash of the exact name)."""
    slug = re.sub(r"[^A-Za-z0-9]+", "_", set_name).strip("_")[:48] or "set"
    return f"{pre or prefix()}_{slug}_{hashlib.sha256(set_name.encode()).hexdigest()[:8]}"


def _manifest_name(pre: str | None = None) -> str:
    return f"{pre or prefix()}__sets"


def _set_point_id(set_name: str) -> int:
    return int(hashlib.sha256(set_name.encode()).hexdigest()[:15], 16)


_OPEN: dict[str, object] = {}  # local mode allows one client per path per process


def client_for(where: dict):
    """One qdrant-client per location and process (closed at exit: its __del__ fails
    during interpreter teardown)."""
    key = json.dumps(where, sort_keys=True)
    if key not in _OPEN:
        from qdrant_client import QdrantClient

        if not _OPEN:
            import atexit

            atexit.register(close_all)
        if "url" in where:
            _OPEN[key] = QdrantClient(url=where["url"], api_key=os.environ.get("DOC4LLM_QDRANT_API_KEY") or None)
        else:
            _OPEN[key] = QdrantClient(path=where["path"])
    return _OPEN[key]


def close_all() -> None:
    for client in _OPEN.values():
        try:
            client.close()
        except Exception:  # closing is best effort
            pass
    _OPEN.clear()
    _BACKENDS.clear()


# -- publishing (the indexer) ---------------------------------------------------------
def index_stamp(conn: sqlite3.Connection) -> list[int]:
    """[sections, max section id, vectors, vector generations]: every index update changes
    it (rewritten pages get new ids; each vector save bumps its set's generation)."""
    row = conn.execute("SELECT count(*), coalesce(max(id), 0) FROM sections").fetchone()
    vec = conn.execute("SELECT (SELECT count(*) FROM vec_done), coalesce(sum(generation), 0) FROM vec_sets").fetchone()
    return [int(row[0]), int(row[1]), int(vec[0]), int(vec[1])]


def set_stamp(conn: sqlite3.Connection, set_name: str) -> str:
    """Changes whenever a page of the set or its vectors change (page ids and content
    signatures, vector generation and embedder)."""
    h = hashlib.sha256()
    for pid, sig in conn.execute("SELECT id, sig FROM pages WHERE set_name=? ORDER BY id", (set_name,)):
        h.update(f"{pid}:{sig};".encode())
    vec = conn.execute("SELECT embedder, generation FROM vec_sets WHERE set_name=?", (set_name,)).fetchone()
    h.update(repr(tuple(vec) if vec else None).encode())
    h.update(repr(conn.execute("SELECT count(*) FROM vec_done WHERE set_name=?", (set_name,)).fetchone()[0]).encode())
    return h.hexdigest()[:32]


def _set_rows(conn: sqlite3.Connection, set_name: str) -> list[dict]:
    rows = conn.execute(
        "SELECT s.id, s.page_id, s.set_name, s.page, s.idx, s.title, s.level, s.heading_path, s.start, s.end,"
        " s.subtree_end, s.tokens, s.words, s.anchor, s.url, s.content_type, s.text, s.parent_id,"
        " p.title AS page_title, p.source AS page_source, p.kind AS page_kind, p.untitled AS page_untitled,"
        " p.sig AS page_sig,"
        " f.title AS tok_title, f.path AS tok_path, f.body AS tok_body"
        " FROM sections s JOIN pages p ON p.id = s.page_id JOIN sec_fts f ON f.rowid = s.id"
        " WHERE s.set_name=? ORDER BY s.id", (set_name,)).fetchall()
    syms: dict[int, list] = {}
    for sid, lname, a, b, kind in conn.execute(
            "SELECT y.section_id, y.lname, y.start, y.end, y.kind FROM symbols y"
            " JOIN sections s ON s.id = y.section_id WHERE s.set_name=? ORDER BY y.rowid", (set_name,)):
        syms.setdefault(sid, []).append([lname, a, b, kind])
    out = []
    for r in rows:
        d = dict(r)
        d["heading_path"] = json.loads(d["heading_path"])
        d["syms"] = syms.get(d["id"], [])
        out.append(d)
    return out


def _payload(row: dict) -> dict:
    """The section row plus the keyword fields the grep levels filter on."""
    title, path, body = (row["tok_title"] or "").split(), (row["tok_path"] or "").split(), (row["tok_body"] or "").split()
    p = {k: row[k] for k in ROW_KEYS}
    p.update({
        "page_sig": row["page_sig"], "type": row["content_type"] or "prose", "syms": row["syms"],
        "toks": sorted(set(title) | set(path) | set(body)), "tptoks": sorted(set(title) | set(path)),
        "ttoks": sorted(set(title)), "btoks": sorted(set(body)),
        "tpre": sorted({t[:PREFIX_CHARS] for t in title if len(t) >= PREFIX_CHARS}),
        "slnames": sorted({s[0] for s in row["syms"]}), "dl": len(title) + len(path) + len(body),
    })
    return p


def _point_hash(payload: dict, dense: dict[str, list[float]], avgdl: float) -> str:
    h = hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode())
    h.update(repr(avgdl).encode())
    for kind in sorted(dense):
        h.update(kind.encode())
        h.update(json.dumps([round(x, 6) for x in dense[kind]]).encode())
    return h.hexdigest()[:24]


class Publisher:
    """Writes sets into Qdrant: per-set collections, the alias switch, the manifest."""

    def __init__(self, client, pre: str | None = None):
        self.client = client
        self.pre = pre or prefix()
        self.manifest = _manifest_name(self.pre)

    def _ensure_manifest(self) -> None:
        if not self.client.collection_exists(self.manifest):
            self.client.create_collection(self.manifest, vectors_config={})

    def records(self) -> dict[str, dict]:
        """{set name: manifest record} of every published set."""
        if not self.client.collection_exists(self.manifest):
            return {}
        return {p["set"]: p for p in _scroll_all(self.client, self.manifest, None, True)}

    def _create(self, name: str, dims: dict[str, int]) -> None:
        from qdrant_client import models

        self.client.create_collection(
            name,
            vectors_config={k: models.VectorParams(size=d, distance=models.Distance.COSINE) for k, d in dims.items()},
            sparse_vectors_config={"bm25": models.SparseVectorParams(), "bm25_body": models.SparseVectorParams()})
        with warnings.catch_warnings():  # local mode ignores payload indexes (and says so)
            warnings.simplefilter("ignore")
            for field in ("type", "toks", "tptoks", "ttoks", "tpre", "btoks", "slnames"):
                self.client.create_payload_index(name, field, models.PayloadSchemaType.KEYWORD)
            for field in ("page_id", "idx", "level"):
                self.client.create_payload_index(name, field, models.PayloadSchemaType.INTEGER)

    def publish_set(self, set_name: str, rows: list[dict], dense: dict[str, dict[int, list[float]]],
                    index_avgdl: float, meta: dict, rebuild: bool = False) -> dict:
        """Bring one set's collection to `rows`; returns {"upserted", "deleted", "rebuilt"}."""
        from qdrant_client import models

        self._ensure_manifest()
        alias = alias_of(set_name, self.pre)
        old = self.records().get(set_name)
        dims = {k: len(next(iter(v.values()))) for k, v in dense.items() if v}
        live = self._aliased(alias)
        drift = bool(old) and abs(old["avgdl"] / index_avgdl - 1.0) > REPIN_DRIFT
        fresh = rebuild or drift or live is None or not old or old.get("dims") != dims
        avgdl = index_avgdl if fresh else old["avgdl"]
        version = max([(old or {}).get("version", 0), *self._versions(alias)]) + (1 if fresh else 0)
        target = f"{alias}_v{version}" if fresh else live
        if fresh:
            if self.client.collection_exists(target):
                self.client.delete_collection(target)
            self._create(target, dims)
        have: dict[int, str] = {} if fresh else {
            int(p.id): (p.payload or {}).get("h", "") for p in _scroll_points(self.client, target, None, ["h"])}
        want: set[int] = set()
        points, upserted = [], 0
        for row in rows:
            sid = int(row["id"])
            want.add(sid)
            payload = _payload(row)
            vecs = {k: dense[k][sid] for k in dims if sid in dense[k]}
            payload["h"] = h = _point_hash(payload, vecs, avgdl)
            if have.get(sid) == h:
                continue
            cols = (row["tok_title"] or "", row["tok_path"] or "", row["tok_body"] or "")
            vector: dict = {"bm25": _sparse(cols, WEIGHTS, avgdl), "bm25_body": _sparse(cols, BODY_WEIGHTS, avgdl), **vecs}
            points.append(models.PointStruct(id=sid, vector=vector, payload=payload))
            if len(points) >= BATCH:
                self.client.upsert(target, points)
                upserted += len(points)
                points = []
        if points:
            self.client.upsert(target, points)
            upserted += len(points)
        gone = [sid for sid in have if sid not in want]
        if gone:
            self.client.delete(target, points_selector=models.PointIdsList(points=gone))
        tokens = sum(len((r["tok_title"] or "").split()) + len((r["tok_path"] or "").split())
                     + len((r["tok_body"] or "").split()) for r in rows)
        record = {**meta, "set": set_name, "alias": alias, "collection": target,
                  "version": version if fresh else old["version"], "sections": len(rows),
                  "tokens": tokens, "avgdl": avgdl, "dims": dims,
                  "vectors": sum(1 for r in rows if any(int(r["id"]) in dense[k] for k in dims))}
        if fresh:
            self._switch_alias(alias, target, live)
        self._write_record(record)
        if fresh:  # keep the version just replaced (a query in flight may still read it)
            for v in self._versions(alias):
                if v < version - 1:
                    self.client.delete_collection(f"{alias}_v{v}")
        return {"upserted": upserted, "deleted": len(gone), "rebuilt": fresh}

    def _versions(self, alias: str) -> list[int]:
        """Version numbers of the set's collections that exist."""
        pat = re.compile(re.escape(alias) + r"_v(\d+)$")
        return [int(m.group(1)) for c in self.client.get_collections().collections if (m := pat.match(c.name))]

    def _aliased(self, alias: str) -> str | None:
        for a in self.client.get_aliases().aliases:
            if a.alias_name == alias:
                return a.collection_name
        return None

    def _switch_alias(self, alias: str, target: str, live: str | None) -> None:
        """Point the alias at the new version in one atomic operation."""
        from qdrant_client import models

        ops: list = []
        if live is not None:
            ops.append(models.DeleteAliasOperation(delete_alias=models.DeleteAlias(alias_name=alias)))
        ops.append(models.CreateAliasOperation(create_alias=models.CreateAlias(collection_name=target, alias_name=alias)))
        self.client.update_collection_aliases(change_aliases_operations=ops)

    def _write_record(self, record: dict) -> None:
        from qdrant_client import models

        self.client.upsert(self.manifest, [models.PointStruct(id=_set_point_id(record["set"]), vector={},
                                                              payload=record)])

    def drop_set(self, set_name: str) -> bool:
        """Remove a set: its manifest record first (readers stop choosing it), then its
        alias and every version of its collection."""
        from qdrant_client import models

        rec = self.records().get(set_name)
        if rec is None:
            return False
        self.client.delete(self.manifest, points_selector=models.PointIdsList(points=[_set_point_id(set_name)]))
        if self._aliased(rec["alias"]) is not None:
            self.client.update_collection_aliases(change_aliases_operations=[
                models.DeleteAliasOperation(delete_alias=models.DeleteAlias(alias_name=rec["alias"]))])
        for v in self._versions(rec["alias"]):
            self.client.delete_collection(f"{rec['alias']}_v{v}")
        return True


def _scroll_points(client, name: str, flt, payload, limit: int | None = None):
    """Points in id order (the order of an FTS5 MATCH without ORDER BY)."""
    offset, seen = None, 0
    while True:
        page = SCROLL_PAGE if limit is None else min(SCROLL_PAGE, limit - seen)
        if page <= 0:
            return
        pts, offset = client.scroll(name, scroll_filter=flt, limit=page, offset=offset,
                                    with_payload=payload, with_vectors=False)
        yield from pts
        seen += len(pts)
        if offset is None:
            return


def _scroll_all(client, name: str, flt, payload) -> list[dict]:
    return [p.payload or {} for p in _scroll_points(client, name, flt, payload)]


def _dense_vectors(docs_dir, conn: sqlite3.Connection, set_name: str) -> tuple[dict[str, dict[int, list[float]]], str | None]:
    """({kind: {section id: vector}}, embedder id) of a set's current usearch vectors."""
    import numpy as np

    from doc4llm.index.vectors import load_indexes

    row = conn.execute("SELECT embedder FROM vec_sets WHERE set_name=? AND generation > 0", (set_name,)).fetchone()
    if not row:
        return {}, None
    idx = load_indexes(docs_dir, conn, set_name, row[0], for_update=True)
    out: dict[str, dict[int, list[float]]] = {}
    for kind, ix in (idx or {}).items():
        ks = np.asarray(ix.keys, dtype=np.uint64)
        if len(ks):
            vecs = np.asarray(ix.get(ks), dtype=np.float32)
            out[kind] = {int(k): [float(x) for x in v] for k, v in zip(ks, vecs, strict=True)}
    return out, row[0] if out else None


def mirror(conn: sqlite3.Connection, docs_dir, progress=None, rebuild: bool = False) -> int | None:
    """`doc4llm index`: publish the index's sets into the configured Qdrant (None when not
    configured). Only sets whose pages or vectors changed are touched; sets this index
    published before and no longer holds are dropped. Returns the points written."""
    where = configured()
    if where is None:
        return None
    from doc4llm.index.build import set_summaries
    from doc4llm.index.vectors import pending_sections

    pub = Publisher(client_for(where))
    row = conn.execute("SELECT value FROM meta WHERE key=?", (EXPORT_KEY,)).fetchone()
    record = json.loads(row[0]) if row else {}
    done = record.get("sets", {}) if record.get("where") == where else {}
    published = pub.records()
    names = [r[0] for r in conn.execute("SELECT DISTINCT set_name FROM pages ORDER BY set_name")]
    stamps = {name: set_stamp(conn, name) for name in names}
    todo = [n for n in names if rebuild or done.get(n) != stamps[n] or n not in published]
    rows = {n: _set_rows(conn, n) for n in todo}
    # BM25's N and mean length are those of every published set (FTS5: every indexed set)
    lengths = {n: sum(len(f"{r['tok_title'] or ''} {r['tok_path'] or ''} {r['tok_body'] or ''}".split())
                      for r in rows[n]) for n in todo}
    counts = {n: len(rows[n]) for n in todo}
    gone = [n for n in done if n not in stamps]
    for n, rec in published.items():
        if n not in counts and n not in gone:
            counts[n], lengths[n] = rec["sections"], rec["tokens"]
    n_all = sum(counts.values())
    avgdl = (sum(lengths.values()) / n_all) if n_all else 1.0
    written = 0
    summaries = set_summaries(conn, todo)
    for n in todo:
        dense, emb = _dense_vectors(docs_dir, conn, n)
        web = conn.execute("SELECT source FROM pages WHERE set_name=? AND source LIKE 'http%' LIMIT 1",
                           (n,)).fetchone()
        pending = len(pending_sections(conn, n)) if emb else len(rows[n])
        meta = {"embedder": emb, "summary": summaries.get(n) or {}, "web_source": web[0] if web else None,
                "stamp": stamps[n], "pending": pending}
        out = pub.publish_set(n, rows[n], dense, avgdl, meta, rebuild=rebuild)
        written += out["upserted"] + out["deleted"]
        if progress:
            how = "rebuilt" if out["rebuilt"] else "updated"
            progress(f"qdrant: {n} {how} ({out['upserted']} points written, {out['deleted']} deleted)")
    for n in gone:
        pub.drop_set(n)
        if progress:
            progress(f"qdrant: {n} dropped (no longer in the index)")
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (EXPORT_KEY, json.dumps(
        {"where": where, "prefix": pub.pre, "sets": stamps, "stamp": index_stamp(conn)})))
    return written


# -- reading ------------------------------------------------------------------------
_BACKENDS: dict[str, QdrantBackend] = {}


def backend_for(where: dict) -> QdrantBackend:
    key = json.dumps([where, prefix()], sort_keys=True)
    if key not in _BACKENDS:
        _BACKENDS[key] = QdrantBackend(client_for(where), prefix())
    return _BACKENDS[key]


def for_search(conn: sqlite3.Connection | None) -> QdrantBackend | None:
    """The Qdrant backend a search should read, else None (SQLite answers):
    - no local index (`conn` None): a stateless reader, when Qdrant holds sets;
    - a local index: only while Qdrant holds exactly what it last published from it."""
    where = configured()
    if where is None:
        return None
    if conn is not None:
        row = conn.execute("SELECT value FROM meta WHERE key=?", (EXPORT_KEY,)).fetchone()
        rec = json.loads(row[0]) if row else {}
        if rec.get("where") != where or rec.get("prefix") != prefix() or rec.get("stamp") != index_stamp(conn):
            return None  # not published yet, or the index changed since
    store = backend_for(where)
    store.refresh()
    return store if store.sets else None


class QdrantBackend:
    """index/backend.py's primitives over the published sets (one alias per set)."""

    def __init__(self, client, pre: str):
        self.client = client
        self.pre = pre
        self.sets: dict[str, dict] = {}
        self.n_all, self.avgdl = 0, 1.0
        self._counts: dict[tuple, int] = {}
        self._set_of: dict[int, str] = {}  # section id -> set, for every id this backend returned
        self._pages: dict[int, dict] = {}
        self._state: object = None

    def refresh(self) -> None:
        """Re-read the manifest (once per search): which sets, their aliases and stats."""
        recs = Publisher(self.client, self.pre).records()
        state = sorted((n, r.get("stamp"), r.get("version"), r.get("sections")) for n, r in recs.items())
        if state != self._state:
            self._state, self.sets = state, recs
            self._counts.clear()
            self.n_all = sum(r["sections"] for r in recs.values())
            self.avgdl = (sum(r["tokens"] for r in recs.values()) / self.n_all) if self.n_all else 1.0

    def set_names(self) -> list[str]:
        return sorted(self.sets)

    # -- counts --------------------------------------------------------------------
    def indexed_sets(self) -> frozenset[str]:
        return frozenset(self.sets)

    def section_count(self, sets: list[str]) -> int:
        return sum(self.sets[s]["sections"] for s in set(sets) if s in self.sets)

    def _df(self, field: str, token: str, sets) -> int:
        from qdrant_client import models

        total = 0
        for s in sorted(set(sets)):
            key = (field, token, s)
            if key not in self._counts:
                flt = models.Filter(must=[models.FieldCondition(key=field, match=models.MatchValue(value=token))])
                self._counts[key] = self.client.count(self.sets[s]["alias"], count_filter=flt, exact=True).count
            total += self._counts[key]
        return total

    def doc_freq(self, token: str, sets: list[str]) -> int:
        if not token or not sets:
            return 0
        sets = [s for s in sets if s in self.sets]
        parts = fts_tokens(token)
        if len(parts) <= 1:
            return self._df("toks", parts[0] if parts else token, sets)
        return self._phrase_df(parts, sets)

    def _phrase_df(self, parts: list[str], sets: list[str]) -> int:
        """FTS5 reads `"isn't"` as the phrase `isn t`: sections holding every part, the
        parts adjacent in one column (checked on the stored token streams)."""
        from qdrant_client import models

        key = ("phrase", " ".join(parts), tuple(sorted(sets)))
        if key not in self._counts:
            must = [models.FieldCondition(key="toks", match=models.MatchValue(value=p)) for p in dict.fromkeys(parts)]
            phrase = f" {' '.join(parts)} "
            self._counts[key] = sum(
                1 for p in self._scan(sets, [], must, ["tok_title", "tok_path", "tok_body"], 10**9)
                if any(phrase in f" {p.payload.get(c) or ''} " for c in ("tok_title", "tok_path", "tok_body")))
        return self._counts[key]

    # -- ranked levels ---------------------------------------------------------------
    def _ranked(self, using: str, field: str, weights: tuple, toks: list[str], sets: list[str],
                limit: int, payload: list[str]) -> list[tuple[int, float, dict]]:
        """(id, FTS5 BM25, payload) best first, over the sets' sparse vector `using`."""
        from qdrant_client import models

        uniq = list(dict.fromkeys(t for t in toks if t))
        sets = [s for s in sets if s in self.sets]
        if not uniq or not sets:
            return []
        idf = {t: fts5_idf(self.n_all, df) for t in uniq if (df := self._df(field, t, self.sets))}
        if not idf:
            return []
        q: dict[int, float] = {}
        for t, i in idf.items():
            q[token_id(t)] = q.get(token_id(t), 0.0) + i
        query = models.SparseVector(indices=list(q), values=list(q.values()))
        hits: list[tuple[int, float, dict]] = []
        for s in sets:
            exact = self.sets[s]["avgdl"] == self.avgdl
            need = payload if exact else [*payload, "tok_title", "tok_path", "tok_body"]
            res = self.client.query_points(self.sets[s]["alias"], query=query, using=using,
                                           limit=limit if exact else 2 * limit + 20, with_payload=need)
            for p in res.points:
                pl = p.payload or {}
                score = float(p.score) if exact else bm25_score(
                    (pl.get("tok_title") or "", pl.get("tok_path") or "", pl.get("tok_body") or ""),
                    idf, weights, self.avgdl)
                self._set_of[int(p.id)] = s
                hits.append((int(p.id), score, pl))
        hits.sort(key=lambda h: (-h[1], h[0]))
        return hits[:limit]

    def bm25(self, toks: list[str], sets: list[str], limit: int) -> dict[int, float]:
        return {sid: score for sid, score, _ in self._ranked("bm25", "toks", WEIGHTS, toks, sets, limit, [])}

    def body_rows(self, toks: list[str], sets: list[str], limit: int) -> list[tuple[int, str, str]]:
        return [(sid, p.get("tok_body") or "", p.get("text") or "")
                for sid, _, p in self._ranked("bm25_body", "btoks", BODY_WEIGHTS, toks, sets, limit, ["tok_body", "text"])]

    # -- filtered scans ----------------------------------------------------------------
    def _scan(self, sets: list[str], should: list, must: list, payload: list[str], limit: int) -> list:
        """Points matching the filter in the sets, merged in id order, at most `limit`."""
        from qdrant_client import models

        flt = models.Filter(should=should or None, must=must or None)
        out = []
        for s in sets:
            if s not in self.sets:
                continue
            for p in _scroll_points(self.client, self.sets[s]["alias"], flt, payload, limit):
                self._set_of[int(p.id)] = s
                out.append(p)
        out.sort(key=lambda p: int(p.id))
        return out[:limit]

    @staticmethod
    def _any(field: str, values: list) -> object:
        from qdrant_client import models

        return models.FieldCondition(key=field, match=models.MatchAny(any=list(values)))

    def title_candidates(self, toks: list[str], prefixes: list[str], sets: list[str]) -> dict[int, str]:
        """SQLite's order exactly: every heading matching a title token or prefix, ranked
        by FTS5's title-only BM25 (each token and each prefix a phrase with its own IDF),
        the best TITLE_CANDIDATES_MAX kept, then the page-level rows dropped. The order
        matters: rapidfuzz breaks ties at its limit by it."""
        should = ([self._any("ttoks", toks)] if toks else []) + ([self._any("tpre", prefixes)] if prefixes else [])
        if not should or not sets:
            return {}
        idf = {("t", t): fts5_idf(self.n_all, self._df("ttoks", t, self.sets)) for t in toks}
        idf.update({("p", p): fts5_idf(self.n_all, self._df("tpre", p, self.sets)) for p in prefixes})
        scored = []
        for p in self._scan(sets, should, [], ["title", "level", "tok_title", "dl"], 10**9):
            title = (p.payload.get("tok_title") or "").split()
            dl = p.payload.get("dl") or 0
            score = 0.0
            for (kind, x), i in idf.items():
                f = title.count(x) if kind == "t" else sum(1 for t in title if t.startswith(x))
                if f:
                    score += i * _saturate(f, dl, self.avgdl)
            scored.append((-score, int(p.id), p.payload))
        scored.sort(key=lambda x: (x[0], x[1]))
        return {sid: (pl.get("title") or "").lower() for _, sid, pl in scored[:TITLE_CANDIDATES_MAX]
                if (pl.get("level") or 0) > 0}

    def toc_rows(self, toks: list[str], sets: list[str], limit: int) -> list[tuple[int, str, str]]:
        toks = list(dict.fromkeys(t for t in toks if t))
        if not toks or not sets:
            return []
        pts = self._scan(sets, [], [self._any("tptoks", toks)], ["tok_path", "tok_title"], limit)
        return [(int(p.id), p.payload.get("tok_path") or "", p.payload.get("tok_title") or "") for p in pts]

    def symbol_rows(self, names: list[str], sets: list[str]) -> list[tuple[int, int, int, str]]:
        if not names or not sets:
            return []
        want = set(names)
        out = []
        for p in self._scan(sets, [], [self._any("slnames", names)], ["syms"], 10**9):
            # SQLite walks its lname index: by name, then in insertion order
            hits = sorted((s for s in p.payload.get("syms") or [] if s[0] in want), key=lambda s: s[0])
            out.extend((int(p.id), a, b, kind) for _, a, b, kind in hits)
        return out

    # -- rows --------------------------------------------------------------------------
    def section_rows(self, ids: list[int]) -> dict[int, dict]:
        by_set: dict[str, list[int]] = {}
        for sid in dict.fromkeys(int(i) for i in ids):
            for s in [self._set_of[sid]] if sid in self._set_of else list(self.sets):
                by_set.setdefault(s, []).append(sid)
        out: dict[int, dict] = {}
        for s, sids in by_set.items():
            todo = [i for i in sids if i not in out]
            if not todo or s not in self.sets:
                continue
            for p in self.client.retrieve(self.sets[s]["alias"], todo, with_payload=[*ROW_KEYS, "page_sig"]):
                d = {k: p.payload.get(k) for k in ROW_KEYS}
                self._set_of[int(p.id)] = s
                self._pages[d["page_id"]] = {"id": d["page_id"], "title": d["page_title"], "page": d["page"],
                                             "source": d["page_source"], "sig": p.payload.get("page_sig"),
                                             "kind": d.get("page_kind"),
                                             "set": s}
                out[int(p.id)] = d
        return out

    def _page_sets(self, page_ids: list[int]) -> list[str]:
        known = {self._pages[p]["set"] for p in page_ids if p in self._pages}
        return sorted(known) if all(p in self._pages for p in page_ids) else list(self.sets)

    def pages(self, page_ids: list[int]) -> list[dict]:
        missing = [p for p in page_ids if p not in self._pages]
        if missing:
            for p in self._scan(list(self.sets), [], [self._any("page_id", missing)], ["id"], 10**9):
                self.section_rows([int(p.id)])
        return [{k: v for k, v in self._pages[p].items() if k != "set"} for p in page_ids if p in self._pages]

    def page_headings(self, page_ids: list[int]) -> dict[int, list[str]]:
        from qdrant_client import models

        if not page_ids:
            return {}
        heads: dict[int, list[str]] = {}
        level = models.FieldCondition(key="level", range=models.Range(gt=1))
        for p in self._scan(self._page_sets(page_ids), [], [self._any("page_id", page_ids), level],
                            ["page_id", "title"], 10**9):
            heads.setdefault(p.payload["page_id"], []).append(p.payload.get("title") or "")
        return heads

    def line_span(self, page_id: int, lo_idx: int, hi_idx: int) -> tuple[int | None, int | None]:
        from qdrant_client import models

        must = [models.FieldCondition(key="page_id", match=models.MatchValue(value=page_id)),
                models.FieldCondition(key="idx", range=models.Range(gte=lo_idx, lte=hi_idx)),
                models.FieldCondition(key="level", range=models.Range(gt=0))]
        pts = self._scan(self._page_sets([page_id]), [], must, ["start", "end"], 10**9)
        if not pts:
            return None, None
        return min(p.payload["start"] for p in pts), max(p.payload["end"] for p in pts)

    def page_entries(self, page_ids: list[int]) -> dict[int, int]:
        from doc4llm.index.backend import ENTRY_MIN_WORDS

        if not page_ids:
            return {}
        best: dict[int, tuple[int, int]] = {}
        # `words` has no payload index: filter it here (a handful of named pages)
        for p in self._scan(self._page_sets(page_ids), [], [self._any("page_id", page_ids)],
                            ["page_id", "idx", "words"], 10**9):
            pid, idx = p.payload["page_id"], p.payload["idx"]
            if (p.payload.get("words") or 0) < ENTRY_MIN_WORDS:
                continue
            if pid not in best or idx < best[pid][0]:
                best[pid] = (idx, int(p.id))
        return {pid: sid for pid, (_, sid) in best.items()}

    def set_summaries(self, names: list[str]) -> dict[str, dict]:
        return {n: (self.sets.get(n) or {}).get("summary") or {} for n in names}

    def web_source(self, set_name: str) -> str | None:
        return (self.sets.get(set_name) or {}).get("web_source")

    # -- vectors -----------------------------------------------------------------------
    def vector_state(self, set_name: str) -> tuple[str | None, float]:
        """(embedder id, share of sections embedded) of a published set, as the indexer
        counted it (sections with no text to embed are not pending)."""
        rec = self.sets.get(set_name) or {}
        n = rec.get("sections") or 0
        return rec.get("embedder"), (1.0 - rec.get("pending", n) / n) if n else 1.0

    def vector_indexes(self, set_name: str, embedder_id: str | None) -> dict | None:
        """{kind: index} serving a set's vectors, shaped like the usearch indexes
        `vectors.search_vectors` reads; None without vectors of this embedder."""
        rec = self.sets.get(set_name) or {}
        if not embedder_id or rec.get("embedder") != embedder_id or not rec.get("vectors"):
            return None
        return {k: _KindIndex(self, k, set_name, rec["vectors"]) for k in rec.get("dims") or {}}

    def vector_search(self, kind: str, vector, k: int, sets: list[str],
                      content_type: str | None = None) -> list[tuple[int, float]]:
        """(section id, cosine similarity) best first, within the sets (and type)."""
        from qdrant_client import models

        flt = models.Filter(must=[models.FieldCondition(key="type", match=models.MatchValue(value=content_type))]) \
            if content_type else None
        hits = []
        for s in sets:
            if s not in self.sets:
                continue
            res = self.client.query_points(self.sets[s]["alias"], query=[float(x) for x in vector], using=kind,
                                           query_filter=flt, limit=k)
            for p in res.points:
                self._set_of[int(p.id)] = s
                hits.append((int(p.id), float(p.score)))
        hits.sort(key=lambda h: -h[1])
        return hits[:k]


class _KindIndex:
    """One vector kind of one set in Qdrant, searched like a usearch index."""

    def __init__(self, store: QdrantBackend, kind: str, set_name: str, n: int):
        self.store, self.kind, self.set_name, self.n = store, kind, set_name, n

    def __len__(self) -> int:
        return self.n

    def search(self, query, k: int):
        hits = self.store.vector_search(self.kind, query, k, [self.set_name])
        return _Matches([h[0] for h in hits], [1.0 - h[1] for h in hits])


class _Matches:
    def __init__(self, keys: list[int], distances: list[float]):
        self.keys, self.distances = keys, distances
