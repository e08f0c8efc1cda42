"""`--project DIR` and `--all-sets`: which sets a command run in a synced project searches
(the rule is in corpus/projects.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

project_option = click.option(
    "--project", "project", type=click.Path(file_okay=False), default=None, metavar="DIR",
    help="Search the sets this synced project pins (default: the project the working directory is in, if synced).")
all_sets_option = click.option(
    "--all-sets", "all_sets", is_flag=True,
    help="Search every set, not only the synced project's (its pinned versions still rank first).")


def scope_options(fn: Callable) -> Callable:
    return project_option(all_sets_option(fn))


def cli_scope(docs_dir: Path, sets: list[str] | None, project: str | None, all_sets: bool):
    """The Scope of a CLI command: `--project`, else the working directory's project."""
    from doc4llm.corpus.model import list_sets
    from doc4llm.corpus.projects import resolve_scope

    names = [s.name for s in list_sets(docs_dir)]
    return resolve_scope(docs_dir, names, patterns=sets, all_sets=all_sets,
                         project_dir=Path(project) if project else None,
                         cwd=None if project else Path.cwd())
