"""Round 4 of hostile input (docs/hardening.md, "Round 4"): what still fell after rounds 2
and 3, measured on the code `python` imports.

Each case builds its input in a temp folder and runs the attacked part in a child process
(`prlimit --as` 3 GB, a time limit), reporting wall seconds, peak RSS of the child and the
outcome (the error sentence, or what came out):

- tar headers through `doc4llm add ARCHIVE` (a 1 GB GNU long name in 1 MB of gzip, 10,000
  chained long names, a GNU sparse map of 1M blocks, a pax header of 60,000 digits);
- an encrypted zip member through `add`;
- front matter `title: [[[...` through `add`;
- `sync --dry-run` on 100 lines of `-r requirements.txt`, and on requirements.txt ->
  /dev/zero;
- the Python API builder on 8,000 top-level assignments and a 2,000-class inheritance
  chain;
- convert_html on 5,000 nested <div>s and 20,000 nested <h1>s;
- the .d.ts ranking on 3,000 files of ~60 `export * from` lines each.

    python benchmarks/hardening/round4.py                          # this tree
    git archive efe0343 doc4llm | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old python benchmarks/hardening/round4.py      # before (run from /tmp)
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

PKG_INFO = b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nSummary: demo\n\n"


def _blk(data: bytes) -> bytes:
    return data + b"\0" * ((512 - len(data) % 512) % 512)


def _member(name: str, data: bytes) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info.tobuf(format=tarfile.USTAR_FORMAT) + _blk(data)


def _header(size: int, typ: bytes) -> bytes:
    info = tarfile.TarInfo("././@LongLink")
    info.size, info.type = size, typ
    return info.tobuf(format=tarfile.GNU_FORMAT)


def _sdist_tail() -> bytes:
    return _member("demo-1.0/PKG-INFO", PKG_INFO) + _member("demo-1.0/README.md", b"# Demo\n\nhello\n")


def long_name_bomb(path: Path) -> None:
    size = 1 << 30
    with gzip.open(path, "wb", compresslevel=9) as out:
        out.write(_header(size, tarfile.GNUTYPE_LONGNAME))
        chunk = b"a" * (1 << 20)
        for _ in range(size // len(chunk)):
            out.write(chunk)
        out.write(_sdist_tail() + b"\0" * 1024)


def long_name_chain(path: Path) -> None:
    one = _header(20, tarfile.GNUTYPE_LONGNAME) + _blk(b"demo-1.0/README.md\0")
    path.write_bytes(gzip.compress(one * 10_000 + _sdist_tail() + b"\0" * 1024))


def sparse_map(path: Path) -> None:
    info = tarfile.TarInfo("demo-1.0/s.md")
    info.type = tarfile.GNUTYPE_SPARSE
    head = bytearray(info.tobuf(format=tarfile.GNU_FORMAT))
    head[482] = 1  # isextended
    head[148:156] = b" " * 8
    head[148:155] = ("%06o\0" % sum(head[:512])).encode()[:7]
    ext = bytearray(512)
    for i in range(21):
        ext[i * 24:i * 24 + 24] = b"00000000001\0" * 2
    ext[504] = 1
    with gzip.open(path, "wb") as out:
        out.write(bytes(head))
        for _ in range(1_000_000):
            out.write(bytes(ext))
        ext[504] = 0
        out.write(bytes(ext) + _sdist_tail() + b"\0" * 1024)


def pax_digits(path: Path) -> None:
    body = b" comment=" + b"1" * 60_000 + b"\n"
    n = len(body) + 1
    while len(str(n)) + len(body) != n:
        n += 1
    record = str(n).encode() + body
    pax = tarfile.TarInfo("pax")
    pax.size, pax.type = len(record), tarfile.XHDTYPE
    members = b""
    for i in range(20):  # 20 members, each after such a header
        members += pax.tobuf(format=tarfile.GNU_FORMAT) + _blk(record) + _member(f"demo-1.0/f{i}.md", b"# F\n\nx\n")
    path.write_bytes(gzip.compress(members + _sdist_tail() + b"\0" * 1024))


def encrypted_wheel(path: Path) -> None:
    import zipfile
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("demo/README.md", b"# hi\n")
        zf.writestr("demo-1.0.dist-info/METADATA", PKG_INFO)
    data = bytearray(path.read_bytes())
    for sig, at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # every member marked encrypted
        i = data.find(sig)
        while i >= 0:
            data[i + at] |= 1
            i = data.find(sig, i + 4)
    path.write_bytes(bytes(data))


def deep_front_matter(path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in (("demo-1.0/PKG-INFO", PKG_INFO),
                           ("demo-1.0/docs/index.md", b"# Demo\n\nguide\n"),
                           ("demo-1.0/docs/f.md", b"---\ntitle: " + b"[" * 20_000 + b"\n---\n# F\n\ntext\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    path.write_bytes(buf.getvalue())


def run(argv: list[str], timeout: float, cwd: Path) -> tuple[float, float, str]:
    """(wall s, peak RSS MB of the child, last stderr/stdout line or TIMEOUT)."""
    t0 = time.monotonic()
    wrapped = [sys.executable, "-c", "import resource, subprocess, sys; p = subprocess.run(sys.argv[1:]); "
               "print('RSS', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
               "sys.exit(p.returncode)", "prlimit", "--as=3000000000", *argv]
    try:
        proc = subprocess.run(wrapped, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                              env={**os.environ, "DOC4LLM_BACKGROUND_EMBED": "0"})
    except subprocess.TimeoutExpired:
        return time.monotonic() - t0, float("nan"), f"stopped at {timeout:.0f} s"
    lines = [x for x in (proc.stderr + proc.stdout).splitlines() if x.strip()]
    rss = next((int(x.split()[1]) / 1024 for x in lines if x.startswith("RSS ")), float("nan"))
    said = [x for x in lines if not x.startswith("RSS ")]
    return time.monotonic() - t0, rss, f"exit {proc.returncode}: {(said[-1] if said else '')[:150]}"


CHILD = r'''
import json, sys, time
from pathlib import Path
what, root = sys.argv[1], Path(sys.argv[2])
warnings = []
if what == "python":
    from doc4llm.ingest.packages.api_python import python_api_pages
    pages = python_api_pages(root, "pkg", warnings)
    print(f"{len(pages)} pages; " + "; ".join(w[:80] for w in warnings))
elif what == "html":
    from doc4llm.ingest.scrape.html_to_md import convert_html
    print(f"{len(convert_html(root.read_text(), 'https://example.com/docs/x').body)} chars of markdown")
elif what == "dts":
    from doc4llm.ingest.packages.dts_files import dts_files
    print(f"{len(dts_files(root))} files ranked")
'''


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "doc4llm"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)

        def add(label: str, build, filename: str = "demo-1.0.tar.gz") -> None:
            folder = tmp / label.split()[0]
            folder.mkdir()
            build(folder / filename)
            size = (folder / filename).stat().st_size
            rows.append((f"{label} ({size:,} B)", *run([*cli, "add", f"./{filename}", "--docs-dir", str(folder / "md"),
                                                         "--offline", "--set", "demo@1.0"], args.timeout, folder)))

        add("long-name 1 GB GNU long name", long_name_bomb)
        add("chain 10,000 chained long names", long_name_chain)
        add("sparse GNU sparse map of 1M blocks", sparse_map)
        add("pax 20 pax headers of 60,000 digits", pax_digits)
        add("zip encrypted wheel member", encrypted_wheel, "demo-1.0-py3-none-any.whl")
        add("front-matter title: [ x 20,000", deep_front_matter)

        for label, setup in (("requirements: 100 x '-r requirements.txt'",
                              lambda p: (p / "requirements.txt").write_text("-r requirements.txt\n" * 100 + "six==1.16.0\n")),
                             ("requirements.txt -> /dev/zero", lambda p: (p / "requirements.txt").symlink_to("/dev/zero"))):
            project = tmp / f"sync{len(rows)}"
            project.mkdir()
            setup(project)
            rows.append((label, *run([*cli, "sync", str(project), "--dry-run", "--docs-dir", str(project / "md")],
                                     args.timeout, project)))

        def child(label: str, what: str, root: Path) -> None:
            rows.append((label, *run([sys.executable, "-c", CHILD, what, str(root)], args.timeout, tmp)))

        for label, body in (("python: 8,000 '__all__ += [...]' assignments",
                             '"""M."""\n__all__ = []\n' + "".join(f"__all__ += ['n{i}']\nn{i} = {i}\n" for i in range(8000))),
                            ("python: 2,000-class inheritance chain",
                             "class C0:\n    def m(self):\n        '''M.'''\n"
                             + "".join(f"class C{i}(C{i - 1}):\n    '''C{i}.'''\n" for i in range(1, 2000)))):
            root = tmp / f"py{len(rows)}"
            (root / "pkg").mkdir(parents=True)
            (root / "PKG-INFO").write_bytes(PKG_INFO.replace(b"demo", b"pkg"))
            (root / "pkg" / "__init__.py").write_text('"""P."""\n')
            (root / "pkg" / "m.py").write_text(body)
            child(label, "python", root)

        for label, body in (("html: 5,000 nested <div>", "<div>" * 5000 + "x"),
                            ("html: 20,000 nested <h1>", "<h1>" * 20000 + "x")):
            page = tmp / f"page{len(rows)}.html"
            page.write_text(f"<html><body><main><h1>T</h1>{body}</main></body></html>")
            child(label, "html", page)

        root = tmp / "dts"
        root.mkdir()
        (root / "package.json").write_text(json.dumps({"name": "demo", "version": "1.0.0", "types": "index.d.ts"}))
        n = 3000
        fan = "".join(f"export * from './m{j}';\n" for j in range(0, n, n // 60))
        (root / "index.d.ts").write_text("".join(f"export * from './m{i}';\n" for i in range(n)))
        for i in range(n):
            (root / f"m{i}.d.ts").write_text(fan + f"export declare const c{i}: number;\n")
        child("dts: 3,000 files of 60 'export * from'", "dts", root)

    for label, wall, rss, outcome in rows:
        print(f"| {label} | {wall:.1f} s, {rss:.0f} MB | {outcome} |")


if __name__ == "__main__":
    main()
