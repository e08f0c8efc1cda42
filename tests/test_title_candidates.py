"""L1 over candidates from the FTS title index (never every heading): near-misses by
stem prefix are still proposed, unrelated titles are not, and on real docs the top L1
hits equal those of the old full scan over every heading title."""

from __future__ import annotations

import pytest
from test_search_helpers import make_mdmem, make_upstream

from doc4llm.corpus.writer import SetWriter
from doc4llm.search import levels
from doc4llm.search.analyze import analyze
from doc4llm.search.engine import Searcher


def full_scan_l1(conn, qa, sets, limit=40) -> dict[int, float]:
    """The previous L1: rapidfuzz over every heading title of the sets."""
    from rapidfuzz import fuzz, process

    marks = ",".join("?" * len(sets))
    titles = {r[0]: (r[1] or "").lower() for r in conn.execute(
        f"SELECT id, title FROM sections WHERE set_name IN ({marks}) AND level > 0", sets)}
    query = (" ".join(qa.keywords) or qa.raw).lower()
    hits = process.extract(query, titles, scorer=fuzz.token_set_ratio, limit=limit,
                           processor=None, score_cutoff=55)
    return {k: s / 100.0 for _, s, k in hits}


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    d = tmp_path_factory.mktemp("l1") / "docs"
    make_mdmem(d)
    make_upstream(d)
    w = SetWriter(d, "Tiny@1", origin="test")
    w.write_page("Widgets", "Intro.\n\n## Configuration Options\n\nText here.\n\n## Hooks\n\nMore text.\n\n"
                 "## Unrelated Thing\n\nOther text.\n", source="https://example.com/w", key="w")
    w.finish()
    s = Searcher(d, embedder="none", quiet=True)
    s.search("warm up")
    yield s
    s.close()


def titles_of(s: Searcher, hits: dict[int, float]) -> set[str]:
    return {r["title"] for r in s.section_rows(list(hits)).values()}


def test_prefix_near_misses_are_candidates_and_unrelated_titles_are_not(searcher):
    qa = analyze("config hooks")
    hits = levels.title_match(searcher.conn, qa, ["Tiny@1"])
    assert {"Configuration Options", "Hooks"} <= titles_of(searcher, hits)
    assert "Unrelated Thing" not in titles_of(searcher, hits)
    assert levels.title_match(searcher.conn, analyze("zzqx"), ["Tiny@1"]) == {}


@pytest.mark.parametrize("query", [
    "graceful shutdown", "troubleshooting installation", "keybinds leader key", "model configuration",
    "hooks get started", "plugins", "HELIOS_WAL_SEGMENT_MB", "orbit gateway configuration",
])
def test_top_hits_match_the_full_scan(searcher, query):
    sets = sorted({r[0] for r in searcher.conn.execute("SELECT set_name FROM pages")})
    qa = analyze(query)
    old = full_scan_l1(searcher.conn, qa, sets)
    new = levels.title_match(searcher.conn, qa, sets)
    best = max(old.values(), default=0)
    assert {k for k, v in old.items() if v == best} <= set(new)
    for k in new:
        assert new[k] == old.get(k, new[k])  # same scores where both score a title
