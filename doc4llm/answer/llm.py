"""The one LLM client `ask` uses: any OpenAI-compatible server, one model per role.

Retries are done here rather than by the openai SDK so that every 429/5xx/timeout and
every wait is recorded (the evaluation trace and the benchmark report them), and so that
the token count of every call is kept for the same reason.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from doc4llm.answer.config import AnswerConfig, load_answer_config
from doc4llm.answer.deadline import Deadline, DeadlineExceeded
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
    response_format: str | None = None  # the FORMATS level the server accepted
    format_fallbacks: list[dict] = field(default_factory=list)  # levels it refused

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
            "response_format": self.response_format,
            "format_fallbacks": self.format_fallbacks,
        }


# what a reply may be asked to look like, most to least constrained (see _response_format)
FORMATS = ("json_schema", "json_object_schema", "json_object", "text")
MIN_CALL_S = 1.0  # a call with less time than this left is not started


class LLMClient:
    """Calls with a per-command deadline and the strongest response_format the server takes.

    Time policy (issue 30): every call's wall time is capped by both `timeout_s` and what is
    left of the command's deadline, enforced by a watchdog that closes the connection (a
    server that trickles bytes defeats a read timeout); a timed-out call is not retried,
    because on a one-slot local server the retry would only queue behind the abandoned
    generation. 429 / 5xx / refused connections are retried while the deadline allows.
    """

    def __init__(self, client: Any, config: AnswerConfig, *,
                 sleep: Callable[[float], None] = time.sleep,
                 deadline: Deadline | None = None,
                 factory: Callable[[], Any] | None = None):
        self._client = client
        self._factory = factory
        self.config = config
        self.deadline = deadline or Deadline(config.deadline_s)
        self._sleep = sleep
        self._format_floor = 0  # index into FORMATS: levels this server refused are skipped
        self.calls: list[LLMCall] = []

    @classmethod
    def from_env(cls, config: AnswerConfig | None = None, *,
                 deadline: Deadline | None = None) -> LLMClient | None:
        """A client when OPENAI_API_KEY is set, else None (ask then returns sections only).
        Without `config`, settings come from the environment and ./doc4llm.yaml."""
        key = os.environ.get("OPENAI_API_KEY")
        if not key:
            return None
        from openai import OpenAI

        config = config or load_answer_config()

        def factory() -> Any:
            return OpenAI(api_key=key, base_url=config.base_url or None,
                          timeout=config.timeout_s, max_retries=0)

        return cls(factory(), config, deadline=deadline, factory=factory)

    def chat(self, role: str, messages: list[dict], *, schema: dict | None = None,
             schema_name: str = "reply", max_tokens: int | None = None,
             temperature: float | None = None) -> tuple[str, Usage]:
        """Send `messages` to the model configured for `role`. With `schema` the reply is
        requested in that JSON shape (json_schema, else JSON mode with the schema, else
        JSON mode, else plain: each level a server refuses with 400/422 is not asked again).
        The caller still validates the reply (structured.parse_reply)."""
        model = self.config.model_for(role)
        call = LLMCall(role=role, model=model)
        self.calls.append(call)
        kwargs: dict[str, Any] = {"model": model, "messages": messages,
                                  "max_tokens": max_tokens or self.config.max_tokens}
        if temperature is not None:
            kwargs["temperature"] = temperature
        start = time.perf_counter()
        try:
            level = self._format_floor if schema is not None else len(FORMATS) - 1
            while True:
                response_format = _response_format(FORMATS[level], schema, schema_name)
                if response_format is not None:
                    kwargs["response_format"] = response_format
                else:
                    kwargs.pop("response_format", None)
                try:
                    response = self._with_retries(call, role, kwargs)
                except _FormatRefused as refused:
                    if level >= len(FORMATS) - 1:
                        raise ExternalError(f"{role} model call failed: {refused.detail}",
                                            hint=NO_MODEL_HINT) from None
                    call.format_fallbacks.append({"refused": FORMATS[level],
                                                  "error": refused.detail})
                    level += 1
                    self._format_floor = max(self._format_floor, level)
                    continue
                call.response_format = FORMATS[level] if schema is not None else None
                text, call.usage = _read(response, messages, role)
                call.ok = True
                return text, call.usage
        finally:
            call.duration_ms = (time.perf_counter() - start) * 1000

    def _with_retries(self, call: LLMCall, role: str, kwargs: dict) -> Any:
        import openai

        for attempt in range(self.config.max_retries + 1):
            left = self.deadline.check(f"{role} model call")
            if left < MIN_CALL_S:
                raise DeadlineExceeded(f"{role} model call: only {left:.1f} s of the "
                                       f"command's {self.deadline.seconds:g} s deadline left")
            call.attempts = attempt + 1
            limit = min(self.config.timeout_s, left)
            try:
                return self._create(kwargs, limit)
            except openai.APITimeoutError:
                raise (DeadlineExceeded if limit < self.config.timeout_s else ExternalError)(
                    f"{role} model call timed out after {limit:.1f} s (not retried: a busy "
                    f"local server would only queue the retry behind the abandoned request)",
                    hint="raise answer.timeout_s / DOC4LLM_LLM_TIMEOUT or --deadline, or use "
                         "a faster model") from None
            except (openai.RateLimitError, openai.InternalServerError,
                    openai.APIConnectionError) as exc:
                if "response_format" in kwargs and _names_the_format(exc):
                    # llama-cpp-python answers an unknown response_format with a 500
                    raise _FormatRefused(_describe(exc)) from None
                wait = self._wait_s(exc, attempt)
                if attempt == self.config.max_retries or wait + MIN_CALL_S > self.deadline.remaining():
                    raise ExternalError(
                        f"{role} model call failed after {call.attempts} attempts: "
                        f"{_describe(exc)}", hint=NO_MODEL_HINT) from None
                call.retries.append({"attempt": call.attempts, "error": _describe(exc),
                                     "wait_s": round(wait, 3)})
                self._sleep(wait)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                if "response_format" in kwargs:
                    raise _FormatRefused(_describe(exc)) from None
                raise ExternalError(f"{role} model call failed: {_describe(exc)}",
                                    hint=NO_MODEL_HINT) from None
            except openai.APIError as exc:
                raise ExternalError(f"{role} model call failed: {_describe(exc)}",
                                    hint=NO_MODEL_HINT) from None
            except ValueError as exc:  # a 200 whose JSON body does not parse
                raise ExternalError(f"{role} model call failed: the server's reply is not "
                                    f"valid JSON ({type(exc).__name__}: {redact(exc)})",
                                    hint=NO_MODEL_HINT) from None
        raise AssertionError("unreachable: the retry loop returns or raises")

    def _create(self, kwargs: dict, limit: float) -> dict:
        """One streamed request, whose whole wall time is at most `limit`: past it the
        stream is closed, so the server sees the client leave and stops generating
        (llama-cpp-python, llama.cpp, vLLM and Ollama all do), and APITimeoutError is
        raised. Returns {"content", "usage"} (see read_stream / read_completion)."""
        import httpx
        import openai

        client = self._client
        if client is None:
            if self._factory is None:
                raise ExternalError("the model client was closed after a timeout")
            client = self._client = self._factory()
        box: dict[str, Any] = {}
        done = threading.Event()

        def run() -> None:
            try:
                with client.chat.completions.with_streaming_response.create(
                        **kwargs, stream=True, stream_options={"include_usage": True},
                        timeout=limit) as response:
                    box["response"] = response
                    box["reply"] = read_reply(response.http_response)
            except BaseException as exc:  # handed to the caller's thread
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=run, daemon=True, name="doc4llm-llm-call").start()
        if not done.wait(limit):
            response = box.get("response")
            with contextlib.suppress(Exception):
                if response is not None:
                    response.http_response.close()  # the server sees the client leave
            raise openai.APITimeoutError(request=httpx.Request("POST", "http://model/"))
        if "error" in box:
            raise box["error"]
        return box["reply"]

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


def read_reply(http_response: Any) -> dict:
    """The reply of a streamed request: the SSE chunks joined, or, from a server that
    ignored `stream` (or is not an OpenAI server at all), the body as one completion."""
    ctype = http_response.headers.get("content-type", "")
    if "text/event-stream" not in ctype:
        raw = http_response.read()
        try:
            return {"completion": json.loads(raw)}
        except ValueError as exc:
            if "json" in ctype:
                raise ValueError(f"{exc}") from None
            return {"completion": raw.decode("utf-8", "replace")}
    parts: list[str] = []
    usage = None
    seen_choice = False
    null_only = True
    for line in http_response.iter_lines():
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        try:
            chunk = json.loads(data)
        except ValueError:
            raise ValueError(f"a streamed chunk is not JSON: {redact(data[:80])!r}") from None
        if not isinstance(chunk, dict):
            raise ValueError("a streamed chunk is not a JSON object")
        if chunk.get("error"):
            return {"completion": chunk}
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or []:
            seen_choice = True
            delta = (choice or {}).get("delta") or {}
            piece = delta.get("content")
            if piece is not None:
                null_only = False
                if not isinstance(piece, str):  # _read names it
                    return {"completion": {"choices": [{"message": {"content": piece}}]}}
                parts.append(piece)
    content = None if null_only else "".join(parts)
    choices = [{"message": {"content": content}}] if seen_choice else []
    return {"completion": {"choices": choices, "usage": usage}}


def _read(reply: dict, messages: list[dict], role: str = "model") -> tuple[str, Usage]:
    """The reply's text and usage. The server is untrusted: a 200 reply that is not a chat
    completion (an HTML page, a proxy's error, JSON of another shape, `choices: []`,
    `content: null`) is an ExternalError with a clear message, never an AttributeError
    from deep inside, and never an empty answer."""
    completion = reply.get("completion")
    fail = f"{role} model call failed: "
    if isinstance(completion, dict) and completion.get("error") and "choices" not in completion:
        error = completion["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise ExternalError(fail + f"the server sent an error: {redact(message)[:300]}",
                            hint=NO_MODEL_HINT)
    choices = completion.get("choices") if isinstance(completion, dict) else None
    if not isinstance(choices, list):
        raise ExternalError(fail + f"the server's reply is not an OpenAI chat completion "
                            f"({_shape(completion)})", hint=NO_MODEL_HINT)
    if not choices:
        raise ExternalError(fail + "the reply has no choices (HTTP 200 with `choices: []`)",
                            hint=NO_MODEL_HINT)
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        raise ExternalError(fail + f"the server's reply is not an OpenAI chat completion "
                            f"({_shape(completion)})", hint=NO_MODEL_HINT)
    text = message.get("content")
    if text is None:
        refusal = message.get("refusal")
        why = f"the model refused: {redact(refusal)[:200]}" if refusal else "`content: null`"
        raise ExternalError(fail + f"the reply has no text ({why})", hint=NO_MODEL_HINT)
    if not isinstance(text, str):
        raise ExternalError(fail + f"the reply's content is {type(text).__name__}, not text",
                            hint=NO_MODEL_HINT)
    usage = completion.get("usage")
    if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
        completion_tokens = usage.get("completion_tokens")
        return text, Usage(usage["prompt_tokens"],
                           completion_tokens if isinstance(completion_tokens, int) else 0)
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


class _FormatRefused(Exception):
    """The server answered 400/422 to a request that carried a response_format."""

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


def _names_the_format(exc: Exception) -> bool:
    """A server error about the request's response_format (not a real outage)."""
    text = str(getattr(exc, "message", None) or exc)[:4000]
    return "response_format" in text or "json_schema" in text


def _response_format(level: str, schema: dict | None, name: str) -> dict | None:
    """The request's response_format at one FORMATS level: OpenAI / vLLM / Ollama /
    llama.cpp's server take json_schema; llama-cpp-python takes JSON mode with a schema."""
    if schema is None or level == "text":
        return None
    if level == "json_schema":
        return {"type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": False}}
    if level == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_object"}
