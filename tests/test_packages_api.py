"""The API reference of a package archive (issue 36 item 4, issue 33 items 15 and 21):
what is read (no tests, vendored projects, locale data, migrations), the real `__all__`
over stubs, one unreadable module skipped alone, docstrings as markdown, deprecated
members marked, legacy namespaces noted, every `.d.ts` export form, deep namespaces."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_tree as write
from growth import assert_linear

from doc4llm.ingest.packages.api_python import python_api_pages
from doc4llm.ingest.packages.api_typescript import typescript_api_pages
from doc4llm.ingest.packages.docstring_md import docstring_markdown


def pages_of(root: Path, name: str = "pkg", version: str | None = "2.0.0") -> tuple[dict[str, str], list[str]]:
    warnings: list[str] = []
    pages = python_api_pages(root, name, warnings, version)
    return {p.title: p.body for p in pages}, warnings


SDIST = {
    "PKG-INFO": "Name: pkg\nVersion: 2.0.0\n",
    "setup.py": "raise SystemExit('never run')\n",
    "src/pkg/__init__.py": (
        '"""The package."""\nfrom . import core\nfrom .core import *\n'
        "__all__ = ['VERSION']\n__all__ += core.__all__\n__all__.extend(['extra'])\n__all__.remove('hidden')\n"
        "VERSION = '2.0.0'\n"),
    "src/pkg/core.py": (
        "__all__ = ['isclose', 'trapz', 'hidden']\n"
        "def isclose(a, b, rtol=1e-05):\n    '''Returns whether two values are close.'''\n"
        "def trapz(y):\n    '''Integrate along the given axis.'''\n"
        "def hidden():\n    '''Not re-exported by the top package.'''\n"),
    # the stub declares `__all__` without a value: it must not empty the real one
    "src/pkg/core.pyi": "__all__: list[str]\ndef isclose(a: float, b: float, rtol: float = ...) -> bool: ...\n",
    "src/pkg/testing/__init__.py": "def assert_close(a, b):\n    '''Public test helper.'''\n",
    "src/pkg/testing/tests/__init__.py": "",
    "src/pkg/testing/tests/test_helpers.py": "def test_x():\n    pass\n",
    "src/pkg/tests/__init__.py": "",
    "src/pkg/tests/test_core.py": "def test_isclose():\n    pass\n",
    "src/pkg/conf/__init__.py": "SETTING = 1\n'''A setting.'''\n",
    **{f"src/pkg/conf/locale/{lang}/__init__.py": "" for lang in ("en", "de", "fr", "pt_BR", "zh_Hans")},
    **{f"src/pkg/conf/locale/{lang}/formats.py": "DATE_FORMAT = 'j N Y'\n'''Format.'''\n"
       for lang in ("en", "de", "fr", "pt_BR", "zh_Hans")},
    "src/pkg/db/__init__.py": "",
    "src/pkg/db/migrations/__init__.py": "",
    "src/pkg/db/migrations/0001_initial.py": "class Migration:\n    '''A migration.'''\n",
    "src/pkg/db/models.py": "class Model:\n    '''A database model.'''\n",
    "src/pkg/_vendor/__init__.py": "",
    "src/pkg/_vendor/other/__init__.py": "def vendored():\n    '''Vendored.'''\n",
    "src/pkg/extern/__init__.py": "def also_vendored():\n    '''Vendored too.'''\n",
    "src/pkg/examples/__init__.py": "def example():\n    '''Example.'''\n",
    "src/pkg/core_setup/__init__.py": "",
    "src/pkg/core_setup/setup.py": "def configuration():\n    '''numpy.distutils configuration.'''\n",
    "src/pkg/v1/__init__.py": "'''The v1 API.'''\nfrom .main import BaseModel\n",
    "src/pkg/v1/main.py": "class BaseModel:\n    '''A v1 model.'''\n    def dict(self):\n        '''As a dict.'''\n",
    # a vendored copy of another project (own metadata), as numpy's vendored-meson
    "vendored-thing/thing/pyproject.toml": "[project]\nname = 'thing'\n",
    "vendored-thing/thing/mesonish/__init__.py": "def build():\n    '''Vendored build tool.'''\n",
    # a test tree beside the package, as celery's t/unit and t/integration
    "t/__init__.py": "",
    "t/skip.py": "def if_pypy():\n    '''Skip helper.'''\n",
    "t/unit/__init__.py": "",
    "t/unit/conftest.py": "",
    "t/unit/test_app.py": "def test_app():\n    pass\n",
    "t/integration/__init__.py": "",
    "t/integration/test_canvas.py": "def test_canvas():\n    pass\n",
    "benchmarks/bench_core.py": "def time_it():\n    pass\n",
    # a second top package that is all `__init__` beside its tests, as setuptools' pkg_resources
    "pkg_resources/__init__.py": "def require(*specs):\n    'Ensure that distributions are available.'\n"
                                 + "# filler\n" * 400,
    "pkg_resources/tests/__init__.py": "",
    "pkg_resources/tests/test_resources.py": "def test_require():\n    pass\n",
}


def test_only_the_package_api_is_read(tmp_path):
    pages, warnings = pages_of(write(tmp_path, SDIST))
    titles = set(pages)
    assert {"pkg (API)", "pkg.core (API)", "pkg.testing (API)", "pkg.conf (API)", "pkg.db.models (API)",
            "pkg_resources (API)"} <= titles
    for bad in ("tests", "locale", "migrations", "_vendor", "extern", "examples", "mesonish", "t.", "t (",
                "setup", "bench"):
        assert not any(bad in t for t in titles), (bad, sorted(titles))
    assert not any("VERSION" in w and "skipped" in w for w in warnings)


def test_real_all_wins_over_stub_and_is_built_in_steps(tmp_path):
    pages, _ = pages_of(write(tmp_path, SDIST))
    core = pages["pkg.core (API)"]
    assert "## isclose" in core and "## trapz" in core
    assert "def isclose(a: float, b: float, rtol: float = 1e-05) -> bool" in core  # the stub's types merged
    top = pages["pkg (API)"]
    assert "- `isclose`: defined in `pkg.core`. Returns whether two values are close." in top
    assert "`trapz`" in top and "`hidden`" not in top  # `__all__.remove('hidden')` applied after `+=`


def test_legacy_namespace_is_said_on_its_pages(tmp_path):
    pages, _ = pages_of(write(tmp_path, SDIST), version="2.0.0")
    assert pages["pkg.v1.main (API)"].startswith("> **Legacy API:** `pkg.v1` is the v1 API that pkg 2.0.0 keeps")
    assert "Legacy" not in pages["pkg.core (API)"]
    same, _ = pages_of(tmp_path, version="1.5")  # v1 of a 1.x release is the current API
    assert "Legacy" not in same["pkg.v1.main (API)"]


def test_one_unreadable_module_is_skipped_alone_and_said_once(tmp_path):
    write(tmp_path, {
        "pkg/__init__.py": "print 'python 2'\n",  # the package's own __init__ cannot be parsed
        "pkg/good.py": "def ok():\n    '''Fine.'''\n",
        "pkg/bad.py": "def broken(:\n",
        "pkg/worse.py": "x = " + "(" * 300 + ")" * 300 + "\n",  # too deeply nested for the parser
        "pkg/sub/__init__.py": "def deep():\n    '''Also fine.'''\n",
    })
    pages, warnings = pages_of(tmp_path)
    assert "## ok" in pages["pkg.good (API)"] and "## deep" in pages["pkg.sub (API)"]
    skipped = [w for w in warnings if "skipped" in w]
    assert len(skipped) == 1, warnings
    assert "3 module(s)" in skipped[0] and "pkg.bad (syntax error)" in skipped[0] and "pkg (syntax error)" in skipped[0]


def test_of_two_copies_of_a_package_the_python3_one_is_read(tmp_path):
    write(tmp_path, {
        "lib/yaml/__init__.py": "def load(stream):\n    'Load.'\n",
        "lib/yaml/reader.py": "print 'python 2 only'\n",
        "lib3/yaml/__init__.py": "def load(stream):\n    'Load YAML.'\n",
        "lib3/yaml/reader.py": "class Reader:\n    'Read.'\n",
    })
    pages, warnings = pages_of(tmp_path, "pyyaml")
    assert "Load YAML." in pages["yaml (API)"] and "yaml.reader (API)" in pages
    assert not any("skipped" in w for w in warnings)


def test_cap_keeps_public_shallow_reexported_modules(tmp_path, monkeypatch):
    import doc4llm.ingest.packages.api_python as api

    files = {"pkg/__init__.py": "from .api import thing\n", "pkg/api.py": "def thing():\n    '''T.'''\n"}
    for i in range(6):
        files[f"pkg/deep{i}/__init__.py"] = "'''Deep.'''\n"  # documented: depth decides
        files[f"pkg/deep{i}/inner/__init__.py"] = "'''Inner.'''\n"
        files[f"pkg/deep{i}/inner/mod.py"] = f"def f{i}():\n    '''F.'''\n"
    monkeypatch.setattr(api, "MAX_MODULES", 4)
    pages, warnings = pages_of(write(tmp_path, files))
    assert "pkg.api (API)" in pages and "pkg (API)" in pages
    assert not any(".inner" in t for t in pages)
    assert any("4 of 20 modules documented (the cap is 4)" in w for w in warnings), warnings


DEPRECATED = '''
import warnings
import typing_extensions
from typing_extensions import deprecated

class Model:
    """A model."""

    def model_dump(self):
        """Dump the model to a dict."""

    @typing_extensions.deprecated('The `dict` method is deprecated; use `model_dump` instead.', category=None)
    def dict(self):
        warnings.warn('The `dict` method is deprecated; use `model_dump` instead.', category=DeprecatedSince20)
        return self.model_dump()

    def json(self):
        """As JSON."""
        warnings.warn("`json` is deprecated, use `model_dump_json`", DeprecationWarning, stacklevel=2)

    def copy(self, update=None):
        """Copy; one argument is deprecated, not the method."""
        if update is not None:
            warnings.warn("`update` is deprecated", DeprecationWarning)

    def schema(self):
        """The schema.

        .. deprecated:: 2.0
           Use `model_json_schema` instead.
        """

@deprecated("Use Model instead")
class OldModel:
    """An old model."""

def old_function():
    """Deprecated alias of `new_function`."""

@util.deprecated("1.4", "The `old_query` function is deprecated; use `new_query`.")
def old_query():
    """Query the old way."""
'''


def test_deprecated_members_say_so_first(tmp_path):
    pages, _ = pages_of(write(tmp_path, {"pkg/__init__.py": DEPRECATED}))
    body = "\n" + pages["pkg (API)"]

    def section(title: str) -> str:
        start = body.index(f"\n{title}\n")
        return body[start + len(title) + 2:].split("\n#", 1)[0].strip()

    assert section("### Model.dict").startswith("**Deprecated:** The `dict` method is deprecated; use `model_dump`")
    assert section("### Model.json").startswith("**Deprecated:** `json` is deprecated, use `model_dump_json`")
    assert section("### Model.schema").startswith("**Deprecated:** since 2.0: Use `model_json_schema` instead.")
    assert "*Deprecated since version 2.0*" in section("### Model.schema")
    assert section("## OldModel").startswith("**Deprecated:** Use Model instead")
    assert section("## old_function").startswith("**Deprecated.**")
    assert section("## old_query").startswith("**Deprecated:** since 1.4: The `old_query` function is deprecated")
    for current in ("### Model.model_dump", "### Model.copy", "## Model"):
        assert "Deprecated" not in section(current).split("\n", 1)[0], current


@pytest.mark.parametrize("doc, want, absent", [
    ("See :meth:`Schema.load` and :class:`~marshmallow.fields.Field`.",
     ["See `Schema.load` and `Field`."], [":meth:", ":class:"]),
    ("Use `RAISE <marshmallow.utils.RAISE>` or :func:`loads <json.loads>`.", ["Use `RAISE` or `loads`."], ["<"]),
    ("Read :ref:`the guide <guide>`, :pep:`8`, ``code``, `Jinja <https://jinja.org>`_.",
     ["Read the guide, PEP 8, `code`, [Jinja](https://jinja.org)."], [":ref:", ":pep:"]),
    ("Example::\n\n    x = f(1)\n    y = 2\n\nAfter.", ["Example:\n\n```\nx = f(1)\ny = 2\n```", "After."], ["::"]),
    ("Run it:\n\n>>> f(1)\n2\n", ["```python\n>>> f(1)\n2\n```"], []),
    (".. note::\n   Be careful with :attr:`x`.\n\n.. seealso:: :func:`other`",
     ["> **Note:** Be careful with `x`.", "> **See also:** `other`"], [".. "]),
    (".. versionadded:: 1.2\n\n.. versionchanged:: 2.0\n   Takes a list.",
     ["*New in version 1.2*", "*Changed in version 2.0* Takes a list."], [".. "]),
    (".. code-block:: python\n\n   import pkg\n", ["```python\nimport pkg\n```"], ["code-block"]),
    ("Title\n=====\n\nterm\n    Its definition.\n", ["**Title**", "- **term**\n  Its definition."], ["====="]),
    ('!!! note "Heads up"\n    Indented note body.\n', ["> **Heads up**", "> Indented note body."], ["    Indented"]),
    ("Markdown:\n\n```py\n:meth:`kept` in code\n```\n", ["```py\n:meth:`kept` in code\n```"], []),
    ("# not a heading", ["\\# not a heading"], []),
    ("======================  ==========\nScalar                  Array\n======================  ==========\n"
     ":class:`pandas.Period`  :class:`~pandas.arrays.PeriodArray`\n======================  ==========\n",
     ["```\n======================  ==========\nScalar                  Array\n", "pandas.Period           PeriodArray"],
     [":class:"]),
    ("A :ref:`(connect timeout,\n    read timeout) <timeouts>` tuple.", ["A (connect timeout, read timeout) tuple."],
     [":ref:"]),
    ("- UPDATE with LIMIT::\n\n    UPDATE t LIMIT 10\n\n  .. seealso:: :class:`Update`\n\n- next",
     ["- UPDATE with LIMIT:\n\n  ```\n  UPDATE t LIMIT 10\n  ```\n\n  > **See also:** `Update`"], ["::"]),
])
def test_docstring_markup_becomes_markdown(doc, want, absent):
    md = docstring_markdown(doc).markdown
    for w in want:
        assert w in md, (w, md)
    for a in absent:
        assert a not in md.replace("```py\n:meth:`kept`", ""), (a, md)


def test_docstring_sections_become_lists():
    numpy = ("Compare arrays.\n\nParameters\n----------\na : array_like\n    Input, see :func:`numpy.asarray`.\n"
             "rtol : float, optional\n    Relative tolerance.\n\nReturns\n-------\nout : ndarray\n    The result.\n\n"
             "See Also\n--------\nallclose : All of them.\nmath.isclose\n\nExamples\n--------\n>>> isclose(1, 1)\nTrue\n")
    md = docstring_markdown(numpy).markdown
    assert "**Parameters:**\n\n- `a` (`array_like`): Input, see `numpy.asarray`.\n- `rtol` (`float`): Relative tolerance." in md
    assert "**Returns:**\n\n- `out` (`ndarray`): The result." in md
    assert "- `allclose`: All of them.\n- `math.isclose`" in md
    assert "```python\n>>> isclose(1, 1)\nTrue\n```" in md
    google = ("Fetch rows.\n\nArgs:\n    table (str): The table, see :class:`Table`.\n    keys: The keys\n"
              "        to fetch.\n\nReturns:\n    dict: The rows.\n\nRaises:\n    IOError: When it fails.\n")
    md = docstring_markdown(google).markdown
    assert "- `table` (`str`): The table, see `Table`." in md and "- `keys`: The keys\n  to fetch." in md
    assert "**Raises:**\n\n- `IOError`: When it fails." in md
    sphinx = ("Load data.\n\n:param data: The data, a :class:`dict`.\n:type data: dict\n"
              ":returns: The object.\n:raises ValidationError: If invalid.\n")
    md = docstring_markdown(sphinx).markdown
    assert "- `data` (`dict`): The data, a `dict`." in md and ":param" not in md and ":class:" not in md
    # a field the parsers leave in the text (pytest's `:kwparam TYPE NAME:`): the name, then its type
    md = docstring_markdown("Assert it raises.\n\n:kwparam str | re.Pattern[str] | None match:\n"
                            "    If specified, a regular expression.\n").markdown
    assert "- `match` (`str | re.Pattern[str] | None`): If specified" in md and "kwparam" not in md


@pytest.mark.parametrize("make", [
    lambda n: "`a " * n,  # unpaired backticks
    lambda n: ":meth:`" + " " * n + "x <" + " " * n,  # a role title of spaces, never closed
    lambda n: "".join("   " * i + ".. note::\n" for i in range(min(n, 400))) + "x " * n,  # nested directives
    lambda n: "term\n    def\n" * n,
    lambda n: "text::\n\n" + "    code\n" * n,
])
def test_docstring_conversion_is_linear(make):
    assert_linear(lambda text: docstring_markdown(text), make, 2000, what="docstring_markdown")


DTS = {
    "package.json": '{"name": "demo", "version": "1.0.0", "types": "./index.d.ts"}',
    "index.d.ts": (
        'export * from "./lib";\nexport { helper as aliasHelper } from "./lib/helper";\nexport as namespace Demo;\n'),
    "lib/index.d.ts": (
        "/** Base of every schema. */\n"
        "export declare abstract class ZodType<O> {\n    /** Parse it. */\n    parse(data: unknown): O;\n}\n"
        "export declare class ZodString extends ZodType<string> {\n"
        "    /** @deprecated use `z.email()` */\n    email(): ZodString;\n}\n"
        "export declare const string: () => ZodString;\n"
        "export declare function object(shape: unknown): ZodObject;\n"
        "export declare enum Kind { A, B }\n"
        "export declare namespace util {\n    function assert(x: unknown): void;\n}\n"
        "export interface ZodObject { shape: unknown }\n"
        "export declare type Infer<T> = T;\n"
        "/** @deprecated Use `string()`. */\n"
        "export declare function str(): ZodString;\n"
        "declare class Internal {}\n"
        "/** Listed below. */\n"
        "declare function listed(): void;\n"
        "declare const value: number;\n"
        "export { listed, value as renamed };\n"
        "export default string;\n"),
    "lib/helper.d.ts": "export declare function helper(): void;\n",
    "cjs.d.ts": ("declare namespace lib {\n    interface Options { x: number }\n    function create(): void;\n}\n"
                 "declare function lib(o: lib.Options): void;\nexport = lib;\n"),
    "global.d.ts": "declare function globalThing(): void;\ninterface Window { demo: string }\n",
    "index.d.cts": "export * from './lib';\n",  # the CommonJS twin of index.d.ts: not a page
    "lib/benchmarks/string.d.ts": "export declare function bench(): void;\n",
    "lib/__tests__/mock.d.ts": "export declare function mock(): void;\n",
}


def test_every_dts_export_form_is_documented(tmp_path):
    warnings: list[str] = []
    pages = {p.source: p.body for p in typescript_api_pages(write(tmp_path, DTS), warnings)}
    assert set(pages) == {"index.d.ts", "lib/index.d.ts", "lib/helper.d.ts", "cjs.d.ts", "global.d.ts"}
    assert list(pages)[:2] == ["index.d.ts", "lib/index.d.ts"]  # the entry point, then what it re-exports
    lib = pages["lib/index.d.ts"]
    heads = [ln for ln in lib.split("\n") if ln.startswith("#")]
    for name in ("## ZodType", "## ZodString", "## string", "## object", "## Kind", "## util.assert", "## ZodObject",
                 "## Infer", "## str", "## listed", "## renamed", "### ZodType.parse", "### ZodString.email"):
        assert name in heads, (name, heads)
    assert "## Internal" not in heads  # module-private
    assert "*Default export.*" in lib.split("## string", 1)[1].split("\n## ", 1)[0]
    assert "*Declared as `value`.*" in lib
    assert lib.split("## str\n\n", 1)[1].startswith("**Deprecated:** Use `string()`.")
    assert lib.split("### ZodString.email\n\n", 1)[1].startswith("**Deprecated:** use `z.email()`")
    top = pages["index.d.ts"]
    assert '`export * from "./lib";`: defined in `lib/index.d.ts`' in top and "lib/helper.d.ts" in top
    assert "Demo" not in top
    cjs = pages["cjs.d.ts"]
    assert "## lib" in cjs and "## lib.create" in cjs and "## lib.Options" in cjs and "`export =`" in cjs
    assert "## globalThing" in pages["global.d.ts"] and "## Window" in pages["global.d.ts"]


LODASH_STYLE = {
    "package.json": '{"name": "@types/lodashish", "version": "1.0.0", "types": "index.d.ts"}',
    "index.d.ts": ('import "./common/number";\nexport = _;\nexport as namespace _;\n'
                   "declare const _: _.LoDashStatic;\ndeclare namespace _ {\n    interface LoDashStatic {}\n}\n"),
    "common/number.d.ts": ('import _ = require("../index");\ndeclare module "../index" {\n'
                           "    interface LoDashStatic {\n        /**\n         * Clamps `number` within bounds.\n"
                           "         * @param number The number to clamp.\n         */\n"
                           "        clamp(number: number, lower: number, upper: number): number;\n"
                           "        /** @see _.clamp */\n        clamp(number: number, upper: number): number;\n    }\n}\n"
                           "declare global {\n    interface Window {\n        /** The lodash global. */\n"
                           "        _: unknown;\n    }\n}\n"),
    "clamp.d.ts": 'import { clamp } from "./index";\nexport = clamp;\n',
}


def test_module_augmentations_are_documented_and_one_name_passed_on_makes_no_page(tmp_path):
    """@types/lodash declares every function in `declare module "../index" { interface
    LoDashStatic { ... } }` and has a file per function that only re-exports it: the
    augmentation's members are the API; the one-line files were 300 empty pages."""
    pages = {p.source: p.body for p in typescript_api_pages(write(tmp_path, LODASH_STYLE), [])}
    assert set(pages) == {"index.d.ts", "common/number.d.ts"}
    number = pages["common/number.d.ts"]
    assert "### LoDashStatic.clamp\n\nClamps `number` within bounds." in number
    assert number.count("### LoDashStatic.clamp") == 1 and "clamp(number: number, upper: number)" in number
    # the declaration shows the shape; the members' JSDoc is in their own sections only once
    assert number.count("Clamps `number` within bounds.") == 1
    assert "### Window._" in number  # `declare global` is public too


def test_augmentations_nested_deeply_stop_at_the_depth_limit(tmp_path):
    write(tmp_path, {"index.d.ts": 'import x = require("y");\n' + 'declare module "m" {\n' * 50
                     + "interface I { /** d */ a: 1 }\n" + "}\n" * 50})
    warnings: list[str] = []
    typescript_api_pages(tmp_path, warnings)
    assert any("nested deeper than" in w for w in warnings)


def deep_namespaces(n: int) -> str:
    return "export namespace A {\n" * n + "export const x = 1;\n" + "}\n" * n


def test_deeply_nested_namespaces_take_linear_time_and_say_where_they_stop(tmp_path):
    write(tmp_path, {"index.d.ts": deep_namespaces(5000)})
    warnings: list[str] = []
    pages = typescript_api_pages(tmp_path, warnings)  # RecursionError before
    assert any("nested deeper than" in w and "index.d.ts" in w for w in warnings)
    assert not pages or "A.A.A.A.A.A.A.A.A.x" not in pages[0].body

    def run(n: int) -> Path:
        d = tmp_path / f"n{n}"
        write(d, {"index.d.ts": deep_namespaces(n)})
        return d

    assert_linear(lambda d: typescript_api_pages(d, []), run, 1500, what="nested namespaces")


DECORATED = {
    "PKG-INFO": "Name: pkg\nVersion: 2.0.0\n",
    "src/pkg/__init__.py": '"""The package."""\nfrom .frame import Frame, Other\n__all__ = ["Frame", "Other"]\n',
    "src/pkg/_shared.py": "_shared_docs: dict[str, str] = {}\n_kwargs = {'klass': 'Frame', 'axes': 'rows'}\n",
    "src/pkg/_decorators.py": ("def Appender(text, indents=0):\n    return lambda f: f\n"
                               "def Substitution(*a, **k):\n    return lambda f: f\n"
                               "def doc(*a, **k):\n    return lambda f: f\n"
                               "def register(*a, **k):\n    return lambda f: f\n"),
    "src/pkg/frame.py": (
        "from textwrap import dedent\n"
        "from ._decorators import Appender, Substitution, doc, register\nfrom ._shared import _shared_docs, _kwargs\n"
        '_merge_doc = """\nMerge %(klass)s objects with a database-style join on columns or indexes.\n"""\n'
        'class Other:\n    """Other holds values to fill a frame with, one per column."""\n'
        "    def fill(self):\n        \"\"\"Fill missing values of the {klass} with a given value or method.\"\"\"\n"
        "class Frame:\n"
        '    _shared_docs["pivot"] = """\n        Return the frame reshaped by the given index and column values.\n        """\n'
        "    @Substitution(klass='Frame')\n    @Appender(_merge_doc, indents=2)\n    def merge(self, right):\n        pass\n"
        "    @Appender(_shared_docs['pivot'])\n    def pivot(self, index, columns):\n        pass\n"
        "    @doc(Other.fill, klass='Frame')\n    def fillna(self, value):\n        pass\n"
        "    @Appender(dedent('''\n        Examples\n        --------\n        >>> frame.group('key').sum()  # sums\n        '''))\n"
        "    @Appender('Group the %(axes)s of the frame by a key and combine the results.' % _kwargs)\n"
        "    def group(self, by):\n        pass\n"
        "    @Appender('/x')\n    def route(self):\n        pass\n"
        "    @register(Other)\n    def handler(self):\n        pass\n"
        "    @Appender('/api/v1/users/<int:user_id>/settings/notifications')\n    def long_route(self):\n        pass\n"
        "    @Appender(f'{_merge_doc} runs code')\n    def fstring(self):\n        pass\n"),
}


def test_docstrings_that_decorators_supply_are_read_without_running_anything(tmp_path):
    """pandas documents DataFrame.merge, pivot and groupby through decorators (`@Appender`,
    `@Substitution`, `@doc`): their text comes from string literals, a dict item assigned
    in a class body, another function's docstring, `dedent(...)` and `% kwargs`; a short
    string (a route) and an f-string are not documentation."""
    pages, _ = pages_of(write(tmp_path, DECORATED))
    frame = next(body for title, body in pages.items() if "frame" in title)
    section = {s.split("\n", 1)[0]: s for s in frame.split("\n### ")}

    def text(name: str) -> str:
        return next(v for k, v in section.items() if k.strip() == f"Frame.{name}")

    assert "Merge Frame objects with a database-style join" in text("merge")  # %(klass)s filled
    assert "Return the frame reshaped by the given index and column values." in text("pivot")
    assert "Fill missing values of the Frame with a given value" in text("fillna")  # {klass} filled
    group = text("group")
    assert group.index("Group the rows of the frame by a key") < group.index("Examples")  # bottom-up
    assert "/x" not in text("route").split("```", 2)[-1]
    assert "settings" not in text("long_route").split("```", 2)[-1]
    # a decorator that registers a function for a documented class does not document it
    assert "Other" not in text("handler").split("```", 2)[-1]
    assert "runs code" not in text("fstring")
