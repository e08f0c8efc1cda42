"""Keep API keys out of everything doc4llm prints, logs, traces or writes.

Keys are read from the environment only where a client is built; any text that may
carry a server's echo of a key (exception messages, error bodies) passes `redact` first.
"""

from __future__ import annotations

import os

SECRET_ENV_VARS = ("OPENAI_API_KEY", "TAVILY_API_KEY")


def redact(text: object) -> str:
    """`text` as a string with every configured key value replaced by '***'."""
    out = str(text)
    for var in SECRET_ENV_VARS:
        value = os.environ.get(var)
        if value and len(value) >= 4:
            out = out.replace(value, "***")
    return out
