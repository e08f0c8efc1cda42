"""Kept for its importers: the redaction point is `doc4llm.secrets` (see there)."""

from __future__ import annotations

from doc4llm.secrets import SECRET_ENV_VARS, redact, redact_data

__all__ = ["SECRET_ENV_VARS", "redact", "redact_data"]
