"""The one redaction point: no configured secret value ever leaves the process.

OPENAI_API_KEY and TAVILY_API_KEY are read from the environment only. A hostile or
careless server can still echo one back (in model output, a web result's title, an error
body), so every way out passes through here, whoever produced the text:

- stdout and stderr: `install_stream_redaction` wraps both streams (the CLI does it first);
- MCP tool results and errors: `redact_data` / `redact` in the server's one `call` helper;
- files: `corpus.atomic.atomic_write_text` (pages, docTOC.md, set metadata, sessions) and
  page folder names (`corpus.paths.sanitize_folder_name`);
- the index: section text and titles as `index.build` writes them.

Each value is also replaced in its JSON-escaped and URL-encoded spellings.
"""

from __future__ import annotations

import io
import json
import os
import sys
from typing import Any
from urllib.parse import quote

SECRET_ENV_VARS = ("OPENAI_API_KEY", "TAVILY_API_KEY")
MASK = "***"
MIN_SECRET_CHARS = 4  # a shorter "key" would mask ordinary text and protect nothing


def secret_values() -> list[str]:
    """Every spelling of every configured secret, longest first (read at each call, so a
    key set after start-up is covered too)."""
    out: set[str] = set()
    for var in SECRET_ENV_VARS:
        value = (os.environ.get(var) or "").strip()
        if len(value) < MIN_SECRET_CHARS:
            continue
        out.add(value)
        out.add(json.dumps(value)[1:-1])
        out.add(json.dumps(value, ensure_ascii=False)[1:-1])
        out.add(quote(value, safe=""))
    return sorted(out, key=len, reverse=True)


def redact(text: object) -> str:
    """`text` as a string with every configured secret value replaced by '***'."""
    out = str(text)
    for value in secret_values():
        if value in out:
            out = out.replace(value, MASK)
    return out


def redact_data(data: Any) -> Any:
    """`redact` applied to every string (keys included) of a JSON-like structure."""
    values = secret_values()
    if not values:
        return data
    return _walk(data, values)


def _walk(data: Any, values: list[str]) -> Any:
    if isinstance(data, str):
        for value in values:
            if value in data:
                data = data.replace(value, MASK)
        return data
    if isinstance(data, dict):
        return {_walk(k, values): _walk(v, values) for k, v in data.items()}
    if isinstance(data, list):
        return [_walk(v, values) for v in data]
    if isinstance(data, tuple):
        return tuple(_walk(v, values) for v in data)
    return data


class RedactingStream(io.TextIOBase):
    """A text stream that redacts each write before passing it on.

    It keeps the wrapped stream's encoding and errors so click writes to it as is (and
    does not reach around it for the binary buffer). A key never spans two writes: print
    and click.echo write each message whole, and keys hold no line breaks."""

    def __init__(self, stream: Any):
        super().__init__()
        self._stream = stream

    @property
    def wrapped(self) -> Any:
        return self._stream

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._stream, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self._stream, "errors", None)

    @property
    def buffer(self) -> Any:
        """The raw byte stream, for writers that need bytes (the MCP stdio transport,
        whose replies are redacted where they are made)."""
        return self._stream.buffer

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # click probes with b"": a text stream must refuse
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._stream.write(redact(text) if secret_values() else text)
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def fileno(self) -> int:
        return self._stream.fileno()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def writable(self) -> bool:
        return True


def install_stream_redaction() -> None:
    """Wrap sys.stdout and sys.stderr (once) so nothing printed can carry a secret."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, RedactingStream):
            setattr(sys, name, RedactingStream(stream))
