"""`doc4llm sync`: one set per dependency of a project, at its locked version.

The plan compares each dependency with the sets on disk: a set built from the same
package version by the same builder is skipped without touching the network, a new
version is built (bounded parallel downloads) and the project's old version of it is
removed, a dependency that left the project goes only with `prune`. What each project
synced is remembered in `<docs>/.doc4llm/sync/<project-hash>.json`, so pruning one
project never removes a set that another project still uses, and searches run in the
project search its sets (corpus/projects.py). A failure on one package
is reported and the others go on; existing sets stay as they were. So is a lockfile entry
that cannot be read (wrong type, a name or version that is not one): it is listed as
failed, naming the file and the entry, and every other entry is synced.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from doc4llm.corpus.atomic import atomic_write_text
from doc4llm.corpus.paths import INDEX_DIRNAME
from doc4llm.corpus.projects import load_record, record_path
from doc4llm.errors import Doc4llmError, ExternalError, InputError
from doc4llm.ingest.packages.build import BUILD_FORMAT, existing_package, remove_set
from doc4llm.ingest.packages.holdings import holdings_line
from doc4llm.ingest.packages.http import Http
from doc4llm.ingest.packages.lockfiles import Dependency, read_project
from doc4llm.ingest.packages.registry_config import NpmConfig
from doc4llm.ingest.packages.spec import PackageRef, set_base_name
from doc4llm.ingest.packages.upstream import upstream_retry


@dataclass
class SyncItem:
    dep: Dependency | None  # None: a lockfile entry that could not be read
    action: str  # create | replace | skip | remove | failed
    set_name: str | None = None
    old_set: str | None = None
    detail: dict = field(default_factory=dict)
    error: str | None = None

    def label(self) -> str:
        d = self.dep
        if d is None:
            return "lockfile entry"
        want = d.version or d.spec or "latest"
        return f"{d.ecosystem}:{d.name}@{want}"

    def fail(self, exc: Exception) -> None:
        self.action = "failed"
        # a bug must not stop the other packages either; it is still reported
        self.error = exc.message if isinstance(exc, Doc4llmError) else f"{type(exc).__name__}: {exc}"


@dataclass
class SyncReport:
    project: str
    files: list[str]
    items: list[SyncItem] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    dry_run: bool = False

    bad_count: int = 0  # unreadable lockfile entries, including those not listed

    @property
    def failed(self) -> list[SyncItem]:
        return [i for i in self.items if i.action == "failed"]

    def exit_code(self) -> int:
        """0 when nothing failed; 3 when some package could not be fetched or built (as
        before: the others are synced); 2 when the only failures are unreadable lockfile
        entries (bad input, named in the report)."""
        if any(i.dep is not None for i in self.failed):
            return ExternalError.exit_code
        return InputError.exit_code if self.failed else 0

    def to_dict(self) -> dict:
        counts: dict[str, int] = {}
        for i in self.items:
            counts[i.action] = counts.get(i.action, 0) + 1
        return {"project": self.project, "files": self.files, "dry_run": self.dry_run, "counts": counts,
                "items": [{"package": i.label(), "direct": i.dep.direct if i.dep else None, "action": i.action,
                           "set": i.set_name, "old_set": i.old_set, "error": i.error, **i.detail}
                          for i in self.items],
                "not_synced": self.skipped}

    def lines(self) -> list[str]:
        """Per set: what it holds (`docs 0 · API 112 pages · readme · changelog`) and, below
        it, what it lacks and where that was looked for."""
        head = "plan" if self.dry_run else "synced"
        out = [f"{head} {self.project} from {', '.join(self.files)}"]
        for i in self.items:
            if i.dep is None:  # an unreadable lockfile entry: the sentence names file and entry
                out.append(f"  {i.action:<8} {i.error}")
                continue
            name = i.set_name or i.label()
            holds = i.detail.get("holds") if i.action in ("create", "replace", "skip") else None
            line = holdings_line(name, holds) if holds and not self.dry_run else name
            if i.action in ("create", "replace") and i.detail and not self.dry_run:
                line += f"  {i.detail.get('seconds', 0):.1f}s"
                if i.detail.get("verified") == "unverified":
                    line += ", unverified (no hash from the lockfile or the registry)"
            if i.old_set:
                line += f"  (replaces {i.old_set})"
            if i.error:
                line = f"{name}  {i.error}"
            out.append(f"  {i.action:<8} {line}")
            if not self.dry_run and not i.error:
                out += [f"           warning: {m}" for m in i.detail.get("missing") or []]
        for s in self.skipped:
            out.append(f"  not synced: {s}")
        listed = sum(1 for i in self.items if i.dep is None)
        if self.bad_count > listed:
            out.append(f"  ... and {self.bad_count - listed} more unreadable lockfile entries")
        counts = self.to_dict()["counts"]
        out.append("  " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) if counts else "  nothing to do")
        return out


def _state_path(docs_dir: Path, project: Path) -> Path:
    return record_path(docs_dir, project)  # searches read it too (corpus/projects.py)


def _load_state(path: Path) -> dict:
    return load_record(path)


def _sets_of_other_projects(docs_dir: Path, mine: Path) -> set[str]:
    used: set[str] = set()
    folder = docs_dir / INDEX_DIRNAME / "sync"
    for path in folder.glob("*.json") if folder.is_dir() else []:
        if path != mine:
            used |= set((_load_state(path).get("sets") or {}).values())
    return used


def _dep_key(d: Dependency) -> str:
    return f"{d.ecosystem}:{d.name}"


def plan(deps: list[Dependency], docs_dir: Path, state: dict, offline: bool = False,
         langs: set[str] | None = None) -> list[SyncItem]:
    items = []
    previous = state.get("sets") or {}
    if not isinstance(previous, dict):
        previous = {}
    for d in deps:
        old = previous.get(_dep_key(d))
        if d.version is None:  # a range: the registry decides at build time
            items.append(SyncItem(d, "create", None, None))
            continue
        name = f"{set_base_name(d.ecosystem, d.name)}@{d.version}"
        try:
            current = existing_package(docs_dir, name)
        except Doc4llmError as exc:  # one odd entry costs that entry only
            item = SyncItem(d, "failed", name)
            item.fail(exc)
            items.append(item)
            continue
        if current and current.get("format") == BUILD_FORMAT and current.get("version") == d.version \
                and current.get("name") == d.name and not upstream_retry(current, offline) \
                and sorted(current.get("langs") or []) == sorted(langs or []):
            items.append(SyncItem(d, "skip", name, None, _recorded(current)))
        else:
            items.append(SyncItem(d, "replace" if current else "create", name,
                                  old if old and old != name else None))
    return items


def sync_project(project: Path, docs_dir: Path, *, include_all: bool = False, prune: bool = False,
                 dry_run: bool = False, jobs: int = 4, index_url: str | None = None,
                 npm: NpmConfig | None = None, offline: bool = False,
                 progress: Callable[[int, int, str], None] | None = None,
                 require_hashes: bool = False, timeout: float | None = None,
                 built: Callable[[str], None] | None = None, langs: set[str] | None = None) -> SyncReport:
    """`timeout`: seconds for every download of the sync together (None: no total).
    `built(set_name)` runs in this thread as each set is written (the CLI indexes it for
    search there, while the other packages still download and build). `langs`: translations
    to read besides the docs' default language."""
    from doc4llm.ingest.packages.package_docs import add_package
    from doc4llm.ingest.packages.registry_config import npm_config

    project = Path(project).resolve()
    docs_dir = Path(docs_dir).resolve()
    found = read_project(project, include_all)
    report = SyncReport(str(project), found.files, skipped=found.skipped, dry_run=dry_run,
                        bad_count=found.bad_count)
    state_path = _state_path(docs_dir, project)
    state = _load_state(state_path)
    items = plan(found.deps, docs_dir, state, offline, langs)
    wanted = {_dep_key(d) for d in found.deps}
    gone = {k: v for k, v in (state.get("sets") or {}).items() if k not in wanted}
    report.items = items + [SyncItem(None, "failed", error=sentence) for sentence in found.bad]
    if prune:
        for key, set_name in sorted(gone.items()):
            eco, name = key.split(":", 1)
            report.items.append(SyncItem(Dependency(eco, name, None), "remove", set_name))
    if dry_run:
        return report
    npm = npm or npm_config(project)
    todo = [i for i in items if i.action in ("create", "replace")]
    total, done = len(todo), 0
    lock = threading.Lock()

    def build(item: SyncItem) -> None:
        d = item.dep
        ref = PackageRef(d.ecosystem, d.name, d.version or d.spec)
        result = add_package(ref, docs_dir, http=http, index_url=index_url, npm=npm, offline=offline, pin=d.pin,
                             require_hashes=require_hashes, langs=langs)
        item.set_name = result.set_name
        item.detail = {k: getattr(result, k) for k in ("pages", "sources", "api_sections", "seconds", "holds",
                                                       "missing", "looked_at", "verified")}
        if result.status == "unchanged":
            item.action = "skip"

    with Http(budget=timeout, what="this sync") as http:
        if progress and total:
            progress(0, total, "")
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = {pool.submit(build, item): item for item in todo}
            for fut in as_completed(futures):
                item = futures[fut]
                try:
                    fut.result()
                except Exception as exc:  # noqa: BLE001 - one package must not stop the others
                    item.fail(exc)
                with lock:
                    done += 1
                if progress:
                    progress(done, total, item.label())
                if built and item.action in ("create", "replace") and item.set_name:
                    built(item.set_name)
    sets = dict(state.get("sets") or {})
    others = _sets_of_other_projects(docs_dir, state_path)
    for item in report.items:
        if item.dep is None:
            continue
        key = _dep_key(item.dep)
        if item.action in ("create", "replace", "skip") and item.set_name:
            previous = sets.get(key)
            sets[key] = item.set_name
            if previous and previous != item.set_name:
                item.old_set = previous
                if previous not in others and previous not in sets.values():
                    _remove(docs_dir, previous, report)
        elif item.action == "remove":
            sets.pop(key, None)
            if item.set_name not in others and item.set_name not in sets.values():
                _remove(docs_dir, item.set_name, report)
    new_state = {"project": str(project), "sets": dict(sorted(sets.items()))}
    if new_state != state:
        atomic_write_text(state_path, json.dumps(new_state, indent=2, ensure_ascii=False) + "\n")
    return report


def _recorded(current: dict) -> dict:
    """What a set on disk holds, from its record (a skipped set is reported too)."""
    return {k: current[k] for k in ("pages", "sources", "api_sections", "holds", "missing", "looked_at")
            if k in current}


def _remove(docs_dir: Path, set_name: str, report: SyncReport) -> None:
    try:
        remove_set(docs_dir, set_name)
    except Doc4llmError as exc:
        report.skipped.append(f"{set_name}: not removed ({exc.message})")
