"""`doc4llm add pypi:/npm:/archive` against loopback registries (tests/fake_registries.py).

Each package is built in the test from small files; the CLI runs as a real subprocess
with PIP_INDEX_URL / npm_config_registry pointing at 127.0.0.1.
"""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest
import yaml
from conftest import run_cli
from fake_registries import FakeRegistries, npm_tgz, sdist, tar_gz, wait_closed_port

CORE_PY = '''"""Widgets."""


class Widget:
    """A spinning widget.

    .. versionadded:: 1.1
    """

    def spin(self, times: int = 1) -> int:
        """Spin `times` times and return the count."""
        return times


def make_widget(name: str, *, color: str = "red") -> Widget:
    """Make a widget named `name`."""
    return Widget()
'''

DTS = '''/**
Options of a limiter.
*/
export type LimitFunction = {
\t/**
\tThe number of promises that are currently running.
\t*/
\treadonly activeCount: number;
};

/**
Run promise-returning functions with limited concurrency.

@param concurrency - Concurrency limit. Minimum: `1`.
@returns A `limit` function.
*/
export default function pLimit(concurrency: number): LimitFunction;
'''


def demo_sdist(version: str, marker: Path, extra_api: str = "") -> bytes:
    init = (f'"""Demo package."""\nfrom demo.core import Widget, make_widget\n'
            f'import pathlib\npathlib.Path({str(marker)!r}).write_text("imported")\n')
    return sdist("demo", version, {
        "src/demo/__init__.py": init,
        "src/demo/core.py": CORE_PY + extra_api,
        "docs/index.rst": ("Demo Guide\n==========\n\n.. note::\n\n   Widgets spin.\n\n"
                           "Call :func:`~demo.make_widget` first.\n\n.. code-block:: python\n\n"
                           "   w = make_widget('a')\n\n.. toctree::\n\n   usage\n"),
        "docs/usage.md": "Usage text without a heading.\n\n--8<-- \"docs/snippet.txt\"\n",
        "docs/snippet.txt": "SNIPPET-BODY included from the archive\n",
        "docs/genindex.rst": "Index\n=====\n",
        "docs/conf.py": "raise SystemExit('a Sphinx conf.py is never run')\n",
        "docs/changes.rst": ".. include:: ../CHANGES.rst\n",
        "CHANGES.rst": f"Changes\n=======\n\nVersion {version}\n-------------\n\n- Added spin.\n",
        "mkdocs.yml": "nav:\n  - Home: index.md\n  - Using the widget: usage.md\n",
    }, readme="# Demo\n\nA demo package for tests.\n")


@pytest.fixture
def reg():
    r = FakeRegistries()
    yield r
    r.close()


def env_for(reg: FakeRegistries, tmp_path: Path) -> dict:
    return {"PIP_INDEX_URL": reg.index_url, "npm_config_registry": reg.npm_url, "HOME": str(tmp_path),
            "PIP_CONFIG_FILE": None, "NPM_CONFIG_REGISTRY": None}


def pages_of(set_dir: Path) -> dict[str, str]:
    return {p.name: (p / "docContent.md").read_text() for p in set_dir.iterdir() if (p / "docContent.md").is_file()}


def test_add_pypi_builds_docs_readme_changelog_and_static_api(reg, tmp_path):
    marker = tmp_path / "imported.txt"
    reg.add_pypi("demo", "1.0.0", demo_sdist("1.0.0", marker))
    docs = tmp_path / "md"
    r = run_cli("add", "pypi:demo==1.0.0", "--docs-dir", docs, "--json", env=env_for(reg, tmp_path))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["set_name"] == "demo@1.0.0" and out["status"] == "created"
    set_dir = docs / "demo@1.0.0"
    pages = pages_of(set_dir)
    assert not marker.exists(), "the package's code ran"
    # README from the long description, docs (rst converted, md with its snippet), API pages
    assert "A demo package for tests." in pages["Demo"]
    guide = pages["Demo Guide"]
    assert "> **Note:** Widgets spin." in guide and "`make_widget`" in guide and "``` python" in guide
    assert "toctree" not in guide and ":func:" not in guide
    assert "SNIPPET-BODY included from the archive" in pages["Using the widget"]  # title from MkDocs nav
    assert not any("Index" == n for n in pages)  # Sphinx genindex source skipped
    assert "- Added spin." in pages["Changes"]  # the changelog, once (included by docs/changes.rst)
    assert sum("- Added spin." in body for body in pages.values()) == 1
    api = pages["demo.core (API)"]
    assert "## Widget" in api and "### Widget.spin" in api and "## make_widget" in api
    assert "def make_widget(name: str, *, color: str = 'red') -> Widget" in api
    assert "*New in version 1.1*" in api
    assert "`make_widget`: defined in `demo.core`" in pages["demo (API)"]
    meta = yaml.safe_load((set_dir / "doc4llm-set.yaml").read_text())
    pkg = meta["package"]
    assert (pkg["ecosystem"], pkg["name"], pkg["version"]) == ("pypi", "demo", "1.0.0")
    assert len(pkg["sha256"]) == 64 and pkg["archive"] == "demo-1.0.0.tar.gz"
    froms = {rec["source"]: rec["extra"]["from"] for rec in meta["pages"].values()}
    assert froms["docs/index.rst"] == "docs" and froms["src/demo/core.py"] == "api"
    assert "readme" in froms.values()
    assert not list(docs.glob(".doc4llm-build-*")), "temp build folder left behind"

    # same archive again: nothing rewritten, no archive downloaded
    before = {p: p.stat().st_mtime_ns for p in set_dir.rglob("*")}
    reg.requests.clear()
    r2 = run_cli("add", "pypi:demo==1.0.0", "--docs-dir", docs, env=env_for(reg, tmp_path))
    assert r2.returncode == 0 and "unchanged" in r2.stdout
    assert {p: p.stat().st_mtime_ns for p in set_dir.rglob("*")} == before
    assert not any(p.startswith("/files/") for p in reg.requests)


def test_add_pypi_through_a_plain_simple_index_and_pip_conf(tmp_path):
    reg = FakeRegistries(json_api=False)
    try:
        reg.add_pypi("demo", "1.0.0", demo_sdist("1.0.0", tmp_path / "m"))
        reg.add_pypi("demo", "1.1.0", demo_sdist("1.1.0", tmp_path / "m"))
        conf = tmp_path / "pip.conf"
        conf.write_text(f"[global]\nindex-url = {reg.index_url}\n")
        env = {"PIP_INDEX_URL": None, "PIP_CONFIG_FILE": str(conf), "HOME": str(tmp_path)}
        r = run_cli("add", "pypi:demo", "--docs-dir", tmp_path / "md", env=env)
        assert r.returncode == 0, r.stderr
        assert (tmp_path / "md" / "demo@1.1.0").is_dir()  # latest
        assert any(p.startswith("/simple/demo/") for p in reg.requests)
        r = run_cli("add", "pypi:demo<1.1", "--docs-dir", tmp_path / "md", env=env)
        assert r.returncode == 0 and (tmp_path / "md" / "demo@1.0.0").is_dir()
    finally:
        reg.close()


def test_add_npm_readme_and_dts_api_with_ranges_and_tags(reg, tmp_path):
    files = {"readme.md": "# p-demo\n\n> Run promises with limited concurrency\n", "index.d.ts": DTS,
             "index.js": "throw new Error('never run')\n", "CHANGELOG.md": "# Changelog\n\n## 1.0.0\n\n- first\n"}
    reg.add_npm("p-demo", "1.0.0", npm_tgz("p-demo", "1.0.0", files), tag_latest=False)
    reg.add_npm("p-demo", "1.2.0", npm_tgz("p-demo", "1.2.0", files))
    reg.add_npm("p-demo", "2.0.0-beta.1", npm_tgz("p-demo", "2.0.0-beta.1", files), tag_latest=False)
    reg.npm_tags["p-demo"]["next"] = "2.0.0-beta.1"
    docs = tmp_path / "md"
    env = env_for(reg, tmp_path)
    r = run_cli("add", "npm:p-demo@1.0.0", "--docs-dir", docs, env=env)
    assert r.returncode == 0, r.stderr
    pages = pages_of(docs / "p-demo@1.0.0")
    assert "limited concurrency" in pages["p-demo"]
    api = pages["index.d.ts (p-demo API)"]
    assert "## pLimit" in api and "## LimitFunction" in api and "### LimitFunction.activeCount" in api
    assert "- `concurrency`: Concurrency limit." in api and "```ts" in api
    assert "- first" in pages["Changelog"]
    for spec, want in (("^1.0.0", "1.2.0"), ("next", "2.0.0-beta.1"), ("", "1.2.0")):
        r = run_cli("add", f"npm:p-demo{'@' + spec if spec else ''}", "--docs-dir", docs, "--json", env=env)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["version"] == want


def test_add_npm_types_from_the_types_package_when_none_shipped(reg, tmp_path):
    reg.add_npm("untyped", "3.1.0", npm_tgz("untyped", "3.1.0", {"README.md": "# untyped\n"}, types=None))
    reg.add_npm("@types/untyped", "3.1.4", npm_tgz("@types/untyped", "3.1.4", {"index.d.ts": DTS}))
    r = run_cli("add", "npm:untyped@3.1.0", "--docs-dir", tmp_path / "md", "--json", env=env_for(reg, tmp_path))
    assert r.returncode == 0, r.stderr
    pages = pages_of(tmp_path / "md" / "untyped@3.1.0")
    api = next(body for name, body in pages.items() if "@types" in name)
    assert "## pLimit" in api
    meta = yaml.safe_load((tmp_path / "md" / "untyped@3.1.0" / "doc4llm-set.yaml").read_text())
    assert meta["package"]["types_package"] == "@types/untyped@3.1.4"


@pytest.mark.parametrize("source, code, words", [
    ("pypi:nosuch==1.0", 2, "no PyPI package named 'nosuch'"),
    ("pypi:demo==9.9", 2, "has no version 9.9"),
    ("npm:nosuch@1.0.0", 2, "no npm package named 'nosuch'"),
    ("npm:p-demo@7.0.0", 2, "no version matching '7.0.0'"),
    ("pypi:-bad", 2, "not a PyPI package name"),
    ("pypi:bad name!", 2, "cannot read the version"),
])
def test_add_unknown_package_or_version_is_a_clear_exit_2(reg, tmp_path, source, code, words):
    reg.add_pypi("demo", "1.0.0", demo_sdist("1.0.0", tmp_path / "m"))
    reg.add_npm("p-demo", "1.0.0", npm_tgz("p-demo", "1.0.0", {"index.d.ts": DTS}))
    r = run_cli("add", source, "--docs-dir", tmp_path / "md", env=env_for(reg, tmp_path))
    assert r.returncode == code, r.stderr
    assert words in r.stderr and "Traceback" not in r.stderr


def test_registry_down_or_failing_is_exit_3(reg, tmp_path):
    env = env_for(reg, tmp_path) | {"PIP_INDEX_URL": wait_closed_port() + "/simple", "DOC4LLM_REGISTRY_RETRIES": "0"}
    r = run_cli("add", "pypi:demo==1.0.0", "--docs-dir", tmp_path / "md", env=env)
    assert r.returncode == 3 and "cannot reach" in r.stderr and "Traceback" not in r.stderr
    reg.fail_with = 503
    r = run_cli("add", "npm:p-demo@1.0.0", "--docs-dir", tmp_path / "md",
                env=env_for(reg, tmp_path) | {"DOC4LLM_REGISTRY_RETRIES": "1"})
    assert r.returncode == 3 and "HTTP 503" in r.stderr
    assert len(reg.requests) == 2  # one retry, then a clear error


def hostile(kind: str) -> bytes:
    ok = {"package/package.json": json.dumps({"name": "evil", "version": "1.0.0"}), "package/README.md": "# e\n"}
    if kind == "dotdot":
        return tar_gz({**ok, "package/../../escaped.txt": "x"})
    if kind == "absolute":
        return tar_gz({**ok, "/tmp/doc4llm-absolute-escape.txt": "x"})
    if kind == "corrupt":
        return b"\x1f\x8b\x08\x00garbage-not-a-tarball" * 10
    if kind == "truncated":  # a real tarball cut in the middle of a member
        data = tar_gz({**ok, "package/big.md": __import__("os").urandom(200_000).hex()})
        return data[: len(data) // 2]
    raise AssertionError(kind)


@pytest.mark.parametrize("kind, words", [("dotdot", "climbs out"), ("absolute", "absolute path"),
                                         ("corrupt", "not a readable archive"), ("truncated", "not a readable archive")])
def test_hostile_or_corrupt_archive_is_refused_and_the_existing_set_stays(reg, tmp_path, kind, words):
    docs = tmp_path / "md"
    reg.add_npm("evil", "1.0.0", npm_tgz("evil", "1.0.0", {"README.md": "# evil\n\ngood version\n"}))
    env = env_for(reg, tmp_path)
    assert run_cli("add", "npm:evil@1.0.0", "--docs-dir", docs, env=env).returncode == 0
    before = {p: p.read_bytes() for p in (docs / "evil@1.0.0").rglob("*") if p.is_file()}
    reg.add_npm("evil", "1.0.0", hostile(kind))  # the same version now serves a bad archive
    r = run_cli("add", "npm:evil@1.0.0", "--force", "--docs-dir", docs, env=env)
    assert r.returncode == 2, r.stderr
    assert words in r.stderr and "Traceback" not in r.stderr
    assert {p: p.read_bytes() for p in (docs / "evil@1.0.0").rglob("*") if p.is_file()} == before
    assert not (tmp_path / "escaped.txt").exists() and not (docs / "escaped.txt").exists()
    assert not Path("/tmp/doc4llm-absolute-escape.txt").exists()
    assert not list(docs.glob(".doc4llm-build-*"))


def test_hash_mismatch_is_refused(reg, tmp_path):
    reg.add_pypi("demo", "1.0.0", demo_sdist("1.0.0", tmp_path / "m"))
    reg.bad_hash.add("demo-1.0.0.tar.gz")
    r = run_cli("add", "pypi:demo==1.0.0", "--docs-dir", tmp_path / "md", env=env_for(reg, tmp_path))
    assert r.returncode == 3 and "does not match" in r.stderr
    assert not (tmp_path / "md" / "demo@1.0.0").exists()


def test_add_local_archives_and_links_inside_are_skipped(tmp_path):
    tgz = tmp_path / "p-local-2.0.0.tgz"
    data = tar_gz({"package/package.json": json.dumps({"name": "p-local", "version": "2.0.0"}),
                   "package/README.md": "# p-local\n\nLocal readme.\n", "package/index.d.ts": DTS},
                  links={"package/docs/passwd.md": "/etc/passwd"})
    tgz.write_bytes(data)
    r = run_cli("add", tgz, "--docs-dir", tmp_path / "md", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["set_name"] == "p-local@2.0.0" and any("link" in w for w in out["warnings"])
    assert not any("root:" in b for b in pages_of(tmp_path / "md" / "p-local@2.0.0").values())
    # a wheel: METADATA gives the name, version and README
    import zipfile

    whl = tmp_path / "demo_pkg-0.3-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as zf:
        zf.writestr("demo_pkg/__init__.py", 'def hello(who: str) -> str:\n    """Greet."""\n    return who\n')
        zf.writestr("demo_pkg-0.3.dist-info/METADATA",
                    "Metadata-Version: 2.1\nName: demo_pkg\nVersion: 0.3\n"
                    "Description-Content-Type: text/markdown\n\n# demo_pkg\n\nWheel readme.\n")
    r = run_cli("add", whl, "--docs-dir", tmp_path / "md")
    assert r.returncode == 0, r.stderr
    pages = pages_of(tmp_path / "md" / "demo-pkg@0.3")
    assert "## hello" in pages["demo_pkg (API)"] and "Wheel readme." in pages["demo_pkg"]


def test_a_set_not_made_from_a_package_is_never_replaced(reg, tmp_path):
    docs = tmp_path / "md"
    src = tmp_path / "notes"
    src.mkdir()
    (src / "a.md").write_text("# Mine\n\nhand-written\n")
    assert run_cli("import", src, "--set", "demo@1.0.0", "--docs-dir", docs).returncode == 0
    reg.add_pypi("demo", "1.0.0", demo_sdist("1.0.0", tmp_path / "m"))
    r = run_cli("add", "pypi:demo==1.0.0", "--docs-dir", docs, env=env_for(reg, tmp_path))
    assert r.returncode == 2 and "not made from a package" in r.stderr
    assert "hand-written" in (docs / "demo@1.0.0" / "Mine" / "docContent.md").read_text()


def test_add_routes_folders_and_needs_set_for_them(tmp_path):
    src = tmp_path / "notes"
    src.mkdir()
    (src / "a.md").write_text("# Page A\n\ntext\n")
    r = run_cli("add", src, "--docs-dir", tmp_path / "md")
    assert r.returncode == 2 and "--set" in r.stderr
    r = run_cli("add", src, "--set", "notes@1", "--docs-dir", tmp_path / "md")
    assert r.returncode == 0 and (tmp_path / "md" / "notes@1" / "Page A" / "docContent.md").is_file()
    r = run_cli("add", tmp_path / "missing", "--docs-dir", tmp_path / "md")
    assert r.returncode == 2 and "not a package" in r.stderr


def test_tarball_helper_really_holds_the_links():
    data = tar_gz({"a/b.txt": "x"}, links={"a/l": "/etc/passwd"})
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        assert tf.getmember("a/l").issym()


def test_add_a_url_scrapes_it(tmp_path):
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<html><head><title>Home</title></head><body><main><h1>Welcome Page</h1>"
                                     "<p>Some documentation text that is long enough to keep.</p></main></body></html>")

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/"
        r = run_cli("add", url, "--docs-dir", tmp_path / "md")
        assert r.returncode == 2 and "a URL needs --set" in r.stderr
        r = run_cli("add", url, "--set", "site@1", "--docs-dir", tmp_path / "md")
        assert r.returncode == 0, r.stderr
        assert (tmp_path / "md" / "site@1" / "Welcome Page" / "docContent.md").is_file()
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_index_credentials_are_never_printed_or_written(reg, tmp_path):
    reg.add_pypi("demo", "1.0.0", demo_sdist("1.0.0", tmp_path / "m"))
    index = reg.index_url.replace("http://", "http://user:s3cretTOKEN@")
    docs = tmp_path / "md"
    r = run_cli("add", "pypi:demo==1.0.0", "--docs-dir", docs, "--json", env=env_for(reg, tmp_path) | {"PIP_INDEX_URL": index})
    assert r.returncode == 0, r.stderr
    r2 = run_cli("add", "pypi:nosuch", "--docs-dir", docs, env=env_for(reg, tmp_path) | {"PIP_INDEX_URL": index})
    assert r2.returncode == 2 and "***@127.0.0.1" in r2.stderr
    # every file, the search index that `add` now builds included (read as bytes: it is SQLite)
    written = b"".join(p.read_bytes() for p in docs.rglob("*") if p.is_file())
    assert b"s3cretTOKEN" not in written and (docs / ".doc4llm" / "index.sqlite").is_file()
    for text in (r.stdout, r.stderr, r2.stdout, r2.stderr):
        assert "s3cretTOKEN" not in text
