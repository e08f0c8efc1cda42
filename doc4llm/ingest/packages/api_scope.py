"""Which Python code of an archive is the package's API: found on the file system, before
griffe reads anything.

An sdist carries more than the installed package: its test suite (celery's `t/unit`),
vendored copies of other projects (numpy's `vendored-meson`), benchmarks, examples, and
inside the package test modules, locale data (`django.conf.locale.<lang>`) and database
migrations. None of that is API, and a reference spent on it misses the real modules.
The rules look at what a tree *is*, not only at its name:

- **another project**: a folder inside the archive with its own project metadata
  (`pyproject.toml`, `setup.py`, `setup.cfg`, `PKG-INFO`), or inside a package a folder
  holding a `*.dist-info`/`*.egg-info` (pip's and setuptools' `_vendor`), or named as
  vendored code is (`vendor`, `_vendor`, `vendored`, `third_party`, `extern`);
- **tests**: a package with a `conftest.py`, or whose own modules are mostly test modules
  (`test_*.py`, `*_test.py`), or named `tests`/`test`/`unittests` with test
  modules below it, or whose subpackages are all tests (celery's `t`); a package named
  `test` or `testing` without test modules is API (`django.test`, `numpy.testing`);
- **locale data**: a `locale`/`locales` package, or one whose subpackages are mostly
  language codes (`de`, `pt_BR`, `zh_Hans`);
- **migrations**: a `migrations` package, and any module whose name is not an identifier
  (`0001_initial.py` cannot be imported by name);
- **benchmarks and examples** by name (`benchmarks`, `asv_bench`, `examples`).

When the archive says which packages it installs (`top_level.txt` in its egg-info or
dist-info), only those are read.

A subpackage `v<N>` with N below the release's major version (pydantic 2's `pydantic.v1`)
and a subpackage named `deprecated` or `legacy` are kept but marked *legacy*: they read
like the current API and are not (see `legacy_note`).
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

# never a top-level package of the distribution (the sdist's own tooling and test folders)
EXCLUDED_TOP = {"tests", "test", "testing", "testing_utils", "docs", "doc", "examples", "example", "benchmarks",
                "benchmark", "bench", "asv_bench", "scripts", "tools", "build", "dist", "setup", "conftest",
                "noxfile", "fabfile", "tasks", "_build", "site", "unittests", "integration_tests"}
# never above a top-level package
EXCLUDED_PARENTS = {"example_scripts", "fixtures", "samples", "third_party", "vendor", "_vendor", "vendored",
                    "extern", "externals", "test", "tests", "testing"}
# inside a package: vendored code, benchmarks, examples, locale data, migrations
VENDORED_DIRS = {"vendor", "_vendor", "vendored", "_vendored", "third_party", "_third_party", "extern", "_extern",
                 "externals"}
TEST_NAMED = {"tests", "test", "unittests", "unit_tests", "testsuite", "test_suite", "integration_tests"}
NOT_API_MODULES = {"setup", "conftest", "noxfile", "fabfile", "pavement"}
PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "PKG-INFO")
MAX_TOP_PACKAGES = 6
USUAL_DEPTH = 3  # `pkg/`, `src/pkg/`, `python/src/pkg/`: how deep a top-level package usually is
MAX_DEPTH = 5
CONFTEST_PACKAGE_MODULES = 5  # a top-level package with more non-test modules than this is API

_TEST_MODULE = re.compile(r"^(?:test_\w+|\w+_tests?|conftest)\.pyi?$")
_LANG_CODE = re.compile(r"^[a-z]{2,3}(?:_[A-Za-z]{2,4})?(?:_[A-Za-z]{2,4})?$")
# the docs' example code, never imported by users: sqlmodel's and fastapi's `docs_src`,
# `doc_examples`, `tutorial_code`
_DOCS_CODE = re.compile(r"^(?:docs?|examples?|tutorials?|samples?|demos?)(?:_\w+)?$|^\w+_(?:docs?|examples?)$", re.I)
_LEGACY_VERSION = re.compile(r"^v(\d{1,3})$")


@dataclass
class PythonScope:
    """The top-level packages to read, each as (import name, folder holding it)."""

    tops: list[tuple[str, Path]] = field(default_factory=list)
    excluded: dict[str, int] = field(default_factory=dict)  # reason -> folders left out


def _py_entries(folder: Path) -> tuple[list[str], list[str]]:
    """(module file names, subfolder names) of a folder, sorted; [] when unreadable."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return [], []
    files = [e.name for e in entries if e.is_file(follow_symlinks=False) and e.name.endswith((".py", ".pyi"))]
    dirs = [e.name for e in entries if e.is_dir(follow_symlinks=False)]
    return files, dirs


def _is_package(folder: Path) -> bool:
    return (folder / "__init__.py").is_file() or (folder / "__init__.pyi").is_file()


class _Classifier:
    """Why a package folder is not API ("tests", "vendored", ...), or None; memoised, so
    each folder is looked at once (the test rule looks at subpackages)."""

    def __init__(self) -> None:
        self._memo: dict[Path, str | None] = {}

    def reason(self, folder: Path, inside_package: bool) -> str | None:
        if folder in self._memo:
            return self._memo[folder]
        self._memo[folder] = None  # a cycle (never from a real archive) reads as API
        result = self._reason(folder, inside_package)
        self._memo[folder] = result
        return result

    def _reason(self, folder: Path, inside_package: bool) -> str | None:
        name = folder.name
        if name.startswith(".") or name.endswith((".dist-info", ".egg-info")):
            return "metadata"
        if name in VENDORED_DIRS:
            return "vendored"
        if name in ("benchmarks", "benchmark", "asv_bench"):
            return "benchmarks"
        if name in ("examples", "example"):
            return "examples"
        if name in ("locale", "locales"):
            return "locale data"
        if name in ("migrations", "south_migrations"):
            return "migrations"
        files, dirs = _py_entries(folder)
        if inside_package and (any(d.endswith((".dist-info", ".egg-info")) for d in dirs)
                               or (folder / "pyproject.toml").is_file() or (folder / "PKG-INFO").is_file()):
            return "vendored"
        if self._is_tests(folder, files, dirs, inside_package):
            return "tests"
        subpackages = [d for d in dirs if d.isidentifier() and _is_package(folder / d)]
        langs = sum(1 for d in subpackages if _LANG_CODE.match(d))
        if len(subpackages) >= 5 and langs >= 0.8 * len(subpackages):
            return "locale data"
        return None

    def _is_tests(self, folder: Path, files: list[str], dirs: list[str], inside_package: bool) -> bool:
        own = [f for f in files if not f.startswith("__init__.")]
        tests = sum(1 for f in own if _TEST_MODULE.match(f))
        if "conftest.py" in files and (inside_package or len(own) - tests <= CONFTEST_PACKAGE_MODULES):
            # a top-level package with a conftest.py beside many modules of its own is the API
            # with its pytest setup inside (scikit-learn's `sklearn/conftest.py`)
            return True
        if tests and tests * 2 >= len(own):
            return True
        subpackages = [folder / d for d in dirs if d.isidentifier() and _is_package(folder / d)]
        if folder.name in TEST_NAMED and (tests or _has_test_module_below(folder)):
            return True
        # a top-level package whose subpackages are all test suites and which has almost
        # nothing of its own: celery's `t/` (`t/unit`, `t/integration`, `t/smoke`, `skip.py`);
        # inside a package such a folder is API with tests beside it (`numpy.typing`)
        return (not inside_package and bool(subpackages) and len(own) <= 2 and _small_init(folder)
                and all(self.reason(s, True) == "tests" for s in subpackages))


def _parses(folder: Path, max_files: int = 300, max_bytes: int = 8 * 1024 * 1024) -> bool:
    """Python 3 parses the package's modules (the first `max_files`, `max_bytes`)."""
    import ast

    seen = size = 0
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            path = Path(dirpath) / name
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
                ast.parse(text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return False
            except OSError:
                continue
            seen += 1
            size += len(text)
            if seen >= max_files or size >= max_bytes:
                return True
    return True


def _small_init(folder: Path, limit: int = 2000) -> bool:
    """The package's `__init__` holds next to nothing (celery's `t/__init__.py` is empty;
    `pkg_resources/__init__.py`, 100 KB, is the API itself)."""
    for name in ("__init__.py", "__init__.pyi"):
        try:
            if (folder / name).stat().st_size > limit:
                return False
        except OSError:
            continue
    return True


def _has_test_module_below(folder: Path, limit: int = 2000) -> bool:
    seen = 0
    for _dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for f in filenames:
            if _TEST_MODULE.match(f):
                return True
        seen += len(filenames)
        if seen > limit:
            break
    return False


def _declared_top_level(root: Path) -> set[str]:
    """Top-level import names the archive's metadata declares (`top_level.txt`), if any."""
    names: set[str] = set()
    for base in (root, root / "src"):
        for meta in sorted(base.glob("*.egg-info")) + sorted(base.glob("*.dist-info")):
            try:
                text = (meta / "top_level.txt").read_text(encoding="utf-8", errors="replace")[:10000]
            except OSError:
                continue
            names.update(n.strip() for n in text.splitlines() if n.strip().isidentifier())
    return names


def _nested_project(root: Path, pkg_parent: Path) -> bool:
    """A folder between the archive root and the package holds project metadata of its
    own: the package belongs to another project shipped inside this one (numpy's
    `vendored-meson/meson/mesonbuild`)."""
    rel = pkg_parent.relative_to(root)
    here = root
    for part in rel.parts:
        here = here / part
        if any((here / f).is_file() for f in PROJECT_FILES):
            return True
    return False


def python_scope(root: Path, dist_name: str) -> PythonScope:
    """The distribution's top-level packages (folders with `__init__.py` or `.pyi` whose
    parent is not a package, at most three deep, else five), without tests, vendored
    projects and tooling; the distribution's own name first."""
    scope = PythonScope()
    want = dist_name.replace("-", "_").lower()
    classify = _Classifier()
    declared = _declared_top_level(root)
    found: dict[str, Path] = {}
    nested: dict[str, Path] = {}
    for depth in range(1, MAX_DEPTH + 1):
        if depth > USUAL_DEPTH and (found or nested):
            break  # deeper only when nothing was found: grpcio's `src/python/grpcio/grpc`
        for init in sorted(root.glob("*/" * depth + "__init__.py*")):
            pkg = init.parent
            if not init.name.endswith((".py", ".pyi")) or not pkg.name.isidentifier():
                continue
            parts = pkg.relative_to(root).parts
            if pkg.name in EXCLUDED_TOP or any(p in EXCLUDED_TOP or p in EXCLUDED_PARENTS or p.startswith(".")
                                              or p.endswith((".dist-info", ".egg-info")) for p in parts[:-1]):
                continue
            if _DOCS_CODE.match(pkg.name) and pkg.name.lower() != want:
                scope.excluded["docs examples"] = scope.excluded.get("docs examples", 0) + 1
                continue
            if _is_package(pkg.parent):
                continue
            why = classify.reason(pkg, inside_package=False)
            if why == "tests" and (pkg.name.lower() == dist_name.replace("-", "_").lower() or pkg.name in declared):
                why = None  # the distribution's own (or declared) package is its API, whatever it holds
            if why is not None:
                scope.excluded[why] = scope.excluded.get(why, 0) + 1
                continue
            if pkg.parent != root and _nested_project(root, pkg.parent):
                nested.setdefault(pkg.name, pkg.parent)
                continue
            if pkg.name in found and found[pkg.name] != pkg.parent:
                # two copies (PyYAML 5's `lib/yaml` for Python 2 and `lib3/yaml`): the one
                # Python 3 can parse
                if not _parses(found[pkg.name] / pkg.name) and _parses(pkg):
                    found[pkg.name] = pkg.parent
                continue
            found[pkg.name] = pkg.parent
    if nested:
        if found:
            scope.excluded["vendored"] = scope.excluded.get("vendored", 0) + len(nested)
        else:  # the package itself sits in a sub-project folder: better than nothing
            found = nested
    if not found:  # a single-module distribution (six.py)
        for base in (root / "src", root):
            for mod in sorted(base.glob("*.py*")):
                if mod.suffix in (".py", ".pyi") and mod.stem.lower() == want:
                    found[mod.stem] = base
    found = _in_namespaces(root, found, dist_name)
    if declared and any(n.split(".")[0] in declared for n in found):
        dropped = [n for n in found if n.split(".")[0] not in declared]
        if dropped:
            scope.excluded["not installed"] = len(dropped)
        found = {n: p for n, p in found.items() if n.split(".")[0] in declared}
    ordered = sorted(found.items(), key=lambda kv: (kv[0].replace(".", "_").lower() != want,
                                                    kv[0].startswith("_"), kv[0]))
    scope.tops = ordered[:MAX_TOP_PACKAGES]
    return scope


def _in_namespaces(root: Path, found: dict[str, Path], dist_name: str) -> dict[str, Path]:
    """Packages inside a namespace package (PEP 420: a folder without `__init__.py`) under
    their full import name: poetry-core's `src/poetry/core` is `poetry.core`, matplotlib's
    `lib/mpl_toolkits/mplot3d` is `mpl_toolkits.mplot3d` (their pages were titled
    `core.factory`, `mplot3d.axes3d`: import paths that do not exist). A folder above
    the package is a namespace when the distribution is named for the dotted path
    (`poetry-core`, `google-cloud-storage`) or the package's own code imports itself
    by it (`from mpl_toolkits.mplot3d import axes3d`); a source folder (`src`, `lib`)
    never is: nothing imports `lib.matplotlib`."""
    dist = re.sub(r"[-_.]+", ".", dist_name.lower())
    spaces: dict[Path, tuple[str, Path]] = {}  # namespace folder -> (dotted prefix, search path)
    for name, base in found.items():
        pkg = base / name
        here, parts = base, []
        while here != root and here.name.isidentifier() and not _is_package(here) and len(parts) < 3 \
                and pkg.is_dir():
            parts.insert(0, here.name)
            here = here.parent
            dotted = ".".join([*parts, name])
            if dotted.lower() == dist or _imports_itself_as(pkg, dotted):
                spaces[base] = (".".join(parts), here)
    # the folder is a namespace for every package in it (opentelemetry-api's `attributes`
    # beside `context`, which imports itself as `opentelemetry.context`)
    out: dict[str, Path] = {}
    members: dict[str, int] = {}
    for base, (prefix, _) in spaces.items():
        members[prefix] = sum(1 for n, b in found.items() if b == base and (b / n).is_dir())
    for name, base in found.items():
        if base in spaces and (base / name).is_dir():
            prefix, search = spaces[base]
            # several packages of one namespace are read as the namespace, one top package:
            # opentelemetry-api's 11 (`trace` among them) were cut to 6 by the top-package cap
            out.setdefault(prefix if members[prefix] > 1 else f"{prefix}.{name}", search)
        else:
            out.setdefault(name, base)
    return out


def _imports_itself_as(pkg: Path, dotted: str, max_files: int = 200, max_bytes: int = 4 * 1024 * 1024) -> bool:
    pattern = re.compile(rf"^[ \t]*(?:from|import)[ \t]+{re.escape(dotted)}\b", re.M)
    seen = size = 0
    for dirpath, dirnames, filenames in os.walk(pkg):
        dirnames.sort()
        for f in sorted(filenames):
            if not f.endswith((".py", ".pyi")):
                continue
            try:
                text = (Path(dirpath) / f).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if pattern.search(text):
                return True
            seen += 1
            size += len(text)
            if seen >= max_files or size >= max_bytes:
                return False
    return False


def stage_packages(scope: PythonScope, root: Path, stage: Path) -> dict[str, int]:
    """Hard-link (else copy) the module files of the kept packages into `stage`, at the
    same relative paths, leaving out the trees that are not API. griffe then reads the
    stage: nothing excluded costs parsing time. Returns {reason: folders left out}."""
    classify = _Classifier()
    left_out: dict[str, int] = {}
    for name, base in scope.tops:
        pkg = base.joinpath(*name.split("."))  # `poetry.core`: inside the namespace folder
        if not pkg.is_dir():  # a single module
            for suffix in (".py", ".pyi"):
                _link(base / f"{name}{suffix}", stage / (base / f"{name}{suffix}").relative_to(root))
            continue
        for dirpath, dirnames, filenames in os.walk(pkg):
            here = Path(dirpath)
            keep = []
            for d in sorted(dirnames):
                sub = here / d
                if not d.isidentifier() or not _is_package(sub):
                    continue  # not importable as a package: griffe would not read it either
                why = classify.reason(sub, inside_package=True)
                if why is not None:
                    left_out[why] = left_out.get(why, 0) + 1
                    continue
                keep.append(d)
            dirnames[:] = keep
            names = set(filenames)
            for f in sorted(filenames):
                stem, dot, ext = f.rpartition(".")
                if dot and ext in ("py", "pyi") and stem.isidentifier() and not _not_api_module(f):
                    _link(here / f, stage / (here / f).relative_to(root))
                elif ext == "pyx" and stem.isidentifier() and not _not_api_module(f"{stem}.py") \
                        and f"{stem}.py" not in names and f"{stem}.pyi" not in names:
                    _cython(here / f, root, stage / (here / f"{stem}.py").relative_to(root))
    return left_out


def _not_api_module(filename: str) -> bool:
    """A test module, a fixture file or a build script inside a package (numpy's
    per-subpackage `setup.py` configurations): never a module users import."""
    return bool(_TEST_MODULE.match(filename)) or filename.rsplit(".", 1)[0] in NOT_API_MODULES


def _cython(pyx: Path, root: Path, dest: Path) -> None:
    """A compiled Cython module's Python-visible API, as a stub griffe reads (pyarrow's
    `lib.pyx`, lxml's `etree.pyx`: the libraries' main API), read as text (api_cython.py)."""
    from doc4llm.ingest.packages.api_cython import cython_stub

    if pyx.is_symlink() or not pyx.is_file():
        return
    stub = cython_stub(pyx, root)
    if stub:
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(stub, encoding="utf-8")


def _link(src: Path, dest: Path) -> None:
    if not src.is_file() or src.is_symlink():
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dest)
    except OSError:
        shutil.copyfile(src, dest)


def legacy_note(module_path: str, top: str, version: str | None) -> str | None:
    """A note for a module of a legacy namespace, else None.

    The rule: a subpackage named `v<N>` whose N is below the release's major version is
    the previous major API kept for compatibility (pydantic 2.7's `pydantic.v1` is
    pydantic 1.10's API); a subpackage named `deprecated` or `legacy` says so itself.
    Such pages read like the current API, so agents and ranking must be told."""
    parts = module_path.split(".")
    major = _major(version)
    for i, part in enumerate(parts[1:], start=1):
        m = _LEGACY_VERSION.match(part)
        if m and major is not None and int(m.group(1)) < major:
            ns = ".".join(parts[: i + 1])
            return (f"Legacy API: `{ns}` is the v{m.group(1)} API that {top} {version} keeps for "
                    f"compatibility; the current API is `{top}`.")
        if part in ("deprecated", "legacy"):
            ns = ".".join(parts[: i + 1])
            return f"Legacy API: `{ns}` holds {part} parts of {top}, kept for compatibility."
    return None


def _major(version: str | None) -> int | None:
    m = re.match(r"^\s*v?(\d{1,4})", version or "")
    return int(m.group(1)) if m else None
