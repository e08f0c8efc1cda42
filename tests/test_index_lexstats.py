"""Corpus statistics (index/lexstats.py) and the set-filter shortcut of the levels: the
same numbers and the same hits whether the chosen sets are the whole index or not, and
caches that follow the index when it changes."""

from __future__ import annotations

import pytest
from test_search_helpers import CLAUDE, OPENCODE, make_upstream

from doc4llm.index import build, lexstats
from doc4llm.search import levels
from doc4llm.search.analyze import analyze


@pytest.fixture
def conn(tmp_path):
    docs = make_upstream(tmp_path / "docs")
    c, _ = build.sync(docs, full=True)
    yield c
    c.close()


def join_df(conn, token: str, sets: list[str]) -> int:
    marks = ",".join("?" * len(sets))
    return conn.execute(f"SELECT count(*) FROM sec_fts JOIN sections s ON s.id = sec_fts.rowid"
                        f" WHERE sec_fts MATCH ? AND s.set_name IN ({marks})", [f'"{token}"', *sets]).fetchone()[0]


def test_counts_equal_the_filtered_counts(conn):
    both = [CLAUDE, OPENCODE]
    assert lexstats.whole_index(conn, both) and not lexstats.whole_index(conn, [CLAUDE])
    assert not lexstats.whole_index(conn, [])
    for sets in (both, [CLAUDE], [OPENCODE]):
        marks = ",".join("?" * len(sets))
        n = conn.execute(f"SELECT count(*) FROM sections WHERE set_name IN ({marks})", sets).fetchone()[0]
        assert lexstats.section_count(conn, sets) == n > 0
        for tok in ("model", "hook", "troubleshoot", "zzqx"):
            assert lexstats.doc_freq(conn, tok, sets) == join_df(conn, tok, sets)


def test_caches_follow_the_index(conn):
    n = lexstats.section_count(conn, [CLAUDE, OPENCODE])
    df = lexstats.doc_freq(conn, "model", [CLAUDE, OPENCODE])
    conn.execute("DELETE FROM sec_fts WHERE rowid IN (SELECT id FROM sections WHERE page='Models')")
    conn.execute("DELETE FROM sections WHERE page='Models'")
    assert lexstats.section_count(conn, [CLAUDE, OPENCODE]) < n
    assert lexstats.doc_freq(conn, "model", [CLAUDE, OPENCODE]) < df
    conn.execute("DELETE FROM pages WHERE set_name=?", (OPENCODE,))
    assert lexstats.whole_index(conn, [CLAUDE])


@pytest.mark.parametrize("query", ["model configuration", "troubleshooting hooks", "keybinds leader", "plugins"])
def test_levels_give_the_same_hits_with_and_without_the_set_filter(conn, query, monkeypatch):
    sets = [CLAUDE, OPENCODE]
    qa = analyze(query)
    fns = (levels.bm25, levels.toc_grep, levels.content_grep, levels.title_match)
    fast = [f(conn, qa, sets) for f in fns]
    monkeypatch.setattr(lexstats, "whole_index", lambda c, s: False)  # read by index/backend.py
    assert [f(conn, qa, sets) for f in fns] == fast
    assert any(fast)
