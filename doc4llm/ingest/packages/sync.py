"""`doc4llm sync`: one set per dependency of a project, at its locked version.

The plan compares each dependency with the sets on disk: a set built from the same
package version by the same builder is skipped without touching the network, a new
version is built (bounded parallel downloads) and the project's old version of it is
removed, a dependency that left the project goes only with `prune`. What each project
synced is remembered in `<docs>/.doc4llm/sync/<project-hash>.json`, so pruning one
project never removes a set that another project still uses. A failure on one package
is reported and the others go on; existing sets stay as they were.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from doc4llm.corpus.atomic import atomic_write_text
from doc4llm.corpus.paths import INDEX_DIRNAME
from doc4llm.errors import Doc4llmError
from doc4llm.ingest.packages.build import BUILD_FORMAT, existing_package, remove_set
from doc4llm.ingest.packages.http import Http
from doc4llm.ingest.packages.lockfiles import Dependency, read_project
from doc4llm.ingest.packages.registry_config import NpmConfig
from doc4llm.ingest.packages.spec import PackageRef, set_base_name


@dataclass
class SyncItem:
    dep: Dependency
    action: str  # create | replace | skip | remove | failed
    set_name: str | None = None
    old_set: str | None = None
    detail: dict = field(default_factory=dict)
    error: str | None = None

    def label(self) -> str:
        d = self.dep
        want = d.version or d.spec or "latest"
        return f"{d.ecosystem}:{d.name}@{want}"


@dataclass
class SyncReport:
    project: str
    files: list[str]
    items: list[SyncItem] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    dry_run: bool = False

    @property
    def failed(self) -> list[SyncItem]:
        return [i for i in self.items if i.action == "failed"]

    def to_dict(self) -> dict:
        counts: dict[str, int] = {}
        for i in self.items:
            counts[i.action] = counts.get(i.action, 0) + 1
        return {"project": self.project, "files": self.files, "dry_run": self.dry_run, "counts": counts,
                "items": [{"package": i.label(), "direct": i.dep.direct, "action": i.action, "set": i.set_name,
                           "old_set": i.old_set, "error": i.error, **i.detail} for i in self.items],
                "not_synced": self.skipped}

    def lines(self) -> list[str]:
        head = "plan" if self.dry_run else "synced"
        out = [f"{head} {self.project} from {', '.join(self.files)}"]
        for i in self.items:
            name = i.set_name or i.label()
            extra = ""
            if i.action in ("create", "replace") and i.detail and not self.dry_run:
                src = ", ".join(f"{n} {k}" for k, n in (i.detail.get("sources") or {}).items())
                extra = f"  {i.detail.get('pages', 0)} pages ({src}), {i.detail.get('api_sections', 0)} API " \
                        f"sections, {i.detail.get('seconds', 0):.1f}s"
            if i.old_set:
                extra += f"  (replaces {i.old_set})"
            if i.error:
                extra = f"  {i.error}"
            out.append(f"  {i.action:<8} {name}{extra}")
        for s in self.skipped:
            out.append(f"  not synced: {s}")
        counts = self.to_dict()["counts"]
        out.append("  " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) if counts else "  nothing to do")
        return out


def _state_path(docs_dir: Path, project: Path) -> Path:
    digest = hashlib.sha256(str(project.resolve()).encode()).hexdigest()[:16]
    return docs_dir / INDEX_DIRNAME / "sync" / f"{digest}.json"


def _load_state(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _sets_of_other_projects(docs_dir: Path, mine: Path) -> set[str]:
    used: set[str] = set()
    folder = docs_dir / INDEX_DIRNAME / "sync"
    for path in folder.glob("*.json") if folder.is_dir() else []:
        if path != mine:
            used |= set((_load_state(path).get("sets") or {}).values())
    return used


def _dep_key(d: Dependency) -> str:
    return f"{d.ecosystem}:{d.name}"


def plan(deps: list[Dependency], docs_dir: Path, state: dict, langs: set[str] | None = None) -> list[SyncItem]:
    items = []
    previous = state.get("sets") or {}
    for d in deps:
        old = previous.get(_dep_key(d))
        if d.version is None:  # a range: the registry decides at build time
            items.append(SyncItem(d, "create", None, None))
            continue
        name = f"{set_base_name(d.ecosystem, d.name)}@{d.version}"
        current = existing_package(docs_dir, name)
        if current and current.get("format") == BUILD_FORMAT and current.get("version") == d.version \
                and current.get("name") == d.name and sorted(current.get("langs") or []) == sorted(langs or []):
            items.append(SyncItem(d, "skip", name, None))
        else:
            items.append(SyncItem(d, "replace" if current else "create", name,
                                  old if old and old != name else None))
    return items


def sync_project(project: Path, docs_dir: Path, *, include_all: bool = False, prune: bool = False,
                 dry_run: bool = False, jobs: int = 4, index_url: str | None = None,
                 npm: NpmConfig | None = None,
                 progress: Callable[[int, int, str], None] | None = None,
                 langs: set[str] | None = None) -> SyncReport:
    from doc4llm.ingest.packages.package_docs import add_package
    from doc4llm.ingest.packages.registry_config import npm_config

    project = Path(project).resolve()
    docs_dir = Path(docs_dir).resolve()
    found = read_project(project, include_all)
    report = SyncReport(str(project), found.files, skipped=found.skipped, dry_run=dry_run)
    state_path = _state_path(docs_dir, project)
    state = _load_state(state_path)
    items = plan(found.deps, docs_dir, state, langs)
    wanted = {_dep_key(d) for d in found.deps}
    gone = {k: v for k, v in (state.get("sets") or {}).items() if k not in wanted}
    report.items = items
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
        result = add_package(ref, docs_dir, http=http, index_url=index_url, npm=npm, langs=langs)
        item.set_name = result.set_name
        item.detail = {k: getattr(result, k) for k in ("pages", "sources", "api_sections", "seconds")}
        if result.status == "unchanged":
            item.action = "skip"

    with Http() as http:
        if progress and total:
            progress(0, total, "")
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = {pool.submit(build, item): item for item in todo}
            for fut in as_completed(futures):
                item = futures[fut]
                try:
                    fut.result()
                except Doc4llmError as exc:
                    item.action, item.error = "failed", exc.message
                except Exception as exc:  # noqa: BLE001 - one package must not stop the others
                    item.action, item.error = "failed", f"{type(exc).__name__}: {exc}"
                with lock:
                    done += 1
                if progress:
                    progress(done, total, item.label())
    sets = dict(state.get("sets") or {})
    others = _sets_of_other_projects(docs_dir, state_path)
    for item in report.items:
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


def _remove(docs_dir: Path, set_name: str, report: SyncReport) -> None:
    try:
        remove_set(docs_dir, set_name)
    except Doc4llmError as exc:
        report.skipped.append(f"{set_name}: not removed ({exc.message})")
