"""Settings for `ask`: models per role, timeouts, retries and loop budgets.

Precedence (DESIGN.md): flags > environment > doc4llm.yaml (section `answer:`) > defaults.
Flags are applied by the CLI with `dataclasses.replace`; this module does the rest.
Secrets are never read here: keys come from the environment at the point of use.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from doc4llm.answer.deadline import DEFAULT_DEADLINE_S
from doc4llm.errors import InputError

CONFIG_FILE = "doc4llm.yaml"
ROLES = ("synthesis", "evaluation", "reranking")


@dataclass(frozen=True)
class AnswerConfig:
    synthesis_model: str = "gpt-4o-mini"
    evaluation_model: str = "gpt-4o-mini"
    reranking_model: str = "gpt-4o-mini"
    base_url: str | None = None  # OPENAI_BASE_URL: Ollama, vLLM, any OpenAI-compatible server
    timeout_s: float = 60.0  # one request, capped by what is left of deadline_s
    deadline_s: float = DEFAULT_DEADLINE_S  # the whole command: search, every call, every wait
    max_retries: int = 3  # retries after the first attempt, on 429 / 5xx / timeouts
    backoff_base_s: float = 1.0  # waits base, 2*base, 4*base... (Retry-After wins, capped)
    backoff_max_s: float = 20.0
    max_tokens: int = 1024  # an answer or example; the evaluator and reranker size their own
    max_iterations: int = 3  # evaluations per question
    max_doc_queries: int = 2
    max_web_searches: int = 2
    auto_return_confidence: int = 85  # evaluator confidence that returns at once
    rerank: bool = True
    web_max_results: int = 5
    section_char_budget: int = 6000  # per section sent to the model
    tavily_base_url: str | None = None  # TAVILY_API_BASE_URL

    def model_for(self, role: str) -> str:
        if role not in ROLES:
            raise InputError(f"unknown model role {role!r}; expected one of {', '.join(ROLES)}")
        return getattr(self, f"{role}_model")


# environment variable -> field
_ENV = {
    "DOC4LLM_SYNTHESIS_MODEL": "synthesis_model",
    "DOC4LLM_EVALUATION_MODEL": "evaluation_model",
    "DOC4LLM_RERANKING_MODEL": "reranking_model",
    "OPENAI_BASE_URL": "base_url",
    "DOC4LLM_LLM_TIMEOUT": "timeout_s",
    "DOC4LLM_DEADLINE": "deadline_s",
    "DOC4LLM_MAX_TOKENS": "max_tokens",
    "DOC4LLM_LLM_MAX_RETRIES": "max_retries",
    "DOC4LLM_LLM_BACKOFF": "backoff_base_s",
    "DOC4LLM_MAX_ITERATIONS": "max_iterations",
    "TAVILY_API_BASE_URL": "tavily_base_url",
}


_POSITIVE = {"timeout_s", "deadline_s"}  # 0 or inf would mean "never answer" / "wait forever"


def load_answer_config(config_path: Path | None = None) -> AnswerConfig:
    """Defaults, overlaid by doc4llm.yaml `answer:` (cwd unless given), then by the environment."""
    values: dict[str, object] = {}
    path = Path(config_path) if config_path else Path.cwd() / CONFIG_FILE
    if path.is_file():
        values.update(_from_yaml(path))
    for env, field in _ENV.items():
        raw = os.environ.get(env)
        if raw:
            values[field] = raw
    return _build(values, source=str(path))


def _from_yaml(path: Path) -> dict[str, object]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise InputError(f"{path} is not valid YAML: {exc}") from exc
    section = (data.get("answer") or {}) if isinstance(data, dict) else {}
    if not isinstance(section, dict):
        raise InputError(f"{path}: `answer:` must be a mapping")
    values = {k: v for k, v in section.items() if k != "models"}
    models = section.get("models") or {}
    if not isinstance(models, dict):
        raise InputError(f"{path}: `answer.models` must map role -> model name")
    for role, model in models.items():
        if role not in ROLES:
            raise InputError(f"{path}: unknown model role {role!r}", hint=f"roles: {', '.join(ROLES)}")
        values[f"{role}_model"] = model
    return values


def _build(values: dict[str, object], *, source: str) -> AnswerConfig:
    fields = {f.name: f for f in dataclasses.fields(AnswerConfig)}
    kwargs: dict[str, object] = {}
    for name, raw in values.items():
        if name not in fields:
            raise InputError(f"{source}: unknown answer setting {name!r}",
                             hint=f"known: {', '.join(sorted(fields))}")
        default = fields[name].default
        kwargs[name] = _coerce(name, raw, default)
    return AnswerConfig(**kwargs)


def _coerce(name: str, raw: object, default: object) -> object:
    try:
        if isinstance(default, bool):
            return raw if isinstance(raw, bool) else str(raw).strip().lower() in ("1", "true", "yes", "on")
        if isinstance(default, int):
            return int(raw)  # type: ignore[arg-type]
        if isinstance(default, float):
            value = float(raw)  # type: ignore[arg-type]
            if name in _POSITIVE and not 0 < value < float("inf"):
                raise ValueError(name)
            return value
    except (TypeError, ValueError) as exc:
        raise InputError(f"answer setting {name}={raw!r} is not a "
                         f"{'positive ' if name in _POSITIVE else ''}number") from exc
    return None if raw is None else str(raw)
