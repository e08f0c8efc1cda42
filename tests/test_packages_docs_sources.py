"""Docs found in package archives by what they contain (issue 36 item 1): Sphinx sources
in folders named `build`, `.txt` reStructuredText, MkDocs projects per language,
translations left out unless asked, release notes / changelogs / contributor lists
marked, and ranked below the docs."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import yaml
from conftest import run_cli
from fake_registries import sdist

from doc4llm.ingest.packages.docs_sources import find_docs
from doc4llm.ingest.packages.package_docs import add_archive


def build(tmp_path: Path, files: dict[str, str], *, name: str = "demo", langs: set[str] | None = None):
    tmp_path.mkdir(parents=True, exist_ok=True)
    archive = tmp_path / f"{name}-1.0.tar.gz"
    archive.write_bytes(sdist(name, "1.0", files))
    result = add_archive(archive, tmp_path / "md", langs=langs)
    set_dir = tmp_path / "md" / f"{name}@1.0"
    meta = yaml.safe_load((set_dir / "doc4llm-set.yaml").read_text())
    pages = {p.name: (p / "docContent.md").read_text() for p in set_dir.iterdir() if (p / "docContent.md").is_file()}
    records = {r["source"]: r for r in meta["pages"].values()}
    return result, pages, records


def extracted(tmp_path: Path, files: dict[str, str]) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    archive = tmp_path / "x-1.0.tar.gz"
    archive.write_bytes(sdist("x", "1.0", files))
    with tarfile.open(archive) as tf:
        tf.extractall(tmp_path / "x", filter="data")
    return tmp_path / "x" / "x-1.0"


def test_sphinx_source_in_a_build_folder_is_read_and_html_output_beside_it_is_not(tmp_path):
    # SQLAlchemy's layout: doc/ holds the HTML (with `_sources` copies), doc/build the Sphinx source
    _, pages, records = build(tmp_path, {
        "doc/build/conf.py": "master_doc = 'contents'\nraise SystemExit('never run')\n",
        "doc/build/contents.rst": "Contents\n========\n\n.. toctree::\n\n   orm/tutorial\n",
        "doc/build/orm/tutorial.rst": "ORM Tutorial\n============\n\nThe Session is the ORM's handle.\n",
        "doc/build/genindex.rst": "Index\n=====\n",
        "doc/build/_build/html/stale.rst": "Stale\n=====\n",
        "doc/index.html": "<html></html>", "doc/searchindex.js": "Search.setIndex({})",
        "doc/_sources/orm/tutorial.rst.txt": "ORM Tutorial\n============\n\ncopy\n",
        "doc/orm/tutorial.html": "<html></html>",
        # a test project of the package (Sphinx's own tests/roots) is not its docs
        "tests/roots/test-basic/conf.py": "", "tests/roots/test-basic/index.rst": "Test root\n=========\n",
    })
    assert "ORM Tutorial" in pages and "The Session is the ORM's handle." in pages["ORM Tutorial"]
    docs = {s for s, r in records.items() if r["extra"]["from"] == "docs"}
    assert docs == {"doc/build/contents.rst", "doc/build/orm/tutorial.rst"}
    assert "Test root" not in pages and "Stale" not in pages and "Index" not in pages


def test_txt_sources_of_a_sphinx_project_are_read_as_restructuredtext(tmp_path):
    # Django's layout: docs/*.txt with `source_suffix = ".txt"`; release notes marked
    _, pages, records = build(tmp_path, {
        "docs/conf.py": 'source_suffix = ".txt"\nroot_doc = "contents"\n'
                        'exclude_patterns = ["_build", "_theme", "requirements.txt"]\n',
        "docs/contents.txt": "Django documentation contents\n=============================\n\nAll of it.\n",
        "docs/topics/db/models.txt": "Models\n======\n\nA model is the single source of information.\n\n"
                                     "Fields\n------\n\n``CharField`` holds text.\n",
        "docs/topics/db/examples/many_to_one.txt": "Many-to-one relationships\n=========================\n\nUse a ForeignKey.\n",
        "docs/requirements.txt": "sphinx>=4\n",
        "docs/releases/5.0.txt": "Django 5.0 release notes\n========================\n\nNew features.\n",
        "docs/_theme/djangodocs/layout.txt": "Theme\n=====\n",
    })
    assert "## Fields" in pages["Models"] and "`CharField` holds text." in pages["Models"]
    assert records["docs/topics/db/models.txt"]["extra"] == {"from": "docs", "origin": "archive",
                                                             "path": "docs/topics/db/models.txt"}
    assert "Many-to-one relationships" in pages  # `examples` inside a docs project is docs
    assert records["docs/releases/5.0.txt"]["extra"] == {"from": "docs", "kind": "release-notes", "origin": "archive",
                                                         "path": "docs/releases/5.0.txt"}
    assert not any("requirements" in s or "_theme" in s for s in records)


FASTAPI_LIKE = {
    "docs/en/mkdocs.yml": "site_name: Demo\ndocs_dir: docs\ntheme: {name: material, language: en}\n"
                          "nav:\n- Demo: index.md\n- Languages:\n  - en: /\n  - es: /es/\n- tutorial.md\n",
    "docs/en/docs/index.md": "Hello from the intro.\n",
    "docs/en/docs/tutorial.md": "# Tutorial\n\nFirst steps.\n",
    "docs/es/mkdocs.yml": "site_name: Demo\ntheme: {name: material, language: es}\nnav:\n- Demo: index.md\n",
    "docs/es/docs/index.md": "# Introducción\n\nHola.\n",
    # fastapi's emoji "translation" says `language: en`: its folder says otherwise
    "docs/em/mkdocs.yml": "site_name: Demo\ntheme: {name: material, language: en}\n",
    "docs/em/docs/index.md": "# Intro 😉\n",
}


def test_translations_are_left_out_unless_asked_for(tmp_path):
    result, pages, records = build(tmp_path / "a", FASTAPI_LIKE)
    assert set(pages) == {"Demo", "Tutorial"}  # the untitled index named by the English nav
    assert any("2 translated pages left out (em, es)" in w and "--lang" in w for w in result.warnings)
    result, pages, records = build(tmp_path / "b", FASTAPI_LIKE, langs={"es"})
    assert "Introducción" in pages and "Intro 😉" not in pages
    assert records["docs/es/docs/index.md"]["extra"] == {"from": "docs", "kind": "translation", "lang": "es",
                                                         "origin": "archive", "path": "docs/es/docs/index.md"}


def test_language_folders_and_suffixes_inside_one_docs_tree(tmp_path):
    root = extracted(tmp_path, {
        "docs/index.md": "# Home\n", "docs/guide.md": "# Guide\n",
        "docs/ja/index.md": "# ホーム\n", "docs/ja/guide.md": "# ガイド\n",
        "docs/api/index.md": "# API\n",  # a folder that is no language
        "site/mkdocs.yml": "docs_dir: src\nplugins:\n  - i18n:\n      docs_structure: suffix\n",
        "site/src/setup.md": "# Setup\n", "site/src/setup.fr.md": "# Installation\n",
    })
    found = find_docs(root)
    rels = sorted(d.path.relative_to(root).as_posix() for d in found.files)
    assert rels == ["site/src/setup.md"]  # an mkdocs.yml names the docs: the loose tree is not read
    assert found.languages == ["fr"] and found.skipped_translations == 1
    found = find_docs(extracted(tmp_path / "2", {
        "docs/index.md": "# Home\n", "docs/guide.md": "# Guide\n",
        "docs/ja/index.md": "# ホーム\n", "docs/ja/guide.md": "# ガイド\n", "docs/api/index.md": "# API\n"}))
    rels = sorted(d.path.relative_to(d.root.path).as_posix() for d in found.files)
    assert rels == ["api/index.md", "guide.md", "index.md"] and found.languages == ["ja"]
    assert len(find_docs(found.roots[0].path.parent.parent, {"ja"}).files) == 5


def test_a_docs_tree_is_found_by_its_files_not_its_name(tmp_path):
    root = extracted(tmp_path, {
        "guide/index.md": "# Guide\n", "guide/usage.rst": "Usage\n=====\n\ntext\n",
        "guide/notes.txt": "Notes\n=====\n\nreStructuredText in a .txt\n", "guide/data.txt": "1,2,3\n",
        "changelog.d/1234.feature.md": "Added x.\n", "changelog.d/1235.bugfix.md": "Fixed y.\n",
        "src/pkg/__init__.py": "", "src/pkg/README.md": "# pkg\n",
        "pkg2/__init__.py": "", "pkg2/notes.md": "# not docs\n",
    })
    rels = sorted(d.path.relative_to(root).as_posix() for d in find_docs(root).files)
    assert rels == ["guide/index.md", "guide/notes.txt", "guide/usage.rst"]


def test_page_kinds_are_recorded_and_ranked_below_the_docs(tmp_path):
    _, pages, records = build(tmp_path, {
        "doc/en/conf.py": "", "doc/en/index.rst": "Demo\n====\n\nStart here.\n",
        "doc/en/fixtures.rst": "Fixtures reference\n==================\n\n"
                               "A test requests a fixture by naming it as an argument of the test function.\n",
        # pytest's announcements are titled `pytest-8.2.0`: only the set's metadata says what they are
        "doc/en/announce/release-2.0.0.rst": "demo-2.0.0\n==========\n\nThe team is proud to announce 2.0.0.\n\n"
                                             "Fixtures\n--------\n\nA test now requests a fixture by naming it "
                                             "as an argument.\n",
        "doc/en/contributors.rst": "Contributors\n============\n\nAlice, Bob.\n",
        "doc/en/how-to/monkeypatch.rst": "How to monkeypatch/mock modules\n"
                                         "===============================\n\ntext\n",
    })
    kinds = {s: r["extra"].get("kind") for s, r in records.items()}
    assert kinds["doc/en/announce/release-2.0.0.rst"] == "release-notes"
    assert kinds["doc/en/contributors.rst"] == "contributors"
    assert kinds["doc/en/fixtures.rst"] is None
    assert "How to monkeypatch-mock modules" in pages  # a `/` in a title keeps its meaning
    docs = tmp_path / "md"
    # without the kind the release notes rank first here (checked when this test was written)
    r = run_cli("search", "request a fixture by naming it as an argument", "--docs-dir", docs, "--embedder", "none",
                "--json", "-k", "3")
    assert r.returncode == 0, r.stderr
    results = json.loads(r.stdout)["results"]
    assert results[0]["page"] == "Fixtures reference", [x["page"] for x in results]
    # a question about releases still finds the release notes
    r = run_cli("search", "what changed in release 2.0.0", "--docs-dir", docs, "--embedder", "none", "--json", "-k", "3")
    assert json.loads(r.stdout)["results"][0]["page"] == "demo-2.0.0"


def test_lang_option_of_add_rebuilds_with_the_translation(tmp_path):
    from fake_registries import FakeRegistries

    reg = FakeRegistries()
    try:
        reg.add_pypi("demo", "1.0", sdist("demo", "1.0", FASTAPI_LIKE))
        env = {"PIP_INDEX_URL": reg.index_url, "HOME": str(tmp_path), "PIP_CONFIG_FILE": None}
        docs = tmp_path / "md"
        first = run_cli("add", "pypi:demo==1.0", "--docs-dir", docs, "--json", env=env)
        assert first.returncode == 0, first.stderr
        assert "--lang LANG adds them" in first.stderr
        again = run_cli("add", "pypi:demo==1.0", "--docs-dir", docs, "--lang", "ES", "--json", env=env)
        assert json.loads(again.stdout)["status"] == "replaced"  # the same archive, another language
        assert (docs / "demo@1.0" / "Introducción").is_dir()
        meta = yaml.safe_load((docs / "demo@1.0" / "doc4llm-set.yaml").read_text())
        assert meta["package"]["langs"] == ["es"]
        same = run_cli("add", "pypi:demo==1.0", "--docs-dir", docs, "--lang", "es", env=env)
        assert "unchanged" in same.stdout
        bad = run_cli("add", "pypi:demo==1.0", "--docs-dir", docs, "--lang", "../x", env=env)
        assert bad.returncode == 2 and "not a language code" in bad.stderr
    finally:
        reg.close()


def test_myst_includes_bring_the_root_changelog_into_the_docs_once(tmp_path):
    # black's docs: docs/change_log.md is ```{include} ../CHANGES.md```
    _, pages, records = build(tmp_path, {
        "docs/conf.py": 'extensions = ["myst_parser"]\n', "docs/index.md": "# Black\n\nThe formatter.\n",
        "docs/change_log.md": "# Change Log\n\n```{include} ../CHANGES.md\n:start-after: # Change Log\n```\n",
        "docs/usage.md": "# Usage\n\n:::{literalinclude} ../src/demo/cli.py\n:language: python\n:lines: 2\n:::\n",
        "src/demo/__init__.py": "", "src/demo/cli.py": "import sys\ndef main(): ...\n",
        "CHANGES.md": "# Change Log\n\n## 24.8.0\n\n- Fix a crash with fmt: off.\n",
    })
    assert "- Fix a crash with fmt: off." in pages["Change Log"]
    assert sum("Fix a crash" in body for body in pages.values()) == 1  # CHANGES.md is not a page again
    assert "```python\ndef main(): ...\n```" in pages["Usage"]


def test_sync_rebuilds_a_set_built_with_other_languages(tmp_path):
    from doc4llm.ingest.packages.lockfiles import Dependency
    from doc4llm.ingest.packages.sync import plan

    build(tmp_path, {"docs/index.md": "# Home\n"})
    dep = Dependency("pypi", "demo", "1.0")
    assert plan([dep], tmp_path / "md", {})[0].action == "skip"
    assert plan([dep], tmp_path / "md", {}, langs={"es"})[0].action == "replace"


def test_a_long_description_is_titled_by_its_first_heading_only(tmp_path):
    # black's long description: the README (`## Installation`...) then `# Change Log`
    archive = tmp_path / "demo-1.0.tar.gz"
    archive.write_bytes(sdist("demo", "1.0", {}, readme="Badges.\n\n## Installation\n\npip install demo\n\n"
                                                       "# Change Log\n\n## 1.0\n\n- First.\n"))
    add_archive(archive, tmp_path / "md")
    assert (tmp_path / "md" / "demo@1.0" / "demo README").is_dir()


def test_a_docs_page_without_a_title_is_recorded_as_untitled_unless_the_nav_names_it(tmp_path):
    _, _, records = build(tmp_path, {
        "docs/mkdocs.yml": "site_name: Demo\ndocs_dir: src\nnav:\n- Named in the nav: named.md\n- plain.md\n"
                           "- titled.md\n",
        "docs/src/named.md": "Text of a page the nav names.\n",
        "docs/src/plain.md": "Text of a page nobody names.\n\n## Later\n\nMore.\n",
        "docs/src/titled.md": "# Titled page\n\nText.\n",
    })
    untitled = {s: bool(r["extra"].get("untitled")) for s, r in records.items() if s.startswith("docs/src/")}
    assert untitled == {"docs/src/named.md": False, "docs/src/plain.md": True, "docs/src/titled.md": False}
