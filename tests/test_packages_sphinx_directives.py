"""Sphinx directives in package docs (issue 36 item 5): object descriptions keep their
names as headings, autodoc directives are filled from the archive's own API reference."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli
from fake_registries import sdist
from growth import assert_linear

from doc4llm.corpus.sections import parse_page
from doc4llm.ingest.packages.autodoc import ApiLookup, fill_autodoc
from doc4llm.ingest.packages.package_docs import add_archive
from doc4llm.ingest.packages.pages import API, DocPage
from doc4llm.ingest.packages.sphinx_rst import prepare

CONFIG_RST = """\
Configuration Handling
======================

Builtin Configuration Values
----------------------------

.. py:data:: SECRET_KEY

    A secret key that will be used for securely signing the session cookie.

    Default: ``None``

.. confval:: MAX_CONTENT_LENGTH
   :type: int
   :default: ``None``

   The maximum number of bytes read from the request body.

.. class:: App(import_name)

   The application.

   .. method:: route(rule, **options)

      Register a view for a URL rule.

.. option:: -v, --verbose

   Print more.

.. envvar:: DEMO_APP

   The application to load.

.. js:function:: fetchJSON(url)

   Fetch and parse.

.. note::

   .. function:: nested(x)

      Described inside a note.

Documenting a key yourself looks like this::

   .. py:data:: EXAMPLE_ONLY

      An example in a literal block stays as written.
"""

CORE_PY = '''"""Widgets and their makers."""


class Widget:
    """A spinning widget that turns a given number of times."""

    def spin(self, times: int = 1) -> int:
        """Spin `times` times and return the count of full turns."""
        return times

    def stop(self) -> None:
        """Stop spinning at once."""


def make_widget(name: str, *, color: str = "red") -> Widget:
    """Make a widget named `name`, painted `color`, ready to spin."""
    return Widget()
'''

API_RST = """\
API
===

.. module:: demo

Widgets
-------

.. autoclass:: Widget
   :members: spin

demo.make_widget
----------------

.. autofunction:: demo.make_widget

Missing
-------

.. autofunction:: demo.nosuch(x, y=2)

The core module
---------------

.. automodule:: demo.core

Summary
-------

.. autosummary::

   demo.Widget
   make_widget
"""


def build(tmp_path: Path, files: dict[str, str]) -> tuple[Path, dict[str, str]]:
    archive = tmp_path / "demo-1.0.tar.gz"
    archive.write_bytes(sdist("demo", "1.0", files))
    add_archive(archive, tmp_path / "md")
    set_dir = tmp_path / "md" / "demo@1.0"
    return set_dir, {p.name: (p / "docContent.md").read_text() for p in set_dir.iterdir()
                     if (p / "docContent.md").is_file()}


def sections(text: str) -> dict[str, str]:
    lines = text.split("\n")
    return {s.title: "\n".join(lines[s.start - 1:s.end]) for s in parse_page(text).sections}


def test_object_directives_become_headings_that_keep_their_names(tmp_path):
    _, pages = build(tmp_path, {"docs/conf.py": "", "docs/index.rst": CONFIG_RST})
    page = pages["Configuration Handling"]
    secs = sections(page)
    assert "A secret key" in secs["SECRET_KEY"] and "Default: `None`" in secs["SECRET_KEY"]
    assert "### SECRET_KEY" in page and "### MAX_CONTENT_LENGTH" in page  # under "Builtin Configuration Values"
    assert "*Type:* int" in secs["MAX_CONTENT_LENGTH"] and "maximum number of bytes" in secs["MAX_CONTENT_LENGTH"]
    assert "### App" in page and "#### App.route" in page and "route(rule, **options)" in secs["App.route"]
    assert "Register a view" in secs["App.route"]
    assert "Print more." in secs["-v, --verbose"] and "The application to load." in secs["DEMO_APP"]
    assert "``` javascript\nfetchJSON(url)\n```" in secs["fetchJSON"]
    assert "**nested**" in page and "Described inside a note." in page  # no heading inside a quote
    assert "    .. py:data:: EXAMPLE_ONLY" in page and "EXAMPLE_ONLY\n" not in page.replace(":: EXAMPLE_ONLY\n", "")
    r = run_cli("grep", "-w", "MAX_CONTENT_LENGTH", "--docs-dir", tmp_path / "md", "--json")
    assert r.returncode == 0, r.stderr
    hits = json.loads(r.stdout)["matches"]
    assert any(h["heading_path"][-1] == "MAX_CONTENT_LENGTH" for h in hits), hits


def test_autodoc_directives_are_filled_from_the_api_reference(tmp_path):
    _, pages = build(tmp_path, {
        "src/demo/__init__.py": '"""Demo."""\nfrom demo.core import Widget, make_widget\n',
        "src/demo/core.py": CORE_PY,
        "docs/conf.py": "", "docs/index.rst": "Demo\n====\n\n.. toctree::\n\n   api\n", "docs/api.rst": API_RST,
    })
    page = pages["API"]
    secs = sections(page)
    # autoclass under "Widgets": a heading of its own, the listed member only
    assert "### Widget" in page and "A spinning widget" in secs["Widget"]
    assert "#### Widget.spin" in page and "full turns" in secs["Widget.spin"] and "Widget.stop" not in page
    # the section already names the function: the docstring goes under it, no second heading
    assert "Make a widget named" in secs["demo.make_widget"] and "### make_widget" not in page
    assert "def make_widget(name: str, *, color: str = 'red') -> Widget" in secs["demo.make_widget"]
    # nothing to fill from: the name and signature stay
    assert "### demo.nosuch" in page and "demo.nosuch(x, y=2)" in page
    # a module: its docstring
    assert "Widgets and their makers." in secs["The core module"] or "Widgets and their makers." in page
    assert "- `demo.Widget`: A spinning widget that turns a given number of times." in page
    assert "- `make_widget`: Make a widget named" in page
    assert "doclm-" not in page and "autoclass" not in page


def api_page(module: str, body: str) -> DocPage:
    return DocPage(f"{module} (API)", body, f"{module}.py", f"api:{module}", API)


def test_lookup_follows_reexports_and_short_names():
    lookup = ApiLookup([
        api_page("pkg", "Package.\n\n## Names exported here\n\n- `Thing`: defined in `pkg.things`"),
        api_page("pkg.things", "## Thing\n\n```python\nclass Thing\n    # Thing(x)\n```\n\nA thing.\n\n"
                               "### Thing.go\n\nGo.\n"),
    ])
    assert lookup.find("pkg.Thing")[0] == "pkg.things.Thing"  # a re-export
    assert lookup.find("Thing", "pkg")[0] == "pkg.things.Thing"  # currentmodule
    assert lookup.find("other.Thing.go")[0] == "pkg.things.Thing.go"  # the same object elsewhere
    assert lookup.find("nothing.here") is None
    md = "## Things\n\n``` doclm-autodoc\nkind=class\nname=pkg.Thing\nmodule=\nmembers=*\nlevel=3\nenclosing=Things\n```\n"
    out = fill_autodoc(md, lookup)
    assert "### Thing\n" in out and "#### Thing.go" in out and "    # Thing(x)" in out  # fences untouched


def test_the_directive_passes_are_linear():
    unit = (".. py:data:: KEY_{i}\n\n   Body of {i}.\n\n.. autofunction:: pkg.f{i}(x)\n\n"
            ".. option:: --opt-{i}\n\n   Text.\n\n")

    def make(n: int) -> str:
        return "T\n=\n\n" + "".join(unit.format(i=i) for i in range(n))
    assert_linear(prepare, make, 2000, what="sphinx_rst.prepare")
    lookup = ApiLookup([api_page("pkg", "".join(f"## f{i}\n\nDoc {i}.\n\n" for i in range(3000)))])

    def filled(n: int) -> str:
        return "".join(f"``` doclm-autodoc\nkind=function\nname=pkg.f{i}\nmodule=\nlevel=2\nenclosing=\n```\n\n"
                       for i in range(n))
    assert_linear(lambda md: fill_autodoc(md, lookup), filled, 700, what="fill_autodoc")
