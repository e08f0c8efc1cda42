"""One error hierarchy, so the CLI maps every failure to a clear message and exit code.

Exit codes: 0 success (including an honest "not found" search), 1 the thing asked for
does not exist (page, section, set), 2 bad input or usage, 3 an external failure
(network, API, a broken index that could not be rebuilt).
"""

from __future__ import annotations


class Doc4llmError(Exception):
    """Base class; `exit_code` tells the CLI how to exit."""

    exit_code = 3

    def __init__(self, message: str, *, hint: str | None = None, candidates: list[str] | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.candidates = candidates or []

    def to_dict(self) -> dict:
        return {
            "error": type(self).__name__,
            "message": self.message,
            "hint": self.hint,
            "candidates": self.candidates,
        }


class NotFoundError(Doc4llmError):
    """A set, page or section that does not exist (or a request that matches several)."""

    exit_code = 1


class InputError(Doc4llmError):
    """Bad input from the user: unsafe names, empty queries, malformed files."""

    exit_code = 2


class ExternalError(Doc4llmError):
    """Network, API or filesystem failures outside the user's input."""

    exit_code = 3
