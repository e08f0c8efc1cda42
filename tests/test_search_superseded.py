"""Deprecated and legacy API entries rank behind what replaces them (search/superseded.py),
on a set built by `add` from a local sdist and searched lexically."""

from __future__ import annotations

import pytest
from fake_registries import tar_gz

from doc4llm.ingest.packages.package_docs import add_archive
from doc4llm.search.engine import Searcher

MAIN = '''
import warnings
from typing_extensions import deprecated


class BaseModel:
    """The base class of models."""

    def model_dump(self, *, include=None, exclude=None):
        """Generate a representation of the model, optionally with only some fields."""

    @deprecated("The `dict` method is deprecated; use `model_dump` instead.")
    def dict(self, *, include=None, exclude=None):
        """Convert the model to a dict."""

    def json(self):
        """Convert the model to JSON text."""
        warnings.warn("`json` is going away", DeprecationWarning)

    def model_dump_json(self):
        """Convert the model to JSON text."""

    @deprecated("Use `to_plain` instead.")
    def as_mapping(self):
        """Turn the record into a mapping of keys."""

    def to_plain(self):
        """Produce builtin containers."""
'''
V1 = '''
class BaseModel:
    """The v1 base class."""

    def dict(self):
        """Convert the model to a dict, the v1 way."""
'''


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("superseded")
    archive = tmp / "pkg-2.0.0.tar.gz"
    archive.write_bytes(tar_gz({
        "pkg-2.0.0/PKG-INFO": "Metadata-Version: 2.1\nName: pkg\nVersion: 2.0.0\n\nA package.\n",
        "pkg-2.0.0/pkg/__init__.py": "",
        "pkg-2.0.0/pkg/main.py": MAIN,
        "pkg-2.0.0/pkg/v1/__init__.py": "",
        "pkg-2.0.0/pkg/v1/main.py": V1,
    }))
    docs = tmp / "docs"
    docs.mkdir()
    add_archive(archive, docs)
    s = Searcher(docs, embedder="none", quiet=True)
    yield s
    s.close()


def titles(res: dict) -> list[str]:
    return [" > ".join(r["heading_path"]) for r in res["results"]]


def test_the_named_replacement_ranks_above_the_deprecated_member(searcher):
    got = titles(searcher.search("convert a model to a dict", k=5))
    dump = got.index("pkg.main (API) > BaseModel > BaseModel.model_dump")
    assert dump < got.index("pkg.main (API) > BaseModel > BaseModel.dict"), got
    assert all("pkg.v1" not in t for t in got[:2]), got  # the legacy namespace steps back too


def test_a_replacement_that_retrieval_missed_joins_above_the_deprecated_member(searcher):
    res = searcher.search("turn the record into a mapping", k=5)
    got = titles(res)
    assert got[:2] == ["pkg.main (API) > BaseModel > BaseModel.to_plain",
                       "pkg.main (API) > BaseModel > BaseModel.as_mapping"], got


def test_a_deprecated_member_without_a_named_replacement_steps_back_from_close_ones(searcher):
    res = searcher.search("convert the model to JSON text", k=5, explain=True)
    got = titles(res)
    assert got.index("pkg.main (API) > BaseModel > BaseModel.model_dump_json") < \
        got.index("pkg.main (API) > BaseModel > BaseModel.json"), got
    demoted = next(r for r in res["results"] if r["heading_path"][-1] == "BaseModel.json")
    assert "superseded" in str(demoted)


def test_asking_for_the_deprecated_member_or_about_deprecations_finds_it_first(searcher):
    assert titles(searcher.search("BaseModel.dict", k=3))[0].endswith("BaseModel > BaseModel.dict")
    got = titles(searcher.search("which model methods are deprecated, dict?", k=3))
    assert got[0] == "pkg.main (API) > BaseModel > BaseModel.dict", got
    got = titles(searcher.search("convert a v1 model to a dict", k=3))
    assert got[0].startswith("pkg.v1.main (API)") or got[0].endswith("BaseModel.dict"), got


def test_replacement_named_in_prose_and_differing_only_in_case():
    from doc4llm.search.analyze import analyze
    from doc4llm.search.fusion import Candidate
    from doc4llm.search.superseded import step_behind_replacements

    rows = {
        1: {"page_id": 7, "set_name": "django@5.0", "title": "SimpleTestCase.assertQuerysetEqual",
            "text": "### SimpleTestCase.assertQuerysetEqual\n\n**Deprecated:** assertQuerysetEqual() is "
                    "deprecated in favor of assertQuerySetEqual().\n"},
        2: {"page_id": 7, "set_name": "django@5.0", "title": "SimpleTestCase.assertQuerySetEqual",
            "text": "### SimpleTestCase.assertQuerySetEqual\n\nAssert that a queryset matches.\n"},
    }
    head = [Candidate(1, score=5.0), Candidate(2, score=3.0)]
    step_behind_replacements(analyze("compare a queryset with a list of values"), head, rows)
    assert head[1].score > head[0].score  # the replacement now ranks just above
    head = [Candidate(1, score=5.0), Candidate(2, score=3.0)]
    step_behind_replacements(analyze("assertQuerysetEqual"), head, rows)  # asked by name
    assert head[0].score == 5.0 and head[1].score == 3.0
