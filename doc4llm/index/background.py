"""Vectors are built outside searches: by `doc4llm index`, or by one detached background
job that a search starts when sections lack vectors.

Why: the model is the only slow part of indexing (~60 sections per CPU-second for minilm),
and a search that embedded before answering made an agent wait 13-16 s on a fresh copy
of the bundled docs. Now a search brings the lexical index up to date (fast), starts this
job if none is running, and answers at once with the vectors that exist; the job's
results are used by the next search.

The job (`python -m doc4llm.index.background DOCS_DIR --embedder NAME`):
- runs one at a time per docs dir (`.doc4llm/embed.lock`; a second one exits at once);
- embeds into the content cache (vector_cache.py) without the index lock, so a search's
  index update never waits for the model, then assembles each set's vector files from
  the cache under the index lock (a moment);
- is resumable: every batch is committed to the cache, so a killed job loses one batch;
- writes its progress and errors to `.doc4llm/embed.log` and its state to
  `.doc4llm/embed.json` (what a search reads to say what is going on);
- runs at low CPU priority (nice 10): it shares the machine with the agent that searched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from doc4llm.index.build import WRITER_WAIT_S, _lock
from doc4llm.index.store import index_dir, make_index_dir, open_store

ENV_BACKGROUND = "DOC4LLM_BACKGROUND_EMBED"  # "0": searches never start a job
LOCK_FILE = "embed.lock"
STATE_FILE = "embed.json"
LOG_FILE = "embed.log"
LOG_MAX_BYTES = 1 << 20  # a job starts a new log past this size
RETRY_AFTER_FAILURE_S = 300.0  # a job that failed is not restarted by searches for this long
START_WAIT_S = 2.0  # how long a new job waits for the job lock (a search may be probing it)

Progress = Callable[[str], None]


def paths(docs_dir: Path) -> dict[str, Path]:
    d = index_dir(docs_dir)
    return {"lock": d / LOCK_FILE, "state": d / STATE_FILE, "log": d / LOG_FILE}


def job_lock(docs_dir: Path, timeout: float):
    from filelock import FileLock

    make_index_dir(index_dir(docs_dir))
    return FileLock(str(paths(docs_dir)["lock"]), timeout=timeout)


def embed_sets(docs_dir: Path, set_names: list[str], embedder, progress: Progress | None = None,
               conn=None, prune: bool = False) -> dict:
    """Vectors for these sets: new texts embedded into the content cache first (no index
    lock held), then each set's files assembled from the cache under the index lock.
    {"vectors": {set: sections given vectors}, "embedded": {set: texts the model embedded}}.
    `prune`: the sets are all the docs dir has; the cache may drop texts none of them use.
    Callers hold the job lock (one embedding at a time per docs dir)."""
    from doc4llm.index.vectors import build_vectors, embed_missing, prune_cache

    own = conn is None
    conn = conn or open_store(docs_dir)
    out: dict = {"vectors": {}, "embedded": {}}
    try:
        for name in set_names:
            stats: dict = {}
            embed_missing(docs_dir, conn, name, embedder, progress=progress, stats=stats)
            with _lock(docs_dir, WRITER_WAIT_S):
                out["vectors"][name] = build_vectors(docs_dir, conn, name, embedder, progress=progress,
                                                     stats=stats)
            out["embedded"][name] = stats.get("embedded", 0)
        if prune:
            out["pruned"] = prune_cache(docs_dir, conn, embedder)
    finally:
        if own:
            conn.close()
    return out


def read_state(docs_dir: Path) -> dict:
    try:
        state = json.loads(paths(docs_dir)["state"].read_text(encoding="utf-8"))
        return state if isinstance(state, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_state(docs_dir: Path, **state) -> None:
    from doc4llm.corpus.atomic import atomic_write_text

    try:
        atomic_write_text(paths(docs_dir)["state"], json.dumps(state, sort_keys=True))
    except OSError:
        pass  # the state only informs messages


def running(docs_dir: Path) -> bool:
    """A job holds the job lock now."""
    from filelock import Timeout

    lock = job_lock(docs_dir, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        return True
    lock.release()
    return False


def enabled() -> bool:
    return os.environ.get(ENV_BACKGROUND, "").strip().lower() not in ("0", "false", "no", "off")


_CHILDREN: list[subprocess.Popen] = []  # jobs this process started (reaped when they end)


def start(docs_dir: Path, embedder_name: str) -> str:
    """Make sure a job is building the vectors: "started", "running" (one already is),
    "failed" (the last one failed recently: not retried yet; its log says why) or
    "disabled" ($DOC4LLM_BACKGROUND_EMBED=0). Never waits for the job."""
    for child in list(_CHILDREN):
        if child.poll() is not None:
            _CHILDREN.remove(child)
    if not enabled():
        return "disabled"
    docs_dir = Path(docs_dir).resolve()
    if running(docs_dir):
        return "running"
    state = read_state(docs_dir)
    if state.get("state") == "failed" and state.get("embedder") == embedder_name \
            and time.time() - float(state.get("finished") or 0) < RETRY_AFTER_FAILURE_S:
        return "failed"
    log = paths(docs_dir)["log"]
    try:
        if log.is_file() and log.stat().st_size > LOG_MAX_BYTES:
            log.unlink()
        out = open(log, "ab")  # handed to the child, closed below
    except OSError:
        return "failed"
    # the child runs this very doc4llm, whatever the caller's sys.path was
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    kwargs: dict = {"start_new_session": True} if os.name == "posix" else \
        {"creationflags": getattr(subprocess, "DETACHED_PROCESS", 0) | getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
    try:
        _CHILDREN.append(subprocess.Popen(
            [sys.executable, "-m", "doc4llm.index.background", str(docs_dir), "--embedder", embedder_name],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=out, env=env, close_fds=True,
            cwd=root, **kwargs))  # cwd: `-m` puts it first on sys.path
    except OSError as exc:
        print(f"doc4llm: cannot start the background embedding job: {exc}", file=sys.stderr)
        return "failed"
    finally:
        out.close()
    return "started"


def run_job(docs_dir: Path, embedder_name: str) -> int:
    """The job itself: embed every set with sections lacking vectors, then exit.
    0 when done or when another job holds the lock, 3 when embedding failed."""
    from filelock import Timeout

    from doc4llm.corpus.model import list_sets
    from doc4llm.index.embedders import get_embedder

    lock = job_lock(docs_dir, timeout=START_WAIT_S)
    try:
        lock.acquire()
    except Timeout:
        return 0  # one job at a time: the running one does the work
    t0 = time.time()
    base = {"pid": os.getpid(), "embedder": embedder_name, "started": t0, "log": str(paths(docs_dir)["log"])}
    try:
        if hasattr(os, "nice"):
            try:
                os.nice(10)
            except OSError:
                pass
        _write_state(docs_dir, state="running", **base)
        last = [0.0]

        def progress(msg: str) -> None:
            now = time.monotonic()
            if now - last[0] >= 2.0 or "embedding" in msg:
                last[0] = now
                print(f"{time.strftime('%H:%M:%S')} {msg}", file=sys.stderr, flush=True)

        emb = get_embedder(embedder_name, threads=os.cpu_count() or 1)
        if emb is None:
            _write_state(docs_dir, state="done", finished=time.time(), **base)
            return 0
        names = [s.name for s in list_sets(docs_dir)]
        print(f"{time.strftime('%H:%M:%S')} building vectors ({emb.id}) for {len(names)} sets",
              file=sys.stderr, flush=True)
        out = embed_sets(docs_dir, names, emb, progress, prune=True)
        took = round(time.time() - t0, 1)
        print(f"{time.strftime('%H:%M:%S')} done in {took}s: {sum(out['embedded'].values())} texts embedded, "
              f"{sum(out['vectors'].values())} sections given vectors", file=sys.stderr, flush=True)
        _write_state(docs_dir, state="done", finished=time.time(), seconds=took, **base)
        return 0
    except Exception as exc:  # noqa: BLE001 - recorded for the searches that read the state
        print(f"{time.strftime('%H:%M:%S')} failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        _write_state(docs_dir, state="failed", finished=time.time(), error=str(exc)[:300], **base)
        return 3
    finally:
        lock.release()


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m doc4llm.index.background",
                                     description="Build missing vectors of a docs dir (what searches start).")
    parser.add_argument("docs_dir", type=Path)
    parser.add_argument("--embedder", required=True)
    args = parser.parse_args(argv)
    from doc4llm.secrets import install_stream_redaction

    install_stream_redaction()  # the log is a file: no configured API key goes into it
    return run_job(args.docs_dir, args.embedder)


if __name__ == "__main__":
    sys.exit(main())
