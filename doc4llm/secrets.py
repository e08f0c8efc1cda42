"""The one redaction point: no configured secret value ever leaves the process.

OPENAI_API_KEY and TAVILY_API_KEY are read from the environment only. A hostile or
careless server can still echo one back (in model output, a web result's title, an error
body), so every way out passes through here, whoever produced the text:

- stdout and stderr: `install_stream_redaction` wraps both streams (the CLI does it first);
- MCP tool results and errors: `redact_data` / `redact` in the server's one `call` helper;
- files: `corpus.atomic.atomic_write_text` (pages, docTOC.md, set metadata, sessions) and
  page folder names (`corpus.paths.sanitize_folder_name`);
- the index: section text and titles as `index.build` writes them.

Each value is also replaced in its JSON-escaped, URL-encoded and base64 spellings, and
any percent-encoded token is decoded before it is checked (`sk%2Dtest...`).

Only values that can be secrets are masked (`is_secret_like`: 16+ characters, varied,
with a digit or a capital): `OPENAI_API_KEY=local`, as a local server wants, must not turn
every "localhost" in the docs, the help and the guidance into "***host" (issue 30).
"""

from __future__ import annotations

import base64
import io
import json
import math
import os
import re
import sys
from collections import Counter
from functools import lru_cache
from typing import Any
from urllib.parse import quote, unquote

SECRET_ENV_VARS = ("OPENAI_API_KEY", "TAVILY_API_KEY")
MASK = "***"
MIN_SECRET_CHARS = 16  # API keys are 20-170 characters; placeholders ("local", "EMPTY") are short
MIN_ENTROPY_BITS = 3.0  # per character: random keys score 3.7-5, words and "ollama-local-key" less
_TOKEN = re.compile(r"\S+")  # linear: each match consumes its characters


def is_secret_like(value: str) -> bool:
    """Whether `value` can be a secret rather than an ordinary word: long, varied, and with a
    digit or a capital letter (a random key without both is vanishingly rare)."""
    if len(value) < MIN_SECRET_CHARS or not any(c.isdigit() or c.isupper() for c in value):
        return False
    n = len(value)
    entropy = -sum(c / n * math.log2(c / n) for c in Counter(value).values())
    return entropy >= MIN_ENTROPY_BITS


def secret_values() -> list[str]:
    """Every spelling of every configured secret, longest first (read at each call, so a
    key set after start-up is covered too)."""
    return list(_spellings(tuple((os.environ.get(v) or "").strip() for v in SECRET_ENV_VARS)))


@lru_cache(maxsize=8)
def _spellings(values: tuple[str, ...]) -> tuple[str, ...]:
    out: set[str] = set()
    for value in values:
        if not is_secret_like(value):
            continue
        out.add(value)
        out.add(json.dumps(value)[1:-1])
        out.add(json.dumps(value, ensure_ascii=False)[1:-1])
        out.add(quote(value, safe=""))
        out.update(_base64_spellings(value.encode("utf-8")))
    return tuple(sorted(out, key=len, reverse=True))


def _base64_spellings(raw: bytes) -> set[str]:
    """The key's base64 as it appears inside any longer base64 text (an HTTP Basic header,
    a data URL): at each of the 3 byte alignments, the characters that depend only on the
    key, in the standard and URL-safe alphabets."""
    out: set[str] = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode("ascii")
        start = (offset * 8 + 5) // 6
        end = ((offset + len(raw)) * 8) // 6
        core = encoded[start:end]
        if len(core) >= MIN_SECRET_CHARS:
            out.add(core)
            out.add(core.replace("+", "-").replace("/", "_"))
    return out


def redact(text: object) -> str:
    """`text` as a string with every configured secret value replaced by '***'."""
    out = str(text)
    values = secret_values()
    if not values:
        return out
    return _redact_with(out, values)


def _redact_with(text: str, values: list[str]) -> str:
    for value in values:
        if value in text:
            text = text.replace(value, MASK)
    if "%" in text:  # any percent-encoding of the key, whatever the encoder left plain
        text = _TOKEN.sub(lambda m: _decoded_token(m.group(0), values), text)
    return text


def _decoded_token(token: str, values: list[str]) -> str:
    if "%" not in token:
        return token
    decoded = unquote(token)
    if decoded == token or not any(v in decoded for v in values):
        return token
    for value in values:
        decoded = decoded.replace(value, MASK)
    return decoded


def redact_data(data: Any) -> Any:
    """`redact` applied to every string (keys included) of a JSON-like structure."""
    values = secret_values()
    if not values:
        return data
    return _walk(data, values)


def _walk(data: Any, values: list[str]) -> Any:
    if isinstance(data, str):
        return _redact_with(data, values)
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
