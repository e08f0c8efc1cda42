"""Settings for docs that are not in a package archive (source repository, docs site).

Many packages (pydantic, httpx, rich, requests, starlette, axios) publish archives without
their docs; the docs live in the source repository and on a docs site. Fetching those is
on by default and off with `--offline`, `DOC4LLM_UPSTREAM_DOCS=0` or `enabled: false`.
Hosts can be mapped to mirrors (a corporate GitHub proxy, a local build of a docs site,
a loopback stand-in in tests); a mapping is the user's choice, so a mapped base URL may be
any host, while URLs taken from package metadata alone must name a public host.

    # doc4llm.yaml (flags > environment > this file > defaults)
    upstream_docs:
      enabled: true
      forges:                    # forge host named in package metadata -> where to fetch it
        github.com: https://github-proxy.example.com     # kind from the host
        git.example.com: {url: https://git.example.com, kind: gitlab}
      sites:                     # docs host named in package metadata -> where to fetch it
        docs.example.dev: http://127.0.0.1:8000
      tags: ["v{version}", "{version}", "{name}-{version}", "{name}@{version}"]
      max_site_pages: 300
      deadline: 180              # seconds for all upstream fetches of one package

Environment: `DOC4LLM_UPSTREAM_DOCS=0` (off), `DOC4LLM_FORGE_URLS="github.com=URL,..."`,
`DOC4LLM_DOCS_SITE_URLS="docs.example.dev=URL,..."` (added to, and winning over, the file).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from doc4llm.errors import InputError

ENABLE_ENV = "DOC4LLM_UPSTREAM_DOCS"
FORGES_ENV = "DOC4LLM_FORGE_URLS"
SITES_ENV = "DOC4LLM_DOCS_SITE_URLS"
FORGE_KINDS = ("github", "gitlab", "gitea", "bitbucket")
# forges recognised in package metadata without configuration (kind, real base URL)
KNOWN_FORGES = {
    "github.com": "github",
    "gitlab.com": "gitlab",
    "codeberg.org": "gitea",
    "bitbucket.org": "bitbucket",
}
DEFAULT_TAGS = ("v{version}", "{version}", "{name}-{version}", "{name}@{version}")
MAX_TAGS = 6
_OFF = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class Forge:
    kind: str  # github | gitlab | gitea | bitbucket: decides the archive URL's shape
    base: str  # scheme://host[/prefix] fetched for this host (the host itself unless mapped)
    mapped: bool = False  # the user mapped it (a mirror, a stand-in): fetched whatever the host


@dataclass
class UpstreamSettings:
    enabled: bool = True
    disabled_by: str = ""  # what turned it off, for the report
    forges: dict[str, Forge] = field(default_factory=dict)  # host named in metadata -> forge
    sites: dict[str, str] = field(default_factory=dict)  # docs host -> base URL fetched instead
    tags: tuple[str, ...] = DEFAULT_TAGS
    max_site_pages: int = 300
    max_site_depth: int = 8
    deadline: float = 180.0
    timeout: float = 20.0

    def forge_for(self, host: str) -> Forge | None:
        return self.forges.get(host.lower())


def _base(url: object, what: str) -> str:
    text = str(url or "").strip().rstrip("/")
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise InputError(f"{what}: {text[:120]!r} is not an http(s) base URL",
                         hint="e.g. https://github-proxy.example.com or http://127.0.0.1:8000/site")
    return text


def _kind_for(host: str, kind: object = None, where: str = "") -> str | None:
    if kind:
        k = str(kind).lower()
        if k not in FORGE_KINDS:
            raise InputError(f"{where}: unknown forge kind {k!r} for {host}",
                             hint=f"one of {', '.join(FORGE_KINDS)}")
        return k
    if host in KNOWN_FORGES:
        return KNOWN_FORGES[host]
    for word, k in (("gitlab", "gitlab"), ("gitea", "gitea"), ("forgejo", "gitea"), ("codeberg", "gitea"),
                    ("bitbucket", "bitbucket"), ("github", "github")):
        if word in host:
            return k
    return None


def _pairs(text: str, env: str) -> dict[str, str]:
    out = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        host, sep, url = item.partition("=")
        if not sep or not host.strip():
            raise InputError(f"{env}: {item[:120]!r} is not HOST=URL", hint=f"{env}=github.com=http://127.0.0.1:8000")
        out[host.strip().lower()] = url.strip()
    return out


def load_upstream_settings(env: dict | None = None, file_section: object = None) -> UpstreamSettings:
    """The settings in force: environment over doc4llm.yaml over defaults."""
    from doc4llm.config import setting

    env = dict(os.environ if env is None else env)
    section = setting("upstream_docs", default={}) if file_section is None else file_section
    if not isinstance(section, dict):
        section = {}
    s = UpstreamSettings()
    s.forges = {host: Forge(kind, f"https://{host}") for host, kind in KNOWN_FORGES.items()}
    if section.get("enabled") is False:
        s.enabled, s.disabled_by = False, "upstream_docs.enabled: false in doc4llm.yaml"
    flag = env.get(ENABLE_ENV, "").strip().lower()
    if flag in _OFF:
        s.enabled, s.disabled_by = False, f"{ENABLE_ENV}={env[ENABLE_ENV].strip()}"
    elif flag:
        s.enabled, s.disabled_by = True, ""
    in_file = "doc4llm.yaml upstream_docs"
    forges = section.get("forges") if isinstance(section.get("forges"), dict) else {}
    env_forges = _pairs(env.get(FORGES_ENV, ""), FORGES_ENV)
    for host, value in {**forges, **env_forges}.items():
        host = str(host).lower()
        where = FORGES_ENV if host in env_forges else f"{in_file}.forges"
        url, kind = (value.get("url"), value.get("kind")) if isinstance(value, dict) else (value, None)
        k = _kind_for(host, kind, where)
        if k is None:
            raise InputError(f"{where}: say which kind of forge {host} is",
                             hint=f"in doc4llm.yaml: upstream_docs: {{forges: {{{host}: {{url: {url}, kind: gitlab}}}}}} "
                                  f"(one of {', '.join(FORGE_KINDS)})")
        s.forges[host] = Forge(k, _base(url or f"https://{host}", f"{where} {host}"), mapped=True)
    sites = section.get("sites") if isinstance(section.get("sites"), dict) else {}
    env_sites = _pairs(env.get(SITES_ENV, ""), SITES_ENV)
    for host, url in {**sites, **env_sites}.items():
        where = SITES_ENV if str(host).lower() in env_sites else f"{in_file}.sites"
        s.sites[str(host).lower()] = _base(url, f"{where} {host}")
    tags = section.get("tags")
    if isinstance(tags, list) and tags and all(isinstance(t, str) and "{version}" in t for t in tags):
        s.tags = tuple(tags[:MAX_TAGS])
    for key, attr, low, high in (("max_site_pages", "max_site_pages", 0, 5000),
                                 ("max_site_depth", "max_site_depth", 0, 50),
                                 ("deadline", "deadline", 1, 3600), ("timeout", "timeout", 1, 300)):
        value = section.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            setattr(s, attr, type(getattr(s, attr))(min(max(value, low), high)))
    return s
