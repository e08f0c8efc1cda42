"""`doc4llm verify`, `doc4llm example`, `doc4llm explain-error`: thin click wrappers
over doc4llm.code."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from doc4llm.cli.common import docs_dir_option, emit_json, handle_errors, json_option, warn
from doc4llm.errors import InputError
from doc4llm.reader import scope_args


@click.command("verify")
@click.argument("source", metavar="FILE|-")
@click.option("--lang", default=None, help="Treat the whole input as code in this language.")
@json_option
@handle_errors()
def verify_cmd(source: str, lang: str | None, as_json: bool) -> None:
    """Check code syntax with tree-sitter: a code file, or every code block of a markdown
    file. Exit 1 when any block has a syntax error; languages without a grammar are
    reported "unverified"."""
    from doc4llm.code.verify import verify_text

    text, name = _read_source(source)
    reports = verify_text(text, lang=lang, filename=name)
    counts = {s: sum(r.status == s for r in reports) for s in ("ok", "error", "unverified")}
    if as_json:
        emit_json({"file": name or "-", "ok": counts["error"] == 0, "counts": counts,
                   "blocks": [r.to_dict() for r in reports]})
    else:
        for r in reports:
            lang_name = r.lang or r.label or "?"
            note = f"  ({r.note})" if r.note else ""
            click.echo(f"{r.status:<10} {lang_name:<11} lines {r.lines[0]}-{r.lines[1]}{note}")
            for issue in r.errors:
                click.echo(f"  line {issue.line}, column {issue.column}: {issue.message}")
        if not reports:
            click.echo("no code blocks found")
        click.echo(f"{len(reports)} block(s): {counts['ok']} ok, {counts['error']} error, "
                   f"{counts['unverified']} unverified")
    if counts["error"]:
        sys.exit(1)


def _read_source(source: str) -> tuple[str, str | None]:
    if source == "-":
        return sys.stdin.read(), None
    path = Path(source)
    if not path.is_file():  # a missing input is bad input (exit 2), as for `import`
        raise InputError(f"{source} does not exist" if not path.exists() else f"{source} is not a file")
    try:
        return path.read_text(encoding="utf-8"), path.name
    except UnicodeDecodeError as exc:
        raise InputError(f"{source} is not UTF-8 text") from exc


set_option = click.option("--set", "sets", multiple=True, metavar="NAME@VER",
                          help="Doc set (NAME@VER or glob); repeatable. Default: all.")
no_llm_option = click.option("--no-llm", is_flag=True,
                             help="Never call the LLM, even with OPENAI_API_KEY set.")
deadline_option = click.option(
    "--deadline", "deadline_s", type=click.FloatRange(min=1), default=None, metavar="SECONDS",
    help="Give up on the LLM after this long in all (default 180, DOC4LLM_DEADLINE or "
         "answer.deadline_s); the sections are kept.")


def _llm(no_llm: bool, deadline_s: float | None = None):
    """The configured LLM client, or None (offline: best sections and guidance). Its
    deadline starts now and covers every call of the command."""
    if no_llm:
        return None
    from doc4llm.answer.config import load_answer_config
    from doc4llm.answer.deadline import Deadline
    from doc4llm.answer.llm import LLMClient

    config = load_answer_config()
    return LLMClient.from_env(config, deadline=Deadline(deadline_s or config.deadline_s))


def _exit_if_failed(result: dict) -> None:
    """The model failed: the sections were printed, the exit code says it (3)."""
    failure = result.get("llm_error")
    if failure:
        sys.exit(failure["exit_code"])


def _text_arg(text: str) -> str:
    """`-` reads the text from stdin (multi-line tracebacks)."""
    text = sys.stdin.read() if text == "-" else text
    if not text.strip():
        raise InputError("the text is empty", hint='doc4llm explain-error "TypeError: fetch failed"')
    return text


@click.command("example", context_settings={"ignore_unknown_options": True})
@click.argument("task")
@set_option
@no_llm_option
@deadline_option
@docs_dir_option
@json_option
@handle_errors()
def example_cmd(task: str, sets: tuple[str, ...], no_llm: bool, deadline_s: float | None,
                docs_dir: str | None, as_json: bool) -> None:
    """A working code example for TASK: the best documented code (completed with the
    imports its page shows elsewhere, and verified), synthesised by the LLM when one is
    configured."""
    from doc4llm.code.example import working_example
    from doc4llm.corpus.paths import resolve_docs_dir

    result = working_example(_text_arg(task), docs_dir=resolve_docs_dir(docs_dir),
                             sets=list(sets) or None, llm=_llm(no_llm, deadline_s),
                             docs_arg=docs_dir)
    if as_json:
        emit_json(result)
        _exit_if_failed(result)
        return
    for line in result["warnings"]:
        warn(line)
    example = result["example"]
    if result["answer"]:
        click.echo(result["answer"])
    elif example:
        src = example["source"]
        click.echo(f"{' > '.join(src['heading_path'])}  [{src['doc_set']}/{src['page']}] "
                   f"lines {src['lines'][0]}-{src['lines'][1]}  ({example['lang']}, syntax {example['status']})")
        click.echo(f"```{example['lang']}\n{example['code']}\n```")
    for alt in result["alternatives"]:
        click.echo(f"also: {' > '.join(alt['heading_path'])}  ({alt['lang']})  {alt['read']}")
    for line in result["guidance"]:
        click.echo(line)
    _exit_if_failed(result)


@click.command("explain-error", context_settings={"ignore_unknown_options": True})
@click.argument("text", metavar="TEXT|-")
@set_option
@click.option("-k", "k", type=click.IntRange(1, 20), default=5, show_default=True, help="Sections to return.")
@no_llm_option
@deadline_option
@docs_dir_option
@json_option
@handle_errors()
def explain_error_cmd(text: str, sets: tuple[str, ...], k: int, no_llm: bool,
                      deadline_s: float | None, docs_dir: str | None, as_json: bool) -> None:
    """Explain an error message from the docs: troubleshooting and reference sections
    about it, ranked; with an LLM configured, the cause and a fix."""
    from doc4llm.code.explain import explain_error
    from doc4llm.corpus.paths import resolve_docs_dir

    result = explain_error(_text_arg(text), docs_dir=resolve_docs_dir(docs_dir),
                           sets=list(sets) or None, k=k, llm=_llm(no_llm, deadline_s),
                           docs_arg=docs_dir)
    if as_json:
        emit_json(result)
        _exit_if_failed(result)
        return
    for line in result["warnings"]:
        warn(line)
    err = result["error"]
    click.echo(f"error: {err['line']}" + (f"  (type {err['error_type']})" if err["error_type"] else ""))
    if result["explanation"]:
        click.echo(result["explanation"])
    for r in result["results"]:
        click.echo(f"{r['rank']}. {' > '.join(r['heading_path'])}  [{r['doc_set']}/{r['page']}] "
                   f"lines {r['lines'][0]}-{r['lines'][1]}  ({', '.join(r['why'])})")
    for step in result["guidance"]["next_steps"]:
        click.echo(f"next: {step}")
    for query in result["guidance"]["suggested_searches"]:
        click.echo(f"search: doc4llm search {shlex.quote(query)}{scope_args(sets, docs_dir)}")
    for web in result["guidance"]["web_searches"]:
        click.echo(f"web: {web['query'] if isinstance(web, dict) else web}")
    _exit_if_failed(result)
