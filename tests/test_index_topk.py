"""The BM25 impact cutoff (doc4llm/index/topk.py): exact scores, same top results."""

from __future__ import annotations

import random

import pytest

from doc4llm.corpus.writer import SetWriter
from doc4llm.index import topk
from doc4llm.index.service import build_index
from doc4llm.index.store import open_store

SET = "Topk_Docs@1"
COMMON = ["data", "valu", "config", "option", "request"]  # index tokens: stems
RARE = ["kubelet", "tarbal", "webhook", "zeroconf", "quorum", "shard", "tombston", "backoff"]


def _body(rng: random.Random) -> str:
    words = [w for w in COMMON if rng.random() < 0.3 for _ in range(rng.randint(1, 4))]
    words += [rng.choice(RARE) for _ in range(rng.randint(1, 3)) if rng.random() < 0.15]
    words += [f"filler{rng.randint(0, 300)}" for _ in range(rng.randint(5, 60))]
    rng.shuffle(words)
    return " ".join(words)


@pytest.fixture(scope="module")
def conn(tmp_path_factory):
    """~240 sections where every section holds common words and a few hold rare ones;
    one holds a redacted-looking '***' and one repeats a word back to back."""
    docs = tmp_path_factory.mktemp("topk") / "docs"
    rng = random.Random(5)
    w = SetWriter(docs, SET, origin="test")
    for p in range(12):
        parts = []
        for s in range(20):
            title = f"{rng.choice(RARE).title() if rng.random() < 0.3 else 'Section'} part {p}-{s}"
            parts.append(f"## {title}\n\n{_body(rng)}\n")
        if p == 0:
            parts.append("## Secrets\n\ntoken *** webhook webhook data data data quorum\n")
        w.write_page(f"Page {p}", "\n".join(parts), source=f"p{p}.md", key=f"p{p}")
    w.finish({})
    build_index(docs, vectors=False)
    c = open_store(docs)
    yield c
    c.close()


def _full(conn, phrases, weights, limit, column=None):
    w = ", ".join(str(x) for x in weights)
    rows = conn.execute(f"SELECT rowid, bm25(sec_fts, {w}) AS r FROM sec_fts WHERE sec_fts MATCH ?"
                        f" ORDER BY r LIMIT ?", [topk.fts_or(phrases, column), limit]).fetchall()
    return [(int(a), float(b)) for a, b in rows]


CASES = [
    (["data", "webhook"], (6.0, 2.5, 1.0), None),
    (["valu", "config", "quorum", "tombston"], (6.0, 2.5, 1.0), None),
    (["data", "webhook", "quorum"], (0.0, 0.0, 1.0), "body"),
    (["request", "kubelet"], (1.0, 0.0, 0.0), "title"),
]


@pytest.mark.parametrize("phrases,weights,column", CASES)
def test_candidate_scores_are_fts5s_own_bit_for_bit(conn, phrases, weights, column):
    rows_n, avgdl = topk.corpus_stats(conn)
    assert rows_n == conn.execute("SELECT count(*) FROM sections").fetchone()[0]
    full = _full(conn, phrases, weights, 10_000, column)
    toks = [(p,) for p in phrases]
    idf = [topk._idf(rows_n, topk.phrase_rows(conn, p, column)) for p in phrases]
    mine = dict(topk._score(conn, [sid for sid, _ in full], toks, idf, weights, column, avgdl))
    assert full and all(mine[sid] == score for sid, score in full)


@pytest.mark.parametrize("phrases,weights,column", CASES)
def test_cutoff_returns_the_full_querys_top_results(conn, phrases, weights, column, monkeypatch):
    monkeypatch.setenv("DOC4LLM_BM25_CUTOFF", "always")
    monkeypatch.setattr(topk, "MIN_DEPTH", 40)
    assert topk._plan(conn, phrases, column) is not None  # the cutoff really runs
    got, exact = topk.top_bm25_checked(conn, phrases, weights, 10, column)
    assert got == _full(conn, phrases, weights, 10, column)
    assert isinstance(exact, bool)


def test_a_result_said_to_be_exact_is_the_full_querys(conn, monkeypatch):
    """The MaxScore check is sound: whenever it says exact, the lists are equal; shallow
    candidate pools are said not to be exact at least once."""
    monkeypatch.setenv("DOC4LLM_BM25_CUTOFF", "always")
    rng = random.Random(1)
    verdicts = []
    for _ in range(40):
        phrases = rng.sample(COMMON, rng.randint(1, 3)) + rng.sample(RARE, rng.randint(1, 2))
        monkeypatch.setattr(topk, "MIN_DEPTH", rng.choice([1, 10, 40]))
        limit = rng.choice([3, 10, 30])
        got, exact = topk.top_bm25_checked(conn, phrases, (6.0, 2.5, 1.0), limit)
        if exact:
            assert got == _full(conn, phrases, (6.0, 2.5, 1.0), limit)
        verdicts.append(exact)
    assert False in verdicts


def test_off_small_and_single_phrase_queries_run_the_plain_query(conn, monkeypatch):
    phrases, weights = ["data", "webhook"], (6.0, 2.5, 1.0)
    monkeypatch.setenv("DOC4LLM_BM25_CUTOFF", "0")
    assert topk._plan(conn, phrases, None) is None
    assert topk.top_bm25(conn, phrases, weights, 10) == _full(conn, phrases, weights, 10)
    monkeypatch.setenv("DOC4LLM_BM25_CUTOFF", "1")  # default: only above WORK_ROWS phrase rows
    assert topk._plan(conn, phrases, None) is None
    monkeypatch.setenv("DOC4LLM_BM25_CUTOFF", "always")
    assert topk._plan(conn, ["data"], None) is None
    assert topk._plan(conn, ["data", "café"], None) is None  # FTS5 tokenises non-ASCII its own way


def test_varints_and_frequencies_count_like_fts5():
    assert topk._varints(bytes([0xCE, 0x10, 0x05])) == [10000, 5]
    assert topk._freq("a webhook webhook b", ("webhook",)) == 2
    assert topk._freq("webhooks webhook", ("webhook",)) == 1
    assert topk._freq("x *** webhook", ("webhook",)) == 1
    assert topk._length("x *** webhook") == 2
    assert topk._freq("set up the set up", ("set", "up")) == 2
