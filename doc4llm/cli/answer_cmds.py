"""`doc4llm ask`: a thin command over doc4llm.answer (search -> answer -> evaluation loop)."""

from __future__ import annotations

import sys

import click

from doc4llm.cli.common import docs_dir_option, emit_json, handle_errors, json_option, warn


@click.command("ask", context_settings={"ignore_unknown_options": True})
@click.argument("question")
@docs_dir_option
@click.option("--set", "sets", multiple=True, metavar="NAME@VER",
              help="Search only these doc sets (repeatable).")
@click.option("-k", "k", type=click.IntRange(1, 50), default=5, show_default=True,
              help="Doc sections given to the model per search.")
@json_option
@click.option("--trace", "show_trace", is_flag=True,
              help="Include the evaluation trace (steps, decisions, LLM calls, tokens).")
@click.option("--save-web", "save_web", metavar="NAME@VER", default=None,
              help="Save web results as this doc set, so later searches find them locally.")
@click.option("--max-iterations", type=click.IntRange(1, 10), default=None,
              help="Cap on evaluations (default 3, or answer.max_iterations in doc4llm.yaml).")
@click.option("--no-web", is_flag=True, help="Never search the web, even with TAVILY_API_KEY.")
@click.option("--deadline", "deadline_s", type=click.FloatRange(min=1), default=None,
              metavar="SECONDS", help="The whole command's time limit (default 180, "
              "DOC4LLM_DEADLINE or answer.deadline_s); past it: the sections found, exit 3.")
@handle_errors()
def ask_cmd(question: str, docs_dir: str | None, sets: tuple[str, ...], k: int, as_json: bool,
            show_trace: bool, save_web: str | None, max_iterations: int | None,
            no_web: bool, deadline_s: float | None) -> None:
    """Answer QUESTION from the docs with cited sections, check the answer, and go further
    (more doc searches, a web search, a refinement) or say honestly what is missing.

    Needs OPENAI_API_KEY (OPENAI_BASE_URL for Ollama/vLLM/any compatible server) for the
    answer text; without it, prints the sections found and search guidance. TAVILY_API_KEY
    enables web search.
    """
    from doc4llm.answer.response import render_text
    from doc4llm.answer.service import ask

    response = ask(question, docs_dir=docs_dir, sets=list(sets), k=k, include_trace=show_trace,
                   save_web=save_web, max_iterations=max_iterations, web=not no_web,
                   deadline_s=deadline_s)
    failed = response["metadata"].get("error")  # the configured model could not answer
    if as_json:
        emit_json(response)
        if failed:
            sys.exit(failed["exit_code"])
        return
    click.echo(render_text(response, show_trace=show_trace))
    for message in response["metadata"]["warnings"]:
        warn(message)
    saved = response["metadata"].get("savedWeb")
    if saved:
        warn(f"saved {len(saved['pages'])} web page(s) to {saved['set']}")
    if failed:
        sys.exit(failed["exit_code"])
