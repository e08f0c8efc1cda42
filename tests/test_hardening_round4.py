"""Round 4 of hostile input (docs/hardening.md, "Round 4"): what still fell after rounds 2
and 3, each reproduced small and checked through the part that fell."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import pytest
from conftest import run_cli
from growth import assert_linear

from doc4llm.corpus.sections import parse_page
from doc4llm.ingest.packages.archive import ArchiveError, extract

README = b"# hi\n\nhello\n"


def _blk(data: bytes) -> bytes:
    return data + b"\0" * ((512 - len(data) % 512) % 512)


def _header(name: str, size: int, typ: bytes) -> bytes:
    info = tarfile.TarInfo(name)
    info.size, info.type = size, typ
    return info.tobuf(format=tarfile.GNU_FORMAT)


def _record(key: bytes, value: bytes) -> bytes:
    body = b" " + key + b"=" + value + b"\n"
    n = len(body) + 1
    while len(str(n)) + len(body) != n:
        n += 1
    return str(n).encode() + body


def _pax(records: bytes, typ: bytes = tarfile.XHDTYPE) -> bytes:
    return _header("pax", len(records), typ) + _blk(records)


def _readme(name: str = "demo-1.0/README.md") -> bytes:
    info = tarfile.TarInfo(name)
    info.size = len(README)
    return info.tobuf(format=tarfile.USTAR_FORMAT) + _blk(README)


def _tgz(path: Path, *parts: bytes) -> Path:
    path.write_bytes(gzip.compress(b"".join(parts) + b"\0" * 1024, compresslevel=1))
    return path


def _refused(tmp_path: Path, archive: Path) -> str:
    with pytest.raises(ArchiveError) as err:
        extract(archive, tmp_path / "out")
    return str(err.value)


def test_a_huge_declared_long_name_is_refused_before_it_is_read(tmp_path):
    # was: tarfile read the whole declared name into memory (1 GB of name in 1 MB of gzip: 2.1 GB RSS)
    for typ in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE, tarfile.XGLTYPE):
        archive = _tgz(tmp_path / "demo-1.0.tar.gz", _header("././@LongLink", 1 << 30, typ))
        message = _refused(tmp_path, archive)
        assert message.startswith("demo-1.0.tar.gz: an extended header") and "1,073,741,824 bytes" in message


def test_chained_extended_headers_are_refused_not_a_recursion_error(tmp_path):
    # was: RecursionError traceback (each extended header reads the next one inside its own call)
    longname = _header("././@LongLink", 20, tarfile.GNUTYPE_LONGNAME) + _blk(b"demo-1.0/README.md\0")
    archive = _tgz(tmp_path / "demo-1.0.tar.gz", longname * 5000, _readme())
    assert "more than 16 extended headers precede one member" in _refused(tmp_path, archive)
    globals_ = b"".join(_pax(_record(b"k%d" % i, b"v"), tarfile.XGLTYPE) for i in range(5000))
    archive = _tgz(tmp_path / "demo-1.0.tar.gz", globals_, _readme())
    assert "more than 16 extended headers" in _refused(tmp_path, archive)


def test_global_headers_accumulate_within_a_budget(tmp_path):
    one = _pax(_record(b"comment", b"x" * 60_000), tarfile.XGLTYPE)
    archive = _tgz(tmp_path / "demo-1.0.tar.gz", *[one + _readme(f"demo-1.0/f{i}.md") for i in range(6)])
    assert "global pax headers add up to more than 262,144 bytes" in _refused(tmp_path, archive)


def test_sparse_members_are_refused(tmp_path):
    # was: a GNU sparse map of 1M extension blocks (1.8 MB of gzip) took 3.8 GB and a MemoryError
    info = tarfile.TarInfo("demo-1.0/s.md")
    info.type = tarfile.GNUTYPE_SPARSE
    archive = _tgz(tmp_path / "demo-1.0.tar.gz", info.tobuf(format=tarfile.GNU_FORMAT), _readme())
    assert "member 'demo-1.0/s.md' is a sparse file" in _refused(tmp_path, archive)
    pax = _pax(_record(b"GNU.sparse.major", b"1") + _record(b"GNU.sparse.minor", b"0"))
    archive = _tgz(tmp_path / "demo-1.0.tar.gz", pax, _readme())
    assert "a pax header describes a sparse file" in _refused(tmp_path, archive)


def test_a_pax_header_with_many_records_is_refused(tmp_path):
    archive = _tgz(tmp_path / "demo-1.0.tar.gz", _pax(_record(b"a", b"") * 1000), _readme())
    assert "a pax header holds more than 64 records" in _refused(tmp_path, archive)


def test_pax_records_parse_in_linear_time(tmp_path):
    # was: `\d+ hdrcharset=` searched a run of digits quadratically (60,000 digits: 3.2 s per member)
    def make(n: int) -> Path:
        return _tgz(tmp_path / f"demo-{n}.tar.gz", _pax(_record(b"comment", b"1" * n)), _readme())

    runs = iter(range(1_000))

    def run(archive: Path) -> None:
        extract(archive, tmp_path / f"out{next(runs)}")

    assert_linear(run, make, 15_000, what="a pax header of digits")


def test_ordinary_pax_and_gnu_archives_still_extract(tmp_path):
    buf = io.BytesIO()
    long_name = "demo-1.0/" + "d" * 150 + "/caf\u00e9.md"
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT,
                      pax_headers={"comment": "git archive"}) as tf:
        for name in (long_name, "demo-1.0/README.md"):
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(README), 1_700_000_000.5
            tf.addfile(info, io.BytesIO(README))
    (tmp_path / "pax.tar.gz").write_bytes(buf.getvalue())
    got = extract(tmp_path / "pax.tar.gz", tmp_path / "a")
    assert got.files == 2 and (tmp_path / "a" / long_name).read_bytes() == README
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.GNU_FORMAT) as tf:
        info = tarfile.TarInfo(long_name)
        info.size = len(README)
        tf.addfile(info, io.BytesIO(README))
    (tmp_path / "gnu.tar.gz").write_bytes(buf.getvalue())
    assert extract(tmp_path / "gnu.tar.gz", tmp_path / "b").files == 1


def _flag_zip(path: Path, *, encrypted: bool = False, method: int | None = None) -> Path:
    """A wheel whose README member is marked encrypted or compressed with an unknown method."""
    import struct
    import zipfile
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("demo/README.md", README)
        zf.writestr("demo/guide.md", README)
    data = bytearray(path.read_bytes())
    for sig, flag_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
        i = data.find(sig)  # the first member of each kind: README
        if encrypted:
            data[i + flag_at] |= 1
        if method is not None:
            data[i + method_at:i + method_at + 2] = struct.pack("<H", method)
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("how", [{"encrypted": True}, {"method": 99}])
def test_encrypted_or_unknown_method_zip_members_are_skipped(tmp_path, how):
    # was: RuntimeError / NotImplementedError traceback out of `add` (exit 1)
    got = extract(_flag_zip(tmp_path / "demo-1.0-py3-none-any.whl", **how), tmp_path / "out")
    assert got.files == 1 and (tmp_path / "out" / "demo" / "guide.md").exists()
    assert any("encrypted or compressed with an unknown method" in s for s in got.skipped)


def test_hostile_front_matter_is_ignored_not_a_recursion_error(tmp_path):
    # was: `title: [[[[...` (20,000) raised RecursionError out of PyYAML: `add` exit 1, traceback
    deep = "---\ntitle: " + "[" * 20_000 + "\n---\n# Real title\n\ntext\n"
    page = parse_page(deep)
    assert page.front_matter == {} and page.title == "Real title"
    bomb = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"] + [
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    assert parse_page("---\n" + "\n".join(bomb) + "\ntitle: T\n---\ntext\n").front_matter == {}
    assert parse_page("---\ntitle: Kept\ntags: [a, b]\n---\ntext\n").title == "Kept"
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "deep.md").write_text(deep)
    result = run_cli("import", str(folder), "--set", "notes@1", "--docs-dir", str(tmp_path / "md"))
    assert result.returncode == 0, result.stderr


def test_requirements_includes_read_each_file_once(tmp_path):
    # was: 100 lines of `-r requirements.txt` were 100^3 file reads (sync --dry-run > 120 s)
    from doc4llm.ingest.packages.lockfiles import read_project

    def make(n: int) -> Path:
        project = tmp_path / f"p{n}"
        project.mkdir()
        (project / "requirements.txt").write_text("-r requirements-dev.txt\n" * n + "six==1.16.0\n")
        (project / "requirements-dev.txt").write_text("-r requirements.txt\n" * n + "attrs==23.1.0\n")
        return project

    deps = read_project(make(100))
    assert sorted((d.name, d.version) for d in deps.deps) == [("attrs", "23.1.0"), ("six", "1.16.0")]
    assert_linear(read_project, make, 400, what="requirements files including each other")


def test_a_lockfile_that_is_a_device_or_fifo_is_refused_not_read(tmp_path):
    # was: requirements.txt -> /dev/zero read until MemoryError (2.6 GB, exit 1); a FIFO blocked forever
    import os

    from doc4llm.errors import InputError
    from doc4llm.ingest.packages.lockfiles import read_project

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "requirements.txt").symlink_to("/dev/zero")
    (tmp_path / "b").mkdir()
    os.mkfifo(tmp_path / "b" / "requirements.txt")
    for project in (tmp_path / "a", tmp_path / "b"):
        with pytest.raises(InputError, match="requirements.txt is not a regular file"):
            read_project(project)


def _py_package(root: Path, modules: dict[str, str]) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
    for name, text in {"__init__.py": '"""The pkg."""\n', **modules}.items():
        (root / "pkg" / name).write_text(text)
    return root


def _api(root: Path) -> tuple[list, list[str]]:
    from doc4llm.ingest.packages.api_python import python_api_pages

    warnings: list[str] = []
    return python_api_pages(root, "pkg", warnings), warnings


def test_many_module_statements_take_linear_time(tmp_path):
    # was: griffe's ast_next walked the module body from the start for each assignment's
    # docstring: 8,000 `__all__ += [...]` took 13 s (quadratic)
    def make(n: int) -> Path:
        body = '"""M."""\n__all__ = []\n' + "".join(f"__all__ += ['n{i}']\nn{i} = {i}\n" for i in range(n))
        return _py_package(tmp_path / f"s{n}", {"m.py": body})

    assert_linear(lambda root: _api(root), make, 1500, what="a module of many assignments")
    pages, _ = _api(_py_package(tmp_path / "doc", {"m.py": 'X = 1\n"""The X constant."""\nY = 2\n'}))
    assert any("The X constant." in p.body for p in pages)  # attribute docstrings still read


def test_a_long_inheritance_chain_takes_linear_time(tmp_path):
    # was: griffe's dataclass extension asked every class for an MRO recomputed without
    # memory: 200 classes 4 s, 2,000 more than 100 s (cubic)
    def make(n: int) -> Path:
        body = "class C0:\n    def m(self):\n        '''M.'''\n" + "".join(
            f"class C{i}(C{i - 1}):\n    '''C{i}.'''\n" for i in range(1, n))
        return _py_package(tmp_path / f"c{n}", {"m.py": body})

    assert_linear(lambda root: _api(root), make, 60, what="an inheritance chain")  # old: 64x
    pages, warnings = _api(make(2000))  # old: RecursionError, the package's API lost
    assert any(p.title == "pkg.m (API)" for p in pages) and not any("could not read" in w for w in warnings)


def test_an_inheritance_cycle_keeps_the_api(tmp_path):
    # was: a cycle of 1,000 classes raised RecursionError: the whole package's API lost
    body = "".join(f"class C{i}(C{(i + 1) % 1000}):\n    '''C{i}.'''\n" for i in range(1000))
    pages, warnings = _api(_py_package(tmp_path / "cycle", {"m.py": body, "good.py": "def good():\n    '''G.'''\n"}))
    assert {p.title for p in pages} >= {"pkg.m (API)", "pkg.good (API)"}, [p.title for p in pages]
    assert not any("could not read it" in w for w in warnings)


def _html(body: str) -> str:
    return f"<html><head><title>T</title></head><body><main><h1>Title</h1>{body}</main></body></html>"


@pytest.mark.parametrize("opener", ["<div>", "<blockquote>", "<ul><li>", "<table><tr><td>", "<b><i>"])
def test_deeply_nested_html_converts_with_its_text(opener):
    # was: RecursionError out of markdownify (5,000 nested <div>s): the scraped page lost
    from doc4llm.ingest.scrape.html_to_md import convert_html

    page = convert_html(_html(opener * 5000 + "deep words"), "https://example.com/docs/x")
    assert "deep words" in page.body


@pytest.mark.parametrize("opener", ["<h1>", "<pre>"])
def test_nested_headings_and_code_convert_in_linear_time(opener):
    # was: 20,000 nested <h1>s 35 s, <pre> + 20,000 nested <span>s 61 s (quadratic)
    from doc4llm.ingest.scrape.html_to_md import convert_html

    inner = "<span>" if opener == "<pre>" else "<h1>"
    assert_linear(lambda html: convert_html(html, "https://example.com/docs/x"),
                  lambda n: _html(opener + inner * n + "x"), 2000, what=f"{opener} nesting")


def test_dts_ranking_resolves_each_specifier_once_per_folder(tmp_path, monkeypatch):
    # was: a realpath per `export * from` line: 3,000 files of 100 each took 37 s to rank
    from doc4llm.ingest.packages import dts_files as mod

    root = tmp_path / "package"
    root.mkdir()
    (root / "package.json").write_text('{"name": "demo", "version": "1.0.0", "types": "index.d.ts"}')
    n = 400
    fan = "".join(f"export * from './m{j}';\n" for j in range(0, n, 8))
    (root / "index.d.ts").write_text("".join(f"export * from './m{i}';\n" for i in range(n)))
    for i in range(n):
        (root / f"m{i}.d.ts").write_text(fan + f"export declare const c{i}: number;\n")
    calls = []
    real = mod.resolve_specifier
    monkeypatch.setattr(mod, "resolve_specifier", lambda *a: calls.append(a[1]) or real(*a))
    files = mod.dts_files(root)
    assert files[0].name == "index.d.ts" and len(files) == min(mod.MAX_FILES, n + 1)
    assert len(calls) == n  # one per distinct specifier of the one folder, not n * 50


def test_griffe_loads_in_parallel_threads_match_sequential_ones(tmp_path):
    # sync builds packages in threads: the bounded griffe hooks keep their state per thread
    from concurrent.futures import ThreadPoolExecutor

    from doc4llm.ingest.packages.api_loader import TolerantLoader

    roots = []
    for k in range(4):
        body = f'"""M{k}."""\n' + "".join(f"X{i} = {i}\n\"\"\"Doc {k}.{i}.\"\"\"\n" for i in range(300)) + \
            "class C0:\n    '''C.'''\n" + "".join(f"class C{i}(C{i - 1}):\n    '''C{i}.'''\n" for i in range(1, 80))
        roots.append(_py_package(tmp_path / f"p{k}", {"m.py": body}))

    def load(root: Path) -> list:
        loader = TolerantLoader(search_paths=[str(root)], allow_inspection=False, store_source=False)
        module = loader.load("pkg", find_stubs_package=False)["m"]
        return [(name, member.docstring.value if member.docstring else None, len(getattr(member, "bases", ())))
                for name, member in module.members.items()] + [loader.failed]

    sequential = [load(r) for r in roots]
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(load, roots * 2))
    assert parallel == sequential * 2
    assert ("X299", "Doc 3.299.", 0) in sequential[3] and sequential[3][-1] == []


def test_api_builds_in_parallel_threads_match_sequential_ones(tmp_path):
    """`sync` builds packages in threads: whole API pages built in parallel equal the
    sequential ones (griffe loads run one at a time, api_python._GRIFFE_LOCK)."""
    from concurrent.futures import ThreadPoolExecutor

    roots = []
    for k in range(4):
        body = f'"""M{k}."""\n' + "".join(f"X{i} = {i}\n\"\"\"Doc {k}.{i}.\"\"\"\n" for i in range(100)) + \
            "class C0:\n    '''C.'''\n" + "".join(f"class C{i}(C{i - 1}):\n    '''C{i}.'''\n" for i in range(1, 30))
        roots.append(_py_package(tmp_path / f"q{k}", {"m.py": body}))
    sequential = [[p.body for p in _api(r)[0]] for r in roots]
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = [[p.body for p in pages] for pages, _ in pool.map(_api, roots * 2)]
    assert parallel == sequential * 2
    assert all(f"Doc {k}.99." in "".join(sequential[k]) for k in range(4))
