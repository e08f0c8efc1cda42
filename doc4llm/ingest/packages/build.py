"""Pages -> a doc set, built beside the docs root and swapped in whole.

The set is written by `SetWriter` into `<docs>/.doc4llm-build-*/NAME@VER` (same file
system), then renamed over the old one: a failure at any step before the rename leaves
the existing set exactly as it was, and a reader never sees half a set. A set that was not
made from a package (an import, a scrape) is never replaced.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from doc4llm.corpus.paths import safe_join, validate_set_name
from doc4llm.corpus.writer import SetWriter, load_set_metadata
from doc4llm.errors import InputError
from doc4llm.ingest.packages.pages import DocPage

BUILD_FORMAT = 2  # bump when the builder's output changes, so `sync` rebuilds sets
# 2: docs found by content (Sphinx/MkDocs projects anywhere, `.txt` reST), translations
#    left out, page kinds, Sphinx object and autodoc directives resolved
ORIGIN = "package"


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
    docs_dir.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=".doc4llm-build-", dir=docs_dir))


def write_set(docs_dir: Path, set_name: str, pages: list[DocPage], package: dict,
              work: Path) -> BuildResult:
    """Write `pages` as `set_name` in `work`, then swap it into `docs_dir`."""
    validate_set_name(set_name)
    docs_dir = Path(docs_dir).resolve()
    check_replaceable(docs_dir, set_name)
    writer = SetWriter(work, set_name, origin=ORIGIN)
    sources: dict[str, int] = {}
    for page in pages:
        extra = {"from": page.origin}
        extra.update({k: v for k, v in (("kind", page.kind), ("lang", page.lang)) if v})
        writer.write_page(page.title, page.body, source=page.source, key=page.key, extra=extra)
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
    os.rename(target, work / set_name)
    shutil.rmtree(work, ignore_errors=True)
