"""Docs that are not in the package archive: the source repository at the version's tag,
else the docs site; `--offline`; what each set holds (`add`, `sync`, `sets`).

A loopback registry (fake_registries.py) serves packages whose archives hold no docs; a
loopback forge and docs site (fake_upstream.py) stand in for github.com and the docs
host, reached the way a user reaches a mirror: DOC4LLM_FORGE_URLS / DOC4LLM_DOCS_SITE_URLS.
The CLI runs as a real subprocess.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from conftest import run_cli
from fake_registries import FakeRegistries, tar_gz, wait_closed_port
from fake_upstream import FakeWeb

from doc4llm.errors import InputError
from doc4llm.ingest.packages.project_links import (
    archive_url,
    classify,
    npm_links,
    repo_from_url,
    tag_candidates,
    versioned_site_candidates,
)
from doc4llm.ingest.packages.upstream_config import load_upstream_settings

OFFLINE_NOTE = "no narrative docs (looked at: archive; repository and site skipped offline)"


def nodocs_sdist(version: str = "1.2.3", urls: tuple[str, ...] | None = None) -> bytes:
    """A package like httpx or pydantic: README and code in the archive, docs elsewhere."""
    top = f"nodocs-{version}"
    urls = urls if urls is not None else ("Source, https://github.com/acme/nodocs",
                                          "Documentation, https://docs.nodocs.dev/en/latest/")
    head = "".join(f"Project-URL: {u}\n" for u in urls)
    pkg_info = (f"Metadata-Version: 2.1\nName: nodocs\nVersion: {version}\nSummary: demo\n{head}"
                "Description-Content-Type: text/markdown\n\n# nodocs\n\nThe README only.\n")
    return tar_gz({f"{top}/PKG-INFO": pkg_info,
                   f"{top}/src/nodocs/__init__.py": '"""nodocs."""\n\n\ndef parse(x: str) -> int:\n'
                                                   '    """Parse `x`."""\n    return 1\n'})


def repo_tarball(top: str, docs: bool = True, prefix: str = "") -> bytes:
    files = {f"{top}/README.md": "# nodocs repo\n", f"{top}/src/nodocs/__init__.py": "x = 1\n"}
    if docs:
        files.update({
            f"{top}/{prefix}mkdocs.yml": "nav:\n  - Home: index.md\n  - Parsing guide: guide.md\n",
            f"{top}/{prefix}docs/index.md": "# nodocs\n\nWelcome to nodocs.\n",
            f"{top}/{prefix}docs/guide.md": "Parse strings with `parse()`; TAG-GUIDE-MARKER.\n",
        })
    return tar_gz(files)


@pytest.fixture
def web():
    reg, forge, site = FakeRegistries(), FakeWeb(), FakeWeb()
    reg.add_pypi("nodocs", "1.2.3", nodocs_sdist())
    yield reg, forge, site
    for server in (reg, forge, site):
        server.close()


def env_for(reg: FakeRegistries, forge: FakeWeb | str, site: FakeWeb | str, **extra: str) -> dict:
    return {"PIP_INDEX_URL": reg.index_url, "npm_config_registry": reg.npm_url,
            "DOC4LLM_FORGE_URLS": f"github.com={getattr(forge, 'base', forge)}",
            "DOC4LLM_DOCS_SITE_URLS": f"docs.nodocs.dev={getattr(site, 'base', site)}",
            "DOC4LLM_CONFIG": "/nonexistent/doc4llm.yaml", "DOC4LLM_UPSTREAM_DOCS": None, **extra}


def set_pages(docs: Path, name: str) -> dict:
    return yaml.safe_load((docs / name / "doc4llm-set.yaml").read_text())["pages"]


def test_docs_come_from_the_repository_at_the_versions_tag(web, tmp_path):
    reg, forge, site = web
    forge.add("/acme/nodocs/archive/refs/tags/1.2.3.tar.gz", repo_tarball("nodocs-1.2.3"), "application/gzip")
    docs = tmp_path / "md"
    r = run_cli("add", "pypi:nodocs==1.2.3", "--docs-dir", docs, env=env_for(reg, forge, site))
    assert r.returncode == 0, r.stderr
    # tags tried in order: v1.2.3 (404), then 1.2.3; the site is not needed
    assert forge.requests == ["/acme/nodocs/archive/refs/tags/v1.2.3.tar.gz",
                              "/acme/nodocs/archive/refs/tags/1.2.3.tar.gz"]
    assert site.requests == []
    assert r.stdout.startswith("nodocs@1.2.3  docs 2 from github.com/acme/nodocs@1.2.3 · API 1 page · readme")
    assert "no narrative docs" not in r.stderr
    pages = set_pages(docs, "nodocs@1.2.3")
    guide = next(p for p in pages.values() if p["folder"] == "Parsing guide")
    assert guide["extra"] == {"from": "docs", "origin": "repo", "repo": "github.com/acme/nodocs", "tag": "1.2.3",
                              "path": "docs/guide.md"}
    assert guide["source"] == "github.com/acme/nodocs@1.2.3/docs/guide.md"
    readme = next(p for p in pages.values() if p["extra"]["from"] == "readme")
    assert readme["extra"]["origin"] == "archive" and readme["extra"]["path"].startswith("PKG-INFO")
    api = next(p for p in pages.values() if p["extra"]["from"] == "api")
    assert api["extra"] == {"from": "api", "origin": "archive", "path": "src/nodocs/__init__.py"}
    assert "TAG-GUIDE-MARKER" in (docs / "nodocs@1.2.3" / "Parsing guide" / "docContent.md").read_text()
    meta = yaml.safe_load((docs / "nodocs@1.2.3" / "doc4llm-set.yaml").read_text())["package"]
    assert meta["holds"]["docs"] == 2 and meta["holds"]["docs_from"] == {"repo": 2}
    assert meta["upstream"] == "tried" and meta["missing"] == []


SITE_MD = {"/en/1.2.3/llms.txt": "# nodocs\n\n- [Guide](https://docs.nodocs.dev/en/1.2.3/guide.md): how to parse\n"
                                 "- [Latest](https://docs.nodocs.dev/en/latest/other.md): another version\n",
           "/en/1.2.3/guide.md": "# Guide\n\nSITE-GUIDE-MARKER: parse strings.\n",
           "/en/1.2.3/": "<html><head><title>nodocs 1.2.3</title></head><body><main><h1>nodocs 1.2.3</h1>"
                         "<p>Docs home.</p></main></body></html>"}
SITE_HTML = {"/en/1.2/": "<html><head><title>nodocs</title></head><body><main><h1>nodocs 1.2</h1><p>Home.</p>"
                         "<a href='start.html'>Install</a><a href='/en/latest/'>latest</a></main></body></html>",
             "/en/1.2/install.html": "<html><head><title>Install</title></head><body><main><h1>Install</h1>"
                                     "<p>SITE-HTML-MARKER pip install nodocs</p></main></body></html>"}


@pytest.mark.parametrize("kind", ["llms", "html"])
def test_docs_come_from_the_site_when_the_tag_has_none(web, tmp_path, kind):
    """The tag exists without a docs folder: the site's versioned path is read (its llms.txt
    and markdown pages, or its HTML pages); pages of other versions stay out."""
    reg, forge, site = web
    forge.add("/acme/nodocs/archive/refs/tags/v1.2.3.tar.gz", repo_tarball("nodocs-1.2.3", docs=False),
              "application/gzip")
    for path, body in (SITE_MD if kind == "llms" else SITE_HTML).items():
        site.add(path, body, "text/markdown" if path.endswith((".md", ".txt")) else "text/html")
    site.add("/en/latest/other.md", "# Other\n\nLATEST-ONLY\n", "text/markdown")
    # the mirror redirects with its own absolute URL: read back as the public site's
    site.add("/en/1.2/start.html", f"{site.base}/en/1.2/install.html", status=301)
    docs = tmp_path / "md"
    r = run_cli("add", "pypi:nodocs==1.2.3", "--docs-dir", docs, "--json", env=env_for(reg, forge, site))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    pages = set_pages(docs, "nodocs@1.2.3")
    site_pages = {p["extra"]["url"]: p for p in pages.values() if p["extra"].get("origin") == "site"}
    text = "".join((docs / "nodocs@1.2.3" / p["folder"] / "docContent.md").read_text() for p in site_pages.values())
    if kind == "llms":
        assert set(site_pages) == {"https://docs.nodocs.dev/en/1.2.3/", "https://docs.nodocs.dev/en/1.2.3/guide"}
        assert "SITE-GUIDE-MARKER" in text
        assert out["holds"]["docs_source"] == "https://docs.nodocs.dev/en/1.2.3/"
    else:  # /en/1.2.3/ and /en/v1.2.3/ answer 404: the minor version's path is read
        assert set(site_pages) == {"https://docs.nodocs.dev/en/1.2/", "https://docs.nodocs.dev/en/1.2/install.html"}
        assert "SITE-HTML-MARKER" in text
        assert site.requests.index("/en/1.2/start.html") < site.requests.index("/en/1.2/install.html")
    assert "LATEST-ONLY" not in text and "/en/latest/other.md" not in site.requests
    assert site.base not in (docs / "nodocs@1.2.3" / "doc4llm-set.yaml").read_text() + text  # public URLs
    assert out["holds"]["docs"] == 2 and out["holds"]["docs_from"] == {"site": 2} and out["missing"] == []
    assert [lk["where"] for lk in out["looked_at"]][:2] == ["archive", "github.com/acme/nodocs@v1.2.3"]


def test_offline_sync_says_what_is_missing_then_an_online_sync_fills_it(web, tmp_path):
    reg, forge, site = web
    forge.add("/acme/nodocs/archive/refs/tags/v1.2.3.tar.gz", repo_tarball("nodocs-1.2.3"), "application/gzip")
    project = tmp_path / "proj"
    project.mkdir()
    (project / "requirements.txt").write_text("nodocs==1.2.3\n")
    docs = tmp_path / "md"
    env = env_for(reg, forge, site)
    r = run_cli("sync", project, "--offline", "--docs-dir", docs, "-q", env=env)
    assert r.returncode == 0, r.stderr
    assert "  create   nodocs@1.2.3  docs 0 · API 1 page · readme" in r.stdout
    assert f"warning: {OFFLINE_NOTE}" in r.stdout
    assert forge.requests == [] and site.requests == []
    js = json.loads(run_cli("sets", "--docs-dir", docs, "--json", env=env).stdout)["sets"][0]
    assert js["holds"]["docs"] == 0 and js["missing"] == [OFFLINE_NOTE]
    text = run_cli("sets", "--docs-dir", docs, env=env).stdout
    assert "    holds: docs 0 · API 1 page · readme" in text and f"    warning: {OFFLINE_NOTE}" in text
    # --offline again: nothing to do, nothing fetched
    reg.requests.clear()
    r = run_cli("sync", project, "--offline", "--docs-dir", docs, "-q", "--json", env=env)
    assert json.loads(r.stdout)["counts"] == {"skip": 1} and reg.requests == []
    # online: the set built offline is rebuilt once, with the repository's docs
    r = run_cli("sync", project, "--docs-dir", docs, "-q", "--json", env=env)
    item = json.loads(r.stdout)["items"][0]
    assert item["action"] == "replace" and item["holds"]["docs"] == 2 and item["missing"] == []
    # and then kept: no registry, forge or site request
    reg.requests.clear()
    forge.requests.clear()
    r = run_cli("sync", project, "--docs-dir", docs, "-q", env=env)
    assert "  skip     nodocs@1.2.3  docs 2 from github.com/acme/nodocs@v1.2.3 · API 1 page · readme" in r.stdout
    assert reg.requests == [] and forge.requests == []


def _hostile(forge: FakeWeb) -> None:
    forge.add("/acme/nodocs/archive/refs/tags/v1.2.3.tar.gz",
              tar_gz({"nodocs-1.2.3/docs/index.md": "# x\n", "nodocs-1.2.3/../../escaped.md": "# evil\n"}),
              "application/gzip")


@pytest.mark.parametrize("case, words", [
    ("down", "github.com/acme/nodocs (unreachable: ConnectError), docs.nodocs.dev (unreachable: ConnectError))"),
    ("404", "github.com/acme/nodocs (no tag v1.2.3, 1.2.3, nodocs-1.2.3, nodocs@1.2.3), docs.nodocs.dev (HTTP 404 at "
            "/en/1.2.3/, /en/v1.2.3/, /en/1.2/, /en/latest/))"),
    ("hostile", "github.com/acme/nodocs@v1.2.3 (archive member"),
    ("garbage", "github.com/acme/nodocs@v1.2.3 (source.tar.gz is not a readable archive"),
    ("error", "github.com/acme/nodocs@v1.2.3 (HTTP 403)"),
])
def test_a_failing_forge_or_site_leaves_the_archives_set_and_says_what_was_tried(web, tmp_path, case, words):
    reg, forge, site = web
    forge_url, site_url = forge.base, site.base
    if case == "down":
        forge_url = site_url = wait_closed_port()
    elif case == "hostile":
        _hostile(forge)
    elif case == "garbage":
        forge.add("/acme/nodocs/archive/refs/tags/v1.2.3.tar.gz", b"\x1f\x8b not really gzip", "application/gzip")
    elif case == "error":
        forge.add("/acme/nodocs/archive/refs/tags/v1.2.3.tar.gz", b"rate limited", "text/plain", status=403)
    docs = tmp_path / "md"
    r = run_cli("add", "pypi:nodocs==1.2.3", "--docs-dir", docs, env=env_for(reg, forge_url, site_url))
    assert r.returncode == 0, r.stderr  # the set is built from the archive: exit 0, a warning
    assert "nodocs@1.2.3  docs 0 · API 1 page · readme" in r.stdout
    assert "warning: nodocs@1.2.3: no narrative docs (looked at: archive, " in r.stderr
    assert words in r.stderr, r.stderr
    assert (docs / "nodocs@1.2.3").is_dir() and not list(docs.glob(".doc4llm-build-*"))
    assert not list(tmp_path.rglob("escaped.md"))


def test_a_forge_that_drips_is_cut_at_the_deadline(web, tmp_path):
    """Each byte resets a read timeout; the total deadline (doc4llm.yaml, 1 s here) does not."""
    reg, forge, site = web
    forge.add("/acme/nodocs/archive/refs/tags/v1.2.3.tar.gz", b"\x1f\x8b" + b"x" * 200, "application/gzip")
    forge.drip["/acme/nodocs/archive/refs/tags/v1.2.3.tar.gz"] = 0.05
    config = tmp_path / "doc4llm.yaml"
    config.write_text("upstream_docs:\n  deadline: 1\n  timeout: 5\n")
    r = run_cli("add", "pypi:nodocs==1.2.3", "--docs-dir", tmp_path / "md", "--json",
                env=env_for(reg, forge, site, DOC4LLM_CONFIG=str(config)))
    assert r.returncode == 0, r.stderr
    looked = json.loads(r.stdout)["looked_at"]
    assert looked[1] == {"where": "github.com/acme/nodocs@v1.2.3", "pages": 0,
                         "why": "deadline reached while downloading"}
    assert looked[2] == {"where": "docs.nodocs.dev", "pages": 0, "why": "deadline reached"}
    assert site.requests == []


def test_metadata_cannot_send_doc4llm_to_a_local_service(tmp_path):
    """A package naming http://127.0.0.1:PORT/ as its docs or repository is not fetched
    there: only the user's mappings may name such hosts."""
    reg, local = FakeRegistries(), FakeWeb()
    try:
        local.add("/", "<html><body><h1>internal</h1></body></html>")
        reg.add_pypi("nodocs", "1.2.3", nodocs_sdist(urls=(f"Documentation, {local.base}/",
                                                           f"Source, {local.base}/acme/nodocs",
                                                           "Homepage, http://169.254.169.254/latest/")))
        docs = tmp_path / "md"
        r = run_cli("add", "pypi:nodocs==1.2.3", "--docs-dir", docs, "--json",
                    env={"PIP_INDEX_URL": reg.index_url, "DOC4LLM_CONFIG": "/nonexistent/doc4llm.yaml"})
        assert r.returncode == 0, r.stderr
        assert local.requests == []
        assert json.loads(r.stdout)["missing"][0] == \
            "no narrative docs (looked at: archive; its metadata names no source repository or docs site)"
    finally:
        reg.close()
        local.close()


def test_turned_off_by_the_environment(web, tmp_path):
    reg, forge, site = web
    docs = tmp_path / "md"
    r = run_cli("add", "pypi:nodocs==1.2.3", "--docs-dir", docs,
                env=env_for(reg, forge, site, DOC4LLM_UPSTREAM_DOCS="0"))
    assert r.returncode == 0 and forge.requests == [] and site.requests == []
    assert "no narrative docs (looked at: archive; repository and site lookup turned off " \
           "(DOC4LLM_UPSTREAM_DOCS=0))" in r.stderr


def test_npm_monorepo_docs_from_the_packages_folder_at_the_tag(web, tmp_path):
    reg, forge, site = web
    pkg = {"name": "widget", "version": "2.0.0", "types": "index.d.ts", "homepage": "https://github.com/acme/mono#readme",
           "repository": {"type": "git", "url": "git+https://github.com/acme/mono.git", "directory": "packages/widget"}}
    reg.add_npm("widget", "2.0.0", tar_gz({"package/package.json": json.dumps(pkg),
                                           "package/index.d.ts": "export declare function spin(n: number): void;\n",
                                           "package/README.md": "# widget\n"}))
    forge.add("/acme/mono/archive/refs/tags/widget@2.0.0.tar.gz",
              repo_tarball("mono-widget-2.0.0", prefix="packages/widget/"), "application/gzip")
    docs = tmp_path / "md"
    config = tmp_path / "doc4llm.yaml"  # the mapping from the settings file this time
    config.write_text(f"upstream_docs:\n  forges:\n    github.com: {{url: '{forge.base}', kind: github}}\n"
                      "  tags: ['{name}@{version}', 'v{version}']\n")
    env = env_for(reg, forge, site, DOC4LLM_CONFIG=str(config), DOC4LLM_FORGE_URLS=None)
    r = run_cli("add", "npm:widget@2.0.0", "--docs-dir", docs, "--json", env=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["holds"]["docs"] == 2 and out["holds"]["docs_source"] == "github.com/acme/mono@widget@2.0.0"
    assert forge.requests == ["/acme/mono/archive/refs/tags/widget@2.0.0.tar.gz"]  # the configured order
    paths = sorted(p["extra"].get("path") for p in set_pages(docs, "widget@2.0.0").values()
                   if p["extra"]["origin"] == "repo")
    assert paths == ["packages/widget/docs/guide.md", "packages/widget/docs/index.md"]


# -- the parts -------------------------------------------------------------------------

def test_repository_urls_in_the_forms_packages_write_them():
    s = load_upstream_settings(env={}, file_section={})
    for url in ("https://github.com/encode/httpx", "https://github.com/encode/httpx.git",
                "git+https://github.com/encode/httpx.git", "git://github.com/encode/httpx.git",
                "git@github.com:encode/httpx.git", "github:encode/httpx",
                "https://github.com/encode/httpx/blob/master/CHANGELOG.md"):
        assert repo_from_url(url, s).label() == "github.com/encode/httpx", url
    assert repo_from_url("https://github.com/o/r/tree/main/packages/a", s).subdir == "packages/a"
    assert repo_from_url("https://gitlab.com/grp/sub/proj/-/tree/main/docs", s).path == "grp/sub/proj"
    assert repo_from_url("https://codeberg.org/o/r/src/branch/main/docs", s).subdir == "docs"
    for bad in ("https://github.com/encode", "https://github.com/../x", "https://example.com/o/r",
                "https://github.com/sponsors/samuelcolvin", "https://github.com/orgs/encode/people",
                "file:///etc/passwd", "https://github.com/o/r%00x"):
        assert repo_from_url(bad, s) is None, bad
    links = npm_links({"repository": "acme/widget", "homepage": "https://widget.dev"}, s)
    assert [r.label() for r in links.repos] == ["github.com/acme/widget"] and links.sites == ["https://widget.dev/"]
    links = classify([("Homepage", "https://acme.com"), ("Documentation", "https://docs.acme.com/en/stable"),
                      ("Funding", "https://github.com/acme/sponsor-me"), ("Source", "https://github.com/acme/a")], s)
    assert links.sites == ["https://docs.acme.com/en/stable/"] and [r.label() for r in links.repos] == \
        ["github.com/acme/a"]
    links = classify([("Documentation", "http://10.0.0.1/docs"), ("Homepage", "https://intranet.corp/x")], s)
    assert links.sites == [] and len(links.ignored) == 2


def test_tag_names_archive_urls_and_versioned_site_paths():
    s = load_upstream_settings(env={"DOC4LLM_FORGE_URLS": "gitlab.acme.dev=https://gitlab.acme.dev"},
                               file_section={"forges": {"git.example.com": {"url": "https://mirror.example/gl",
                                                                              "kind": "gitlab"}}})
    assert tag_candidates("pydantic", "2.7.4", s.tags) == ["v2.7.4", "2.7.4", "pydantic-2.7.4", "pydantic@2.7.4"]
    assert tag_candidates("@acme/w", "1.0.0", ("v{version}", "{name}@{version}")) == \
        ["v1.0.0", "@acme/w@1.0.0", "w@1.0.0"]
    gh = repo_from_url("https://github.com/pydantic/pydantic", s)
    assert archive_url(s.forge_for("github.com"), gh, "v2.7.4") == \
        "https://github.com/pydantic/pydantic/archive/refs/tags/v2.7.4.tar.gz"
    gl = repo_from_url("https://git.example.com/grp/proj", s)
    assert archive_url(s.forge_for("git.example.com"), gl, "v1.0") == \
        "https://mirror.example/gl/grp/proj/-/archive/v1.0/proj-v1.0.tar.gz"
    cb = repo_from_url("https://codeberg.org/o/r", s)
    assert archive_url(s.forge_for("codeberg.org"), cb, "1.0") == "https://codeberg.org/o/r/archive/1.0.tar.gz"
    assert s.forge_for("gitlab.acme.dev").kind == "gitlab"  # the kind from the host's name
    with pytest.raises(InputError, match="say which kind of forge git.acme.dev is"):
        load_upstream_settings(env={"DOC4LLM_FORGE_URLS": "git.acme.dev=https://git.acme.dev"}, file_section={})
    assert [u for u, _ in versioned_site_candidates("https://rich.readthedocs.io/en/latest/", "13.7.1")] == [
        "https://rich.readthedocs.io/en/13.7.1/", "https://rich.readthedocs.io/en/v13.7.1/",
        "https://rich.readthedocs.io/en/13.7/", "https://rich.readthedocs.io/en/latest/"]
    assert [u for u, _ in versioned_site_candidates("https://docs.pydantic.dev/latest/concepts/", "2.7.4")][:3] == [
        "https://docs.pydantic.dev/2.7.4/", "https://docs.pydantic.dev/v2.7.4/", "https://docs.pydantic.dev/2.7/"]
    assert versioned_site_candidates("https://www.python-httpx.org/", "0.27.0")[0] == \
        ("https://www.python-httpx.org/0.27.0/", True)
