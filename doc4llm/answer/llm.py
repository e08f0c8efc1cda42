"""The one LLM client `ask` uses: any OpenAI-compatible server, one model per role.

Retries are done here rather than by the openai SDK so that every 429/5xx/timeout and
every wait is recorded (the evaluation trace and the benchmark report them), and so that
the token count of every call is kept for the same reason.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from doc4llm.answer.config import AnswerConfig, load_answer_config
from doc4llm.answer.secrets import redact
from doc4llm.errors import ExternalError

NO_MODEL_HINT = (
    "set OPENAI_API_KEY (any non-empty value for a local server) and, for Ollama, vLLM or "
    "another OpenAI-compatible server, OPENAI_BASE_URL (e.g. http://localhost:11434/v1); "
    "models per role: DOC4LLM_SYNTHESIS_MODEL, DOC4LLM_EVALUATION_MODEL, "
    "DOC4LLM_RERANKING_MODEL or `answer.models` in doc4llm.yaml"
)


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False  # the server sent no usage; counted as characters / 4

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class LLMCall:
    """One logical call (all its attempts), as the trace reports it."""

    role: str
    model: str
    attempts: int = 0
    retries: list[dict] = field(default_factory=list)  # {"attempt", "error", "wait_s"}
    usage: Usage = field(default_factory=Usage)
    duration_ms: float = 0.0  # wall time inside chat(), backoff waits included
    ok: bool = False

    def to_dict(self) -> dict:
        return {
            "role": self.role,
            "model": self.model,
            "attempts": self.attempts,
            "retries": self.retries,
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
            "tokens_estimated": self.usage.estimated,
            "duration_ms": round(self.duration_ms, 1),
            "ok": self.ok,
        }


class LLMClient:
    def __init__(self, client: Any, config: AnswerConfig, *,
                 sleep: Callable[[float], None] = time.sleep):
        self._client = client
        self.config = config
        self._sleep = sleep
        self.calls: list[LLMCall] = []

    @classmethod
    def from_env(cls, config: AnswerConfig | None = None) -> LLMClient | None:
        """A client when OPENAI_API_KEY is set, else None (ask then returns sections only).
        Without `config`, settings come from the environment and ./doc4llm.yaml."""
        key = os.environ.get("OPENAI_API_KEY")
        if not key:
            return None
        from openai import OpenAI

        config = config or load_answer_config()
        client = OpenAI(api_key=key, base_url=config.base_url or None,
                        timeout=config.timeout_s, max_retries=0)
        return cls(client, config)

    def chat(self, role: str, messages: list[dict], json_mode: bool = False) -> tuple[str, Usage]:
        """Send `messages` to the model configured for `role`; retry 429/5xx/timeouts with backoff."""
        import openai

        model = self.config.model_for(role)
        call = LLMCall(role=role, model=model)
        self.calls.append(call)
        kwargs: dict[str, Any] = {"model": model, "messages": messages,
                                  "max_tokens": self.config.max_tokens}
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        start = time.perf_counter()
        try:
            for attempt in range(self.config.max_retries + 1):
                call.attempts = attempt + 1
                try:
                    response = self._client.chat.completions.create(**kwargs)
                except (openai.RateLimitError, openai.InternalServerError,
                        openai.APITimeoutError, openai.APIConnectionError) as exc:
                    if attempt == self.config.max_retries:
                        raise ExternalError(
                            f"{role} model call failed after {call.attempts} attempts: "
                            f"{_describe(exc)}", hint=NO_MODEL_HINT) from None
                    wait = self._wait_s(exc, attempt)
                    call.retries.append({"attempt": call.attempts, "error": _describe(exc),
                                         "wait_s": round(wait, 3)})
                    self._sleep(wait)
                    continue
                except openai.APIError as exc:
                    raise ExternalError(f"{role} model call failed: {_describe(exc)}",
                                        hint=NO_MODEL_HINT) from None
                except ValueError as exc:  # a 200 whose JSON body does not parse
                    raise ExternalError(f"{role} model call failed: the server's reply is not "
                                        f"valid JSON ({type(exc).__name__}: {redact(exc)})",
                                        hint=NO_MODEL_HINT) from None
                text, call.usage = _read(response, messages, role)
                call.ok = True
                return text, call.usage
        finally:
            call.duration_ms = (time.perf_counter() - start) * 1000
        raise AssertionError("unreachable: the retry loop returns or raises")

    def _wait_s(self, exc: Exception, attempt: int) -> float:
        """Retry-After when the server sends one, else exponential backoff; both capped."""
        response = getattr(exc, "response", None)
        retry_after = response.headers.get("retry-after") if response is not None else None
        try:
            wait = float(retry_after) if retry_after else self.config.backoff_base_s * 2**attempt
        except ValueError:  # an HTTP date: not worth parsing, use the backoff
            wait = self.config.backoff_base_s * 2**attempt
        return max(0.0, min(wait, self.config.backoff_max_s))

    def totals(self) -> dict:
        return {
            "llm_calls": len(self.calls),
            "prompt_tokens": sum(c.usage.prompt_tokens for c in self.calls),
            "completion_tokens": sum(c.usage.completion_tokens for c in self.calls),
            "total_tokens": sum(c.usage.total_tokens for c in self.calls),
            "retries": sum(len(c.retries) for c in self.calls),
            "llm_ms": round(sum(c.duration_ms for c in self.calls), 1),
        }


def _read(response: Any, messages: list[dict], role: str = "model") -> tuple[str, Usage]:
    """The reply's text and usage. The server is untrusted: a 200 reply that is not a chat
    completion (an HTML page, a proxy's error, JSON of another shape) is an ExternalError
    with a clear message, never an AttributeError from deep inside."""
    try:
        choices = response.choices
        if not isinstance(choices, list):
            raise TypeError("no choices")
        text = (choices[0].message.content or "") if choices else ""
    except (AttributeError, IndexError, KeyError, TypeError):
        raise ExternalError(f"{role} model call failed: the server's reply is not an OpenAI chat "
                            f"completion ({_shape(response)})", hint=NO_MODEL_HINT) from None
    if not isinstance(text, str):
        raise ExternalError(f"{role} model call failed: the reply's content is "
                            f"{type(text).__name__}, not text", hint=NO_MODEL_HINT)
    usage = getattr(response, "usage", None)
    if isinstance(getattr(usage, "prompt_tokens", None), int):
        completion = getattr(usage, "completion_tokens", None)
        return text, Usage(usage.prompt_tokens, completion if isinstance(completion, int) else 0)
    prompt_chars = sum(len(str(m.get("content", ""))) for m in messages)
    return text, Usage(prompt_chars // 4, len(text) // 4, estimated=True)


def _shape(response: Any) -> str:
    """What came back instead, briefly and with any key redacted."""
    if isinstance(response, (str, bytes)):
        head = response[:80].decode("utf-8", "replace") if isinstance(response, bytes) else response[:80]
        return f"got text: {redact(' '.join(head.split()))!r}"
    return f"got {type(response).__name__}"


def _describe(exc: Exception) -> str:
    status = getattr(exc, "status_code", None)
    kind = type(exc).__name__
    message = redact(getattr(exc, "message", None) or exc)
    return f"{kind} (HTTP {status}): {message}" if status else f"{kind}: {message}"
