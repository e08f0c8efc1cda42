"""Section and heading vectors in usearch, one pair of files per doc set.

Files live in `.doc4llm/vectors/<set-hash>.<generation>.{body,head}.usearch`. A build
writes new files under the next generation and commits the generation number in the
database only after both files are renamed into place, so a crash or a concurrent
search always sees a complete pair. Embedding is resumable: sections that already have
vectors (table vec_done) are skipped, and progress is saved every batch window.

What the model returns is kept by content (vector_cache.py: a hash of the embedder id and
the embedded text), so a section whose text was embedded before, under whatever section
id, set or file time, gets its vector from there and only new text is embedded:
`embed_missing` fills the cache without the index lock, `build_vectors` assembles the
files from it under the lock.

Every generation also writes `<set-hash>.<generation>.sha256.json`, the checksums of its
four files, before the generation is committed. Search and `doc4llm sets` verify them:
a damaged file is reported (search answers lexically) and the next build rebuilds the
set's vectors from scratch instead of adding to a corrupt index.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from doc4llm.corpus.atomic import file_sha256
from doc4llm.index.sectiontext import own_text
from doc4llm.index.store import index_dir
from doc4llm.index.vector_cache import VectorCache, content_key

if TYPE_CHECKING:
    import numpy as np

BODY_WORDS = 220  # words of section text embedded with its heading path
KINDS = ("body", "head")
MIN_WORDS = 5  # sections with less own text (container headings) get no vectors
# a build of at least this many sections may embed on worker processes (one per core);
# their start (~1 s each) would dominate a smaller one
PARALLEL_MIN_SECTIONS = 2000


def _set_key(set_name: str) -> str:
    return hashlib.sha256(set_name.encode()).hexdigest()[:16]


def vector_paths(docs_dir: Path, set_name: str, generation: int) -> dict[str, Path]:
    d = index_dir(docs_dir) / "vectors"
    return {k: d / f"{_set_key(set_name)}.{generation}.{k}.usearch" for k in KINDS}


def drop_vector_files(docs_dir: Path, set_name: str) -> None:
    """Delete every vector file of a set that left the docs (its row is gone already)."""
    d = index_dir(docs_dir) / "vectors"
    if d.is_dir():
        for p in d.glob(f"{_set_key(set_name)}.*"):
            p.unlink(missing_ok=True)


def heading_label(page_title: str, heading_path: list[str]) -> str:
    return " > ".join(heading_path if heading_path[:1] == [page_title] else [page_title, *heading_path])


def body_text(page_title: str, heading_path: list[str], text: str, max_words: int = BODY_WORDS) -> str:
    """What a section's body vector sees: its heading path and its first words.

    An embedder may ask for fewer words (`body_words`): MiniLM reads 128 tokens, so
    words past ~100 would only cost tokenizer time."""
    words = own_text(text).split()
    return f"{heading_label(page_title, heading_path)}\n{' '.join(words[:max_words])}"


def head_text(page_title: str, heading_path: list[str]) -> str:
    return heading_label(page_title, heading_path)


def _usearch(embedder_id: str):
    """usearch's Index class, importing onnxruntime first when it is installed: it crashes
    when imported after usearch (embed_onnx.import_runtime), and a process that loads
    vectors of one embedder may embed with minilm later (a long-lived server, an `ask`, a
    test run), so the order is fixed whatever `embedder_id` is (~0.1 s, once, and only
    where usearch loads: builds and large sets)."""
    from doc4llm.index.embed_onnx import import_runtime

    import_runtime()
    from usearch.index import Index

    return Index


def _new_index(dim: int, embedder_id: str = ""):
    return _usearch(embedder_id)(ndim=dim, metric="cos", dtype="f16")


# below this many vectors a query reads a plain matrix copy; above it, usearch HNSW.
# Measured (dim 384, 1 thread): at 20k a matrix loads in ~24 ms and answers in ~7 ms
# per kind, usearch restores in ~2 ms and answers in ~2 ms after a one-off ~45 ms CPU
# import; at 50k the matrix is 10 ms a query and 100k 18 ms, HNSW stays at ~2 ms.
BRUTE_FORCE_MAX = 20_000
# ...and when the sets a search reads hold more than BRUTE_FORCE_MAX vectors together, every
# set of at least this many goes to HNSW too: 5 sets of 20k cost 5 matrix scans a kind
# (~7 ms each) where HNSW answers each in ~2 ms; smaller sets stay cheaper as a matrix
HNSW_SET_MIN = 5_000


class MatrixIndex:
    """A set's vectors as one float16 matrix: exact cosine search with a numpy dot.

    usearch is the index of record (and serves large sets); for small sets its import
    alone (~200 ms) would dominate a one-query process, so each save also writes this
    copy, which loads in a millisecond."""

    def __init__(self, source: Path | bytes):
        import io

        import numpy as np

        with np.load(io.BytesIO(source) if isinstance(source, bytes) else source) as data:
            self.keys = data["keys"]
            self.vectors = data["vectors"].astype(np.float32)

    def __len__(self) -> int:
        return len(self.keys)

    def search(self, query, k: int):
        import numpy as np

        sims = self.vectors @ np.asarray(query, dtype=np.float32)
        top = np.argsort(-sims)[:k]
        return _Matches(self.keys[top], 1.0 - sims[top])


class _Matches:
    def __init__(self, keys, distances):
        self.keys, self.distances = keys, distances


def matrix_paths(docs_dir: Path, set_name: str, generation: int) -> dict[str, Path]:
    return {k: p.with_suffix(".npz") for k, p in vector_paths(docs_dir, set_name, generation).items()}


def sums_path(docs_dir: Path, set_name: str, generation: int) -> Path:
    return index_dir(docs_dir) / "vectors" / f"{_set_key(set_name)}.{generation}.sha256.json"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_sums(docs_dir: Path, set_name: str, generation: int) -> dict[str, str] | None:
    """The recorded checksums by file name; None for a generation written before checksums."""
    import json

    p = sums_path(docs_dir, set_name, generation)
    if not p.is_file():
        return None
    try:
        sums = json.loads(p.read_text(encoding="utf-8"))
        return sums if isinstance(sums, dict) else {}
    except (OSError, ValueError):
        return {}  # an unreadable checksum file proves nothing: every file fails


class CorruptVectors(Exception):
    """A vector file does not match its recorded checksum (or is missing)."""


def check_vectors(docs_dir: Path, conn: sqlite3.Connection, set_name: str) -> str | None:
    """What is wrong with the set's current vector files, or None (also when it has none).

    Reads every file in full: for `doc4llm sets`, `doc4llm index` and tests; a search
    verifies only the files it loads (load_indexes). Without a checksum file (deleted, or a
    generation older than checksums) the files are opened and checked for shape and count."""
    row = conn.execute("SELECT embedder, dim, generation FROM vec_sets WHERE set_name=?", (set_name,)).fetchone()
    if not row or not row["generation"]:
        return None
    generation = row["generation"]
    sums = _read_sums(docs_dir, set_name, generation)
    files = [*vector_paths(docs_dir, set_name, generation).values(),
             *matrix_paths(docs_dir, set_name, generation).values()]
    if sums is None:
        missing = [p.name for p in files[:2] if not p.is_file()]
        if missing:
            return f"missing vector file {missing[0]}"
        return _structure_problem(docs_dir, conn, set_name, row)
    for p in files:
        if not p.is_file():
            return f"missing vector file {p.name}"
        if sums.get(p.name) != file_sha256(p):
            return f"checksum mismatch in {p.name}"
    return None


def expected_vectors(conn: sqlite3.Connection, set_name: str) -> int:
    """How many vectors of each kind a set's files must hold at least: one for every
    section recorded as embedded that has enough words. (More is fine: vectors of
    sections removed since the last build stay until the next one.)"""
    return conn.execute("SELECT count(*) FROM vec_done v JOIN sections s ON s.id = v.section_id"
                        " WHERE v.set_name=? AND coalesce(s.words, 0) >= ?", (set_name, MIN_WORDS)).fetchone()[0]


def shape_problem(indexes: dict, dim: int, expected: int) -> str | None:
    """What is wrong with loaded vectors, read from their shape alone, or None.

    The checksum file catches any changed byte, but it can be deleted with the damage, and a
    truncated or swapped file must not pass as 'fewer vectors' (search would silently lose
    them): both kinds present, the recorded dimension, one key per row, and at least as many
    vectors as the index database says were embedded."""
    for kind in KINDS:
        idx = indexes.get(kind)
        if idx is None:
            return f"no {kind} vectors"
        if isinstance(idx, MatrixIndex):
            keys, vecs = idx.keys, idx.vectors
            if keys.ndim != 1 or vecs.ndim != 2 or vecs.shape != (len(keys), dim):
                return (f"{kind} matrix has shape {tuple(vecs.shape)} for {len(keys)} keys, "
                        f"expected ({len(keys)}, {dim})")
        elif idx.ndim != dim:
            return f"{kind} vectors have dimension {idx.ndim}, expected {dim}"
        if len(idx) < expected:
            return f"{kind} vectors hold {len(idx)} of the {expected} embedded sections (truncated?)"
    return None


def _structure_problem(docs_dir: Path, conn: sqlite3.Connection, set_name: str, row: sqlite3.Row) -> str | None:
    """Open every vector file of the current generation and check its shape and count."""
    generation = row["generation"]
    expected = expected_vectors(conn, set_name)
    sets: list[tuple[str, dict]] = []
    try:
        # as for a build (check_vectors runs before one): the embedder's runtime loads first
        Index = _usearch(row["embedder"] or "")
        sets.append(("usearch", {k: Index.restore(str(p), view=True)
                                 for k, p in vector_paths(docs_dir, set_name, generation).items()}))
        mats = matrix_paths(docs_dir, set_name, generation)
        if all(p.is_file() for p in mats.values()):  # generations before the matrix copy have none
            sets.append(("matrix", {k: MatrixIndex(p) for k, p in mats.items()}))
    except Exception as exc:  # usearch and numpy raise their own errors on a cut file
        return f"unreadable vector file ({exc})"
    for what, indexes in sets:
        problem = shape_problem(indexes, row["dim"], expected)
        if problem:
            return f"{what}: {problem}"
    return None


def _verified_bytes(path: Path, sums: dict[str, str] | None) -> bytes:
    data = path.read_bytes()
    if sums is not None and sums.get(path.name) != _sha256(data):
        raise CorruptVectors(f"checksum mismatch in {path.name}")
    return data


def load_indexes(docs_dir: Path, conn: sqlite3.Connection, set_name: str, embedder_id: str,
                 for_update: bool = False, searched_total: int = 0) -> dict | None:
    """The current vector files of a set (usearch, memory-mapped; or the matrix copy for
    small sets when only searching), or None when there are none usable.

    `searched_total`: vectors of all the sets the search reads (see HNSW_SET_MIN).

    Files are checked against their recorded checksums as they are read; a mismatch
    raises CorruptVectors (callers report it: search goes lexical, a build starts over)."""
    row = conn.execute("SELECT embedder, dim, generation FROM vec_sets WHERE set_name=?",
                       (set_name,)).fetchone()
    if not row or row["embedder"] != embedder_id or not row["generation"]:
        return None
    sums = _read_sums(docs_dir, set_name, row["generation"])
    expected = expected_vectors(conn, set_name)
    if not for_update:
        n = conn.execute("SELECT count(*) FROM vec_done WHERE set_name=?", (set_name,)).fetchone()[0]
        mats = matrix_paths(docs_dir, set_name, row["generation"])
        small = n <= BRUTE_FORCE_MAX and (searched_total <= BRUTE_FORCE_MAX or n < HNSW_SET_MIN)
        if small and all(p.is_file() for p in mats.values()):
            try:
                return _checked({k: MatrixIndex(_verified_bytes(p, sums)) for k, p in mats.items()},
                                row["dim"], expected)
            except CorruptVectors:
                raise
            except Exception as exc:  # a file that is there but does not load is damaged
                raise CorruptVectors(f"unreadable vector file ({exc})") from None
    paths = vector_paths(docs_dir, set_name, row["generation"])
    if not all(p.is_file() for p in paths.values()):
        raise CorruptVectors(f"missing vector file of generation {row['generation']}")
    if sums is not None:
        for p in paths.values():  # a memory-mapped file is hashed once on open
            if sums.get(p.name) != file_sha256(p):
                raise CorruptVectors(f"checksum mismatch in {p.name}")
    Index = _usearch(embedder_id)
    try:
        indexes = {k: Index.restore(str(p), view=True) for k, p in paths.items()}
    except Exception as exc:
        raise CorruptVectors(f"unreadable vector file ({exc})") from None
    return _checked(indexes, row["dim"], expected)


def _checked(indexes: dict, dim: int, expected: int) -> dict:
    problem = shape_problem(indexes, dim, expected)
    if problem:
        raise CorruptVectors(problem)
    return indexes


_SECTION_COLUMNS = "s.id, s.heading_path, s.text, s.words, s.start, p.title AS page_title"


def all_sections(conn: sqlite3.Connection, set_name: str) -> list[sqlite3.Row]:
    return conn.execute(f"SELECT {_SECTION_COLUMNS} FROM sections s JOIN pages p ON p.id = s.page_id"
                        " WHERE s.set_name=? ORDER BY s.id", (set_name,)).fetchall()


def pending_sections(conn: sqlite3.Connection, set_name: str) -> list[sqlite3.Row]:
    return conn.execute(
        "SELECT s.id, s.heading_path, s.text, s.words, s.start, p.title AS page_title FROM sections s"
        " JOIN pages p ON p.id = s.page_id"
        " LEFT JOIN vec_done v ON v.section_id = s.id"
        " WHERE s.set_name=? AND v.section_id IS NULL ORDER BY s.id", (set_name,)).fetchall()


def section_texts(rows: list[sqlite3.Row], words: int) -> list[str]:
    """The rows' body texts, then their heading labels: what the model reads, two a section."""
    import json

    paths = [json.loads(r["heading_path"]) for r in rows]
    return [*(body_text(r["page_title"], p, r["text"], words) for r, p in zip(rows, paths, strict=True)),
            *(heading_label(r["page_title"], p) for r, p in zip(rows, paths, strict=True))]


def _embeddable(conn: sqlite3.Connection, set_name: str, embedder_id: str) -> list[sqlite3.Row]:
    """The sections that need vectors from this embedder and get them (enough words of
    their own): the pending ones, or all when another embedder made the set's vectors."""
    made_by = conn.execute("SELECT embedder FROM vec_sets WHERE set_name=?", (set_name,)).fetchone()
    rows = pending_sections(conn, set_name) if not made_by or made_by[0] in (None, embedder_id) \
        else all_sections(conn, set_name)
    return [r for r in rows if (r["words"] or 0) >= MIN_WORDS]


def cached_vectors(cache: VectorCache, embedder, jobs: Iterator[list[str]], parallel: bool = False,
                   stats: dict | None = None) -> Iterator[np.ndarray]:
    """For each job (a list of texts), its (len, dim) vectors: those the content cache
    holds, the rest embedded now and added to the cache, job by job (a stopped build
    keeps what it embedded). `parallel`: misses go through embedder.embed_chunks
    (worker processes). `stats["embedded"]` counts the texts the model saw."""
    from collections import deque

    import numpy as np

    eid, dim = embedder.id, embedder.dim
    waiting: deque = deque()

    def misses() -> Iterator[list[str]]:
        for texts in jobs:
            keys = [content_key(eid, t) for t in texts]
            hits = cache.get_many(keys, dim)
            todo = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in hits))
            waiting.append((keys, hits, todo))
            yield todo

    if parallel and hasattr(embedder, "embed_chunks"):
        fresh = embedder.embed_chunks(misses())  # worker processes (embed_onnx.py)
    else:
        fresh = (embedder.embed_passages(t) if t else np.zeros((0, dim), np.float32) for t in misses())
    try:
        for vecs in fresh:
            keys, hits, todo = waiting.popleft()
            new = {content_key(eid, t): np.asarray(v, dtype=np.float32) for t, v in zip(todo, vecs, strict=True)}
            cache.put_many(new.items())
            if stats is not None:
                stats["embedded"] = stats.get("embedded", 0) + len(todo)
            yield np.stack([hits[k] if k in hits else new[k] for k in keys]) if keys else \
                np.zeros((0, dim), np.float32)
    finally:
        close = getattr(fresh, "close", None)
        if close:
            close()  # a parallel build stops its workers here


def embed_missing(docs_dir: Path, conn: sqlite3.Connection, set_name: str, embedder,
                  progress: Callable[[str], None] | None = None, batch: int = 32,
                  stats: dict | None = None) -> int:
    """Fill the content cache with the vectors of the set's pending sections; return how
    many texts the model embedded.

    Needs no index lock: it only reads the index (a snapshot) and writes the cache, so a
    long embedding never blocks a search's index update. build_vectors then assembles the
    set's files from the cache under the lock, in a moment."""
    todo = _embeddable(conn, set_name, embedder.id)
    if not todo:
        return 0
    words = getattr(embedder, "body_words", BODY_WORDS)
    stats = stats if stats is not None else {}
    before = stats.get("embedded", 0)
    cache = VectorCache(docs_dir)
    try:
        # which sections have a text the cache lacks (texts are rebuilt below for those
        # only: holding every text of a 100k-section set at once would cost ~200 MB)
        need: list[sqlite3.Row] = []
        for i in range(0, len(todo), 2048):
            rows = todo[i : i + 2048]
            texts = section_texts(rows, words)
            keys = [content_key(embedder.id, t) for t in texts]
            absent = set(cache.missing(keys, embedder.dim))
            need.extend(r for j, r in enumerate(rows) if keys[j] in absent or keys[j + len(rows)] in absent)
        if not need:
            return 0
        if progress:
            progress(f"{set_name}: embedding {len(need)} of {len(todo)} sections "
                     f"({len(todo) - len(need)} from the vector cache)")
        chunks = [need[i : i + batch] for i in range(0, len(need), batch)]
        jobs = (section_texts(c, words) for c in chunks)
        done = 0
        for chunk, _ in zip(chunks, cached_vectors(cache, embedder, jobs,  # noqa: B905
                                                   len(need) >= PARALLEL_MIN_SECTIONS, stats)):
            done += len(chunk)
            if progress:
                progress(f"{set_name}: embedded {done}/{len(need)} sections")
    finally:
        cache.close()
    return stats.get("embedded", 0) - before


# the content cache is pruned when it holds more than this many entries per live text
# (plus a floor): old texts are kept for a while (a page edited back, a set re-imported),
# and pruning costs a pass over every section's text, so it runs rarely
PRUNE_RATIO = 2.0
PRUNE_FLOOR = 2000


def prune_cache(docs_dir: Path, conn: sqlite3.Connection, embedder) -> int:
    """Drop cached vectors no section of the index uses (with this embedder), when the
    cache has grown past PRUNE_RATIO times what is live; return how many went.
    Call with every set of the docs dir indexed (an unindexed set's texts would go)."""
    cache = VectorCache(docs_dir)
    try:
        live = conn.execute("SELECT count(*) FROM sections WHERE words >= ?", (MIN_WORDS,)).fetchone()[0]
        if len(cache) <= PRUNE_RATIO * 2 * live + PRUNE_FLOOR:
            return 0
        words = getattr(embedder, "body_words", BODY_WORDS)
        keep: set[bytes] = set()
        for (set_name,) in conn.execute("SELECT DISTINCT set_name FROM sections").fetchall():
            rows = [r for r in all_sections(conn, set_name) if (r["words"] or 0) >= MIN_WORDS]
            for i in range(0, len(rows), 2048):
                keep.update(content_key(embedder.id, t) for t in section_texts(rows[i : i + 2048], words))
        return cache.prune(keep)
    finally:
        cache.close()


def build_vectors(docs_dir: Path, conn: sqlite3.Connection, set_name: str, embedder,
                  progress: Callable[[str], None] | None = None, batch: int = 32,
                  save_every_s: float = 20.0, stats: dict | None = None) -> int:
    """Give the set's pending sections vectors; return how many sections got them.

    Vectors come from the content cache when their text was embedded before (by any
    set, under any section id), else from the embedder (then cached). Call under the
    index lock. A different embedder than the one recorded rebuilds the set's vectors
    from scratch (with a message)."""
    import json

    import numpy as np

    row = conn.execute("SELECT embedder, dim, generation FROM vec_sets WHERE set_name=?",
                       (set_name,)).fetchone()
    generation = row["generation"] if row else 0
    indexes = None
    if row and row["embedder"] == embedder.id and generation:
        try:
            problem = check_vectors(docs_dir, conn, set_name)
            current = None if problem else load_indexes(docs_dir, conn, set_name, embedder.id, for_update=True)
        except CorruptVectors as exc:
            problem, current = str(exc), None
        if problem and progress:
            progress(f"{set_name}: vector files are damaged ({problem}); rebuilding the vectors")
        if current is not None and _up_to_date(docs_dir, conn, set_name, current, generation):
            return 0
        if current is not None:
            indexes = {}
            for k, idx in current.items():  # copy into RAM so we can add and remove
                fresh = _new_index(embedder.dim, embedder.id)
                if len(idx):
                    keys = np.asarray(idx.keys, dtype=np.uint64)
                    fresh.add(keys, np.asarray(idx.get(keys), dtype=np.float32))
                indexes[k] = fresh
    if indexes is None:
        if row and row["embedder"] != embedder.id and progress:
            progress(f"{set_name}: embedder changed ({row['embedder']} -> {embedder.id}); rebuilding vectors")
        conn.execute("DELETE FROM vec_done WHERE set_name=?", (set_name,))
        indexes = {k: _new_index(embedder.dim, embedder.id) for k in KINDS}

    # drop vectors of sections that no longer exist
    live = {r[0] for r in conn.execute("SELECT id FROM sections WHERE set_name=?", (set_name,))}
    for idx in indexes.values():
        dead = [int(k) for k in np.asarray(idx.keys, dtype=np.uint64) if int(k) not in live]  # no per-key calls
        if dead:
            idx.remove(dead)

    todo = pending_sections(conn, set_name)
    words = getattr(embedder, "body_words", BODY_WORDS)
    done = 0
    last_save = time.monotonic()
    unsaved: list[int] = []

    def save() -> None:
        nonlocal generation, unsaved, last_save
        generation += 1
        paths = vector_paths(docs_dir, set_name, generation)
        paths["body"].parent.mkdir(parents=True, exist_ok=True)
        mats = matrix_paths(docs_dir, set_name, generation)
        for k, p in paths.items():
            tmp = p.with_suffix(".tmp")
            indexes[k].save(str(tmp))
            tmp.replace(p)
            keys = np.asarray(indexes[k].keys, dtype=np.uint64)
            vecs = np.asarray(indexes[k].get(keys), dtype=np.float16) if len(keys) else \
                np.zeros((0, embedder.dim), dtype=np.float16)
            tmp = mats[k].with_name(mats[k].name + ".tmp.npz")
            np.savez(tmp, keys=keys, vectors=vecs)
            tmp.replace(mats[k])
        sums = {p.name: file_sha256(p) for p in [*paths.values(), *mats.values()]}
        tmp = sums_path(docs_dir, set_name, generation).with_suffix(".tmp")
        tmp.write_text(json.dumps(sums, indent=0), encoding="utf-8")
        tmp.replace(sums_path(docs_dir, set_name, generation))
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT OR REPLACE INTO vec_sets VALUES (?,?,?,?)",
                     (set_name, embedder.id, embedder.dim, generation))
        conn.executemany("INSERT OR REPLACE INTO vec_done VALUES (?,?)", [(i, set_name) for i in unsaved])
        conn.execute("COMMIT")
        for old in range(max(0, generation - 3), generation):
            for p in [*vector_paths(docs_dir, set_name, old).values(),
                      *matrix_paths(docs_dir, set_name, old).values(), sums_path(docs_dir, set_name, old)]:
                p.unlink(missing_ok=True)
        unsaved = []
        last_save = time.monotonic()

    # sections too short for a vector are marked done without one; the counts shown and
    # returned are of the sections that get vectors, the same as embed_missing's (issue 35:
    # "embedding 41", "embedded 32/41" and "52 sections embedded" for one set)
    empty = [r["id"] for r in todo if (r["words"] or 0) < MIN_WORDS]
    unsaved.extend(empty)
    todo = [r for r in todo if (r["words"] or 0) >= MIN_WORDS]
    total = len(todo)
    chunks = [todo[i : i + batch] for i in range(0, len(todo), batch)]

    cache = VectorCache(docs_dir)
    # embed_missing filled the cache beforehand (on worker processes when many texts are
    # new); what is still missing here is embedded in this process
    vectors = cached_vectors(cache, embedder, (section_texts(c, words) for c in chunks), False, stats)
    try:
        for chunk, both in zip(chunks, vectors):  # noqa: B905 (stopping early stops the workers)
            body, head = both[: len(chunk)], both[len(chunk) :]
            keys = np.array([r["id"] for r in chunk], dtype=np.uint64)
            _remove_sections(indexes, [int(k) for k in keys])
            indexes["body"].add(keys, np.asarray(body, dtype=np.float32))
            indexes["head"].add(keys, np.asarray(head, dtype=np.float32))
            unsaved.extend(int(k) for k in keys)
            done += len(chunk)
            if progress:
                progress(f"{set_name}: vectors for {done}/{total} sections")
            if time.monotonic() - last_save > save_every_s:
                save()
    finally:
        vectors.close()
        cache.close()
    missing_matrix = not all(p.is_file() for p in matrix_paths(docs_dir, set_name, generation).values())
    missing_sums = not sums_path(docs_dir, set_name, generation).is_file()
    if unsaved or not generation or (row and row["embedder"] != embedder.id) or missing_matrix or missing_sums:
        save()
    return done


def _up_to_date(docs_dir: Path, conn: sqlite3.Connection, set_name: str, current: dict,
                generation: int) -> bool:
    """Every section that should have vectors has them, no vector is left from a removed
    section, and every file of the generation exists: then a build has nothing to do, and
    copying the set's vectors into RAM first would cost a minute at 100k sections."""
    if conn.execute("SELECT 1 FROM sections s LEFT JOIN vec_done v ON v.section_id = s.id"
                    " WHERE s.set_name=? AND v.section_id IS NULL LIMIT 1", (set_name,)).fetchone():
        return False
    if not all(p.is_file() for p in matrix_paths(docs_dir, set_name, generation).values()) \
            or not sums_path(docs_dir, set_name, generation).is_file():
        return False
    # every section with vec_done and enough words was added, so equal counts mean equal
    # key sets (reading 20k keys out of a usearch view costs ~2 s; counting is instant)
    live = conn.execute("SELECT count(*) FROM sections WHERE set_name=? AND words >= ?",
                        (set_name, MIN_WORDS)).fetchone()[0]
    return all(len(idx) == live for idx in current.values())


def _remove_sections(indexes: dict, sids: list[int]) -> None:
    """Forget the vectors of these sections (before re-embedding them)."""
    for idx in indexes.values():
        dead = [sid for sid in sids if sid in idx]
        if dead:
            idx.remove(dead)


def search_vectors(indexes: dict, kind: str, query_vec, k: int) -> list[tuple[int, float]]:
    """(section id, cosine similarity) best first."""
    idx = indexes.get(kind)
    if idx is None or not len(idx):
        return []
    matches = idx.search(query_vec, min(k, len(idx)))
    return [(int(key), 1.0 - float(dist)) for key, dist in zip(matches.keys, matches.distances, strict=True)]
