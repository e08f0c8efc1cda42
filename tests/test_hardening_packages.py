"""Issue 33's attacks on `add` / `sync` / `grep`, one regression test per item (3, 6-11, 13,
14, 16-20, 22, 23), on small generated inputs served from loopback registries.

Memory is checked as the peak RSS of a CLI subprocess (os.wait4) or as tracemalloc's peak
at two input sizes; time as growth between two sizes (tests/growth.py), never a clock
budget. benchmarks/hardening/round3.py runs the same attacks at the issue's size and 10x.
"""

from __future__ import annotations

import base64
import fcntl
import gzip
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from conftest import run_cli
from fake_registries import FakeRegistries, npm_tgz, sdist, tar_gz
from growth import assert_linear
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doc4llm.corpus.safe_data import DataError, loads_json, loads_toml
from doc4llm.corpus.safe_yaml import YamlError, load_yaml
from doc4llm.errors import Doc4llmError, InputError
from doc4llm.ingest.packages import build
from doc4llm.ingest.packages.archive import ArchiveError, extract, safe_member_path
from doc4llm.ingest.packages.http import DeadlineError, Http
from doc4llm.ingest.packages.integrity import parse_hash, parse_sri
from doc4llm.ingest.packages.lockfiles import read_project
from doc4llm.ingest.packages.spec import validate_package


@pytest.fixture
def reg():
    r = FakeRegistries()
    yield r
    r.close()


def env_for(reg: FakeRegistries, tmp: Path, **extra: str) -> dict:
    return {"PIP_INDEX_URL": reg.index_url, "npm_config_registry": reg.npm_url, "HOME": str(tmp),
            "DOC4LLM_REGISTRY_RETRIES": "0", "PIP_CONFIG_FILE": os.devnull, **extra}


def _high_water_kb(pid: int) -> int:
    """VmHWM of a live process: its peak RSS since its last exec (ru_maxrss is not: it
    keeps the forking parent's size across exec)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            return next((int(line.split()[1]) for line in fh if line.startswith("VmHWM:")), 0)
    except (OSError, ValueError):
        return 0


def run_measured(*args: object, env: dict | None = None, timeout: float = 60) -> tuple[int, str, str, float]:
    """(exit code, stdout, stderr, peak RSS in MB) of `python -m doc4llm ARGS`; the child is
    killed past `timeout` (or past 2 GB, a bomb that is not refused)."""
    full = {**os.environ, **(env or {})}
    full.pop("DOC4LLM_DOCS_DIR", None)
    peak = 0
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", "doc4llm", *map(str, args)], stdout=out, stderr=err, env=full)
        deadline = time.monotonic() + timeout
        while proc.poll() is None:
            peak = max(peak, _high_water_kb(proc.pid))
            if time.monotonic() > deadline or peak > 2 * 1024 * 1024:
                proc.kill()
                proc.wait()
                raise AssertionError(f"doc4llm {args} ran past {timeout} s or 2 GB ({peak // 1024} MB)")
            time.sleep(0.01)
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read().decode(), err.read().decode(), peak / 1024


def one_sentence(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = [ln for ln in stderr.splitlines() if ln.startswith("doc4llm: error:")]
    assert len(lines) == 1, stderr
    return lines[0]


def ustar(name: bytes, typ: bytes = b"0", size: int = 0) -> bytes:
    h = bytearray(512)
    h[0:len(name)] = name
    h[100:108] = b"0000755\0" if typ == b"5" else b"0000644\0"
    h[108:116] = h[116:124] = b"0000000\0"
    h[124:136] = b"%011o\0" % size
    h[136:148] = b"14000000000\0"
    h[156:157] = typ
    h[257:263] = b"ustar\0"
    h[263:265] = b"00"
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)


def member_tar(path: Path, count: int, kind: str, docs: bool = True) -> Path:
    """A .tar.gz sdist (PKG-INFO, docs/a.md) with `count` extra members: `dir` entries or
    empty `.so` files."""
    info = b"Metadata-Version: 2.1\nName: bomb\nVersion: 1.0\n\n# Bomb\n\ntext\n"
    parts = [ustar(b"bomb-1.0/PKG-INFO", size=len(info)), info + b"\0" * (-len(info) % 512)]
    if docs:
        body = b"# A\n\ntext\n"
        parts += [ustar(b"bomb-1.0/docs/a.md", size=len(body)), body + b"\0" * (-len(body) % 512)]
    parts += [ustar(b"bomb-1.0/d%d" % i, b"5") if kind == "dir" else ustar(b"bomb-1.0/x%d.so" % i)
              for i in range(count)]
    path.write_bytes(gzip.compress(b"".join(parts) + b"\0" * 1024, compresslevel=1))
    return path


# -- item 3: YAML alias bombs; item 13: nesting ------------------------------------------

def alias_bomb(levels: int) -> str:
    lines = ["lockfileVersion: '6.0'", "x:", "  l0: &l0 [" + ",".join(["lol"] * 9) + "]"]
    lines += [f"  l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines + ["dependencies:", f"  bomb: *l{levels - 1}", ""])


def test_pnpm_alias_bomb_is_refused_in_bounded_memory(tmp_path):
    (tmp_path / "pnpm-lock.yaml").write_text(alias_bomb(9))
    code, _, err, peak = run_measured("sync", tmp_path, "--dry-run", "--docs-dir", tmp_path / "md")
    assert code == 2 and "pnpm-lock.yaml expands to more than" in one_sentence(err)
    assert 0 < peak < 300, f"{peak:.0f} MB"


def test_safe_yaml_counts_aliases_as_copies_and_refuses_recursion():
    assert load_yaml("a: &x [1, 2]\nb: *x\nc: {<<: {k: v}, d: 1}\n", "f.yaml") == \
        {"a": [1, 2], "b": [1, 2], "c": {"k": "v", "d": 1}}
    with pytest.raises(YamlError, match="f.yaml expands to more than 100 nodes"):
        load_yaml("a: &x [" + ",".join(["1"] * 20) + "]\nb: [*x, *x, *x, *x, *x, *x]\n", "f.yaml", max_nodes=100)
    with pytest.raises(YamlError, match="recursive"):
        load_yaml("a: &x [1, *x]\n", "f.yaml")
    with pytest.raises(YamlError, match="deeper than 100 levels"):
        load_yaml("- " * 150 + "x\n", "f.yaml")
    with pytest.raises(YamlError, match=r"f.yaml does not parse as YAML \(line 3\)"):
        load_yaml("a: 1\nb: [\n", "f.yaml")
    assert load_yaml("nav: !!python/name:os.system\n", "mkdocs.yml", ignore_unknown_tags=True) == {"nav": None}
    with pytest.raises(YamlError):
        load_yaml("nav: !!python/name:os.system\n", "mkdocs.yml")


def test_safe_yaml_is_linear_in_the_file():
    assert_linear(lambda t: load_yaml(t, "f"), lambda n: "".join(f"k{i}: [a, {{b: c}}]\n" for i in range(n)),
                  1000, what="load_yaml")


@pytest.mark.parametrize("name, body", [
    ("package.json", "[" * 200_000), ("package-lock.json", '{"packages": ' + "[" * 200_000),
    ("pyproject.toml", "x = " + "[" * 200_000), ("uv.lock", "x = " + "[" * 200_000),
    ("pnpm-lock.yaml", "[" * 200_000),
])
def test_deep_nesting_is_exit_2_naming_the_file(tmp_path, name, body):
    (tmp_path / name).write_text(body)
    r = run_cli("sync", tmp_path, "--dry-run", "--all", "--docs-dir", tmp_path / "md")
    assert r.returncode == 2 and name in one_sentence(r.stderr), r.stderr


def test_safe_data_depth_and_shape():
    assert loads_json('{"a": [[1]]}', "x.json") == {"a": [[1]]}
    with pytest.raises(DataError, match="x.json is nested deeper than 3 levels"):
        loads_json('{"a": [[[1]]]}', "x.json", max_depth=3)
    with pytest.raises(DataError, match="x.json is not a JSON object"):
        loads_json("[1]", "x.json")
    with pytest.raises(DataError, match="x.toml is nested deeper"):
        loads_toml("a = " + "[" * 5000 + "]" * 5000, "x.toml")


def test_deep_registry_answer_is_one_sentence(reg, tmp_path):
    reg.raw["/pypi/deep/json"] = ('{"releases": ' + "[" * 200_000).encode()
    r = run_cli("add", "pypi:deep", "--docs-dir", tmp_path / "md", env=env_for(reg, tmp_path))
    assert r.returncode == 3 and "nested deeper than 200 levels" in one_sentence(r.stderr)


# -- item 6: one deadline per download ---------------------------------------------------

def test_a_dripping_registry_times_out_on_the_total(reg, tmp_path):
    reg.add_pypi("drip", "1.0", sdist("drip", "1.0", {"README.md": "# Drip\n\ntext\n" * 20}))
    reg.drip["/files/"] = 0.3  # a byte every 0.3 s: each read is quick, the whole is not
    started = time.monotonic()
    r = run_cli("add", "pypi:drip==1.0", "--docs-dir", tmp_path / "md",
                env=env_for(reg, tmp_path, DOC4LLM_DOWNLOAD_TIMEOUT="1.5"))
    assert r.returncode == 3 and "took more than" in one_sentence(r.stderr) and "not downloaded" in r.stderr
    assert time.monotonic() - started < 30
    assert not list((tmp_path / "md").glob(".doc4llm-build-*"))


def test_the_budget_of_a_whole_run_stops_the_next_request(reg):
    reg.add_pypi("slow", "1.0", b"x" * 50)
    reg.drip["/files/"] = 0.2
    with Http(budget=1.0, retries=0, what="this sync") as http:
        with pytest.raises(DeadlineError, match="time budget of 1 s for this sync ran out"):
            http.download(f"{reg.base}/files/slow-1.0.tar.gz", Path(tempfile.mkdtemp()) / "a")
        with pytest.raises(DeadlineError, match="time budget"):
            http.get_json(f"{reg.base}/pypi/slow/json")


def test_a_fast_download_is_not_cut(reg, tmp_path):
    reg.add_pypi("big", "1.0", os.urandom(3 * 1024 * 1024))
    with Http(retries=0) as http:
        http.grace = 1.0
        sha = http.download(f"{reg.base}/files/big-1.0.tar.gz", tmp_path / "a")
    assert sha == hashlib.sha256(reg.files["big-1.0.tar.gz"]).hexdigest()


# -- items 7, 8: every member counted, headers not kept ----------------------------------

def test_directory_members_create_nothing_and_count(tmp_path):
    arc = member_tar(tmp_path / "dirs.tar.gz", 500, "dir")
    got = extract(arc, tmp_path / "x")
    folders = [p for p in (tmp_path / "x").rglob("*") if p.is_dir()]
    assert got.files == 2 and got.members == 502 and len(folders) == 2  # bomb-1.0, bomb-1.0/docs
    with pytest.raises(ArchiveError, match="more than 100 members"):
        extract(arc, tmp_path / "y", max_members=100)


def test_skipped_members_count_and_their_headers_are_dropped(tmp_path):
    with pytest.raises(ArchiveError, match="more than 1,000 members"):
        extract(member_tar(tmp_path / "so.tar.gz", 3000, "so"), tmp_path / "x", max_members=1000)

    def peak(n: int) -> int:
        arc = member_tar(tmp_path / f"so{n}.tar.gz", n, "so")
        tracemalloc.start()
        try:
            extract(arc, Path(tempfile.mkdtemp(dir=tmp_path)))
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, large = peak(2000), peak(8000)
    assert large < small * 1.5 + 512 * 1024, (small, large)  # kept headers: ~4x


def test_extraction_time_grows_linearly_with_members(tmp_path):
    def make(n: int) -> Path:
        return member_tar(tmp_path / f"lin{n}.tar.gz", n, "so")

    assert_linear(lambda p: extract(p, Path(tempfile.mkdtemp(dir=tmp_path))), make, 2000, what="extract")


def test_a_zip_directory_is_sized_before_it_is_read(tmp_path):
    arc = tmp_path / "many.zip"
    with zipfile.ZipFile(arc, "w") as zf:
        for i in range(300):
            zf.writestr(f"p/x{i}.so", b"")
    with pytest.raises(ArchiveError, match="lists more than 100 members"):
        extract(arc, tmp_path / "x", max_members=100)


# -- item 9: integrity -------------------------------------------------------------------

def uv_project(root: Path, reg: FakeRegistries, name: str, sha: str) -> Path:
    root.mkdir()
    (root / "uv.lock").write_text(
        'version = 1\n\n[[package]]\nname = "app"\nversion = "0"\nsource = { editable = "." }\n'
        f'dependencies = [{{ name = "{name}" }}]\n\n[[package]]\nname = "{name}"\nversion = "1.0"\n'
        f'source = {{ registry = "{reg.index_url}" }}\n'
        f'sdist = {{ url = "{reg.base}/files/{name}-1.0.tar.gz", hash = "sha256:{sha}" }}\n')
    return root


def test_a_wrong_lockfile_hash_is_refused_and_a_right_one_recorded(reg, tmp_path):
    data = sdist("locked", "1.0", {"README.md": "# Locked\n\ntext\n"})
    reg.add_pypi("locked", "1.0", data)
    bad = uv_project(tmp_path / "bad", reg, "locked", "0" * 64)
    r = run_cli("sync", bad, "-q", "--docs-dir", tmp_path / "md", env=env_for(reg, tmp_path))
    assert r.returncode == 3, r.stdout + r.stderr
    assert "failed   locked@1.0  uv.lock: locked-1.0.tar.gz (pypi:locked 1.0) has sha256" in r.stdout
    assert not (tmp_path / "md" / "locked@1.0").exists()
    good = uv_project(tmp_path / "good", reg, "locked", hashlib.sha256(data).hexdigest())
    r = run_cli("sync", good, "-q", "--docs-dir", tmp_path / "md", env=env_for(reg, tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    meta = (tmp_path / "md" / "locked@1.0" / "doc4llm-set.yaml").read_text()
    assert "verified: sha256 (uv.lock), sha256 (registry)" in meta


def test_requirements_hash_and_npm_integrity_are_checked(reg, tmp_path):
    reg.add_pypi("hashed", "1.0", sdist("hashed", "1.0", {"README.md": "# H\n\ntext\n"}))
    data = npm_tgz("p-int", "1.0.0", {"README.md": "# P\n\ntext\n"})
    reg.add_npm("p-int", "1.0.0", data)
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "requirements.txt").write_text("hashed==1.0 \\\n    --hash=sha256:" + "1" * 64 + "\n")
    wrong = "sha512-" + base64.b64encode(hashlib.sha512(b"other").digest()).decode()
    (proj / "package.json").write_text(json.dumps({"dependencies": {"p-int": "1.0.0"}}))
    (proj / "package-lock.json").write_text(json.dumps({"lockfileVersion": 3, "packages": {
        "": {"dependencies": {"p-int": "1.0.0"}},
        "node_modules/p-int": {"version": "1.0.0", "integrity": wrong}}}))
    r = run_cli("sync", proj, "-q", "--docs-dir", tmp_path / "md", env=env_for(reg, tmp_path))
    assert r.returncode == 3
    assert "requirements.txt: hashed-1.0.tar.gz" in r.stdout and "package-lock.json: p-int-1.0.0.tgz" in r.stdout
    assert not list((tmp_path / "md").glob("*@*"))


def test_no_hash_anywhere_is_reported_unverified_and_refused_when_required(reg, tmp_path):
    reg.add_pypi("nohash", "1.0", sdist("nohash", "1.0", {"README.md": "# N\n\ntext\n"}))
    reg.no_hash.add("nohash-1.0.tar.gz")
    env = env_for(reg, tmp_path)
    r = run_cli("add", "pypi:nohash==1.0", "--require-hashes", "--docs-dir", tmp_path / "md", env=env)
    assert r.returncode == 3 and "--require-hashes" in one_sentence(r.stderr)
    assert not (tmp_path / "md" / "nohash@1.0").exists()
    r = run_cli("add", "pypi:nohash==1.0", "--docs-dir", tmp_path / "md", env=env)
    assert r.returncode == 0 and "unverified" in r.stdout
    assert "verified: unverified" in (tmp_path / "md" / "nohash@1.0" / "doc4llm-set.yaml").read_text()


def test_an_archive_naming_another_package_is_refused(reg, tmp_path):
    reg.add_pypi("mismatch", "1.0", sdist("other", "9.9", {"README.md": "# O\n\ntext\n"}),
                 filename="mismatch-1.0.tar.gz")
    r = run_cli("add", "pypi:mismatch==1.0", "--docs-dir", tmp_path / "md", env=env_for(reg, tmp_path))
    assert r.returncode == 3 and "says it is 'other' '9.9', not mismatch 1.0" in one_sentence(r.stderr)
    assert not list((tmp_path / "md").glob("*@*"))


def test_hash_parsers():
    sha = hashlib.sha512(b"x").digest()
    assert parse_sri(f"sha1-{base64.b64encode(hashlib.sha1(b'x').digest()).decode()} "
                     f"sha512-{base64.b64encode(sha).decode()}")[1] == ("sha512", sha.hex())
    assert parse_sri("sha512-notbase64!") == [] and parse_sri(None) == []
    assert parse_hash("sha256:" + "A" * 64) == ("sha256", "a" * 64)
    assert parse_hash("sha256:xyz") is None and parse_hash(["sha256"]) is None


# -- items 10, 17, 23: member names -------------------------------------------------------

def test_a_member_name_that_is_not_utf8_builds(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", encoding="utf-8", errors="surrogateescape") as tf:
        for name, body in (("demo-1.0/PKG-INFO", b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\n"),
                           ("demo-1.0/docs/bad\udcff\udcfename.md", b"Some text, no heading.\n")):
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tf.addfile(info, io.BytesIO(body))
    (tmp_path / "demo-1.0.tar.gz").write_bytes(buf.getvalue())
    r = run_cli("add", tmp_path / "demo-1.0.tar.gz", "--docs-dir", tmp_path / "md")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "md" / "demo@1.0" / "bad\ufffd\ufffdname" / "docContent.md").is_file()
    assert str(safe_member_path("a/b\udcffc.md")) == "a/b\ufffdc.md"


@pytest.mark.parametrize("members, words", [
    ({"demo-1.0/docs": "a file", "demo-1.0/docs/a.md": "# A\n"}, "collides with another member"),
    ({"demo-1.0/docs/a.md": "# A\n", "demo-1.0/docs/a.md/b.md": "# B\n"}, "collides with another member"),
    ({"demo-1.0/" + "/".join(["d" * 200] * 20) + "/a.md": "# A\n"}, "too long a path"),
    ({"demo-1.0/../x.md": "x"}, "climbs out"),
])
def test_archive_conflicts_are_refused_archives(tmp_path, members, words):
    arc = tmp_path / "demo-1.0.tar.gz"
    arc.write_bytes(tar_gz({"demo-1.0/PKG-INFO": "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\n", **members}))
    r = run_cli("add", arc, "--docs-dir", tmp_path / "md")
    line = one_sentence(r.stderr)
    assert r.returncode == 2 and words in line and "archive refused" in line and ".doc4llm-build" not in line


def test_a_tarball_url_ending_in_dotdot_is_refused(reg, tmp_path):
    reg.add_npm("dotdot", "1.0.0", npm_tgz("dotdot", "1.0.0", {"README.md": "# x\n"}))
    reg.tarball_url["dotdot-1.0.0.tgz"] = f"{reg.base}/files/.."
    r = run_cli("add", "npm:dotdot@1.0.0", "--docs-dir", tmp_path / "md", env=env_for(reg, tmp_path))
    assert r.returncode == 2 and "does not end in a file name" in one_sentence(r.stderr)


def test_escape_sequences_never_reach_written_files(tmp_path):
    arc = tmp_path / "demo-1.0.tar.gz"
    arc.write_bytes(tar_gz({"demo-1.0/PKG-INFO": "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\n",
                            "demo-1.0/docs/\x1b]0;pwned\x07\x1b[31mred\x1b[0m.md": "text without a heading\n"}))
    r = run_cli("add", arc, "--docs-dir", tmp_path / "md")
    assert r.returncode == 0, r.stderr
    written = [p for p in (tmp_path / "md").rglob("*") if p.is_file() and ".doc4llm" not in p.parts]  # the set's files
    assert written and not [p for p in written if "\x1b" in p.read_text() or "\\e" in p.read_text()
                            or "pwned" in p.read_text()]
    assert (tmp_path / "md" / "demo@1.0" / "red" / "docContent.md").read_text().startswith("# red\n")


# -- items 11, 18, 19, 20, 14: names, versions and types from every source ----------------

@pytest.mark.parametrize("name, version, words", [
    ("a/../b", "1.0.0", "'a/../b' is not a valid npm package name"),
    ("ok", "1.0.0/..", "version '1.0.0/..' is not a version"),
    ("ok", "..", "version '..' is not a version"),
    ("ok", "1.0.0\x00", "version '1.0.0\\x00' is not a version"),
])
def test_package_json_names_and_versions_are_validated(tmp_path, name, version, words):
    arc = tmp_path / "pkg.tgz"
    arc.write_bytes(tar_gz({"package/package.json": json.dumps({"name": name, "version": version}),
                            "package/README.md": "# R\n\ntext\n"}))
    r = run_cli("add", arc, "--docs-dir", tmp_path / "md")
    assert r.returncode == 2 and words in one_sentence(r.stderr) and "pkg.tgz" in r.stderr
    assert not [p for p in (tmp_path / "md").iterdir() if not p.name.startswith(".")]


def test_one_validator_for_every_source():
    for eco, name, version in (("npm", "..", "1.0.0"), ("npm", "@x/..", "1"), ("pypi", "a b", "1"),
                               ("pypi", "ok", "1.0\x00"), ("npm", "ok", "\x1b[31m"), ("npm", "ok", ".")):
        with pytest.raises(InputError, match="refused"):
            validate_package(eco, name, version, "src")
    validate_package("pypi", "Foo_Bar", "1!2.0+local.1", "src")
    validate_package("npm", "@types/node", "20.1.0-rc.1+b.5", "src")


def test_nul_and_dotdot_from_lockfiles_and_registries_fail_one_entry(reg, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "uv.lock").write_text('version = 1\n[[package]]\nname = "a"\nversion = "1.0\\u0000"\n'
                                  'source = { registry = "https://pypi.org/simple" }\n')
    (proj / "package.json").write_text(json.dumps({"dependencies": {"..": "1.0.0", "good": "1.0.0"}}))
    (proj / "package-lock.json").write_text(json.dumps({"lockfileVersion": 3, "packages": {
        "": {"dependencies": {"..": "1.0.0", "good": "1.0.0"}},
        "node_modules/..": {"version": "1.0.0"}, "node_modules/good": {"version": "1.0.0"}}}))
    reg.add_npm("good", "1.0.0", npm_tgz("good", "1.0.0", {"README.md": "# Good\n\ntext\n"}))
    r = run_cli("sync", proj, "--all", "-q", "--docs-dir", tmp_path / "md", env=env_for(reg, tmp_path))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stdout + r.stderr
    assert "failed   uv.lock: [[package]] #1 ('a'): version '1.0\\x00' is not a version" in r.stdout
    assert "failed   package-lock.json: packages['node_modules/..']: '..' is not a valid npm package name" in r.stdout
    assert (tmp_path / "md" / "good@1.0.0").is_dir()
    assert all("/.." not in p and not p.rstrip("/").endswith("npm") for p in reg.requests)
    reg.raw["/npm/nulver"] = json.dumps({"name": "nulver", "dist-tags": {"latest": "1.0.0\u0000"},
                                         "versions": {"1.0.0\u0000": {"dist": {"tarball": "x"}}}}).encode()
    r = run_cli("add", "npm:nulver", "--docs-dir", tmp_path / "md", env=env_for(reg, tmp_path))
    assert r.returncode == 2 and "nulver has no version matching 'latest'" in one_sentence(r.stderr)


UV_ROOT = 'version = 1\n[[package]]\nname = "app"\nversion = "0"\nsource = { editable = "." }\n'
GOOD_UV = '[[package]]\nname = "fine"\nversion = "1.0"\nsource = { registry = "https://pypi.org/simple" }\n'


@pytest.mark.parametrize("files, words", [
    ({"uv.lock": UV_ROOT + 'optional-dependencies = ["x"]\n' + GOOD_UV},
     "uv.lock: [[package]] #1 ('app'): optional-dependencies is a list, not a table"),
    ({"uv.lock": UV_ROOT + '[[package]]\nname = "b"\nversion = "1"\nsource = [1, 2]\n' + GOOD_UV},
     "uv.lock: [[package]] #2 ('b'): source is a list, not a table"),
    ({"uv.lock": 'package = "x"\n'}, "uv.lock: [[package]] is a string, not a list"),
    ({"poetry.lock": '[[package]]\nname = "b"\nversion = "1"\nsource = "git"\n' + GOOD_UV,
      "pyproject.toml": '[tool.poetry.dependencies]\nb = "1"\nfine = "1.0"\n'},
     "poetry.lock: [[package]] #1 ('b'): source is a string, not a table"),
    ({"pyproject.toml": 'project = "x"\n'}, "pyproject.toml: [project] is a string, not a table"),
    ({"pyproject.toml": '[project]\ndependencies = "x"\n'},
     "pyproject.toml: [project] dependencies is a string, not a list"),
    ({"package-lock.json": json.dumps({"packages": {"": [1, 2], "node_modules/fine": {"version": "1.0.0"}}}),
      "package.json": json.dumps({"dependencies": {"fine": "1.0.0"}})},
     "package-lock.json: packages[\"\"] is a list, not a table"),
    ({"package-lock.json": json.dumps({"packages": {"node_modules/x": [1]}})},
     "package-lock.json: packages['node_modules/x'] is a list, not an object"),
    ({"pnpm-lock.yaml": "lockfileVersion: '6.0'\ndependencies: [a, b]\n"},
     "pnpm-lock.yaml: dependencies is a list, not a table"),
    ({"pnpm-lock.yaml": "lockfileVersion: '6.0'\ndependencies:\n  a: [1]\n  fine: 1.0.0\n"},
     "pnpm-lock.yaml: dependencies['a'] is a list, not a version"),
    ({"package.json": json.dumps({"dependencies": {"b": None, "a": {"x": 1}, "fine": "1.0.0"}})},
     "package.json: dependencies['b'] is null, not a version range"),
    ({"requirements.txt": "fine==1.0\n%%% not a requirement\n"},
     "requirements.txt line 2: cannot read '%%% not a requirement'"),
])
def test_wrong_types_fail_their_entry_only(tmp_path, files, words):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    r = run_cli("sync", tmp_path, "--dry-run", "--all", "--docs-dir", tmp_path / "md")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stdout + r.stderr
    assert f"failed   {words}" in r.stdout, r.stdout
    assert "None" not in r.stdout and "{'x'" not in r.stdout
    if "fine" in "".join(files.values()):
        assert "create   fine@1.0" in r.stdout, r.stdout  # the good entry is still planned


def _json_values():
    leaf = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
    return st.recursive(leaf, lambda inner: st.lists(inner, max_size=3) |
                        st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(value=_json_values(), where=st.sampled_from(["packages", "root", "entry", "version", "deps", "top"]))
def test_fuzz_js_lockfiles_raise_only_input_errors(tmp_path_factory, value, where):
    d = tmp_path_factory.mktemp("fz")
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": {"a": "1.0.0"}},
                                               "node_modules/a": {"version": "1.0.0"}}}
    target = {"packages": lock, "root": lock["packages"], "entry": lock["packages"],
              "version": lock["packages"]["node_modules/a"], "deps": lock["packages"][""], "top": lock}[where]
    key = {"packages": "packages", "root": "", "entry": "node_modules/a", "version": "version",
           "deps": "dependencies", "top": "dependencies"}[where]
    target[key] = value
    (d / "package-lock.json").write_text(json.dumps(lock))
    (d / "package.json").write_text(json.dumps({"dependencies": {"a": value} if where == "deps" else {"a": "1"}}))
    (d / "pnpm-lock.yaml").write_text(json.dumps({"dependencies": value, "packages": {"/a@1.0.0": value}}))
    for f in ("package-lock.json", "pnpm-lock.yaml"):
        try:
            deps = read_project(d, include_all=True)
            assert all(isinstance(x.name, str) and (x.version is None or isinstance(x.version, str))
                       for x in deps.deps)
        except Doc4llmError:
            pass
        (d / f).unlink()


def _toml(value: object) -> str:
    """A hypothesis value as a TOML inline value (null as an empty string: TOML has none)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) or value is None:
        return json.dumps(value or "")
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(value=_json_values(), field=st.sampled_from(["name", "version", "source", "sdist", "wheels", "dependencies",
                                                    "optional-dependencies", "files"]),
       root=st.booleans())
def test_fuzz_toml_lockfiles_raise_only_input_errors(tmp_path_factory, value, field, root):
    d = tmp_path_factory.mktemp("fz")
    entry = {"name": '"app"' if root else '"b"', "version": '"1.0"',
             "source": '{ editable = "." }' if root else '{ registry = "https://pypi.org/simple" }'}
    entry[field] = _toml(value)
    body = "[[package]]\n" + "".join(f"{k} = {v}\n" for k, v in entry.items())
    (d / "pyproject.toml").write_text('[project]\nname = "app"\ndependencies = ["b"]\n')
    for lock in ("uv.lock", "poetry.lock"):
        (d / lock).write_text("version = 1\n" + body)
        try:
            deps = read_project(d, include_all=True)
            assert all(isinstance(x.name, str) and (x.version is None or isinstance(x.version, str))
                       for x in deps.deps)
        except Doc4llmError:
            pass
        (d / lock).unlink()


# -- item 16: grep with bytes that are not UTF-8 ------------------------------------------

def test_grep_with_bytes_that_are_not_utf8(tmp_path):
    page = tmp_path / "md" / "Demo@1" / "Page"
    page.mkdir(parents=True)
    (page / "docContent.md").write_text("# Page\n\n> **Source**: x\n\n---\n\ntext\n")
    r = subprocess.run([sys.executable, "-m", "doc4llm", "grep", "-F", os.fsdecode(b"\xff"), "--docs-dir",
                        str(tmp_path / "md")], capture_output=True, text=True, errors="replace")
    assert r.returncode == 2 and "is not UTF-8 text" in one_sentence(r.stderr)


# -- item 22: interrupted builds leave nothing behind ------------------------------------

def test_sigterm_during_add_removes_the_build_folder(reg, tmp_path):
    reg.add_pypi("slowterm", "1.0", sdist("slowterm", "1.0", {"README.md": "# S\n\ntext\n" * 100}))
    reg.drip["/files/"] = 0.05
    docs = tmp_path / "md"
    full = {**os.environ, **env_for(reg, tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "doc4llm", "add", "pypi:slowterm==1.0", "--docs-dir", str(docs)],
                            env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not list(docs.glob(".doc4llm-build-*/download/*.tar.gz")):
        time.sleep(0.05)
    assert list(docs.glob(".doc4llm-build-*")), "the download never started"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM and "interrupted (SIGTERM)" in err
    assert not list(docs.glob(".doc4llm-build-*"))


def test_stale_build_folders_go_and_live_ones_stay(tmp_path):
    docs = tmp_path / "md"
    docs.mkdir()

    def folder(name: str, lock: bool, age: float = 0) -> Path:
        p = docs / f"{build.BUILD_PREFIX}{name}"
        (p / "x").mkdir(parents=True)
        if lock:
            (p / build.LOCK_FILE).write_text("")
        if age:
            os.utime(p, (time.time() - age, time.time() - age))
        return p

    crashed = folder("crashed", lock=True, age=60)  # its process died: the lock is free
    held = folder("held", lock=True, age=60)  # a concurrent run holds its lock
    young = folder("young", lock=True)  # free, but maybe between mkdtemp and flock in its process
    fd = os.open(held / build.LOCK_FILE, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    old = folder("old", lock=False, age=2 * build.STALE_SECONDS)
    fresh = folder("fresh", lock=False)
    try:
        mine = build.temp_root(docs)
        assert build.clean_stale(docs) == []  # its own live folder is never touched
        assert not crashed.exists() and not old.exists()
        assert held.exists() and fresh.exists() and mine.exists() and young.exists()
    finally:
        os.close(fd)
    build.release_root(mine)
    assert not mine.exists()
    assert sorted(build.clean_stale(docs)) == [held.name]


def test_a_set_left_mid_swap_by_a_crash_is_put_back(tmp_path):
    docs = tmp_path / "md"
    old = docs / f"{build.BUILD_PREFIX}crashed" / ".replaced"
    (old / "Page").mkdir(parents=True)
    (old / "doc4llm-set.yaml").write_text("name: demo@1.0\npackage: {name: demo}\n")
    (old.parent / build.LOCK_FILE).write_text("")
    os.utime(old.parent, (time.time() - 60, time.time() - 60))
    assert build.clean_stale(docs) == [f"{build.BUILD_PREFIX}crashed"]
    assert (docs / "demo@1.0" / "Page").is_dir() and not old.parent.exists()
