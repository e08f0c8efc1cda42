"""`doc4llm add` and `doc4llm sync`: docs of packages at exact versions."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from doc4llm.cli.common import docs_dir_option, emit_json, handle_errors, json_option, warn

OFFLINE_HELP = ("Fetch nothing beyond the package registry: no source repository or docs site for "
                "docs the archive lacks.")
LANG_HELP = ("Also read the docs' translations into LANG (`es`, `pt-BR`; repeatable; `all`). "
             "Default: the docs' default language only (English, or the only language there is).")


def _langs(values: tuple[str, ...]) -> set[str] | None:
    """`--lang es --lang pt,fr` -> {"es", "pt", "fr"}; names are checked like any input."""
    import re

    from doc4llm.errors import InputError

    out = {v.strip().lower().replace("_", "-") for value in values for v in value.split(",") if v.strip()}
    for v in out:
        if not re.fullmatch(r"[a-z]{2,3}(-[a-z0-9]{2,8})?|all", v):
            raise InputError(f"--lang {v!r}: not a language code (such as es, pt-BR, zh-hans or all)")
    return out or None


def _print_add(r: dict) -> None:
    from doc4llm.ingest.packages.holdings import holdings_line

    verb = {"unchanged": "unchanged (same archive already built)"}.get(r["status"], r["status"])
    holds = r.get("holds")
    what = holdings_line(r["set_name"], holds) if holds else \
        f"{r['set_name']}  {r['pages']} pages, {r['api_sections']} API sections"
    click.echo(f"{what}  ({verb}, {r['seconds']:.1f}s)  ->  {r['path']}")
    if r.get("verified") == "unverified":
        click.echo("  unverified: neither a lockfile nor the registry gave a hash for this archive "
                   "(--require-hashes refuses such archives)")


_require_hashes_option = click.option(
    "--require-hashes", is_flag=True,
    help="Refuse an archive that neither the lockfile nor the registry gives a hash for.")


def _timeout_option(default: int, what: str):  # noqa: ANN202 - a click decorator
    return click.option("--timeout", type=click.FloatRange(1, None), default=default, show_default=True,
                        metavar="SECONDS", help=f"Give up on downloads after this long for the whole {what}.")


@click.command("add")
@click.argument("source")
@click.option("--set", "set_name", default=None,
              help="Doc set NAME@VERSION (default for packages: <name>@<version>; required for a URL or folder).")
@click.option("--force", is_flag=True, help="Rebuild a package set even when its archive has not changed.")
@click.option("--index-url", default=None, metavar="URL",
              help="PyPI simple index (default: $PIP_INDEX_URL, then pip.conf index-url, then PyPI).")
@click.option("--registry", default=None, metavar="URL",
              help="npm registry (default: $npm_config_registry, then .npmrc registry=, then npmjs).")
@click.option("--offline", is_flag=True, help=OFFLINE_HELP)
@click.option("--lang", "langs", multiple=True, metavar="LANG", help=LANG_HELP)
@_require_hashes_option
@_timeout_option(600, "add")
@docs_dir_option
@json_option
@handle_errors()
def add_cmd(source: str, set_name: str | None, force: bool, index_url: str | None, registry: str | None,
            offline: bool, langs: tuple[str, ...], require_hashes: bool, timeout: float, docs_dir: str | None,
            as_json: bool) -> None:
    """Add docs from SOURCE as a doc set.

    SOURCE: pypi:NAME[==VERSION], npm:NAME[@VERSION|RANGE|TAG], a package archive
    (.tar.gz, .tgz, .whl, .zip), a docs URL (scraped) or a local markdown folder or file
    (imported). A package gives NAME@VERSION built from its docs folder, README and
    changelog, plus an API reference read from its source (Python) or .d.ts files (npm),
    without running any of it. The archive is checked against the registry's hash and its
    own metadata (name, version); one without any hash is reported as unverified. When the
    archive has no docs, they come from the source repository at the version's tag, else
    the docs site its metadata names (not with --offline). Prints what the set holds and
    warns about what it lacks. Exit 2 on bad input (unknown package or version, hostile
    archive), 3 when a registry cannot be reached or an archive fails its checks; a
    repository or docs site that fails only adds a warning (exit 0).
    """
    from doc4llm.corpus.paths import resolve_docs_dir, validate_set_name
    from doc4llm.errors import InputError
    from doc4llm.ingest.packages.spec import is_archive_path, parse_source

    if set_name:
        validate_set_name(set_name)
    root = resolve_docs_dir(docs_dir)
    ref = parse_source(source)
    if ref is None and source.startswith(("http://", "https://")):
        if not set_name:
            raise InputError("a URL needs --set NAME@VERSION")
        from doc4llm.cli.scrape_cmd import scrape_cmd

        click.get_current_context().invoke(scrape_cmd, url=source, set_name=set_name, docs_dir=docs_dir,
                                           as_json=as_json)
        _index_added(root, set_name, {})
        return
    if ref is None:
        path = Path(source).expanduser()
        if not path.exists():
            raise InputError(f"{source}: not a package (pypi:NAME, npm:NAME), a URL, or an existing path")
        if not is_archive_path(path):
            if not set_name:
                raise InputError("a folder or markdown file needs --set NAME@VERSION")
            from doc4llm.cli.corpus_cmds import import_cmd

            click.get_current_context().invoke(import_cmd, path=source, set_name=set_name, docs_dir=docs_dir,
                                               as_json=as_json)
            _index_added(root, set_name, {})
            return
        from doc4llm.ingest.packages.build import cleanup_on_signals
        from doc4llm.ingest.packages.package_docs import add_archive

        with cleanup_on_signals():
            result = add_archive(path, root, set_name=set_name, offline=offline, langs=_langs(langs))
    else:
        from doc4llm.ingest.packages.build import cleanup_on_signals
        from doc4llm.ingest.packages.package_docs import add_package
        from doc4llm.ingest.packages.registry_config import npm_config

        npm = npm_config()
        if registry:
            npm.registry = registry if registry.endswith("/") else registry + "/"
        with cleanup_on_signals():
            result = add_package(ref, root, set_name=set_name, index_url=index_url, npm=npm, force=force,
                                 offline=offline, require_hashes=require_hashes, timeout=timeout,
                                 langs=_langs(langs))
    data = result.to_dict()
    for w in result.warnings:
        warn(f"warning: {w}")
    for m in result.missing:
        warn(f"warning: {result.set_name}: {m}")
    _index_added(root, result.set_name, data, unchanged=data.get("status") == "unchanged")
    if as_json:
        emit_json(data)
    else:
        _print_add(data)


def _index(root: Path, written: list[str], present: list[str] = (), removed: bool = False,
           progress=None) -> dict | None:
    """The lexical index of sets just written (index/service.py says why); a failure is a
    warning: the sets are there, and the first search indexes them."""
    from doc4llm.index.service import index_after_ingest

    try:
        report = index_after_ingest(root, written, present, removed=removed, progress=progress)
    except Exception as exc:  # noqa: BLE001 - the ingest itself succeeded
        warn(f"the search index was not updated ({type(exc).__name__}: {exc}); the first search will do it")
        return None
    return report.to_dict() if report is not None else None


def _index_added(root: Path, set_name: str | None, data: dict, unchanged: bool = False) -> None:
    """`add` leaves the new set in the lexical index: the first search does not pay for it
    (an unchanged set only when the index lacks it)."""
    if set_name:
        report = _index(root, [] if unchanged else [set_name], [set_name] if unchanged else [])
        if report is not None:
            data["index"] = report


class _Indexer:
    """The lexical index of what sync writes (index/service.py says why): each set as soon
    as it is built, overlapping the downloads still running; then the sets the index lacks
    and the purge of removed ones. A failure leaves the indexing to the first search."""

    def __init__(self, root: Path, progress):
        self.root, self.progress = root, progress
        self.totals: dict | None = None

    def _run(self, written: list[str], present: list[str] = (), removed: bool = False) -> None:
        data = _index(self.root, written, present, removed, self.progress)
        if data is None:
            return
        if self.totals is None:
            self.totals = {k: data[k] for k in ("pages_added", "pages_updated", "pages_removed", "seconds")}
        else:
            for k in ("pages_added", "pages_updated", "pages_removed", "seconds"):
                self.totals[k] = round(self.totals[k] + data[k], 3)

    def built(self, set_name: str) -> None:
        self._run([set_name])

    def finish(self, report) -> dict | None:
        present = [i.set_name for i in report.items if i.action == "skip" and i.set_name]
        removed = any(i.action == "remove" for i in report.items) or any(i.old_set for i in report.items)
        self._run([], present, removed)
        return self.totals


def _throttled(bar, seconds: float = 5.0):
    """Index progress: a bar on a terminal; otherwise a counter line every few seconds
    (one every 25 pages was 87 lines for a 19-package project)."""
    import time

    last = [0.0]

    def emit(msg: str) -> None:
        now = time.monotonic()
        if bar.tty or now - last[0] >= seconds or "/" not in msg:
            last[0] = now
            bar(msg)

    return emit


@click.command("sync")
@click.argument("project_dir", default=".", type=click.Path(file_okay=False))
@click.option("--all", "include_all", is_flag=True, help="Transitive dependencies too (from the lockfile).")
@click.option("--prune", is_flag=True,
              help="Remove sets this project synced earlier whose dependency is gone.")
@click.option("--dry-run", is_flag=True, help="Print the plan; change nothing.")
@click.option("--jobs", type=click.IntRange(1, 16), default=4, show_default=True,
              help="Packages downloaded and built at once.")
@click.option("--index-url", default=None, metavar="URL", help="PyPI simple index (default: pip's configuration).")
@click.option("--registry", default=None, metavar="URL", help="npm registry (default: npm's configuration).")
@click.option("--offline", is_flag=True, help=OFFLINE_HELP)
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
@click.option("--lang", "langs", multiple=True, metavar="LANG", help=LANG_HELP)
@_require_hashes_option
@_timeout_option(3600, "sync")
@docs_dir_option
@json_option
@handle_errors()
def sync_cmd(project_dir: str, include_all: bool, prune: bool, dry_run: bool, jobs: int, index_url: str | None,
             registry: str | None, offline: bool, langs: tuple[str, ...], quiet: bool, require_hashes: bool,
             timeout: float, docs_dir: str | None, as_json: bool) -> None:
    """One doc set per dependency of the project in PROJECT_DIR, at its locked version.

    Reads uv.lock, poetry.lock, pinned requirements*.txt, pyproject.toml, package-lock.json,
    pnpm-lock.yaml, yarn.lock or package.json. Unchanged versions are skipped; a changed
    version replaces the set; removed dependencies go only with --prune. Hashes the lockfile
    records are checked against each download. Per set, prints what it holds and what it
    lacks (and where that was looked for); docs missing from an archive come from the source
    repository or docs site, not with --offline. Exit 3 when some package could not be
    fetched or failed its checks (the others are still synced), 2 for a lockfile that does
    not parse or entries in it that cannot be read (listed; the others are synced); a
    repository or docs site that fails is only a warning.
    """
    from doc4llm.cli.progress import Progress
    from doc4llm.corpus.paths import resolve_docs_dir
    from doc4llm.errors import Doc4llmError
    from doc4llm.ingest.packages.build import cleanup_on_signals
    from doc4llm.ingest.packages.registry_config import npm_config
    from doc4llm.ingest.packages.sync import sync_project

    project = Path(project_dir)
    npm = npm_config(project)
    if registry:
        npm.registry = registry if registry.endswith("/") else registry + "/"
    with Progress() as bar:
        def progress(done: int, total: int, note: str) -> None:
            if quiet:
                return
            if bar.tty:
                bar.count("synced", "packages", done, total, note=note)
            else:
                bar.line(f"synced {done}/{total} packages  {note}")

        root = resolve_docs_dir(docs_dir)
        indexer = _Indexer(root, None if quiet else _throttled(bar))
        with cleanup_on_signals():
            report = sync_project(project, root, include_all=include_all, prune=prune,
                                  dry_run=dry_run, jobs=jobs, index_url=index_url, npm=npm, offline=offline,
                                  progress=progress, require_hashes=require_hashes, timeout=timeout,
                                  built=indexer.built, langs=_langs(langs))
        indexed = None if dry_run else indexer.finish(report)
    data = report.to_dict()
    if indexed is not None:
        data["index"] = indexed
    if as_json:
        emit_json(data)
    else:
        for line in report.lines():
            click.echo(line)
        if indexed is not None:
            click.echo(f"  indexed +{indexed['pages_added']} ~{indexed['pages_updated']} "
                       f"-{indexed['pages_removed']} pages for search ({indexed['seconds']:.1f}s)")
    code = report.exit_code()
    if code:
        if as_json:
            sys.exit(code)
        error = Doc4llmError(f"{len(report.failed)} of {len(report.items)} packages failed; the others are "
                             f"{'planned' if dry_run else 'synced'}", hint="see the lines marked 'failed' above")
        error.exit_code = code
        raise error
