"""Issue 33's attacks on `add` / `sync` / `grep`, reproduced and measured (items 3, 6-11,
13, 14, 16-20, 22, 23).

Every attack input is built here (hostile archives, lockfiles, registry answers) and served
from a loopback stand-in of PyPI and npm (tests/fake_registries.py). Each case runs the real
CLI (`python -m doc4llm ...`) in a child process under a watchdog: the child's process tree
is killed when it passes `--timeout` seconds or `--rss-cap` MB, so a bomb cannot take the
machine down. A row is printed per case: wall time, peak RSS of the tree, exit code and the
outcome (the error sentence, or what was checked).

The code measured is whatever `python -m doc4llm` imports: run it once on this tree and once
on an old one to compare:

    git archive 6a9fc4f doc4llm | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old python benchmarks/hardening/round3.py --scale 1,10
    python benchmarks/hardening/round3.py --scale 1,10

`--scale 1` is the issue's size, `10` ten times larger (more members, deeper nesting, more
alias levels, a faster drip). Big generated inputs are cached in `--work` (default
/tmp/doc4llm-round3). docs/hardening.md records the numbers.
"""

from __future__ import annotations

import argparse
import bz2
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
from fake_registries import FakeRegistries, npm_tgz, sdist, tar_gz  # noqa: E402


@dataclass
class Row:
    item: str
    case: str
    seconds: float
    peak_mb: float
    rc: int | str
    outcome: str


def run_child(argv: list[str], *, timeout: float, cap_mb: float, env: dict | None = None,
              on_start: Callable[[subprocess.Popen], None] | None = None) -> tuple[float, float, int | str, str, str]:
    """Run argv in its own process group; kill the group past `timeout` s or `cap_mb` of RSS.
    Returns (seconds, peak MB, exit code or 'killed: ...', stdout, stderr)."""
    full_env = {**os.environ, "DOC4LLM_BACKGROUND_EMBED": "0", "PYTHONUNBUFFERED": "1", **(env or {})}
    out = tempfile.TemporaryFile()
    err = tempfile.TemporaryFile()
    t0 = time.monotonic()
    # cwd: a neutral folder (`python -m` puts the cwd first on sys.path: run from a checkout,
    # the checkout's doc4llm would win over PYTHONPATH)
    proc = subprocess.Popen(argv, stdout=out, stderr=err, env=full_env, start_new_session=True,
                            cwd=tempfile.gettempdir())
    peak, killed = 0, ""
    ps = psutil.Process(proc.pid)
    if on_start:
        threading.Thread(target=on_start, args=(proc,), daemon=True).start()
    while proc.poll() is None:
        try:
            rss = sum(p.memory_info().rss for p in [ps, *ps.children(recursive=True)])
        except psutil.Error:
            rss = 0
        peak = max(peak, rss)
        elapsed = time.monotonic() - t0
        if rss > cap_mb * 1024 * 1024 or elapsed > timeout:
            killed = f"killed at {rss / 2**20:.0f} MB" if rss > cap_mb * 2**20 else f"killed at {timeout:.0f} s"
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            break
        time.sleep(0.05)
    seconds = time.monotonic() - t0
    out.seek(0)
    err.seek(0)
    stdout = out.read().decode("utf-8", "replace")
    stderr = err.read().decode("utf-8", "replace")
    return seconds, peak / 2**20, killed or proc.returncode, stdout, stderr


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "doc4llm", *map(str, args)]


def last_sentence(stderr: str, stdout: str = "") -> str:
    """The error sentence (a sync's first `failed` line when there is one), else the last line."""
    failed = [ln.strip() for ln in stdout.splitlines() if ln.strip().startswith("failed ")]
    if failed:
        return failed[0][:160] + (f" (+{len(failed) - 1} more failed)" if len(failed) > 1 else "")
    for text in (stderr, stdout):
        lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("  hint")]
        if lines:
            errs = [ln for ln in lines if "error" in ln.lower() or "Error" in ln]
            return (errs[-1] if errs else lines[-1])[:160]
    return ""


# -- input builders --------------------------------------------------------------------------

def ustar_header(name: bytes, typ: bytes = b"0") -> bytes:
    h = bytearray(512)
    h[0:len(name)] = name
    h[100:108] = b"0000755\0" if typ == b"5" else b"0000644\0"
    h[108:116] = h[116:124] = b"0000000\0"
    h[124:136] = b"00000000000\0"
    h[136:148] = b"14000000000\0"
    h[156:157] = typ
    h[257:263] = b"ustar\0"
    h[263:265] = b"00"
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)


def member_bomb(path: Path, count: int, kind: str) -> Path:
    """A tar.bz2 sdist: PKG-INFO + README, then `count` members: `dir` (DIRTYPE entries)
    or `so` (empty `x{i}.so` files, never extracted). Cached: 10M members take minutes."""
    if path.is_file():
        return path
    comp = bz2.BZ2Compressor(9)
    tmp = path.with_suffix(".part")
    with open(tmp, "wb") as fh:
        info = b"Metadata-Version: 2.1\nName: bomb\nVersion: 1.0\n\nBomb\n====\n\ntext\n"
        head = ustar_header(b"bomb-1.0/PKG-INFO")
        head = head[:124] + b"%011o\0" % len(info) + head[136:]
        head = head[:148] + b" " * 8 + head[156:]
        head = head[:148] + b"%06o\0 " % sum(head) + head[156:]
        fh.write(comp.compress(head + info + b"\0" * (-len(info) % 512)))
        batch = []
        for i in range(count):
            batch.append(ustar_header(b"bomb-1.0/d%d" % i, b"5") if kind == "dir" else
                         ustar_header(b"bomb-1.0/x%d.so" % i))
            if len(batch) == 20000:
                fh.write(comp.compress(b"".join(batch)))
                batch = []
        fh.write(comp.compress(b"".join(batch) + b"\0" * 1024))
        fh.write(comp.flush())
    tmp.rename(path)
    return path


def alias_bomb(levels: int) -> str:
    lines = ["lockfileVersion: '6.0'", "x:", "  l0: &l0 [" + ",".join(["lol"] * 9) + "]"]
    for i in range(1, levels):
        lines.append(f"  l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]")
    lines += ["dependencies:", f"  bomb: *l{levels - 1}", ""]
    return "\n".join(lines)


def project(root: Path, files: dict[str, str | bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, body in files.items():
        (root / name).write_bytes(body.encode() if isinstance(body, str) else body)
    return root


# -- cases -----------------------------------------------------------------------------------

class Bench:
    def __init__(self, work: Path, timeout: float, cap_mb: float) -> None:
        self.work, self.timeout, self.cap = work, timeout, cap_mb
        self.reg = FakeRegistries()
        self.rows: list[Row] = []
        self.n = 0

    def docs(self) -> Path:
        self.n += 1
        d = Path(tempfile.mkdtemp(prefix=f"docs{self.n}-", dir=self.tmp))
        return d

    def run(self, item: str, case: str, argv: list[str], check: Callable[[str, str, Path | None], str] | None = None,
            docs: Path | None = None, **kw) -> Row:
        seconds, peak, rc, out, err = run_child(argv, timeout=kw.pop("timeout", self.timeout), cap_mb=self.cap, **kw)
        outcome = check(out, err, docs) if check else last_sentence(err, out)
        row = Row(item, case, seconds, peak, rc, " ".join(outcome.split()))
        self.rows.append(row)
        print(f"| {row.item} | {row.case} | {row.seconds:.1f} s | {row.peak_mb:.0f} MB | {row.rc} | {row.outcome} |",
              flush=True)
        return row

    def env(self) -> dict:
        return {"PIP_INDEX_URL": self.reg.index_url, "npm_config_registry": self.reg.npm_url,
                "DOC4LLM_REGISTRY_RETRIES": "0", "HOME": str(self.tmp)}

    # item 3: YAML alias bomb in pnpm-lock.yaml
    def item3(self, scale: int) -> None:
        levels = 9 if scale == 1 else 10
        proj = project(self.tmp / f"pnpm{levels}", {"pnpm-lock.yaml": alias_bomb(levels)})
        self.run("3", f"pnpm-lock.yaml alias bomb, {levels} levels x 9 ({len(alias_bomb(levels))} B)",
                 cli("sync", proj, "--dry-run", "--docs-dir", self.docs()), env=self.env())

    # item 6: a registry that drips one byte at a time
    def item6(self, scale: int) -> None:
        pause = 10.0 if scale == 1 else 1.0
        name = f"drip{scale}"
        self.reg.add_pypi(name, "1.0", sdist(name, "1.0", {"README.md": "# Drip\n\ntext\n" * 50}))
        self.reg.drip[f"/files/{name}-"] = pause
        self.run("6", f"archive dripped 1 byte / {pause:g} s", cli("add", f"pypi:{name}==1.0", "--docs-dir", self.docs()),
                 env=self.env())

    # item 7: directory members
    def item7(self, scale: int) -> None:
        count = 100_000 * scale
        arc = member_bomb(self.work / f"dirs{count}.tar.bz2", count, "dir")
        dest = self.tmp / f"x7-{scale}"
        code = ("import sys, os\nfrom pathlib import Path\nfrom doc4llm.ingest.packages.archive import extract\n"
                "from doc4llm.errors import Doc4llmError\n"
                f"dest = Path({str(dest)!r})\n"
                "try:\n    extract(Path(sys.argv[1]), dest); msg = 'extracted'\n"
                "except Doc4llmError as e:\n    msg = e.message\n"
                "print(sum(len(d) for _, d, _ in os.walk(dest)), 'folders made;', msg)\n")

        def check(out: str, err: str, _d: Path | None) -> str:
            if out.strip():
                return out.strip()
            made = sum(len(d) for _, d, _ in os.walk(dest)) if dest.exists() else 0
            return f"{made} folders made when stopped; {last_sentence(err)}"

        self.run("7", f"{count:,} DIRTYPE members ({arc.stat().st_size / 1e6:.1f} MB tar.bz2), extract()",
                 [sys.executable, "-c", code, str(arc)], check)
        self.run("7", f"{count:,} DIRTYPE members, add", cli("add", arc, "--docs-dir", self.docs()))

    # item 8: skipped members, headers kept
    def item8(self, scale: int) -> None:
        count = 1_000_000 * scale
        arc = member_bomb(self.work / f"so{count}.tar.bz2", count, "so")
        self.run("8", f"{count:,} x.so members ({arc.stat().st_size / 1e6:.1f} MB tar.bz2), add",
                 cli("add", arc, "--docs-dir", self.docs()))

    # item 9: integrity
    def item9(self, scale: int) -> None:
        if scale != 1:
            return
        good = sdist("locked", "1.0", {"README.md": "# Locked\n\ntext\n"})
        self.reg.add_pypi("locked", "1.0", good)
        proj = project(self.tmp / "uvlock", {
            "pyproject.toml": '[project]\nname = "app"\nversion = "0"\ndependencies = ["locked==1.0"]\n',
            "uv.lock": 'version = 1\n\n[[package]]\nname = "app"\nversion = "0"\nsource = { editable = "." }\n'
                       'dependencies = [{ name = "locked" }]\n\n[[package]]\nname = "locked"\nversion = "1.0"\n'
                       f'source = {{ registry = "{self.reg.index_url}" }}\n'
                       f'sdist = {{ url = "{self.reg.base}/files/locked-1.0.tar.gz", hash = "sha256:{"0" * 64}" }}\n'})
        self.run("9", "uv.lock hash sha256:000... (registry digest right)",
                 cli("sync", proj, "-q", "--docs-dir", self.docs()), env=self.env())
        self.reg.add_pypi("nohash", "1.0", sdist("nohash", "1.0", {"README.md": "# No hash\n\ntext\n"}))
        self.reg.no_hash.add("nohash-1.0.tar.gz")

        def said_unverified(out: str, err: str, docs: Path | None) -> str:
            meta = next(docs.glob("*/doc4llm-set.yaml"), None) if docs else None
            text = meta.read_text() if meta else ""
            return (f"built; 'unverified' in output: {'unverified' in out + err}, "
                    f"in set metadata: {'unverified' in text}") if meta else last_sentence(err, out)

        d = self.docs()
        self.run("9", "registry gives no digest", cli("add", "pypi:nohash==1.0", "--docs-dir", d), said_unverified, d,
                 env=self.env())
        self.run("9", "registry gives no digest, --require-hashes",
                 cli("add", "pypi:nohash==1.0", "--require-hashes", "--docs-dir", self.docs()), env=self.env())
        self.reg.add_pypi("mismatch", "1.0", sdist("other", "9.9", {"README.md": "# Other\n\ntext\n"}),
                          filename="mismatch-1.0.tar.gz")
        d = self.docs()
        self.run("9", "other-9.9 served for mismatch==1.0", cli("add", "pypi:mismatch==1.0", "--docs-dir", d),
                 lambda o, e, dd: last_sentence(e, o) + f" [sets: {sorted(p.name for p in dd.iterdir() if '@' in p.name)}]",
                 d, env=self.env())

    # item 10: a member name that is not UTF-8
    def item10(self, scale: int) -> None:
        if scale != 1:
            return
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz", encoding="utf-8", errors="surrogateescape") as tf:
            for name, body in (("demo-1.0/PKG-INFO", b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\n"),
                               ("demo-1.0/docs/bad\udcff\udcfename.md", b"Some text, no heading.\n")):
                info = tarfile.TarInfo(name)
                info.size = len(body)
                tf.addfile(info, io.BytesIO(body))
        arc = self.tmp / "demo-1.0.tar.gz"
        arc.write_bytes(buf.getvalue())
        self.run("10", "member docs/bad\\xff\\xfename.md", cli("add", arc, "--docs-dir", self.docs()))

    # item 11: NUL in a version
    def item11(self, scale: int) -> None:
        if scale != 1:
            return
        p = project(self.tmp / "nul-pj", {"package.json": json.dumps({"dependencies": {"a": "1.0.0\u0000"}})})
        self.run("11", "package.json version \"1.0.0\\u0000\"", cli("sync", p, "--dry-run", "--docs-dir", self.docs()))
        p = project(self.tmp / "nul-uv", {"uv.lock": 'version = 1\n[[package]]\nname = "a"\nversion = "1.0\\u0000"\n'
                                                    'source = { registry = "https://pypi.org/simple" }\n'})
        self.run("11", "uv.lock version \"1.0\\u0000\" (--all)", cli("sync", p, "--all", "--dry-run", "--docs-dir", self.docs()))
        self.reg.raw["/npm/nulver"] = json.dumps({"name": "nulver", "dist-tags": {"latest": "1.0.0\u0000"},
                                                  "versions": {"1.0.0\u0000": {"dist": {"tarball": f"{self.reg.base}/files/x.tgz"}}}}).encode()
        self.run("11", "npm registry version \"1.0.0\\u0000\"", cli("add", "npm:nulver", "--docs-dir", self.docs()),
                 env=self.env())

    # item 13: nesting depth
    def item13(self, scale: int) -> None:
        n = 200_000 * scale
        for fname, body, extra in (("package.json", "[" * n, ()), ("package-lock.json", "[" * n, ()),
                                   ("pyproject.toml", "x = " + "[" * n, ()), ("uv.lock", "x = " + "[" * n, ("--all",))):
            p = project(self.tmp / f"deep-{fname}-{scale}", {fname: body})
            self.run("13", f"{fname}: '[' x {n:,}", cli("sync", p, "--dry-run", *extra, "--docs-dir", self.docs()))
        self.reg.raw[f"/pypi/deep{scale}/json"] = ('{"releases": ' + "[" * n).encode()
        self.run("13", f"registry JSON answer '[' x {n:,}", cli("add", f"pypi:deep{scale}", "--docs-dir", self.docs()),
                 env=self.env())

    # item 14: valid files, wrong types
    def item14(self, scale: int) -> None:
        if scale != 1:
            return
        uv_root = 'version = 1\n[[package]]\nname = "app"\nversion = "0"\nsource = { editable = "." }\n'
        cases = {
            "uv.lock optional-dependencies = [\"x\"]": {"uv.lock": uv_root + 'optional-dependencies = ["x"]\n'},
            "uv.lock source = [1, 2]": {"uv.lock": uv_root + '[[package]]\nname = "b"\nversion = "1"\nsource = [1, 2]\n'},
            "poetry.lock source = \"git\"": {"poetry.lock": '[[package]]\nname = "b"\nversion = "1"\nsource = "git"\n',
                                              "pyproject.toml": '[tool.poetry.dependencies]\nb = "1"\n'},
            "pyproject.toml project = \"x\"": {"pyproject.toml": 'project = "x"\n'},
            "package-lock.json \"\": [1, 2]": {"package-lock.json": json.dumps({"packages": {"": [1, 2]}})},
            "pnpm-lock.yaml dependencies: [a, b]": {"pnpm-lock.yaml": "lockfileVersion: '6.0'\ndependencies: [a, b]\n"},
        }
        for label, files in cases.items():
            p = project(self.tmp / f"types-{abs(hash(label))}", files)
            self.run("14", label, cli("sync", p, "--dry-run", "--docs-dir", self.docs()))

    # item 16: grep -F with a byte that is not UTF-8
    def item16(self, scale: int) -> None:
        if scale != 1:
            return
        d = self.docs()
        page = d / "Demo@1" / "Page"
        page.mkdir(parents=True)
        (page / "docContent.md").write_text("# Page\n\n> **Source**: x\n\n---\n\ntext\n")
        self.run("16", "grep -F $'\\xff'", [*cli("grep", "-F"), os.fsdecode(b"\xff"), "--docs-dir", str(d)])

    # item 17: archive conflicts, over-long paths, a tarball URL ending in /..
    def item17(self, scale: int) -> None:
        if scale != 1:
            return
        conflict = tar_gz({"demo-1.0/PKG-INFO": "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\n",
                           "demo-1.0/docs": "a file", "demo-1.0/docs/a.md": "# A\n"})
        (self.tmp / "conflict").mkdir(exist_ok=True)
        arc = self.tmp / "conflict" / "demo-1.0.tar.gz"
        arc.write_bytes(conflict)
        self.run("17", "file docs, then docs/a.md", cli("add", arc, "--docs-dir", self.docs()))
        longp = "demo-1.0/" + "/".join(["d" * 200] * 20) + "/a.md"
        (self.tmp / "long").mkdir(exist_ok=True)
        arc = self.tmp / "long" / "demo-1.0.tar.gz"
        arc.write_bytes(tar_gz({"demo-1.0/PKG-INFO": "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\n",
                                longp: "# A\n"}))
        self.run("17", f"member path of {len(longp)} bytes", cli("add", arc, "--docs-dir", self.docs()))
        data = npm_tgz("dotdot", "1.0.0", {"README.md": "# x\n"})
        self.reg.add_npm("dotdot", "1.0.0", data)
        self.reg.tarball_url["dotdot-1.0.0.tgz"] = f"{self.reg.base}/files/.."
        self.run("17", "npm tarball URL ending in /..", cli("add", "npm:dotdot@1.0.0", "--docs-dir", self.docs()),
                 env=self.env())

    # item 18: names and versions that are paths
    def item18(self, scale: int) -> None:
        if scale != 1:
            return
        for name, version in (("a/../b", "1.0.0"), ("ok", "1.0.0/.."), ("ok", "..")):
            d = self.docs()
            sub = self.tmp / f"n18-{abs(hash((name, version)))}"
            sub.mkdir(exist_ok=True)
            arc = sub / "pkg.tgz"
            arc.write_bytes(tar_gz({"package/package.json": json.dumps({"name": name, "version": version}),
                                    "package/README.md": "# R\n\ntext\n"}))
            self.run("18", f"package.json name {name!r} version {version!r}", cli("add", arc, "--docs-dir", d),
                     lambda o, e, dd: last_sentence(e, o) + f" [made: {sorted(p.name for p in dd.iterdir())}]", d)
        self.reg.requests.clear()
        p = project(self.tmp / "npm-dotdot", {
            "package.json": json.dumps({"dependencies": {"..": "1.0.0"}}),
            "package-lock.json": json.dumps({"lockfileVersion": 3, "packages": {
                "": {"dependencies": {"..": "1.0.0"}}, "node_modules/..": {"version": "1.0.0"}}})})
        self.run("18", "package-lock name '..'", cli("sync", p, "-q", "--docs-dir", self.docs()),
                 lambda o, e, dd: last_sentence(e, o) + f" [registry saw: {self.reg.requests[:3]}]", env=self.env())

    # item 19: one hostile entry among good ones
    def item19(self, scale: int) -> None:
        if scale != 1:
            return
        self.reg.add_pypi("good", "1.0", sdist("good", "1.0", {"README.md": "# Good\n\ntext\n"}))
        p = project(self.tmp / "hostile", {"requirements.txt": "good==1.0\n",
                                           "package.json": json.dumps({"dependencies": {"@x/..": "1.0.0"}}),
                                           "package-lock.json": json.dumps({"lockfileVersion": 3, "packages": {
                                               "": {"dependencies": {"../../../etc": "1.0.0"}},
                                               "node_modules/../../../etc": {"version": "1.0.0"}}})})
        d = self.docs()
        self.run("19", "lockfile entry '../../../etc' + one good package", cli("sync", p, "-q", "--docs-dir", d),
                 lambda o, e, dd: last_sentence(e, o) + f" [sets: {sorted(x.name for x in dd.iterdir() if '@' in x.name)}]",
                 d, env=self.env())

    # item 20: non-string dependency values
    def item20(self, scale: int) -> None:
        if scale != 1:
            return
        p = project(self.tmp / "nonstr", {"package.json": json.dumps({"dependencies": {"b": None, "a": {"x": 1}}})})
        self.run("20", "package.json dependencies {b: null, a: {x: 1}}", cli("sync", p, "--dry-run", "--docs-dir", self.docs()),
                 lambda o, e, dd: " / ".join(ln.strip() for ln in (o + e).splitlines() if ln.strip())[:200])

    # item 22: SIGTERM during add
    def item22(self, scale: int) -> None:
        if scale != 1:
            return
        self.reg.add_pypi("slowterm", "1.0", sdist("slowterm", "1.0", {"README.md": "# S\n\ntext\n" * 200}))
        self.reg.drip["/files/slowterm-"] = 0.05
        d = self.docs()

        def term(proc: subprocess.Popen) -> None:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not list(d.glob(".doc4llm-build-*/download/*")):
                time.sleep(0.05)
            time.sleep(0.5)
            proc.send_signal(signal.SIGTERM)

        def left(o: str, e: str, dd: Path | None) -> str:
            return f"{len(list(d.glob('.doc4llm-build-*')))} build folders left after SIGTERM"

        self.run("22", "SIGTERM while the archive downloads", cli("add", "pypi:slowterm==1.0", "--docs-dir", d), left, d,
                 env=self.env(), on_start=term)
        # a build dir a crashed (SIGKILLed) run left: the next `add` should remove it
        stale = Path(tempfile.mkdtemp(prefix=".doc4llm-build-", dir=d))
        (stale / "x").mkdir()
        old = time.time() - 7200
        os.utime(stale, (old, old))
        self.reg.add_pypi("after", "1.0", sdist("after", "1.0", {"README.md": "# A\n\ntext\n"}))
        self.run("22", "next add, with a stale build folder (2 h old)", cli("add", "pypi:after==1.0", "--docs-dir", d),
                 lambda o, e, dd: f"{len(list(d.glob('.doc4llm-build-*')))} build folders left", d, env=self.env())

    # item 23: escape sequences in archive file names
    def item23(self, scale: int) -> None:
        if scale != 1:
            return
        arc = self.tmp / "esc" / "demo-1.0.tar.gz"
        arc.parent.mkdir(exist_ok=True)
        arc.write_bytes(tar_gz({"demo-1.0/PKG-INFO": "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\n",
                                "demo-1.0/docs/\x1b]0;pwned\x07\x1b[31mred\x1b[0m.md": "text without a heading\n"}))
        d = self.docs()

        def escapes(o: str, e: str, dd: Path | None) -> str:
            files = [p for p in d.rglob("*") if p.is_file() and p.suffix in (".md", ".yaml")]
            bad = [p.name for p in files if "\x1b" in p.read_text("utf-8", "replace") or "\\e" in p.read_text("utf-8", "replace")]
            return f"files holding ESC: {len(bad)} of {len(files)} {sorted(set(bad))}" if files else last_sentence(e, o)

        self.run("23", "docs/ESC]0;pwned BEL ESC[31mred ESC[0m.md", cli("add", arc, "--docs-dir", d), escapes, d)


ITEMS = ["3", "6", "7", "8", "9", "10", "11", "13", "14", "16", "17", "18", "19", "20", "22", "23"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="", help="comma-separated items (default: all)")
    ap.add_argument("--scale", default="1,10", help="1 = the issue's size, 10 = ten times larger")
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds before a case is killed")
    ap.add_argument("--rss-cap", type=float, default=2048.0, help="MB of RSS before a case is killed")
    ap.add_argument("--work", default="/tmp/doc4llm-round3", help="cache for big generated inputs")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    bench = Bench(work, args.timeout, args.rss_cap)
    items = [i for i in args.only.split(",") if i] or ITEMS
    where = subprocess.run([sys.executable, "-c", "import doc4llm; print(doc4llm.__file__)"], capture_output=True,
                           text=True, cwd=tempfile.gettempdir()).stdout.strip()
    print(f"code: {where}")
    print("| item | input | time | peak RSS | exit | outcome |\n|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="r3-") as tmp:
        bench.tmp = Path(tmp)
        try:
            for scale in (int(s) for s in args.scale.split(",")):
                for item in items:
                    getattr(bench, f"item{item}")(scale)
        finally:
            bench.reg.close()
    digest = hashlib.sha256(json.dumps([r.__dict__ for r in bench.rows]).encode()).hexdigest()[:8]
    print(f"{len(bench.rows)} cases ({digest})")


if __name__ == "__main__":
    main()
