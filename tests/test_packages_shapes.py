"""Package shapes whose sets came out silently incomplete or wrong (the add succeeded):
each fixture in `tests/fixtures/pkg_shapes/` is a trimmed copy of a real sdist's layout
(named in each test), built into a set the way `doc4llm add` builds one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fake_registries import sdist
from growth import assert_linear

from doc4llm.ingest.packages.api_cython import cython_stub
from doc4llm.ingest.packages.api_python import python_api_pages
from doc4llm.ingest.packages.docs_sources import find_docs
from doc4llm.ingest.packages.package_docs import add_archive

SHAPES = Path(__file__).parent / "fixtures" / "pkg_shapes"


def tree(tmp_path: Path, shape: str) -> Path:
    root = tmp_path / shape
    shutil.copytree(SHAPES / shape, root)
    return root


def api(root: Path, dist: str) -> tuple[dict[str, str], list[str]]:
    warnings: list[str] = []
    pages = python_api_pages(root, dist, warnings, "1.0")
    return {p.title: p.body for p in pages}, warnings


def built_set(tmp_path: Path, shape: str, name: str, version: str, readme: str | None = None) -> Path:
    """The fixture tree as an sdist (its README as the long description), added as a set."""
    files = {p.relative_to(SHAPES / shape).as_posix(): p.read_text()
             for p in (SHAPES / shape).rglob("*") if p.is_file()}
    archive = tmp_path / f"{name}-{version}.tar.gz"
    archive.write_bytes(sdist(name, version, files, readme=files[readme] if readme else "",
                              readme_type="text/x-rst"))
    add_archive(archive, tmp_path / "md")
    return tmp_path / "md" / f"{name}@{version}"


def test_two_short_named_sphinx_projects_are_not_two_languages(tmp_path):
    # sympy 1.13: `doc/api` and `doc/src` were taken for languages "api" and "src", and
    # the whole manual (309 pages) was left out as a translation
    found = find_docs(tree(tmp_path, "two_doc_projects"))
    names = {f.path.name for f in found.files}
    assert {"index.rst", "tutorial.rst"} <= names
    assert found.languages == [] and found.skipped_translations == 0
    assert all(f.lang is None for f in found.files)


def test_projects_in_language_tagged_copies_of_the_docs_folder_are_translations(tmp_path):
    # beautifulsoup4 4.12: `doc.ru/source`, `doc.ptbr/source`, `doc.jp/source` beside
    # `doc/source`, their conf.py files silent about the language: all four were read
    root = tree(tmp_path, "tagged_translations")
    found = find_docs(root)
    assert [f.path.relative_to(root).as_posix() for f in found.files] == ["doc/source/index.rst"]
    assert found.languages == ["ja", "pt-br", "ru"] and found.skipped_translations == 3
    wanted = find_docs(root, {"ru"})
    assert {f.path.relative_to(root).parts[0]: f.lang for f in wanted.files} == {"doc": None, "doc.ru": "ru"}


def test_a_page_with_a_language_suffix_beside_its_original_is_a_translation(tmp_path):
    # zope.interface 7.0: `docs/README.ru.rst` beside `docs/README.rst` (a Sphinx project)
    # was read as three Russian pages among the English ones; sphinx-apidoc's English
    # `demo.io.rst` ("io" is a language code too) stays
    root = tree(tmp_path, "suffix_translation")
    found = find_docs(root)
    assert sorted(f.path.name for f in found.files) == ["README.rst", "demo.io.rst", "demo.rst", "index.rst"]
    assert found.languages == ["ru"] and found.skipped_translations == 1


def test_a_package_holding_its_conftest_is_still_the_api(tmp_path):
    # scikit-learn 1.5: `sklearn/conftest.py` made the only package a test suite (its
    # import name is not the distribution's): no API reference at all
    pages, _ = api(tree(tmp_path, "conftest_in_package"), "scikit-demo")
    assert {"skl (API)", "skl.base (API)", "skl.linear (API)"} <= set(pages)
    assert "Base class for all estimators" in pages["skl.base (API)"]
    assert not any(t.startswith(("skl.tests", "skl.conftest", "itests")) for t in pages), sorted(pages)


def test_a_package_four_folders_deep_is_found(tmp_path):
    # grpcio 1.65: `src/python/grpcio/grpc`: no API reference at all
    pages, _ = api(tree(tmp_path, "deep_package"), "grpcdemo")
    assert {"grpc (API)", "grpc.aio (API)"} <= set(pages)
    assert "Affords RPC invocation" in pages["grpc (API)"]


def test_the_docs_example_code_is_not_api(tmp_path):
    # sqlmodel 0.0.19: 192 of 202 API pages were `docs_src.tutorial.*` examples
    pages, _ = api(tree(tmp_path, "docs_example_code"), "sqlm")
    assert set(pages) == {"sqlm (API)"}


def test_names_from_a_compiled_module_are_documented_from_the_stub(tmp_path):
    # msgspec 0.18: `from ._core import convert` (a C extension) with `@overload`s in
    # `__init__.pyi`: griffe's stub merge raised and the whole API was lost
    pages, warnings = api(tree(tmp_path, "compiled_with_stub"), "fastser")
    assert {"fastser (API)", "fastser.json (API)"} <= set(pages), (sorted(pages), warnings)
    top = pages["fastser (API)"]
    for heading in ("## Struct", "## encode", "## convert", "## field"):
        assert heading in top
    assert "efficient serializable objects" in top and "Serialize an object as bytes" in top
    assert "def convert(obj: Any, type: Type[T], *, strict: bool = True) -> T" in top
    assert "A JSON encoder." in pages["fastser.json (API)"]
    assert not any("could not read" in w for w in warnings), warnings


def test_packages_inside_namespace_packages_keep_their_import_path(tmp_path):
    # poetry-core 1.9: `src/poetry/core` (no `poetry/__init__.py`) was titled `core.*`;
    # matplotlib 3.9's `lib/mpl_toolkits/mplot3d` was `mplot3d.*`: paths nobody can import
    pages, _ = api(tree(tmp_path, "namespace_packages"), "acme-widgets")
    # `acme_kit.colors` never imports itself: its sibling `draw` shows the folder is a namespace
    assert {"acme.widgets (API)", "acme.widgets.layout (API)", "acme_kit.draw (API)",
            "acme_kit.draw.canvas (API)", "acme_kit.colors (API)"} <= set(pages), sorted(pages)
    assert not any(t.startswith(("widgets", "draw", "colors", "src.")) for t in pages), sorted(pages)
    # seven packages in one namespace: all read (the cap on top-level packages is 6)
    for sub in ("fonts", "images", "shapes", "sounds", "trace"):
        assert f"acme_kit.{sub} (API)" in pages, sorted(pages)
    assert "A button that can be pressed." in pages["acme.widgets (API)"]
    assert "A surface to draw on." in pages["acme_kit.draw (API)"]


def test_a_docs_folder_of_restructuredtext_txt_pages_is_read(tmp_path):
    # lxml 5.3: `doc/` holds its 25 pages as reStructuredText `.txt` (no conf.py) beside a
    # built HTML copy and slides: it was not taken for docs, and the set had none
    root = tree(tmp_path, "txt_rst_docs")
    found = find_docs(root)
    names = sorted(f.path.relative_to(root).as_posix() for f in found.files)
    assert names == ["doc/main.txt", "doc/parsing.txt", "doc/tutorial.txt"]


def test_a_public_instance_of_a_private_class_documents_the_class(tmp_path):
    # loguru 0.7: `logger = _Logger(...)`, the class in `loguru._logger`: the set held one
    # section, `## logger` with its assignment, and none of `add`, `remove`, `bind`...
    pages, _ = api(tree(tmp_path, "instance_of_private_class"), "logkit")
    assert set(pages) == {"logkit (API)"}
    page = pages["logkit (API)"]
    assert "### logger.add" in page and "### logger.remove" in page and "_dispatch" not in page
    assert "Add a handler sending log messages to a sink." in page
    assert "dispatch logging messages to configured handlers" in page
    # reST substitution references read as their names, not `|Logger|`
    assert "The `Logger` is the core object" in page and "`add` method" in page
    assert "|" not in page.replace("```", "")


def test_absolute_values_in_docstrings_are_not_substitutions():
    from doc4llm.ingest.packages.docstring_md import docstring_markdown

    md = docstring_markdown("The order |G| of the group; stop when |x - y| < eps or |z| > 1.").markdown
    assert "|G|" in md and "|x - y|" in md and "|z|" in md


def test_a_readme_the_docs_include_is_one_page_and_sphinx_substitutions_are_filled(tmp_path):
    # arrow 1.3, jsonschema 4.23, python-dateutil 2.9: docs/index.rst includes README.rst,
    # the long description is the same README: two pages `X` and `X (2)`; and
    # `Release v\ |release|` read `Release v[\|release\|](##SUBST##|release|)`
    set_dir = built_set(tmp_path, "readme_in_docs", "timekit", "2.4.1", readme="README.rst")
    folders = sorted(p.name for p in set_dir.iterdir() if p.is_dir())
    assert [f for f in folders if f.startswith("Timekit B")] == ["Timekit Better dates & times"], folders
    index = (set_dir / "Timekit Better dates & times" / "docContent.md").read_text()
    assert "Release v2.4.1" in index and "##SUBST##" not in index and "changelog" in index
    assert "`timekit.now()`" in index
    assert "this is version 2.4." in (set_dir / "User guide" / "docContent.md").read_text()
    # a title that is only an image (tornado's index) is named by its alt text
    assert "The project site." in (set_dir / "Timekit Web Site" / "docContent.md").read_text()
    assert not any(f.startswith("(untitled") for f in folders), folders


def test_docs_pages_that_share_a_title_are_named_by_their_folder(tmp_path):
    # polars 1.5: reference/{dataframe,lazyframe,series,expressions}/aggregation.rst were
    # `Aggregation`, `Aggregation (2)`, `(3)`, `(4)`: nothing said which was which
    set_dir = built_set(tmp_path, "shared_titles", "frames", "1.0")
    assert (set_dir / "Aggregation (dataframe)" / "docContent.md").read_text().count("DataFrame.sum") == 1
    assert "Series.sum" in (set_dir / "Aggregation (series)" / "docContent.md").read_text()
    assert not (set_dir / "Aggregation (2)").exists()


def test_a_cython_module_is_documented_from_its_source(tmp_path):
    # pyarrow 17 (`lib.pyx` + `table.pxi`...: `Table`, `array`, `Schema`) and lxml 5.3
    # (`etree.pyx`: `Element`, `parse`, `XPath`): the libraries' main API had no entry
    pages, warnings = api(tree(tmp_path, "cython_module"), "fastxml")
    etree = pages["fastxml.etree (API)"]
    assert etree.startswith("The ElementTree API, compiled.")
    for heading in ("## Element", "## ElementBase", "## parse", "## XMLParser", "### XMLParser.feed"):
        assert heading in etree, heading
    # typed Cython parameters read as Python, comments inside the signature gone
    assert "def parse(source, parser: _BaseParser = None, *, base_url=None, strict: bool = True, " \
           "depth: int = 0, name=NULL)" in etree
    assert "Return an ElementTree object loaded with source elements." in etree
    # methods a public class inherits from a private base are on its entry
    for heading in ("### ElementBase.find", "### ElementBase.get"):
        assert heading in etree, heading
    assert "Finds the first matching subelement" in etree
    # a public base stops the walk: its own entry holds what it inherits
    assert "### HTMLElement.classes" in etree and "### HTMLElement.find" not in etree
    assert "- `tag`: Element tag" in etree and "- `text`: Text before the first subelement." in etree
    # C-level declarations are not Python API
    for absent in ("_helper", "not_python", "_private_c", "xmlNode", "## DEBUG\n\n```python\nDEBUG = 1\n```\n\n## "):
        assert absent not in etree, absent
    assert "- `parse`: defined in `fastxml.etree`. Return an ElementTree object" in pages["fastxml (API)"]
    assert not any("could not read" in w for w in warnings), warnings
    sources = {p.title: p.source for p in python_api_pages(tree(tmp_path / "again", "cython_module"), "fastxml", [])}
    assert sources["fastxml.etree (API)"] == "src/fastxml/etree.pyx"


@pytest.mark.parametrize("make", [
    lambda n: "cdef class A:\n" + ("    def m(self, int x not None, " + " " * n + "y=1):\n        '''d'''\n") * 40,
    lambda n: 'def f():\n    """' + "x\n" * n,  # a docstring never closed
    lambda n: "x = (\n" * n,  # brackets never closed
    lambda n: "".join(f"cdef class C{i}(_B):\n    '''c'''\n    def m{i}(self):\n        '''m'''\n" for i in range(n)),
])
def test_the_cython_reader_is_linear(tmp_path, make):
    def run(text: str) -> None:
        path = tmp_path / "m.pyx"
        path.write_text(text)
        cython_stub(path, tmp_path)
    assert_linear(run, make, 2000, what="cython_stub")


def test_a_readme_titled_like_a_docs_page_is_named_the_readme(tmp_path):
    # tornado 6.4: README and docs/index.rst are both "Tornado Web Server": `X`, `X (2)`
    readme = "Frames\n======\n\nA dataframe library: see the docs.\n"
    files = {p.relative_to(SHAPES / "shared_titles").as_posix(): p.read_text()
             for p in (SHAPES / "shared_titles").rglob("*") if p.is_file()}
    archive = tmp_path / "frames-1.0.tar.gz"
    archive.write_bytes(sdist("frames", "1.0", files, readme=readme, readme_type="text/x-rst"))
    add_archive(archive, tmp_path / "md")
    folders = {p.name for p in (tmp_path / "md" / "frames@1.0").iterdir() if p.is_dir()}
    assert {"Frames", "frames README"} <= folders and "Frames (2)" not in folders, folders


def page(set_dir: Path, title: str) -> str:
    return (set_dir / title / "docContent.md").read_text()


def test_mkdocstrings_pages_are_filled_from_the_api(tmp_path):
    # humanize 4.10: `docs/filesize.md` held only `::: humanize.filesize` (the page MkDocs
    # fills with the module's docstrings), and the index only the raw
    # `{% include-markdown "../README.md" start=... end=... %}` tag
    set_dir = built_set(tmp_path, "mkdocstrings_pages", "sizes", "1.0")
    filesize = page(set_dir, "Filesize")
    assert "::: sizes.filesize" not in filesize
    assert "## sizes.filesize" in filesize and "### naturalsize" in filesize
    assert "Format a number of bytes like a human readable filesize" in filesize
    # inside a code fence it is text; a Docusaurus box is not an object
    assert "::: sizes.not_a_directive_in_code" in filesize
    assert "A Docusaurus box stays a box." in filesize and "sizes.note" not in filesize
    units = page(set_dir, "Units")
    # `heading_level: 3` and `members: [scale]` are applied; the options block is gone
    assert "### sizes.units.Unit" not in units and "A unit of size, such as kB or MiB." in units
    assert "Value scaled into this unit." in units and "The unit's short label." not in units
    assert "options:" not in units and "heading_level" not in units
    home = page(set_dir, "Home")
    assert "include-markdown" not in home and "sizes.naturalsize(3000000)" in home
    assert "## Licence" not in home  # only the part between the markers
    assert "## Licence" in page(set_dir, "sizes")  # the README, only partly included, stays a page


def test_autodoc_directives_nested_in_automodule_and_autoclass_are_filled(tmp_path):
    # pymongo 4.8: `doc/api/pymongo/collection.rst` nests every `autoclass` in its
    # `automodule` and every `automethod` in its `autoclass`: the page kept one sentence
    # (2.5 KB) where Sphinx shows `Collection.insert_one`, `find`... (69 KB)
    set_dir = built_set(tmp_path, "nested_autodoc", "mongoish", "1.0")
    text = page(set_dir, "collection -- Collection level operations")
    assert "Collection level utilities." in text
    assert "Ascending sort order." in text
    assert "A collection of documents." in text
    assert "#### Collection.insert_one" in text and "Insert a single document." in text
    assert "Query the database for documents matching `filter`." in text
    assert "#### Collection.full_name" in text and "The full name of this collection" in text
    assert "c[name]" in text.replace("\\", "") and "Get the `name` sub-collection" in text
    # a method the page does not name stays on the API page only
    assert "Drop this collection." not in text
    assert "doclm-autodoc" not in text


def test_past_the_module_cap_modules_without_any_docstring_are_left_out(tmp_path, monkeypatch):
    # plotly 5.23: 1,461 modules, 860 of them generated `plotly.validators.*` without a
    # single docstring; under the cap of 600, 285 validator pages took the place of
    # documented `plotly.graph_objs.*` modules
    import doc4llm.ingest.packages.api_python as api_python

    monkeypatch.setattr(api_python, "MAX_MODULES", 5)
    pages, warnings = api(tree(tmp_path, "generated_modules"), "charts")
    assert set(pages) == {"charts (API)", "charts.graph_objs (API)", "charts.graph_objs.bar (API)",
                          "charts.graph_objs.pie (API)"}
    assert "A pie trace: set its data and style" in pages["charts.graph_objs.pie (API)"]
    assert any("without a single docstring left out" in w for w in warnings)
    # under the cap nothing is left out: a package with no docstrings keeps its pages
    monkeypatch.setattr(api_python, "MAX_MODULES", 600)
    pages, _ = api(tree(tmp_path / "all", "generated_modules"), "charts")
    assert "charts.validators.scatter (API)" in pages
