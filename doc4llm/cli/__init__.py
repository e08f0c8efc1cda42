"""The `doc4llm` command group.

Each command lives in a small module under doc4llm/cli/ and is imported only when it
runs (a lazy group), so `doc4llm toc` does not pay for the search stack, and `doc4llm
search` does not pay for the scraper or the LLM client.
"""

from __future__ import annotations

import importlib

import click

from doc4llm import __version__

# command name -> "module:function". Add new commands here.
COMMANDS: dict[str, str] = {
    "import": "doc4llm.cli.corpus_cmds:import_cmd",
    "sets": "doc4llm.cli.corpus_cmds:sets_cmd",
    "where": "doc4llm.cli.corpus_cmds:where_cmd",
    "toc": "doc4llm.cli.reader_cmds:toc_cmd",
    "read": "doc4llm.cli.reader_cmds:read_cmd",
    "index": "doc4llm.cli.search_cmds:index_cmd",
    "search": "doc4llm.cli.search_cmds:search_cmd",
    "grep": "doc4llm.cli.search_cmds:grep_cmd",
    "eval": "doc4llm.cli.search_cmds:eval_cmd",
    "scrape": "doc4llm.cli.scrape_cmd:scrape_cmd",
    "add": "doc4llm.cli.package_cmds:add_cmd",
    "sync": "doc4llm.cli.package_cmds:sync_cmd",
    "ask": "doc4llm.cli.answer_cmds:ask_cmd",
    "verify": "doc4llm.cli.code_cmds:verify_cmd",
    "example": "doc4llm.cli.code_cmds:example_cmd",
    "explain-error": "doc4llm.cli.code_cmds:explain_error_cmd",
    "serve": "doc4llm.cli.agent_cmds:serve_cmd",
    "skills": "doc4llm.cli.agent_cmds:skills_group",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(n for n in COMMANDS if _available(n))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                return None  # command not built yet
            raise
        return getattr(module, attr, None)


def _available(name: str) -> bool:
    module_name = COMMANDS[name].split(":")[0]
    return importlib.util.find_spec(module_name) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="doc4llm")
def main() -> None:
    """doc4llm: local documentation search for coding agents.

    Docs live as markdown under md_docs/<Set>@<version>/<Page>/docContent.md with a
    docTOC.md heading tree. Data goes to stdout (--json on every data command), logs
    and progress to stderr. Exit codes: 0 ok, 1 not found, 2 bad input, 3 external error.
    """
    from doc4llm.secrets import install_stream_redaction

    install_stream_redaction()  # no API key is ever printed, whoever echoed it
