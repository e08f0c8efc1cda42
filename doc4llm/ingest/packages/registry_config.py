"""Where packages come from: the user's own pip and npm configuration.

pip: `PIP_INDEX_URL`, else `index-url` in pip's config files (the same files, in the same
order, pip reads: `PIP_CONFIG_FILE`, else /etc/pip.conf, ~/.pip/pip.conf,
~/.config/pip/pip.conf, then the active virtualenv's pip.conf; `[install]` wins over
`[global]`). npm: `npm_config_registry` / `NPM_CONFIG_REGISTRY`, else `registry=` (and
`@scope:registry=`) in the project's .npmrc, then ~/.npmrc. Index URLs may carry
credentials: `display_url` is the only form that is ever printed or written.
"""

from __future__ import annotations

import configparser
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

DEFAULT_PYPI_INDEX = "https://pypi.org/simple"
DEFAULT_NPM_REGISTRY = "https://registry.npmjs.org/"


def display_url(url: str) -> str:
    """The URL without user:password (index URLs may embed a token)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))


def _pip_config_files(env: dict) -> list[Path]:
    if env.get("PIP_CONFIG_FILE"):
        return [] if env["PIP_CONFIG_FILE"] == os.devnull else [Path(env["PIP_CONFIG_FILE"])]
    home = Path(env.get("HOME") or Path.home())
    xdg = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    files = [Path("/etc/pip.conf"), home / ".pip" / "pip.conf", xdg / "pip" / "pip.conf"]
    venv = env.get("VIRTUAL_ENV") or (sys.prefix if sys.prefix != sys.base_prefix else None)
    if venv:
        files.append(Path(venv) / "pip.conf")
    return files


def pip_index_url(env: dict | None = None) -> str:
    """The simple-index URL pip would use (later files win, `[install]` over `[global]`)."""
    env = dict(os.environ if env is None else env)
    if env.get("PIP_INDEX_URL"):
        return env["PIP_INDEX_URL"].strip()
    found = None
    for path in _pip_config_files(env):
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (OSError, configparser.Error, UnicodeDecodeError):
            continue
        for section in ("global", "install"):
            for key in ("index-url", "index_url"):
                if parser.has_option(section, key):
                    found = parser.get(section, key).strip() or found
    return found or DEFAULT_PYPI_INDEX


def pypi_json_base(index_url: str) -> str | None:
    """The JSON API (`/pypi/<name>/json`) next to a simple index: PyPI and mirrors such as
    devpi and Artifactory serve it at `<prefix>/pypi` for an index at `<prefix>/simple`."""
    parts = urlsplit(index_url)
    path = parts.path.rstrip("/")
    if not path.endswith("/simple") and path != "/simple":
        return None
    return urlunsplit(parts._replace(path=path[: -len("simple")] + "pypi", query="", fragment=""))


@dataclass
class NpmConfig:
    registry: str = DEFAULT_NPM_REGISTRY
    scopes: dict[str, str] = field(default_factory=dict)  # "@scope" -> registry

    def registry_for(self, name: str) -> str:
        if name.startswith("@") and "/" in name:
            scoped = self.scopes.get(name.split("/", 1)[0])
            if scoped:
                return scoped
        return self.registry


def _read_npmrc(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;" or "=" not in line:
            continue
        key, value = line.split("=", 1)
        out[key.strip()] = value.strip().strip('"').strip("'")
    return out


def npm_config(project_dir: Path | None = None, env: dict | None = None) -> NpmConfig:
    """Registry URLs from env, the project's .npmrc, then ~/.npmrc (first one wins)."""
    env = dict(os.environ if env is None else env)
    home = Path(env.get("HOME") or Path.home())
    files = [Path(project_dir or Path.cwd()) / ".npmrc", home / ".npmrc"]
    config = NpmConfig()
    settings: dict[str, str] = {}
    for path in reversed(files):  # the project's file overrides the user's
        settings.update(_read_npmrc(path))
    registry = env.get("npm_config_registry") or env.get("NPM_CONFIG_REGISTRY") or settings.get("registry")
    if registry:
        config.registry = registry if registry.endswith("/") else registry + "/"
    for key, value in settings.items():
        if key.startswith("@") and key.endswith(":registry") and value:
            config.scopes[key[: -len(":registry")]] = value if value.endswith("/") else value + "/"
    return config
