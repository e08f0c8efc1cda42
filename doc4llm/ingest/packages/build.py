"""Pages -> a doc set, built beside the docs root and swapped in whole.

The set is written by `SetWriter` into `<docs>/.doc4llm-build-*/NAME@VER` (same file
system), then renamed over the old one: a failure at any step before the rename leaves
the existing set exactly as it was, and a reader never sees half a set. A set that was not
made from a package (an import, a scrape) is never replaced.

A build folder holds the extracted archive, so none may outlive its run. Each one holds a
`.lock` file its process keeps an exclusive flock on until it removes the folder: the lock
dies with the process however it dies (SIGKILL, power loss), so the next `add`/`sync`
removes a folder whose lock it can take, and never one whose owner is still running (a
concurrent `sync` in the same docs dir). A folder without a lock file (made by an older
doc4llm) goes once it is `STALE_SECONDS` old. SIGTERM, SIGINT and SIGHUP remove this
process's build folders before it exits (`cleanup_on_signals`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from doc4llm.corpus.paths import safe_join, validate_set_name
from doc4llm.corpus.writer import UNTITLED, SetWriter, load_set_metadata
from doc4llm.errors import InputError
from doc4llm.ingest.packages.pages import DocPage

BUILD_FORMAT = 4  # bump when the builder's output changes, so `sync` rebuilds sets
# 3 (issues 33, 36): page origins (`extra.origin`), docs from the repository tag / docs
#   site, `holds`; docs found by content (Sphinx/MkDocs projects anywhere, `.txt` reST),
#   translations left out, page kinds, Sphinx object and autodoc directives resolved; the
#   API reference's scope, real `__all__`, markdown docstrings, deprecated/legacy marks;
#   `verified`
# 4 (npm shapes, 2026-11-28): namespace export lists, copies of declarations merged, JSDoc
#   inline tags, `@internal` left out, dependencies' re-exported API, README cleaning/titles
ORIGIN = "package"
BUILD_PREFIX = ".doc4llm-build-"
LOCK_FILE = ".lock"
STALE_SECONDS = 3600  # a build folder without a lock file this old was left by a crash
SETUP_SECONDS = 30  # a free lock on a folder younger than this may be one being set up

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: folders are cleaned by age only
    fcntl = None  # type: ignore[assignment]

_live: dict[Path, int | None] = {}  # this process's build folders -> the fd holding their lock
_live_lock = threading.Lock()


@dataclass
class BuildResult:
    set_name: str
    path: Path
    status: str  # created | replaced | unchanged
    pages: int
    sources: dict[str, int]  # origin -> pages


def existing_package(docs_dir: Path, set_name: str) -> dict | None:
    """The `package` record of an existing set, {} for a set not made from a package,
    None when there is no such set."""
    path = safe_join(Path(docs_dir), set_name)
    if not path.is_dir():
        return None
    pkg = load_set_metadata(path).get("package")
    return pkg if isinstance(pkg, dict) else {}


def check_replaceable(docs_dir: Path, set_name: str) -> dict | None:
    current = existing_package(docs_dir, set_name)
    if current == {}:
        raise InputError(f"set {set_name} exists and was not made from a package: not replaced",
                         hint="pick another name with --set NAME@VER, or remove that set first")
    return current


def temp_root(docs_dir: Path) -> Path:
    """A new build folder in `docs_dir`, locked by this process; build folders that crashed
    runs left behind are removed first. Give it back with `release_root`."""
    docs_dir.mkdir(parents=True, exist_ok=True)
    clean_stale(docs_dir)
    # made, locked and registered as one step for this process's other threads (`sync`
    # builds several packages at once: one thread's cleanup must never take the lock of a
    # folder another thread is still setting up, and delete it)
    with _live_lock:
        path = Path(tempfile.mkdtemp(prefix=BUILD_PREFIX, dir=docs_dir))
        fd = None
        if fcntl is not None:
            fd = os.open(path / LOCK_FILE, os.O_CREAT | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        _live[path] = fd
    return path


def release_root(path: Path) -> None:
    """Remove a build folder `temp_root` made (the lock goes last)."""
    shutil.rmtree(path, ignore_errors=True)
    with _live_lock:
        fd = _live.pop(path, None)
    if fd is not None:
        os.close(fd)


def clean_stale(docs_dir: Path) -> list[str]:
    """Remove build folders no running process owns; return their names."""
    removed = []
    try:
        entries = [p for p in Path(docs_dir).iterdir() if p.name.startswith(BUILD_PREFIX)]
    except OSError:
        return removed
    for path in entries:
        if not path.is_dir() or path.is_symlink():
            continue
        lock = path / LOCK_FILE
        fd = None
        try:
            with _live_lock:  # this process's folders, and those its threads are making
                if path in _live:
                    continue
                age = time.time() - path.stat().st_mtime
                if lock.is_file() and fcntl is not None:
                    if age < SETUP_SECONDS:
                        continue  # another process may be between making it and locking it
                    fd = os.open(lock, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        continue  # its process is running: not ours to touch
                elif age < STALE_SECONDS:
                    continue  # being set up, or an older doc4llm's: only age tells
            _restore_replaced(Path(docs_dir), path)
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path.name)
        except OSError:
            continue
        finally:
            if fd is not None:
                os.close(fd)
    return removed


def _restore_replaced(docs_dir: Path, build: Path) -> None:
    """A crash between the two renames of `swap_in` left the old set in the build folder:
    put it back when nothing took its place."""
    old = build / ".replaced"
    if not old.is_dir():
        return
    name = load_set_metadata(old).get("name")
    try:
        validate_set_name(name)
    except (InputError, TypeError):
        return
    target = docs_dir / name
    if not target.exists():
        os.rename(old, target)


def _remove_live_roots() -> None:
    with _live_lock:
        roots = list(_live.items())
        _live.clear()
    for path, fd in roots:
        for _ in range(3):  # a worker thread may recreate a folder while this one deletes
            trash = path.with_name(path.name + ".gone")
            try:
                os.rename(path, trash)
            except OSError:
                trash = path
            shutil.rmtree(trash, ignore_errors=True)
            if not path.exists():
                break
        if fd is not None:
            os.close(fd)


@contextlib.contextmanager
def cleanup_on_signals() -> Iterator[None]:
    """While the block runs (main thread only): SIGTERM, SIGINT or SIGHUP remove this
    process's build folders and exit at once (128 + the signal), instead of leaving the
    extracted archive behind or waiting for every queued conversion to finish."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        _remove_live_roots()
        name = signal.Signals(signum).name
        try:
            sys.stderr.write(f"doc4llm: interrupted ({name}): build folders removed\n")
            sys.stderr.flush()
        finally:
            os._exit(128 + signum)

    wanted = [signal.SIGTERM, signal.SIGINT] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])
    previous = {s: signal.signal(s, handler) for s in wanted}
    try:
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old)


def write_set(docs_dir: Path, set_name: str, pages: list[DocPage], package: dict,
              work: Path) -> BuildResult:
    """Write `pages` as `set_name` in `work`, then swap it into `docs_dir`."""
    validate_set_name(set_name)
    docs_dir = Path(docs_dir).resolve()
    check_replaceable(docs_dir, set_name)
    writer = SetWriter(work, set_name, origin=ORIGIN)
    sources: dict[str, int] = {}
    for page in pages:
        extra = {"from": page.origin, **page.extra}
        extra.update({k: v for k, v in (("kind", page.kind), ("lang", page.lang), (UNTITLED, page.untitled)) if v})
        writer.write_page(page.title, page.body, source=page.source, key=page.key,
                          url=page.extra.get("url"), extra=extra)
        sources[page.origin] = sources.get(page.origin, 0) + 1
    writer.meta["package"] = {**package, "format": BUILD_FORMAT, "sources": sources}
    spec = f"{package.get('ecosystem')}:{package.get('name')}@{package.get('version')}"
    writer.finish({"package": spec, "root": spec})  # `root`: what `doc4llm sets` shows as source
    target = safe_join(docs_dir, set_name)
    status = swap_in(writer.set_dir, target, work)
    return BuildResult(set_name, target, status, len(pages), sources)


def swap_in(new: Path, target: Path, work: Path) -> str:
    if not target.exists():
        os.rename(new, target)
        return "created"
    old = work / ".replaced"
    os.rename(target, old)
    try:
        os.rename(new, target)
    except OSError:
        os.rename(old, target)  # put the old set back
        raise
    shutil.rmtree(old, ignore_errors=True)
    return "replaced"


def remove_set(docs_dir: Path, set_name: str) -> None:
    """Delete a package-made set (rename away first, so no half-deleted set is visible)."""
    target = safe_join(Path(docs_dir).resolve(), set_name)
    if check_replaceable(docs_dir, set_name) is None:
        return
    work = temp_root(Path(docs_dir).resolve())
    try:
        os.rename(target, work / set_name)
    finally:
        release_root(work)
