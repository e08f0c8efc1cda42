"""`doc4llm sync` against loopback registries, and the lockfile readers on real-shaped files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from fake_registries import FakeRegistries, npm_tgz, sdist
from test_packages_add import DTS, env_for

from doc4llm.errors import InputError
from doc4llm.ingest.packages.lockfiles import read_project


def py_pkg(name: str, version: str) -> bytes:
    mod = name.replace("-", "_")
    return sdist(name, version, {f"{mod}/__init__.py": f'def v{version.replace(".", "_")}() -> None:\n'
                                                      f'    """Only in {version}."""\n'},
                 readme=f"# {name}\n\nversion {version}\n")


@pytest.fixture
def reg():
    r = FakeRegistries()
    for v in ("1.0.0", "1.1.0"):
        r.add_pypi("clicky", v, py_pkg("clicky", v))
    r.add_pypi("other", "2.0", py_pkg("other", "2.0"))
    r.add_npm("p-demo", "5.0.0", npm_tgz("p-demo", "5.0.0", {"readme.md": "# p-demo\n", "index.d.ts": DTS}))
    yield r
    r.close()


def snapshot(docs: Path) -> dict:
    return {str(p.relative_to(docs)): p.stat().st_mtime_ns for p in docs.rglob("*")}


def test_sync_creates_sets_and_a_second_run_rewrites_nothing(reg, tmp_path):
    project, docs = tmp_path / "proj", tmp_path / "md"
    project.mkdir()
    (project / "requirements.txt").write_text("clicky==1.0.0 --hash=sha256:abc\nother==2.0  # pinned\n")
    (project / "package.json").write_text(json.dumps({"dependencies": {"p-demo": "5.0.0"}}))
    env = env_for(reg, tmp_path)
    r = run_cli("sync", project, "--docs-dir", docs, "--json", env=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["counts"] == {"create": 3}
    assert {i["set"] for i in out["items"]} == {"clicky@1.0.0", "other@2.0", "p-demo@5.0.0"}
    assert "synced 3/3 packages" in r.stderr  # the progress on stderr
    before = snapshot(docs)
    reg.requests.clear()
    r = run_cli("sync", project, "--docs-dir", docs, "--json", env=env)
    assert r.returncode == 0 and json.loads(r.stdout)["counts"] == {"skip": 3}
    assert snapshot(docs) == before and reg.requests == []  # no write, no network


def test_sync_version_change_replaces_and_prune_removes(reg, tmp_path):
    project, docs = tmp_path / "proj", tmp_path / "md"
    project.mkdir()
    req = project / "requirements.txt"
    req.write_text("clicky==1.0.0\nother==2.0\n")
    env = env_for(reg, tmp_path)
    assert run_cli("sync", project, "--docs-dir", docs, env=env).returncode == 0
    req.write_text("clicky==1.1.0\n")
    r = run_cli("sync", project, "--docs-dir", docs, "--dry-run", env=env)
    assert r.returncode == 0 and "create   clicky@1.1.0" in r.stdout
    assert not (docs / "clicky@1.1.0").exists()  # a dry run changes nothing
    r = run_cli("sync", project, "--docs-dir", docs, env=env)
    assert r.returncode == 0, r.stderr
    assert (docs / "clicky@1.1.0").is_dir() and not (docs / "clicky@1.0.0").exists()
    assert (docs / "other@2.0").is_dir()  # removed from the project, kept without --prune
    # the version question: a name new in 1.1.0 is only in the 1.1.0 set
    api = (docs / "clicky@1.1.0" / "clicky (API)" / "docContent.md").read_text()
    assert "## v1_1_0" in api and "v1_0_0" not in api
    r = run_cli("sync", project, "--docs-dir", docs, "--prune", env=env)
    assert r.returncode == 0 and "remove   other@2.0" in r.stdout
    assert not (docs / "other@2.0").exists() and (docs / "clicky@1.1.0").is_dir()


def test_prune_keeps_a_set_another_project_uses(reg, tmp_path):
    docs, env = tmp_path / "md", env_for(reg, tmp_path)
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "requirements.txt").write_text("other==2.0\n")
        assert run_cli("sync", tmp_path / name, "--docs-dir", docs, env=env).returncode == 0
    (tmp_path / "a" / "requirements.txt").write_text("clicky==1.0.0\n")
    assert run_cli("sync", tmp_path / "a", "--docs-dir", docs, "--prune", env=env).returncode == 0
    assert (docs / "other@2.0").is_dir()


def test_sync_failures_exit_3_and_keep_the_rest(reg, tmp_path):
    project, docs = tmp_path / "proj", tmp_path / "md"
    project.mkdir()
    (project / "requirements.txt").write_text("clicky==1.0.0\nclicky-missing==0.1\n")
    r = run_cli("sync", project, "--docs-dir", docs, env=env_for(reg, tmp_path))
    assert r.returncode == 3, r.stderr
    assert "failed   clicky-missing@0.1  no PyPI package named" in r.stdout and "1 of 2 packages failed" in r.stderr
    assert (docs / "clicky@1.0.0").is_dir()


@pytest.mark.parametrize("name, text, words", [
    ("package-lock.json", "{not json", "package-lock.json does not parse as JSON"),
    ("uv.lock", "[[package]\nname=", "uv.lock does not parse as TOML"),
    ("pnpm-lock.yaml", "importers: [unclosed", "pnpm-lock.yaml does not parse as YAML"),
    ("yarn.lock", "this is not yarn\n", "yarn.lock line 1: cannot read 'this is not yarn'"),
])
def test_unparsable_lockfile_is_exit_2(tmp_path, name, text, words):
    (tmp_path / name).write_text(text)
    r = run_cli("sync", tmp_path, "--docs-dir", tmp_path / "md")
    assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr


def test_no_manifest_is_exit_2(tmp_path):
    r = run_cli("sync", tmp_path, "--docs-dir", tmp_path / "md")
    assert r.returncode == 2 and "no lockfile or manifest" in r.stderr


# -- lockfile readers ---------------------------------------------------------------------

def deps_of(path: Path, include_all: bool = False) -> set[tuple]:
    return {(d.ecosystem, d.name, d.version, d.spec, d.direct) for d in read_project(path, include_all).deps}


def test_uv_lock_direct_and_all(tmp_path):
    (tmp_path / "uv.lock").write_text('''version = 1
[[package]]
name = "app"
version = "0.1.0"
source = { editable = "." }
dependencies = [{ name = "Click" }]
[package.dev-dependencies]
dev = [{ name = "pytest" }]

[[package]]
name = "click"
version = "8.1.7"
source = { registry = "https://pypi.org/simple" }
dependencies = [{ name = "colorama" }]

[[package]]
name = "colorama"
version = "0.4.6"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "pytest"
version = "8.3.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "local-thing"
version = "0.0.1"
source = { git = "https://example.invalid/x.git" }
''')
    assert deps_of(tmp_path) == {("pypi", "click", "8.1.7", None, True), ("pypi", "pytest", "8.3.0", None, True)}
    assert ("pypi", "colorama", "0.4.6", None, False) in deps_of(tmp_path, include_all=True)
    assert any("local-thing" in s for s in read_project(tmp_path).skipped)


def test_poetry_lock_with_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.poetry.dependencies]\npython = "^3.10"\nrequests = "^2.31"\n')
    (tmp_path / "poetry.lock").write_text('[[package]]\nname = "requests"\nversion = "2.31.0"\n\n'
                                          '[[package]]\nname = "urllib3"\nversion = "2.2.1"\n')
    assert deps_of(tmp_path) == {("pypi", "requests", "2.31.0", None, True)}
    assert len(deps_of(tmp_path, True)) == 2


def test_requirements_pins_ranges_includes_markers(tmp_path):
    (tmp_path / "base.txt").write_text("Django==4.2.11 \\\n    --hash=sha256:aaa\n")
    (tmp_path / "requirements.txt").write_text(
        "-r base.txt\n# comment\n--index-url https://example.invalid/simple\nrich>=13,<14\n"
        "pywin32==306; sys_platform == 'win32'\n-e ./local\nfoo @ https://example.invalid/foo.whl\n")
    deps = deps_of(tmp_path)
    assert ("pypi", "django", "4.2.11", None, True) in deps
    assert ("pypi", "rich", None, "<14,>=13", True) in deps
    assert not any(d[1] == "pywin32" for d in deps)  # marker false here
    assert len(read_project(tmp_path).skipped) == 2


def test_pyproject_alone(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "me"\ndependencies = ["httpx>=0.27", "pyyaml==6.0.1"]\n'
                                             '[dependency-groups]\ndev = ["pytest"]\n')
    assert deps_of(tmp_path) == {("pypi", "httpx", None, ">=0.27", True), ("pypi", "pyyaml", "6.0.1", None, True),
                                 ("pypi", "pytest", None, None, True)}


def test_package_lock_v3_and_v1(tmp_path):
    (tmp_path / "package.json").write_text(json.dumps({"dependencies": {"zod": "^3.23.0"},
                                                       "devDependencies": {"vite": "^5.0.0"}}))
    (tmp_path / "package-lock.json").write_text(json.dumps({"lockfileVersion": 3, "packages": {
        "": {"dependencies": {"zod": "^3.23.0"}, "devDependencies": {"vite": "^5.0.0"}},
        "node_modules/zod": {"version": "3.23.8"}, "node_modules/vite": {"version": "5.4.1", "dev": True},
        "node_modules/esbuild": {"version": "0.21.5"},
        "node_modules/vite/node_modules/esbuild": {"version": "0.20.0"},
        "node_modules/mylib": {"resolved": "../mylib", "link": True}}}))
    assert deps_of(tmp_path) == {("npm", "zod", "3.23.8", None, True), ("npm", "vite", "5.4.1", None, True)}
    all_deps = deps_of(tmp_path, True)
    assert ("npm", "esbuild", "0.20.0", None, False) in all_deps and len(all_deps) == 4
    (tmp_path / "package-lock.json").write_text(json.dumps({"lockfileVersion": 1, "dependencies": {
        "zod": {"version": "3.22.0"}, "left-pad": {"version": "1.3.0"}}}))
    assert deps_of(tmp_path) == {("npm", "zod", "3.22.0", None, True)}


def test_pnpm_lock_v9_and_v6(tmp_path):
    (tmp_path / "pnpm-lock.yaml").write_text(
        "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      react:\n        specifier: ^18.2.0\n"
        "        version: 18.3.1\n      mylib:\n        specifier: workspace:*\n        version: link:../mylib\n"
        "    devDependencies:\n      vitest:\n        specifier: ^1.0.0\n        version: 1.6.0(@types/node@20.1.0)\n"
        "packages:\n  react@18.3.1:\n    resolution: {integrity: sha512-x}\n  '@babel/core@7.24.0':\n"
        "    resolution: {integrity: sha512-y}\n")
    assert deps_of(tmp_path) == {("npm", "react", "18.3.1", None, True), ("npm", "vitest", "1.6.0", None, True)}
    assert ("npm", "@babel/core", "7.24.0", None, False) in deps_of(tmp_path, True)
    (tmp_path / "pnpm-lock.yaml").write_text(
        "lockfileVersion: '6.0'\ndependencies:\n  zod:\n    specifier: ^3.0.0\n    version: 3.23.8\n"
        "packages:\n  /zod@3.23.8:\n    resolution: {integrity: sha512-z}\n")
    assert deps_of(tmp_path) == {("npm", "zod", "3.23.8", None, True)}


def test_yarn_lock_v1_and_berry(tmp_path):
    (tmp_path / "package.json").write_text(json.dumps({"dependencies": {"p-limit": "^5.0.0", "@scope/x": "~1.2.0"}}))
    (tmp_path / "yarn.lock").write_text(
        '# yarn lockfile v1\n\n"p-limit@^5.0.0", p-limit@^5.0.1:\n  version "5.0.0"\n  resolved "https://r/x.tgz"\n\n'
        '"@scope/x@~1.2.0":\n  version "1.2.3"\n\nyocto-queue@^1.0.0:\n  version "1.0.0"\n')
    assert deps_of(tmp_path) == {("npm", "p-limit", "5.0.0", None, True), ("npm", "@scope/x", "1.2.3", None, True)}
    assert len(deps_of(tmp_path, True)) == 3
    (tmp_path / "yarn.lock").write_text(
        '__metadata:\n  version: 6\n\n"p-limit@npm:^5.0.0":\n  version: 5.0.0\n  resolution: "p-limit@npm:5.0.0"\n\n'
        '"@scope/x@npm:~1.2.0":\n  version: 1.2.4\n\n"app@workspace:.":\n  version: 0.0.0-use.local\n')
    assert deps_of(tmp_path) == {("npm", "p-limit", "5.0.0", None, True), ("npm", "@scope/x", "1.2.4", None, True)}


def test_package_json_alone_pins_and_ranges(tmp_path):
    (tmp_path / "package.json").write_text(json.dumps({"dependencies": {"p-limit": "5.0.0", "zod": "^3.23.0",
                                                                        "local": "file:../local"}}))
    assert deps_of(tmp_path) == {("npm", "p-limit", "5.0.0", None, True), ("npm", "zod", None, "^3.23.0", True)}


def test_lockfile_that_is_not_an_object(tmp_path):
    (tmp_path / "package-lock.json").write_text("[1, 2]")
    with pytest.raises(InputError, match="not a JSON object"):
        read_project(tmp_path)


def test_sync_follows_the_projects_npmrc_and_pip_conf(reg, tmp_path):
    project, docs = tmp_path / "proj", tmp_path / "md"
    project.mkdir()
    (project / "package.json").write_text(json.dumps({"dependencies": {"p-demo": "^5.0.0"}}))
    (project / ".npmrc").write_text(f"; the project's registry\nregistry={reg.npm_url}\n")
    (project / "requirements.txt").write_text("clicky==1.1.0\n")
    conf = tmp_path / "pip.conf"
    conf.write_text(f"[global]\nindex-url = https://example.invalid/simple\n[install]\nindex-url = {reg.index_url}\n")
    env = {"HOME": str(tmp_path), "PIP_INDEX_URL": None, "PIP_CONFIG_FILE": str(conf),
           "npm_config_registry": None, "NPM_CONFIG_REGISTRY": None}
    r = run_cli("sync", project, "--docs-dir", docs, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (docs / "p-demo@5.0.0").is_dir() and (docs / "clicky@1.1.0").is_dir()
