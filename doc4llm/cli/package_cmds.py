"""`doc4llm add` and `doc4llm sync`: docs of packages at exact versions."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from doc4llm.cli.common import docs_dir_option, emit_json, handle_errors, json_option, warn

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
    src = ", ".join(f"{n} {k}" for k, n in r["sources"].items()) or "no pages"
    verb = {"unchanged": "unchanged (same archive already built)"}.get(r["status"], r["status"])
    click.echo(f"{r['set_name']}: {verb}  {r['pages']} pages ({src}), {r['api_sections']} API sections"
               f"  {r['seconds']:.1f}s  ->  {r['path']}")


@click.command("add")
@click.argument("source")
@click.option("--set", "set_name", default=None,
              help="Doc set NAME@VERSION (default for packages: <name>@<version>; required for a URL or folder).")
@click.option("--force", is_flag=True, help="Rebuild a package set even when its archive has not changed.")
@click.option("--index-url", default=None, metavar="URL",
              help="PyPI simple index (default: $PIP_INDEX_URL, then pip.conf index-url, then PyPI).")
@click.option("--registry", default=None, metavar="URL",
              help="npm registry (default: $npm_config_registry, then .npmrc registry=, then npmjs).")
@click.option("--lang", "langs", multiple=True, metavar="LANG", help=LANG_HELP)
@docs_dir_option
@json_option
@handle_errors()
def add_cmd(source: str, set_name: str | None, force: bool, index_url: str | None, registry: str | None,
            langs: tuple[str, ...], docs_dir: str | None, as_json: bool) -> None:
    """Add docs from SOURCE as a doc set.

    SOURCE: pypi:NAME[==VERSION], npm:NAME[@VERSION|RANGE|TAG], a package archive
    (.tar.gz, .tgz, .whl, .zip), a docs URL (scraped) or a local markdown folder or file
    (imported). A package gives NAME@VERSION built from its docs folder, README and
    changelog, plus an API reference read from its source (Python) or .d.ts files (npm),
    without running any of it. Exit 2 on bad input (unknown package or version, hostile
    archive), 3 when a registry cannot be reached.
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
            return
        from doc4llm.ingest.packages.package_docs import add_archive

        result = add_archive(path, root, set_name=set_name, langs=_langs(langs))
    else:
        from doc4llm.ingest.packages.package_docs import add_package
        from doc4llm.ingest.packages.registry_config import npm_config

        npm = npm_config()
        if registry:
            npm.registry = registry if registry.endswith("/") else registry + "/"
        result = add_package(ref, root, set_name=set_name, index_url=index_url, npm=npm, force=force,
                             langs=_langs(langs))
    data = result.to_dict()
    for w in result.warnings:
        warn(f"warning: {w}")
    if as_json:
        emit_json(data)
    else:
        _print_add(data)


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
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
@click.option("--lang", "langs", multiple=True, metavar="LANG", help=LANG_HELP)
@docs_dir_option
@json_option
@handle_errors()
def sync_cmd(project_dir: str, include_all: bool, prune: bool, dry_run: bool, jobs: int, index_url: str | None,
             registry: str | None, quiet: bool, langs: tuple[str, ...], docs_dir: str | None, as_json: bool) -> None:
    """One doc set per dependency of the project in PROJECT_DIR, at its locked version.

    Reads uv.lock, poetry.lock, pinned requirements*.txt, pyproject.toml, package-lock.json,
    pnpm-lock.yaml, yarn.lock or package.json. Unchanged versions are skipped; a changed
    version replaces the set; removed dependencies go only with --prune. Exit 3 when some
    package could not be fetched (the others are still synced), 2 for a lockfile that
    does not parse.
    """
    from doc4llm.cli.progress import Progress
    from doc4llm.corpus.paths import resolve_docs_dir
    from doc4llm.errors import ExternalError
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

        report = sync_project(project, resolve_docs_dir(docs_dir), include_all=include_all, prune=prune,
                              dry_run=dry_run, jobs=jobs, index_url=index_url, npm=npm, progress=progress,
                              langs=_langs(langs))
    data = report.to_dict()
    if as_json:
        emit_json(data)
    else:
        for line in report.lines():
            click.echo(line)
    if report.failed:
        if as_json:
            sys.exit(ExternalError.exit_code)
        raise ExternalError(f"{len(report.failed)} of {len(report.items)} packages failed; the others are synced",
                            hint="see the lines marked 'failed' above")
