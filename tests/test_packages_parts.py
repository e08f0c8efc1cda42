"""Parts of the package pipeline on their own: safe extraction, source strings, registry
configuration, rst conversion, the static API readers."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest
from fake_registries import tar_gz

from doc4llm.errors import InputError
from doc4llm.ingest.packages.api_typescript import jsdoc_markdown
from doc4llm.ingest.packages.archive import ArchiveError, extract
from doc4llm.ingest.packages.registry_config import (
    display_url,
    npm_config,
    pip_index_url,
    pypi_json_base,
)
from doc4llm.ingest.packages.rst import rst_to_markdown
from doc4llm.ingest.packages.spec import parse_source, set_base_name


def test_extract_caps_file_count_and_size(tmp_path):
    many = tmp_path / "many.tar.gz"
    many.write_bytes(tar_gz({f"pkg/f{i}.txt": "x" for i in range(30)}))
    with pytest.raises(ArchiveError, match="more than 20 files"):
        extract(many, tmp_path / "a", max_files=20)
    big = tmp_path / "big.tar.gz"
    big.write_bytes(tar_gz({"pkg/a.txt": b"\0" * 5000, "pkg/b.txt": b"\0" * 5000}))
    with pytest.raises(ArchiveError, match="unpacks to more than"):
        extract(big, tmp_path / "b", max_total=8000, max_file=6000)
    ok = extract(big, tmp_path / "c")
    assert ok.root.name == "pkg" and ok.files == 2 and ok.bytes == 10000


def test_extract_skips_binaries_and_oversized_members(tmp_path):
    path = tmp_path / "p.tar.gz"
    path.write_bytes(tar_gz({"pkg/README.md": "# r\n", "pkg/model.onnx": b"\0" * 100, "pkg/lib.so": b"\0",
                             "pkg/huge.txt": "y" * 3000}))
    out = extract(path, tmp_path / "x", max_file=2000)
    assert sorted(p.name for p in out.root.iterdir()) == ["README.md"]
    assert out.not_needed == 2 and any("huge.txt" in s for s in out.skipped)


def test_extract_never_creates_links_or_special_files(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, kind in (("p/link", tarfile.SYMTYPE), ("p/hard", tarfile.LNKTYPE), ("p/fifo", tarfile.FIFOTYPE)):
            info = tarfile.TarInfo(name)
            info.type = kind
            info.linkname = "/etc/passwd"
            tf.addfile(info)
        data = b"real"
        info = tarfile.TarInfo("p/real.txt")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    path = tmp_path / "links.tgz"
    path.write_bytes(buf.getvalue())
    out = extract(path, tmp_path / "x")
    assert sorted(p.name for p in out.root.iterdir()) == ["real.txt"]
    assert len(out.skipped) == 3


def test_zip_symlink_entries_are_skipped_and_traversal_refused(tmp_path):
    path = tmp_path / "a.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("pkg/__init__.py", "x = 1\n")
        link = zipfile.ZipInfo("pkg/evil")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/passwd")
    out = extract(path, tmp_path / "x")
    assert not (out.root / "evil").exists() and (out.root / "__init__.py").is_file()
    bad = tmp_path / "b.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("..\\..\\evil.txt", "x")
    with pytest.raises(ArchiveError, match="climbs out"):
        extract(bad, tmp_path / "y")


@pytest.mark.parametrize("source, want", [
    ("pypi:click==8.1.7", ("pypi", "click", "8.1.7")),
    ("pypi:Flask[async]>=2,<3", ("pypi", "Flask", ">=2,<3")),
    ("pypi:requests", ("pypi", "requests", None)),
    ("npm:p-limit@5.0.0", ("npm", "p-limit", "5.0.0")),
    ("npm:@types/node@^20", ("npm", "@types/node", "^20")),
    ("npm:@scope/pkg", ("npm", "@scope/pkg", None)),
    ("./docs", None),
])
def test_parse_source(source, want):
    ref = parse_source(source)
    assert (None if ref is None else (ref.ecosystem, ref.name, ref.requested)) == want


def test_parse_source_rejects_bad_names():
    for bad in ("npm:Bad Name", "npm:", "pypi:"):
        with pytest.raises(InputError):
            parse_source(bad)


def test_set_names_hold_one_at():
    assert set_base_name("npm", "@types/node") == "types__node"
    assert set_base_name("pypi", "Markdown_It.Py") == "markdown-it-py"


def test_registry_configuration(tmp_path):
    assert pip_index_url({"PIP_INDEX_URL": "https://u:tok@mirror/simple"}) == "https://u:tok@mirror/simple"
    assert display_url("https://u:tok@mirror/simple") == "https://***@mirror/simple"
    assert pypi_json_base("https://pypi.org/simple/") == "https://pypi.org/pypi"
    assert pypi_json_base("https://example.invalid/packages/") is None
    (tmp_path / ".npmrc").write_text("registry=https://npm.example.invalid\n@acme:registry=https://acme.invalid/npm/\n"
                                     "//npm.example.invalid/:_authToken=${NPM_TOKEN}\n")
    cfg = npm_config(tmp_path, env={"HOME": str(tmp_path / "nohome")})
    assert cfg.registry_for("left-pad") == "https://npm.example.invalid/"
    assert cfg.registry_for("@acme/ui") == "https://acme.invalid/npm/"
    cfg = npm_config(tmp_path, env={"HOME": str(tmp_path), "npm_config_registry": "http://127.0.0.1:1/r"})
    assert cfg.registry == "http://127.0.0.1:1/r/"


def test_rst_conversion_keeps_structure_and_reads_no_files(tmp_path):
    md = rst_to_markdown("Title\n=====\n\n.. warning::\n\n   Careful.\n\n.. versionchanged:: 2.0\n   Renamed.\n\n"
                         "+---+---+\n| a | b |\n+===+===+\n| 1 | 2 |\n+---+---+\n\n.. include:: /etc/passwd\n\n"
                         ":class:`~pkg.mod.Thing` and :ref:`guide <g>`\n")
    assert md.startswith("# Title") and "> **Warning:** Careful." in md
    assert "> **Changed in version 2.0:** Renamed." in md and "| a   | b   |" in md
    assert "root:" not in md and "`Thing` and guide" in md


def test_jsdoc_to_markdown():
    text = jsdoc_markdown("/**\n * Does it.\n * @param {number} n - How many.\n * @returns The count.\n"
                          " * @deprecated Use other.\n * @example\n * f(1)\n */")
    assert text.splitlines()[0] == "Does it."
    assert "- `n`: How many." in text and "- Returns: The count." in text and "**Deprecated.** Use other." in text
    assert "```ts\nf(1)\n```" in text


def test_no_python_package_means_no_api_pages(tmp_path):
    from doc4llm.ingest.packages.api_python import python_api_pages

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("import os\n")
    (tmp_path / "setup.py").write_text("raise SystemExit('never run')\n")
    assert python_api_pages(Path(tmp_path), "nothing", []) == []


def test_names_reexported_from_a_private_package_are_documented(tmp_path):
    from doc4llm.ingest.packages.api_python import python_api_pages

    src = tmp_path / "src"
    (src / "pub").mkdir(parents=True)
    (src / "_priv").mkdir()
    (src / "pub" / "__init__.py").write_text('from _priv.core import fixture\n__all__ = ["fixture"]\n')
    (src / "_priv" / "__init__.py").write_text("")
    (src / "_priv" / "core.py").write_text('def fixture(scope: str = "function"):\n    """Declare a fixture."""\n')
    (tmp_path / "testing" / "example_scripts" / "junk").mkdir(parents=True)
    (tmp_path / "testing" / "example_scripts" / "junk" / "__init__.py").write_text("x = 1\n")
    pages = {p.title: p.body for p in python_api_pages(tmp_path, "pub", [])}
    assert list(pages) == ["pub (API)"]
    assert "## fixture" in pages["pub (API)"] and "Declare a fixture." in pages["pub (API)"]
    assert "def fixture(scope: str = 'function')" in pages["pub (API)"]
