"""Vectors come from `doc4llm index` or a background job a search starts, never from inside
a search; they are keyed by content, so a copy, touch, rename or checkout re-embeds
nothing and a changed section re-embeds alone.

The content tests count what an OpenAI-compatible endpoint (a fake on 127.0.0.1,
tests/test_index_vectors.py) is asked to embed; the background tests run the real minilm
model in the detached job."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from conftest import run_cli
from test_index_vectors import PAGES, SET, fake_endpoint, make_tiny  # noqa: F401 (fixture)

from doc4llm.corpus.writer import SetWriter
from doc4llm.index import background
from doc4llm.index.build import sync
from doc4llm.index.service import build_index
from doc4llm.index.store import open_store
from doc4llm.index.vector_cache import CACHE_FILE, VectorCache, content_key
from doc4llm.search.engine import Searcher


@pytest.fixture(autouse=True)
def background_jobs_on(monkeypatch):
    """conftest.py turns background jobs off for the suite; these tests are about them."""
    monkeypatch.delenv("DOC4LLM_BACKGROUND_EMBED", raising=False)


def wait_for_job(docs: Path, timeout: float = 240.0) -> dict:
    """The state of the background job once it has finished (it was started already)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = background.read_state(docs)
        if state.get("state") in ("done", "failed") and not background.running(docs):
            return state
        time.sleep(0.2)
    raise AssertionError(f"the background job did not finish: {background.read_state(docs)}")


@pytest.fixture
def endpoint_env(fake_endpoint, monkeypatch):  # noqa: F811
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{fake_endpoint.server_address[1]}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.delenv("DOC4LLM_EMBEDDER", raising=False)
    return fake_endpoint


def embedded(server) -> list[str]:
    """The texts the endpoint embedded (not the one-off dimension probe)."""
    return [t for t in server.texts if t != "dimension probe"]


def section_ids(docs: Path) -> list[tuple[str, str, int]]:
    conn = open_store(docs)
    try:
        return [tuple(r) for r in conn.execute("SELECT page, title, id FROM sections ORDER BY id")]
    finally:
        conn.close()


def full_coverage(docs: Path, embedder: str) -> dict:
    s = Searcher(docs, embedder=embedder, quiet=True, auto_index=False)
    try:
        return s.search("cache eviction", k=2)["semantic"][SET]
    finally:
        s.close()


# --- item 3: vectors keyed by content -------------------------------------------------------

def test_copy_touch_and_renames_reembed_nothing(tmp_path, endpoint_env):
    docs = tmp_path / "docs"
    make_tiny(docs)
    first = build_index(docs, embedder="openai:model-a")
    n_texts = len(embedded(endpoint_env))
    assert first["embedded"][SET] == n_texts > 0

    # `cp -r`: every file gets a new time, the bytes are the same (index and vectors travel along)
    copy = tmp_path / "copy"
    shutil.copytree(docs, copy, copy_function=shutil.copy)
    assert (copy / SET / "Caching" / "docContent.md").stat().st_mtime_ns != \
        (docs / SET / "Caching" / "docContent.md").stat().st_mtime_ns
    before = section_ids(copy)
    conn, report = sync(copy)
    conn.close()
    assert report.pages_updated == report.pages_added == 0  # only the signatures were refreshed
    assert section_ids(copy) == before  # same rows: the vectors still belong to them
    assert build_index(copy, embedder="openai:model-a")["embedded"][SET] == 0
    assert full_coverage(copy, "openai:model-a")["tier"] == "full"

    # touch, rename a page folder, rename the set folder: no text reaches the model
    seen = len(embedded(endpoint_env))  # the search above embedded its query
    os.utime(copy / SET / "Caching" / "docContent.md")
    (copy / SET / "Authentication").rename(copy / SET / "Auth")
    (copy / SET).rename(copy / "Tiny_Docs@2")
    out = build_index(copy, embedder="openai:model-a")
    assert out["embedded"] == {"Tiny_Docs@2": 0} and out["vectors"]["Tiny_Docs@2"] >= 3
    assert embedded(endpoint_env)[seen:] == []


def test_a_changed_section_reembeds_alone(tmp_path, endpoint_env):
    docs = tmp_path / "docs"
    make_tiny(docs)
    build_index(docs, embedder="openai:model-a")
    seen = len(embedded(endpoint_env))
    w = SetWriter(docs, SET, origin="test")
    for title, body in PAGES.items():
        w.write_page(title, body.replace("least recently used", "least frequently used"),
                     source=f"{title.lower()}.md", key=title)
    w.finish({})
    out = build_index(docs, embedder="openai:model-a")
    new = embedded(endpoint_env)[seen:]
    # one body text changed; its heading label ("Caching > Cache eviction") was embedded before
    assert len(new) == 1 and "least frequently used" in new[0]
    assert out["embedded"][SET] == 1
    assert full_coverage(docs, "openai:model-a")["tier"] == "full"


def test_the_cache_key_is_the_embedder_and_the_text(tmp_path):
    assert content_key("a", "text") != content_key("b", "text") != content_key("a", "text ")
    assert content_key("a", "text") == content_key("a", "text") and len(content_key("a", "t")) == 16
    import numpy as np

    cache = VectorCache(tmp_path)
    vec = np.linspace(-1, 1, 8, dtype=np.float32)
    cache.put_many([(content_key("e", "x"), vec), (content_key("e", "bad"), np.full(8, np.inf))])
    got = cache.get_many([content_key("e", "x"), content_key("e", "y"), content_key("e", "bad")], dim=8)
    assert list(got) == [content_key("e", "x")]  # unknown and non-finite entries are misses
    np.testing.assert_allclose(got[content_key("e", "x")], vec, atol=1e-3)
    assert cache.get_many([content_key("e", "x")], dim=16) == {}  # a wrong-sized entry is a miss
    cache.close()


def test_a_damaged_cache_is_set_aside_and_rebuilt(tmp_path, endpoint_env, capsys):
    docs = tmp_path / "docs"
    make_tiny(docs)
    build_index(docs, embedder="openai:model-a", vectors=False)
    path = docs / ".doc4llm" / CACHE_FILE
    path.write_bytes(b"this is not a database" * 100)
    out = build_index(docs, embedder="openai:model-a")
    assert out["vectors"][SET] >= 3 and "unreadable" in capsys.readouterr().err
    assert (docs / ".doc4llm" / (CACHE_FILE + ".broken")).is_file()
    assert full_coverage(docs, "openai:model-a")["tier"] == "full"


# --- item 2: searches never embed; one background job at a time ---------------------------

def test_a_search_never_embeds_and_says_who_will(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    make_tiny(docs)
    r = run_cli("search", "cache eviction", "--docs-dir", docs, "--json", "--explain",
                env={"DOC4LLM_EMBEDDER": "minilm", "DOC4LLM_BACKGROUND_EMBED": "0"})
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["semantic"][SET]["tier"] == "lexical" and res["results"]
    assert "no vectors yet" in r.stderr and "`doc4llm index` builds them" in r.stderr
    assert "embed_query" not in res["timing_ms"]  # no vectors: the model was never loaded
    assert not (docs / ".doc4llm" / "vectors").exists() and background.read_state(docs) == {}


def test_the_first_search_answers_lexically_and_the_job_brings_vectors(tmp_path):
    docs = tmp_path / "docs"
    make_tiny(docs)
    r = run_cli("search", "credentials stop working after an hour", "--docs-dir", docs, "--json", "--explain",
                env={"DOC4LLM_EMBEDDER": "minilm", "DOC4LLM_BACKGROUND_EMBED": None})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["semantic"][SET]["tier"] == "lexical"
    assert "building them for minilm in the background" in r.stderr and "embed.log" in r.stderr
    state = wait_for_job(docs)
    assert state["state"] == "done", (docs / ".doc4llm" / "embed.log").read_text()
    assert "done in" in (docs / ".doc4llm" / "embed.log").read_text()
    r = run_cli("search", "credentials stop working after an hour", "--docs-dir", docs, "--json", "--explain",
                env={"DOC4LLM_EMBEDDER": "minilm"})
    res = json.loads(r.stdout)
    assert res["semantic"][SET] == {"embedder": "minilm", "coverage": 1.0, "tier": "full"}
    assert "vector" in {f for x in res["results"] for f in x["found_by"]}
    assert "background" not in r.stderr  # nothing left to build: no job, no message


def test_one_job_at_a_time(tmp_path):
    docs = tmp_path / "docs"
    make_tiny(docs)
    held = background.job_lock(docs, timeout=0)
    held.acquire()
    try:
        assert background.running(docs)
        assert background.start(docs, "minilm") == "running"  # nothing spawned
        t0 = time.monotonic()
        assert background.run_job(docs, "minilm") == 0  # a second job leaves at once
        assert time.monotonic() - t0 < 30
        assert background.read_state(docs) == {}  # it never ran
    finally:
        held.release()
    assert not background.running(docs)


def test_a_failed_job_is_not_restarted_by_every_search(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    make_tiny(docs)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    import subprocess
    import sys

    job = subprocess.run([sys.executable, "-m", "doc4llm.index.background", str(docs), "--embedder",
                          "openai:model-a"], capture_output=True, text=True, timeout=120)
    assert job.returncode == 3, job.stderr
    state = background.read_state(docs)
    assert state["state"] == "failed" and state["error"] and "failed:" in job.stderr
    assert "sk-test-not-a-real-key" not in json.dumps(state) + job.stderr
    assert background.start(docs, "openai:model-a") == "failed"  # recently failed: not retried
    monkeypatch.setenv("DOC4LLM_BACKGROUND_EMBED", "0")
    assert background.start(docs, "minilm") == "disabled"


def test_index_prunes_texts_no_section_uses_once_the_cache_has_grown(tmp_path, endpoint_env, monkeypatch):
    from doc4llm.index import vectors

    docs = tmp_path / "docs"
    make_tiny(docs)
    build_index(docs, embedder="openai:model-a")
    cache = VectorCache(docs)
    first = len(cache)
    cache.close()
    w = SetWriter(docs, SET, origin="test")
    for title, body in PAGES.items():
        w.write_page(title, body.replace("one hour", "two hours"), source=f"{title.lower()}.md", key=title)
    w.finish({})
    out = build_index(docs, embedder="openai:model-a")
    assert out["embedded"][SET] == 1 and out["pruned"] == 0  # below the ratio: old text kept
    monkeypatch.setattr(vectors, "PRUNE_FLOOR", 0)
    monkeypatch.setattr(vectors, "PRUNE_RATIO", 0.5)
    out = build_index(docs, embedder="openai:model-a")
    assert out["embedded"][SET] == 0 and out["pruned"] == 1  # the "one hour" body text went
    cache = VectorCache(docs)
    try:
        assert len(cache) == first
    finally:
        cache.close()
    assert build_index(docs, embedder="openai:model-a", sets=[SET])["embedded"][SET] == 0


def test_index_waits_for_a_running_job_instead_of_embedding_beside_it(tmp_path, endpoint_env):
    import threading

    docs = tmp_path / "docs"
    make_tiny(docs)
    taken, waiting = threading.Event(), threading.Event()

    def a_job() -> None:  # holds the job lock until `doc4llm index` says it waits for it
        with background.job_lock(docs, timeout=0):
            taken.set()
            waiting.wait(120)

    def progress(message: str) -> None:
        messages.append(message)
        if "waiting for the background embedding job" in message:
            waiting.set()

    job = threading.Thread(target=a_job)
    job.start()
    assert taken.wait(30)
    messages: list[str] = []
    try:
        out = build_index(docs, embedder="openai:model-a", progress=progress)
    finally:
        waiting.set()
        job.join()
    assert any("waiting for the background embedding job" in m for m in messages)
    assert out["vectors"][SET] >= 3 and not background.running(docs)
