"""What the index (and a query) makes of a word: code is split and kept whole, prose is
stemmed as written."""

from __future__ import annotations

import pytest

from doc4llm.index.tokenize import is_identifier, tokens


@pytest.mark.parametrize(("word", "want"), [
    ("APIs", ["api"]),  # a plural acronym is one word: not `AP` + `Is`
    ("URLs", ["url"]),
    ("IDs", ["id"]),
    ("Hello", ["hello"]),
    ("HTTP/2", ["http", "2"]),
])
def test_prose_words_keep_their_letters_together(word, want):
    assert not is_identifier(word)
    assert tokens(word) == want


@pytest.mark.parametrize(("word", "whole"), [
    ("CORSMiddleware", "corsmiddleware"),  # an acronym run into a word is a name in code
    ("JSONResponse", "jsonresponse"),
    ("SQLite", "sqlite"),
    ("url_path_for", "url_path_for"),
    ("fs.readFile", "fs_readfile"),
])
def test_identifiers_are_indexed_whole_and_in_parts(word, whole):
    assert is_identifier(word)
    toks = tokens(word)
    assert toks[0] == whole and len(toks) > 1


def test_a_query_in_lower_case_meets_the_name_as_the_docs_write_it():
    """`sqlite` and `apis` typed in lower case find `SQLite` and `APIs`: before, the docs'
    words were only their fragments (`sq lite`, `ap`)."""
    assert set(tokens("sqlite")) <= set(tokens("Stored in SQLite"))
    assert set(tokens("apis")) <= set(tokens("Public APIs"))
    assert set(tokens("CORSMiddleware")) <= set(tokens("Add the CORSMiddleware"))
