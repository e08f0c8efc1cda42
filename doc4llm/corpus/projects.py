"""Which doc sets belong to a project: the records `doc4llm sync` keeps, read by searches.

`sync PROJECT` records, per project, which set serves which dependency in
`<docs>/.doc4llm/sync/<hash of the project's resolved path>.json`:

    {"project": "/home/me/app", "sets": {"pypi:pydantic": "pydantic@1.10.13", ...}}

A search, grep or toc run inside that project (the working directory or a parent of it is
the synced project) or pointed at it (`--project DIR`) then searches the project's scope:

- in: the sets the project pinned;
- out: other versions of the project's dependencies (`pydantic@2.7.4` beside the pinned
  `pydantic@1.10.13`) and sets only other synced projects use;
- in: every other set (imports, scrapes, a package added by hand): they are not the
  project's dependencies, but they are the team's own docs, or were added on purpose.

`--all-sets` searches every set; the project's pins are then a preference (the pinned
version of a library ranks first), as they are outside any project, where the pins of
every synced project count.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from doc4llm.corpus.paths import INDEX_DIRNAME

T = TypeVar("T")

SYNC_DIRNAME = "sync"
MAX_PARENTS = 64  # a project is looked for at most this many folders up


def record_path(docs_dir: Path, project: Path) -> Path:
    digest = hashlib.sha256(str(Path(project).resolve()).encode()).hexdigest()[:16]
    return Path(docs_dir) / INDEX_DIRNAME / SYNC_DIRNAME / f"{digest}.json"


def load_record(path: Path) -> dict:
    """A sync record as written, {} when missing or unreadable (it only informs scope).
    Read with a depth limit: a docs dir can come from anywhere."""
    from doc4llm.corpus.safe_data import DataError, loads_json

    try:
        data = loads_json(Path(path).read_text(encoding="utf-8", errors="replace"), Path(path).name)
    except (OSError, DataError):
        return {}
    if not isinstance(data, dict):
        return {}
    if not isinstance(data.get("sets"), dict):
        data["sets"] = {}
    return data


@dataclass
class Project:
    """A synced project: its folder and the set serving each dependency."""

    path: Path
    sets: dict[str, str] = field(default_factory=dict)  # "pypi:pydantic" -> "pydantic@1.10.13"

    @property
    def set_names(self) -> set[str]:
        return set(self.sets.values())


def _project_of(data: dict, where: Path) -> Project | None:
    sets = data.get("sets")
    if not isinstance(sets, dict):
        return None
    clean = {str(k): v for k, v in sets.items() if isinstance(v, str) and "@" in v}
    return Project(Path(str(data.get("project") or where)), clean)


def synced_projects(docs_dir: Path) -> list[Project]:
    folder = Path(docs_dir) / INDEX_DIRNAME / SYNC_DIRNAME
    out = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        project = _project_of(load_record(path), path)
        if project is not None:
            out.append(project)
    return out


def find_project(docs_dir: Path, start: Path) -> Project | None:
    """The synced project that is `start` or its nearest parent, None when there is none.
    A hash and a stat per folder: cheap enough for every search."""
    folder = Path(docs_dir) / INDEX_DIRNAME / SYNC_DIRNAME
    if not folder.is_dir():
        return None
    try:
        here = Path(start).resolve()
    except OSError:
        return None
    for candidate in [here, *here.parents][:MAX_PARENTS]:
        path = record_path(docs_dir, candidate)
        if path.is_file():
            project = _project_of(load_record(path), candidate)
            if project is not None and project.path == candidate:
                return project
    return None


def library(set_name: str) -> str:
    """What two versions of one library share: the set name before '@', case folded."""
    return set_name.split("@", 1)[0].casefold()


@dataclass
class Scope:
    """The sets a command searches and why: `names` None means "as asked" (every set, or
    the `--set` patterns); `pins` are the pinned sets, whose version ranks first where a
    library is searched in several versions."""

    names: list[str] | None = None
    project: Project | None = None
    total: int = 0
    pins: set[str] = field(default_factory=set)

    def preferred(self, searched: list[str]) -> dict[str, set[str]]:
        return preferred_versions(searched, self.pins)

    @property
    def narrowed(self) -> bool:
        return self.names is not None and len(self.names) < self.total

    def lookup_first(self, lookup: Callable[[list[str] | None], T], sets: list[str] | None) -> T:
        """`lookup(set names)` in this scope's sets first, then in every set: a page only
        another set has is still found (`toc`, `read`, their MCP tools). `sets` given by
        the caller win over the scope."""
        from doc4llm.errors import NotFoundError

        if sets or not self.narrowed:
            return lookup(sets or None)
        try:
            return lookup(self.names)
        except NotFoundError as scoped:
            try:
                return lookup(None)
            except NotFoundError:
                raise scoped from None

    def note(self) -> str | None:
        """One short line, only when the project left sets out."""
        if not self.narrowed or self.project is None:
            return None
        return (f"project {self.project.path.name}: {len(self.names)} of {self.total} sets "
                "(--all-sets for all)")


def project_scope(project: Project, all_names: list[str], others: list[Project]) -> list[str]:
    """The set names a project searches (see the module docstring for the rule)."""
    mine = project.set_names
    my_libraries = {library(n) for n in mine}
    theirs = set().union(*(p.set_names for p in others)) if others else set()
    out = []
    for name in all_names:
        if name in mine:
            out.append(name)
        elif library(name) in my_libraries or name in theirs:
            continue
        else:
            out.append(name)
    return out


def preferred_versions(names: list[str], pins: set[str]) -> dict[str, set[str]]:
    """{library: its pinned set names} for each library present in several versions of
    which some, not all, are pinned."""
    by_lib: dict[str, list[str]] = {}
    for name in names:
        by_lib.setdefault(library(name), []).append(name)
    out = {}
    for lib, versions in by_lib.items():
        pinned = {v for v in versions if v in pins}
        if len(versions) > 1 and pinned and len(pinned) < len(versions):
            out[lib] = pinned
    return out


def resolve_scope(docs_dir: Path, all_names: list[str], *, patterns: list[str] | None = None,
                  project_dir: Path | None = None, cwd: Path | None = None,
                  all_sets: bool = False) -> Scope:
    """The scope of one command. `project_dir` is `--project` (an error when it was never
    synced into this docs dir); else the working directory `cwd` (or a parent) may be a
    synced project. `patterns` (`--set`) and `all_sets` leave the sets as asked; the
    project's pins (else every synced project's) are then only preferred."""
    from doc4llm.errors import InputError

    project = None
    if project_dir is not None:
        project = find_project(docs_dir, Path(project_dir))
        if project is None:
            raise InputError(f"{project_dir} was not synced into {docs_dir}",
                             hint=f"doc4llm sync {project_dir} --docs-dir {docs_dir}")
    elif cwd is not None:
        project = find_project(docs_dir, cwd)
    scope = Scope(project=project, total=len(all_names))
    projects = synced_projects(docs_dir)
    if project is not None:
        scope.pins = project.set_names
    elif projects:
        scope.pins = set().union(*(p.set_names for p in projects))
    if project is not None and not patterns and not all_sets:
        others = [p for p in projects if p.path != project.path]
        scope.names = project_scope(project, all_names, others) or None  # none on disk: every set
    return scope
