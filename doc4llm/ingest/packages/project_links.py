"""Where a package says its source and docs live, and the URLs to fetch them at a version.

Read from the release's own metadata (PKG-INFO / METADATA `Project-URL` and `Home-page`;
package.json `repository`, `homepage`), which is untrusted: a repository is used only on a
forge doc4llm knows (or the user configured), with a plain owner/name path; a docs site
only on a public host name (no IP literal, no localhost or `.local`/`.internal` name), so a
package cannot point doc4llm at a service on the user's network. Mapped hosts (mirrors,
stand-ins) are the user's choice and are fetched at the mapped base.
"""

from __future__ import annotations

import email
import email.policy
import ipaddress
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

from doc4llm.corpus.atomic import read_text_lossy
from doc4llm.ingest.packages.upstream_config import Forge, UpstreamSettings

MAX_REPOS = 2
MAX_SITES = 1
_SEGMENT = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
_SSH = re.compile(r"^(?:ssh://)?git@([A-Za-z0-9.-]{1,253})[:/](.{1,300})$")
_SHORTHAND = re.compile(r"^(github|gitlab|bitbucket):(.{1,300})$")
_NPM_SHORT = re.compile(r"^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$")
# hosts that are registries or package pages, never a project's docs site
_NOT_DOCS = {"pypi.org", "pypi.python.org", "files.pythonhosted.org", "www.npmjs.com", "npmjs.com",
             "npmjs.org", "registry.npmjs.org", "www.npmjs.org", "libraries.io", "img.shields.io"}
_DOC_LABELS = ("documentation", "docs", "doc", "reference", "manual", "userguide", "guide")
_REPO_LABELS = ("source", "sourcecode", "repository", "repo", "code", "github", "gitlab", "git")
_HOME_LABELS = ("homepage", "home", "website", "url")
# labels whose URL is never the project's source or docs, even on a forge (a sponsors page)
_OTHER_LABELS = {"funding", "fund", "sponsor", "sponsors", "donate", "donation", "donations", "tidelift",
                 "issues", "issuetracker", "tracker", "bugtracker", "bugs", "bugreports", "chat", "discord",
                 "gitter", "discussions", "forum", "twitter", "mastodon", "ci", "coverage", "benchmarks"}
# first path segments of forge pages that are not repositories (github.com/sponsors/x)
_NOT_OWNERS = {"sponsors", "orgs", "apps", "marketplace", "features", "topics", "settings", "about",
               "login", "explore", "collections", "users", "groups", "dashboard", "help", "-"}


@dataclass(frozen=True)
class RepoRef:
    host: str  # as named in the metadata: github.com
    path: str  # owner/name (GitLab: group/subgroup/name)
    subdir: str = ""  # monorepos: npm `repository.directory`, a `/tree/<ref>/<dir>` link

    def label(self) -> str:
        return f"{self.host}/{self.path}"


@dataclass
class ProjectLinks:
    repos: list[RepoRef] = field(default_factory=list)
    sites: list[str] = field(default_factory=list)  # docs site URLs, best first
    ignored: list[str] = field(default_factory=list)  # URLs not used, and why


def python_links(root: Path, meta_file: str | None, settings: UpstreamSettings) -> ProjectLinks:
    """From PKG-INFO or METADATA: `Project-URL: Label, URL` lines and `Home-page`."""
    path = root / meta_file if meta_file else None
    if path is None or not path.is_file() or path.stat().st_size > 20 * 1024 * 1024:
        return ProjectLinks()
    text, _ = read_text_lossy(path)
    head = text.split("\n\n", 1)[0]  # the headers; the body is the long description
    msg = email.message_from_string(head, policy=email.policy.compat32)
    labelled: list[tuple[str, str]] = []
    for value in msg.get_all("Project-URL") or []:
        label, sep, url = str(value).partition(",")
        if sep:
            labelled.append((label, url))
    home = msg.get("Home-page")
    if home:
        labelled.append(("homepage", str(home)))
    return classify(labelled, settings)


def npm_links(package: dict, settings: UpstreamSettings) -> ProjectLinks:
    """From package.json: `repository` (a string, shorthand or object with `directory`) and
    `homepage`."""
    labelled: list[tuple[str, str]] = []
    subdir = ""
    repo = package.get("repository")
    if isinstance(repo, dict):
        subdir = repo.get("directory") if isinstance(repo.get("directory"), str) else ""
        repo = repo.get("url")
    if isinstance(repo, str):
        repo = repo.strip()
        if _NPM_SHORT.match(repo):  # npm's `owner/name` shorthand means GitHub
            repo = f"github:{repo}"
        labelled.append(("repository", repo))
    home = package.get("homepage")
    if isinstance(home, str):
        labelled.append(("homepage", home))
    links = classify(labelled, settings)
    clean = _subdir(subdir)
    if clean:
        links.repos = [RepoRef(r.host, r.path, r.subdir or clean) for r in links.repos]
    return links


def _norm_label(label: str) -> str:
    return re.sub(r"[\s_.\-]+", "", label.lower())  # PEP 753: `Source Code` == `source-code`


def classify(labelled: list[tuple[str, str]], settings: UpstreamSettings) -> ProjectLinks:
    """Repositories and docs sites among labelled URLs, best first, deduplicated."""
    links = ProjectLinks()
    documented: set[str] = set()  # sites under a documentation label

    def rank(item: tuple[str, str]) -> int:
        label = _norm_label(item[0])
        if label in _REPO_LABELS or label in _DOC_LABELS:
            return 0
        return 1 if label in _HOME_LABELS else 2

    for label, raw in sorted(labelled, key=rank):
        url = raw.strip()
        norm = _norm_label(label)
        if not url or len(url) > 2000 or any(ord(c) < 32 for c in url) or norm in _OTHER_LABELS:
            continue
        repo = repo_from_url(url, settings)
        if repo is not None:
            if repo not in links.repos:
                links.repos.append(repo)
            continue
        if norm not in _DOC_LABELS and norm not in _HOME_LABELS:
            continue  # Funding, Changelog, Issues, Tracker...: not a docs site
        site, why = site_url(url, settings)
        if site and site not in links.sites:
            links.sites.append(site)
        elif why:
            links.ignored.append(f"{url[:200]} ({why})")
        if site and norm in _DOC_LABELS:
            documented.add(site)
    # a documentation label beats a homepage (the homepage may be a company's front page)
    links.sites.sort(key=lambda u: u not in documented)
    links.repos, links.sites = links.repos[:MAX_REPOS], links.sites[:MAX_SITES]
    return links


def repo_from_url(url: str, settings: UpstreamSettings) -> RepoRef | None:
    """`https://github.com/o/r(.git)(/tree/main/docs)`, `git+https://...`, `git://...`,
    `git@github.com:o/r.git`, `github:o/r` -> RepoRef on a known forge; else None."""
    url = url.strip()
    m = _SHORTHAND.match(url)
    if m:
        url = f"https://{m.group(1)}.{'org' if m.group(1) == 'bitbucket' else 'com'}/{m.group(2)}"
    m = _SSH.match(url)
    if m:
        url = f"https://{m.group(1)}/{m.group(2)}"
    if url.startswith("git+"):
        url = url[4:]
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https", "git", "ssh") or not parts.hostname:
        return None
    host = parts.hostname.lower()
    forge = settings.forge_for(host)
    if forge is None:
        return None
    segments = [s for s in parts.path.split("/") if s]
    if segments and segments[-1].endswith(".git"):
        segments[-1] = segments[-1][:-4]
    subdir = ""
    if forge.kind == "gitlab":
        cut = segments.index("-") if "-" in segments else len(segments)
        rest, segments = segments[cut + 1:], segments[:cut]
        if len(rest) >= 3 and rest[0] == "tree":
            subdir = "/".join(rest[2:])
        if len(segments) < 2 or len(segments) > 5:
            return None
    else:
        rest, segments = segments[2:], segments[:2]
        if len(rest) >= 3 and rest[0] == "tree":  # GitHub `/tree/<ref>/<dir>`
            subdir = "/".join(rest[2:])
        elif len(rest) >= 4 and rest[0] == "src" and rest[1] in ("tag", "branch", "commit"):
            subdir = "/".join(rest[3:])  # Gitea `/src/branch/<ref>/<dir>`
        if len(segments) != 2:
            return None
    if any(not _SEGMENT.match(s) or s in (".", "..") for s in segments) or segments[0].lower() in _NOT_OWNERS:
        return None
    return RepoRef(host, "/".join(segments), _subdir(subdir))


def _subdir(path: str) -> str:
    parts = [p for p in str(path or "").split("/") if p and p != "."]
    if not parts or len(parts) > 10 or any(p == ".." or not _SEGMENT.match(p) for p in parts):
        return ""
    return "/".join(parts)


def public_host(host: str) -> bool:
    """A host name a package may send doc4llm to: a dotted public name, no IP literal."""
    host = host.lower().rstrip(".")
    try:
        ipaddress.ip_address(host.strip("[]"))
        return False
    except ValueError:
        pass
    if "." not in host or host == "localhost" or host.endswith((".localhost", ".local", ".internal", ".lan",
                                                                ".home", ".arpa", ".intranet", ".corp")):
        return False
    return all(re.match(r"^[a-z0-9-]{1,63}$", label) for label in host.split("."))


def site_url(url: str, settings: UpstreamSettings) -> tuple[str | None, str]:
    """(the docs site URL without query or fragment, "") or (None, why it is not used)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None, "not a URL"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None, "not an http(s) URL"
    host = parts.hostname.lower()
    if host in _NOT_DOCS or settings.forge_for(host) is not None:
        return None, ""
    if host not in settings.sites and (not public_host(host) or port not in (None, 80, 443)):
        return None, "not a public host name"
    path = parts.path or "/"
    if not path.endswith("/") and "." not in path.rsplit("/", 1)[-1]:
        path += "/"
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, "", "")), ""


def tag_candidates(name: str, version: str, templates: tuple[str, ...]) -> list[str]:
    """Tag names for a version, in the configured order, each once."""
    bare = name.rsplit("/", 1)[-1]  # `@scope/pkg` tags as `pkg-1.0` or `@scope/pkg@1.0`
    out: list[str] = []
    for template in templates:
        try:
            tag = template.format(version=version, name=name, bare=bare)
        except (KeyError, IndexError, ValueError):
            continue
        if tag and tag not in out and len(tag) <= 200 and ".." not in tag:
            out.append(tag)
        if "{name}" in template and bare != name:
            alt = template.format(version=version, name=bare, bare=bare)
            if alt not in out:
                out.append(alt)
    return out


def archive_url(forge: Forge, repo: RepoRef, tag: str) -> str:
    """The forge's source archive of `tag`: GitHub `/o/r/archive/refs/tags/T.tar.gz`,
    GitLab `/g/r/-/archive/T/r-T.tar.gz`, Gitea/Forgejo (Codeberg) `/o/r/archive/T.tar.gz`,
    Bitbucket `/o/r/get/T.tar.gz`."""
    t = quote(tag, safe="@+")
    name = repo.path.rsplit("/", 1)[-1]
    if forge.kind == "github":
        return f"{forge.base}/{repo.path}/archive/refs/tags/{t}.tar.gz"
    if forge.kind == "gitlab":
        return f"{forge.base}/{repo.path}/-/archive/{t}/{name}-{quote(tag.replace('/', '-'), safe='@+')}.tar.gz"
    if forge.kind == "bitbucket":
        return f"{forge.base}/{repo.path}/get/{t}.tar.gz"
    return f"{forge.base}/{repo.path}/archive/{t}.tar.gz"


_MOVING = {"latest", "stable", "main", "master", "dev", "devel", "current"}


def versioned_site_candidates(url: str, version: str) -> list[tuple[str, bool]]:
    """(URL, versioned) to try for a docs site at `version`, versioned paths first, the URL
    as published last: `/latest/` or `/stable/` replaced by `1.10.13`, `v1.10.13`, `1.10`;
    Read the Docs' `/en/<version>/`; else `/<version>/` under the site's root path."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    release = re.match(r"^\d+(?:\.\d+)*", version)
    nums = release.group(0).split(".") if release else []
    names = [version, f"v{version}"] + ([".".join(nums[:2])] if len(nums) >= 2 else [])
    names = list(dict.fromkeys(names))
    rtd = parts.hostname and parts.hostname.endswith((".readthedocs.io", ".readthedocs.org", ".rtfd.io"))
    out: list[str] = []
    moving = next((i for i, s in enumerate(segments) if s.lower() in _MOVING), None)
    if moving is not None:
        prefix = segments[:moving]
        out = ["/" + "/".join(prefix + [n]) + "/" for n in names]
    elif "en" in segments[:2] or rtd:
        cut = segments.index("en") + 1 if "en" in segments[:2] else 0
        prefix = segments[:cut] or ["en"]
        out = ["/" + "/".join(prefix + [n]) + "/" for n in names]
    else:
        out = ["/" + "/".join(segments + [n]) + "/" for n in names]
    urls = [(urlunsplit((parts.scheme, parts.netloc, p, "", "")), True) for p in out]
    return list(dict.fromkeys(urls + [(url, False)]))
