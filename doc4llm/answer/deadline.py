"""One deadline per command (issue 30 / 29.6): every LLM call, retry and backoff wait of
`ask`, `explain-error`, `example` and `search --rerank llm` fits inside it, so a server
that never answers, or a slow local model, costs at most the deadline and not
requests x timeout x retries."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from doc4llm.errors import ExternalError

DEFAULT_DEADLINE_S = 180.0  # a 135M model on 2 CPU cores answers `ask` in 30-90 s


class DeadlineExceeded(ExternalError):
    """The command's deadline passed before the model could answer."""


@dataclass
class Deadline:
    seconds: float = DEFAULT_DEADLINE_S
    start: float = field(default_factory=time.monotonic)

    def remaining(self) -> float:
        return self.seconds - (time.monotonic() - self.start)

    def expired(self) -> bool:
        return self.remaining() <= 0

    def check(self, what: str) -> float:
        """The seconds left; DeadlineExceeded when none are."""
        left = self.remaining()
        if left <= 0:
            raise DeadlineExceeded(
                f"{what}: the command's {self.seconds:g} s deadline has passed",
                hint="raise it with --deadline SECONDS, DOC4LLM_DEADLINE or answer.deadline_s "
                     "in doc4llm.yaml, or use a faster model")
        return left
