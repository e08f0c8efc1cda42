"""`doc4llm import` and `doc4llm sets`."""

from __future__ import annotations

import click

from doc4llm.cli.common import docs_dir_option, emit_json, handle_errors, json_option, warn
from doc4llm.corpus.paths import resolve_docs_dir, validate_set_name


@click.command("import")
@click.argument("path", type=click.Path())
@click.option("--set", "set_name", required=True, help="Target doc set, NAME@VERSION.")
@click.option("--prune", is_flag=True, help="Remove pages whose source file vanished (only pages this import created).")
@click.option("--max-file-mb", default=20, show_default=True, help="Skip files larger than this, with a warning.")
@docs_dir_option
@json_option
@handle_errors()
def import_cmd(path: str, set_name: str, prune: bool, max_file_mb: int, docs_dir: str | None, as_json: bool) -> None:
    """Import a local markdown folder (recursive) or file as a doc set."""
    from doc4llm.ingest.importer import import_path

    validate_set_name(set_name)
    root = resolve_docs_dir(docs_dir)

    def progress(i: int, n: int, rel: str) -> None:
        if n >= 20 and (i % 50 == 0 or i == n):
            click.echo(f"doc4llm: imported {i}/{n} files", err=True)

    summary = import_path(path, root, set_name, prune=prune, max_bytes=max_file_mb * 1024 * 1024,
                          progress=progress)
    data = summary.to_dict()
    for s in summary.skipped:
        warn(f"warning: skipped {s['path']}: {s['reason']}")
    if as_json:
        emit_json(data)
        return
    c = data["counts"]
    click.echo(f"{set_name}: {c['created']} created, {c['updated']} updated, {c['unchanged']} unchanged, "
               f"{c['pruned']} pruned, {c['skipped']} skipped  ->  {root / set_name}")


@click.command("sets")
@docs_dir_option
@json_option
@handle_errors()
def sets_cmd(docs_dir: str | None, as_json: bool) -> None:
    """List doc sets with page counts and index state."""
    from doc4llm.corpus.model import list_sets

    root = resolve_docs_dir(docs_dir)
    try:
        from doc4llm.index.state import index_states
        states = index_states(root)
    except ImportError:
        states = {}
    rows = []
    for s in list_sets(root):
        meta = s.metadata
        origins = meta.get("origins") or {}
        src = next((o.get("root_url") or o.get("root") for o in origins.values() if isinstance(o, dict)), None)
        row = {"name": s.name, "path": str(s.path), "pages": len(s.pages()), "source": src,
               "updated": meta.get("updated"), "index": states.get(s.name, "not indexed")}
        package = meta.get("package")
        if isinstance(package, dict) and isinstance(package.get("holds"), dict):
            row["holds"] = package["holds"]  # what a package set holds and lacks (add/sync)
            row["missing"] = [str(m) for m in package.get("missing") or []]
        rows.append(row)
    if as_json:
        emit_json({"docs_dir": str(root), "sets": rows})
        return
    if not rows:
        missing = "" if root.is_dir() else ": the folder does not exist"
        click.echo(f"no doc sets in {root}{missing} (pass --docs-dir or set DOC4LLM_DOCS_DIR; "
                   "import one: doc4llm import PATH --set NAME@VER)")
        return
    from doc4llm.ingest.packages.holdings import holdings_line

    for r in rows:
        click.echo(f"{r['name']}  {r['pages']} pages  index: {r['index']}" + (f"  source: {r['source']}" if r['source'] else ""))
        if "holds" in r:
            click.echo("    holds: " + holdings_line("", r["holds"]).strip())
            for m in r["missing"]:
                click.echo(f"    warning: {m}")


def docs_dir_origin(docs_dir: str | None) -> str:
    """Which setting chose the docs root (same precedence as `resolve_docs_dir`)."""
    import os

    from doc4llm.config import CONFIG_ENV, setting
    from doc4llm.corpus.paths import DOCS_DIR_ENV

    if docs_dir:
        return "--docs-dir"
    if os.environ.get(DOCS_DIR_ENV):
        return DOCS_DIR_ENV
    if setting("docs_dir"):
        return os.environ.get(CONFIG_ENV) or "doc4llm.yaml"
    return "default (./md_docs)"


@click.command("where")
@docs_dir_option
@json_option
@handle_errors()
def where_cmd(docs_dir: str | None, as_json: bool) -> None:
    """Print the docs root as an absolute path (for grep fallbacks and scripts).

    Resolution: --docs-dir, then $DOC4LLM_DOCS_DIR, then docs_dir in doc4llm.yaml, then
    ./md_docs. Exit 1 when that folder holds no doc set (the path is still printed).
    """
    import shlex

    from doc4llm.corpus.model import list_sets
    from doc4llm.errors import NotFoundError

    root = resolve_docs_dir(docs_dir)
    sets = [s.name for s in list_sets(root)] if root.is_dir() else []
    if as_json:
        emit_json({"docs_dir": str(root), "shell": shlex.quote(str(root)), "from": docs_dir_origin(docs_dir),
                   "exists": root.is_dir(), "sets": sets})
    else:
        click.echo(str(root))
    if not sets:
        raise NotFoundError(f"no doc sets in {root} (chosen by {docs_dir_origin(docs_dir)})",
                            hint="pass --docs-dir DIR, set DOC4LLM_DOCS_DIR, or put docs_dir: DIR "
                                 "in doc4llm.yaml; import docs with doc4llm import PATH --set NAME@VER")
