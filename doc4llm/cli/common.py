"""Shared CLI plumbing: the --docs-dir option, JSON/text output, error handling."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from typing import Any

import click

from doc4llm.corpus.controls import strip_controls
from doc4llm.errors import Doc4llmError, ExternalError

docs_dir_option = click.option(
    "--docs-dir",
    "docs_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Docs root (default: $DOC4LLM_DOCS_DIR, then ./md_docs).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")


def warn(message: str) -> None:
    """Logs and warnings go to stderr, never stdout."""
    click.echo(strip_controls(f"doc4llm: {message}"), err=True)


def echo_text(text: str) -> None:
    """Text output that may quote documentation: terminal control sequences removed."""
    click.echo(strip_controls(text))


_RAW_IN_JSON = {c: f"\\u{c:04x}" for c in [0x7F, *range(0x80, 0xA0)]}  # DEL and C1: JSON leaves them raw


def emit_json(data: Any) -> None:
    """One JSON object; control characters escaped (json escapes C0, these the rest)."""
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str).translate(_RAW_IN_JSON))


def handle_errors(as_json_param: str = "as_json") -> Callable:
    """Turn Doc4llmError into a clear message (JSON on stdout with --json) and exit code."""

    def decorator(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                try:
                    return fn(*args, **kwargs)
                except BrokenPipeError:  # the reader went away (`| head`): not an error
                    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                    sys.exit(0)
                except OSError as exc:  # disk full, permissions...: a message, not a traceback
                    raise ExternalError(f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": ")) from exc
            except Doc4llmError as exc:
                if kwargs.get(as_json_param):
                    emit_json(exc.to_dict())
                msg = f"doc4llm: error: {exc.message}"
                if exc.candidates:
                    msg += "\n  candidates:\n" + "\n".join(f"    {c}" for c in exc.candidates)
                if exc.hint:
                    msg += f"\n  hint: {exc.hint}"
                click.echo(strip_controls(msg), err=True)
                sys.exit(exc.exit_code)

        return wrapper

    return decorator
