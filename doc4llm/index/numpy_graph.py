"""Run an exported ONNX graph with numpy: a query embedding without onnxruntime.

Why: a search is one process that embeds one short query. Importing onnxruntime and
opening an InferenceSession on the 58 MB int8 MiniLM graph costs ~0.15 s of that
process, far more than the ~10 ms of arithmetic a 10-30 token query needs. This module
runs the same graph with numpy (already loaded for the vector matrix) from a compact
file that memory-maps in about a millisecond.

The file (`export` writes it from an .onnx with the `onnx` package; `NumpyGraph.load`
reads it): MAGIC, the header length (8 bytes, little-endian), a JSON header (inputs,
outputs, nodes with their attributes, and each initializer's dtype, shape and offset),
then every initializer's raw bytes at 64-byte aligned offsets. Loading maps the file
and views each tensor in place: only the embedding rows a query uses are ever read.

Only the operators and attributes of the MiniLM graph are implemented (OPS, ATTRS); a
graph with anything else is refused by `export` and `load` with GraphError. The numbers
are onnxruntime's, not merely the spec's: in an int8 graph every DynamicQuantizeLinear
rescales from the extremes of its input, so one last-bit difference upstream can move
values across rounding steps, and textbook float kernels left query vectors at cosine
0.994 to onnxruntime's. So DynamicQuantizeLinear and MatMulInteger are exact, and
LayerNormalization, Softmax, Erf and MatMul round as onnxruntime 1.32's x86-64 kernels
(MLAS) do, FMA for FMA (see the kernel section): on this machine the query vectors are
bit-identical (tests/test_embed_onnx.py). Elsewhere (another CPU, another onnxruntime)
they may differ in the last bits and then at cosine ~0.99+.
"""

from __future__ import annotations

import json
import math
import mmap
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

MAGIC = b"D4LNPG1\n"  # bump the digit when the layout changes
ALIGN = 64

# ONNX TensorProto element types we read or cast to
DTYPES = {1: "float32", 2: "uint8", 3: "int8", 6: "int32", 7: "int64", 9: "bool", 11: "float64"}


class GraphError(Exception):
    """The exported graph is missing, damaged, or uses something this interpreter lacks."""


# --- export (needs the `onnx` package; only `doc4llm index` and a first query call it) ---

def export(model: Path | bytes, out: Path) -> Path:
    """Write `model` (.onnx path or bytes) as a numpy graph file at `out`, atomically.

    Raises GraphError if the graph uses an operator or attribute OPS does not cover,
    ImportError without `onnx`, OSError if `out` cannot be written."""
    import onnx
    from onnx import numpy_helper

    proto = onnx.load_model_from_string(model) if isinstance(model, bytes) else onnx.load(str(model))
    graph = proto.graph
    nodes = []
    for n in graph.node:
        if n.domain not in ("", "ai.onnx"):
            raise GraphError(f"operator {n.domain}.{n.op_type} is not supported")
        attrs = {}
        for a in n.attribute:
            value = onnx.helper.get_attribute_value(a)
            if isinstance(value, bytes):
                value = value.decode()
            elif isinstance(value, list):
                value = [v.decode() if isinstance(v, bytes) else v for v in value]
            if not isinstance(value, (int, float, str, list)):
                raise GraphError(f"{n.op_type} attribute {a.name} of type {a.type} is not supported")
            attrs[a.name] = value
        nodes.append({"op": n.op_type, "in": list(n.input), "out": list(n.output), "attrs": attrs})
    tensors, blobs, offset = {}, [], 0
    for init in graph.initializer:
        arr = np.ascontiguousarray(numpy_helper.to_array(init))
        if arr.dtype.name not in DTYPES.values():
            raise GraphError(f"initializer {init.name} has unsupported dtype {arr.dtype}")
        offset = -(-offset // ALIGN) * ALIGN
        tensors[init.name] = {"dtype": arr.dtype.name, "shape": list(arr.shape), "offset": offset}
        blobs.append((offset, arr))
        offset += arr.nbytes
    initializers = set(tensors)
    header = {"inputs": [i.name for i in graph.input if i.name not in initializers],
              "outputs": [o.name for o in graph.output], "nodes": nodes, "tensors": tensors}
    _check(header)  # refuse at export what load would refuse
    # offsets are relative to the data start: the header's own length does not move them
    head = json.dumps(header, separators=(",", ":")).encode()
    start = -(-(len(MAGIC) + 8 + len(head)) // ALIGN) * ALIGN
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(MAGIC + len(head).to_bytes(8, "little") + head)
            f.write(b"\0" * (start - f.tell()))
            for off, arr in blobs:
                f.write(b"\0" * (start + off - f.tell()))
                f.write(arr.tobytes())
            f.flush()
            os.fsync(f.fileno())
        tmp.replace(out)  # atomic: a concurrent reader sees the whole file or none
    finally:
        tmp.unlink(missing_ok=True)
    return out


# --- load -------------------------------------------------------------------------------

class NumpyGraph:
    """An exported graph, memory-mapped; `run` evaluates it node by node."""

    def __init__(self, header: dict, tensors: dict[str, np.ndarray], buffer: mmap.mmap | None = None):
        self.inputs: list[str] = header["inputs"]
        self.outputs: list[str] = header["outputs"]
        self.nodes: list[dict] = header["nodes"]
        self.tensors = tensors
        self._buffer = buffer  # keeps the mapping alive as long as the views

    @classmethod
    def load(cls, path: Path) -> NumpyGraph:
        """Map `path` (~1 ms); GraphError if it is not a complete, supported graph file."""
        try:
            with open(path, "rb") as f:
                prefix = f.read(len(MAGIC) + 8)
                if len(prefix) < len(MAGIC) + 8 or prefix[: len(MAGIC)] != MAGIC:
                    raise GraphError(f"{path.name} is not a numpy graph file of this version")
                size = int.from_bytes(prefix[len(MAGIC):], "little")
                header = json.loads(f.read(size))
                buffer = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:
            raise GraphError(f"cannot read {path.name}: {exc}") from None
        start = -(-(len(MAGIC) + 8 + size) // ALIGN) * ALIGN
        try:  # check everything before the first view: a mapping with views cannot be closed
            _check(header)
            specs = {}
            for name, spec in header["tensors"].items():
                dtype, shape = np.dtype(spec["dtype"]), tuple(int(d) for d in spec["shape"])
                offset = start + int(spec["offset"])
                if spec["dtype"] not in DTYPES.values() or offset < start \
                        or offset + math.prod(shape) * dtype.itemsize > len(buffer):
                    raise GraphError(f"tensor {name} lies outside {path.name} (a partial file?)")
                specs[name] = dtype, shape, offset
        except (GraphError, KeyError, TypeError, ValueError, AttributeError) as exc:
            buffer.close()
            if isinstance(exc, GraphError):
                raise
            raise GraphError(f"malformed header in {path.name}: {exc!r}") from None
        tensors = {name: np.frombuffer(buffer, dtype, math.prod(shape), offset).reshape(shape)
                   for name, (dtype, shape, offset) in specs.items()}
        return cls(header, tensors, buffer)

    def run(self, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        """The graph's outputs for these inputs (each name in `inputs`, numpy arrays)."""
        values: dict[str, Any] = dict(self.tensors)
        for name in self.inputs:
            if name not in feeds:
                raise GraphError(f"missing input {name}")
            values[name] = np.asarray(feeds[name])
        values[""] = None  # an omitted optional input
        with np.errstate(all="ignore"):  # a fully masked row is -inf - -inf = NaN; the graph maps it
            for node in self.nodes:
                result = OPS[node["op"]](*(values[i] for i in node["in"]), **node["attrs"])
                for name, value in zip(node["out"], result if isinstance(result, tuple) else (result,),
                                       strict=False):
                    if name:
                        values[name] = value
        return [values[name] for name in self.outputs]


def _check(header: dict) -> None:
    """Every node is a supported op with supported attributes, and reads defined values."""
    known = set(header["inputs"]) | set(header["tensors"]) | {""}
    for node in header["nodes"]:
        op = node["op"]
        if op not in OPS:
            raise GraphError(f"operator {op} is not supported by the numpy runtime")
        extra = set(node["attrs"]) - ATTRS.get(op, set())
        if extra:
            raise GraphError(f"{op} attribute(s) {sorted(extra)} are not supported by the numpy runtime")
        missing = [i for i in node["in"] if i not in known]
        if missing:
            raise GraphError(f"{op} reads undefined value(s) {missing} (graph not in topological order?)")
        known.update(node["out"])
    missing = [o for o in header["outputs"] if o not in known]
    if missing:
        raise GraphError(f"graph outputs {missing} are never computed")


# --- operators (ONNX opset 13-17 semantics, for the types the graph uses) ----------------

def _cast(x: np.ndarray, to: int) -> np.ndarray:
    if to not in DTYPES:
        raise GraphError(f"Cast to ONNX type {to} is not supported")
    return np.asarray(x).astype(DTYPES[to])


def _shape(x: np.ndarray, start: int = 0, end: int | None = None) -> np.ndarray:
    return np.array(np.shape(x)[start:end], dtype=np.int64)


def _slice(x: np.ndarray, starts: np.ndarray, ends: np.ndarray, axes: np.ndarray | None = None,
           steps: np.ndarray | None = None) -> np.ndarray:
    """Python slices clamp out-of-range starts and ends exactly as the ONNX spec asks."""
    axes = range(len(starts)) if axes is None else [int(a) % x.ndim for a in axes]
    steps = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * x.ndim
    for axis, start, end, step in zip(axes, starts, ends, steps, strict=True):
        if int(step) == 0:
            raise GraphError("Slice step 0")
        index[axis] = slice(int(start), int(end), int(step))
    return x[tuple(index)]


def _squeeze(x: np.ndarray, axes: np.ndarray | None = None) -> np.ndarray:
    return np.squeeze(x) if axes is None else np.squeeze(x, axis=tuple(int(a) for a in axes))


def _unsqueeze(x: np.ndarray, axes: np.ndarray) -> np.ndarray:
    return np.expand_dims(x, tuple(int(a) for a in axes))


def _reshape(x: np.ndarray, shape: np.ndarray, allowzero: int = 0) -> np.ndarray:
    dims = [int(d) for d in shape]
    if not allowzero:  # 0 copies the input's dimension
        dims = [x.shape[i] if d == 0 else d for i, d in enumerate(dims)]
    return np.reshape(x, dims)


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(np.result_type(a, b), np.integer):  # C division: truncate toward zero
        q = np.abs(a) // np.abs(b)
        return np.where((a < 0) != (b < 0), -q, q).astype(np.result_type(a, b))
    return np.divide(a, b)


def _max(*xs: np.ndarray) -> np.ndarray:
    out = xs[0]
    for x in xs[1:]:
        out = np.maximum(out, x)
    return out


def _range(start: np.ndarray, limit: np.ndarray, delta: np.ndarray) -> np.ndarray:
    return np.arange(start.item(), limit.item(), delta.item(), dtype=np.result_type(start))


def _expand(x: np.ndarray, shape: np.ndarray) -> np.ndarray:
    return np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(int(d) for d in shape)))


def _gather_nd(data: np.ndarray, indices: np.ndarray, batch_dims: int = 0) -> np.ndarray:
    if batch_dims != 0:
        raise GraphError("GatherND with batch_dims != 0 is not supported")
    return data[tuple(np.moveaxis(indices, -1, 0))]


# --- float kernels, computed as onnxruntime's CPU kernels compute them ---------------------
# Measured op by op against onnxruntime 1.32 on x86-64 (random inputs, every element equal;
# tests/test_numpy_graph.py). MLAS's FMA steps are emulated in float64: the product of two
# float32 is exact there, then one addition and the rounding to float32. That differs from
# a true FMA only when the float64 sum lands exactly on a float32 tie (~1 in 2**29 steps).

_LANES = 8  # MLAS's AVX2 kernels: 8 float32 lanes


def _fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float32 a*b + c rounded once, as an FMA instruction."""
    t = np.multiply(a, b, dtype=np.float64)
    t += c
    return t.astype(np.float32)


def _horner32(coeffs: list[np.float32], x: np.ndarray) -> np.ndarray:
    """The polynomial (highest coefficient first) at x by FMA steps, as MLAS evaluates it."""
    x64 = x.astype(np.float64)
    r = np.full(x.shape, coeffs[0], dtype=np.float32)
    t = np.empty(x.shape, dtype=np.float64)
    for c in coeffs[1:]:
        np.multiply(r, x64, out=t)
        t += c
        r[...] = t
    return r


def _layer_norm(x: np.ndarray, scale: np.ndarray, bias: np.ndarray | None = None, axis: int = -1,
                epsilon: float = 1e-5, stash_type: int = 1):
    """ONNX LayerNormalization as onnxruntime's CPU kernel (mean, inverse deviation and
    output all equal on random rows of 384): mean = float32(float64 sum / n); the variance
    from (x - mean)^2 summed by FMA in 8 lanes, the lanes added pairwise; then
    y = fma((x - mean) * (1 / sqrt(var + eps)), scale, bias). It decides the scale of the
    DynamicQuantizeLinear after it: the op whose last bits matter most."""
    if stash_type != 1 or x.dtype != np.float32:
        raise GraphError("LayerNormalization is supported for float32 with stash_type 1 only")
    axis = axis % x.ndim
    rows = x.reshape(*x.shape[:axis], -1)
    width = rows.shape[-1]
    mean = (np.cumsum(rows, axis=-1, dtype=np.float64)[..., -1:] / width).astype(np.float32)
    dev = rows - mean
    lanes = width - width % _LANES
    blocks = dev[..., :lanes].reshape(*dev.shape[:-1], -1, _LANES)
    acc = np.zeros(blocks.shape[:-2] + (_LANES,), dtype=np.float32)
    for j in range(blocks.shape[-2]):
        acc = _fma32(blocks[..., j, :], blocks[..., j, :], acc)
    while acc.shape[-1] > 1:  # lanes added pairwise: (0+4, 1+5, ...), then (0+2, 1+3), ...
        half = acc.shape[-1] // 2
        acc = acc[..., :half] + acc[..., half:]
    total = acc
    for j in range(lanes, width):  # a width that is not a multiple of 8: the rest in order
        total = _fma32(dev[..., j : j + 1], dev[..., j : j + 1], total)
    inv = np.float32(1) / np.sqrt(total / np.float32(width) + np.float32(epsilon))
    normed = (dev * inv).reshape(x.shape)
    y = _fma32(normed, scale, bias if bias is not None else np.float32(0))
    keep = x.shape[:axis] + (1,) * (x.ndim - axis)
    return y, mean.reshape(keep), inv.reshape(keep)


def _dynamic_quantize(x: np.ndarray):
    """uint8 quantisation over the whole tensor (ONNX DynamicQuantizeLinear, as onnxruntime:
    a range of zero gives scale 1 instead of dividing by zero)."""
    x = np.asarray(x, dtype=np.float32)
    lo = min(np.float32(0), x.min()) if x.size else np.float32(0)
    hi = max(np.float32(0), x.max()) if x.size else np.float32(0)
    scale = np.float32(1) if hi == lo else np.float32((hi - lo) / np.float32(255))
    zero = np.float32(np.rint(np.clip(np.float32(0) - lo / scale, 0, 255)))
    q = np.clip(np.rint(x / scale) + zero, 0, 255).astype(np.uint8)
    return q, np.array(scale, dtype=np.float32), np.array(zero, dtype=np.uint8)


_EXACT = 1 << 24  # float32 holds every integer up to here exactly
_BLOCK = 256  # rows of b converted to float32 at a time: they stay in cache for the product


def _matmul_integer(a: np.ndarray, b: np.ndarray, a_zero: np.ndarray | None = None,
                    b_zero: np.ndarray | None = None) -> np.ndarray:
    """int32 (a - a_zero) @ (b - b_zero): a_zero a scalar, b_zero a scalar or one per column.

    numpy has no fast integer matmul, so the product runs on float32 BLAS over blocks of
    b's rows, few enough that no partial sum can pass 2**24: every product and sum is then
    an exact integer whatever order BLAS adds in. Converting b block by block keeps the
    float32 copy in cache (b is read once, as int8, from the mapped file)."""
    if b.ndim != 2 or not np.issubdtype(a.dtype, np.integer) or not np.issubdtype(b.dtype, np.integer):
        raise GraphError("MatMulInteger is supported for integer a and a 2-D integer b only")
    if a_zero is not None and np.size(a_zero) != 1:
        raise GraphError("MatMulInteger with a per-row a_zero_point is not supported")
    af = a.astype(np.float32)
    if a_zero is not None:
        af -= np.float32(np.asarray(a_zero).item())
    low, high = int(np.iinfo(b.dtype).min), int(np.iinfo(b.dtype).max)  # bounds of b - b_zero
    shift = None
    if b_zero is not None and np.any(b_zero):
        shift = np.asarray(b_zero, dtype=np.float32)
        low, high = low - int(np.max(b_zero)), high - int(np.min(b_zero))
    biggest = max(float(np.abs(af).max(initial=0)), 1.0) * max(-low, high)
    step = max(1, min(_BLOCK, int(_EXACT // biggest)))  # int8 weights, zero point 0: 256
    k, n = b.shape
    buf = np.empty((min(step, k), n), dtype=np.float32)
    out = np.zeros(af.shape[:-1] + (n,), dtype=np.int32)
    for i in range(0, k, step):
        rows = buf[: min(step, k - i)]
        np.copyto(rows, b[i : i + step], casting="unsafe")
        if shift is not None:
            rows -= shift
        out += np.matmul(af[..., i : i + step], rows).astype(np.int32)
    return out


def _hadd8(v: np.ndarray) -> np.ndarray:
    """Sum of 8 lanes as MLAS reduces a vector: ((0+1)+(2+3)) + ((4+5)+(6+7))."""
    pairs = v[..., 0::2] + v[..., 1::2]
    quads = pairs[..., 0::2] + pairs[..., 1::2]
    return quads[..., 0] + quads[..., 1]


# MLAS's exp for softmax (MlasComputeSumExpVector): reduction by ln 2, a degree-6
# polynomial, the power of two built from the exponent bits
_EXP_LOW = np.float32(-88.3762626647949)
_EXP_BIAS = np.float32(12582912.0)  # 1.5 * 2**23: adding it rounds to an integer
_LOG2E = np.float32(1.44269504088896341)
_LN2_HI, _LN2_LO = np.float32(-6.93145752e-1), np.float32(-1.42860677e-6)
_EXP_POLY = [np.float32(float.fromhex(h)) for h in
             ("0x1.694000p-10", "0x1.125edcp-7", "0x1.555b5ap-5", "0x1.555450p-3", "0x1.fffff6p-2")]
_ONE = np.float32(1.0)


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """ONNX Softmax (opset 13) as MLAS: e = exp(x - max), summed in 8 lanes over two
    alternating accumulators (the last vector zero-padded), output e * (1 / sum)."""
    if x.dtype != np.float32:
        raise GraphError("Softmax is supported for float32 only")
    x = np.moveaxis(x, axis, -1)
    v = np.maximum(_EXP_LOW, x - x.max(axis=-1, keepdims=True))
    biased = _fma32(v, _LOG2E, _EXP_BIAS)
    m = biased - _EXP_BIAS
    v = _fma32(m, _LN2_HI, v)
    v = _fma32(m, _LN2_LO, v)
    scale = ((biased.view(np.int32) << 23) + np.int32(0x3F800000)).view(np.float32)  # 2**m
    e = _horner32([*_EXP_POLY, _ONE, _ONE], v) * scale
    width = e.shape[-1]
    padded = np.zeros(e.shape[:-1] + (-(-width // _LANES) * _LANES,), dtype=np.float32)
    padded[..., :width] = e
    vectors = padded.reshape(*e.shape[:-1], -1, _LANES)
    acc = np.cumsum(vectors[..., 0::2, :], axis=-2, dtype=np.float32)[..., -1, :]
    if vectors.shape[-2] > 1:
        acc = acc + np.cumsum(vectors[..., 1::2, :], axis=-2, dtype=np.float32)[..., -1, :]
    out = e * (_ONE / _hadd8(acc))[..., None]
    return np.moveaxis(out, -1, axis)


# MLAS's erf (MlasErfKernel, FMA3): the faithfully rounded erff of N. Juffa
# (stackoverflow.com/questions/35148198), a polynomial in x^2 up to 0.921875 and
# 1 - exp(-polynomial) above, |x| clamped at 3.925 where erf is 1 in float32. Measured
# against math.erf on [-6, 6]: max abs error 6e-8 (one float32 ulp near 1).
_ERF_SPLIT, _ERF_CLAMP = np.float32(0.921875), np.float32(3.925)
_ERF_SMALL = [np.float32(c) for c in (-5.99104969e-4, 4.99339588e-3, -2.67667342e-2, 1.12818025e-1,
                                      -3.76124859e-1, 1.28379151e-1)]
_ERF_BIG = [np.float32(c) for c in (1.72948930e-5, -3.83208680e-4, 3.88393435e-3, -2.42545605e-2,
                                    1.06777847e-1, 6.34846687e-1, 1.28717512e-1)]
_ERF_EXP = [np.float32(c) for c in (1.38319808e-3, 8.37550033e-3, 4.16689515e-2, 1.66664466e-1,
                                    4.99999851e-1, 1.0, 1.0)]
_ERF_CHUNK = 32768  # elements per pass: the temporaries stay in cache


def erf(x: np.ndarray) -> np.ndarray:
    """ONNX Erf for float32 (numpy has no erf; scipy is not a dependency). In cache-sized
    chunks, each element through its own branch only."""
    x = np.asarray(x)
    if x.dtype != np.float32:
        raise GraphError("Erf is supported for float32 only")
    flat = x.ravel()
    out = np.empty_like(flat)
    for i in range(0, flat.size, _ERF_CHUNK):
        part = np.minimum(_ERF_CLAMP, np.abs(flat[i : i + _ERF_CHUNK]))
        big = part > _ERF_SPLIT
        near, far = np.flatnonzero(~big), np.flatnonzero(big)
        a = part[near]
        out[i + near] = _fma32(_horner32(_ERF_SMALL, a * a), a, a)
        a = part[far]
        t = np.maximum(_EXP_LOW, -_fma32(_horner32(_ERF_BIG, a), a, a))  # erf = 1 - exp(t)
        m = _fma32(_LOG2E, t, _EXP_BIAS) - _EXP_BIAS  # exp as MLAS's erf computes it
        f = _fma32(m, _LN2_LO, _fma32(m, _LN2_HI, t))
        y = _horner32(_ERF_EXP, f) * ((m.astype(np.int32) + 127) << 23).view(np.float32)  # * 2**m
        out[i + far] = _ONE - y
    np.copysign(out, flat, out=out)
    return out.reshape(x.shape)


def _matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ONNX MatMul; float32 as MLAS's SGEMM: each output one FMA chain over k in order
    (BLAS splits and reorders the sums for some shapes; a 1x1 output takes onnxruntime's
    dot-product path, which does too). One numpy pass per k: fine for attention (k = 32,
    or the token count)."""
    if a.dtype != np.float32 or b.dtype != np.float32:
        return np.matmul(a, b)
    if a.ndim < 2 or b.ndim < 2:
        raise GraphError("MatMul of 1-D tensors is not supported")
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    acc = np.zeros(shape, dtype=np.float32)
    t = np.empty(shape, dtype=np.float64)
    for k in range(a.shape[-1]):
        np.multiply(a64[..., k : k + 1], b64[..., k : k + 1, :], out=t)
        t += acc
        acc[...] = t
    return acc


OPS: dict[str, Callable[..., Any]] = {
    "Add": np.add,
    "And": np.logical_and,
    "Cast": _cast,
    "Concat": lambda *xs, axis: np.concatenate(xs, axis=axis),
    "Div": _div,
    "DynamicQuantizeLinear": _dynamic_quantize,
    "Erf": erf,
    "Expand": _expand,
    "Gather": lambda data, indices, axis=0: np.take(data, indices, axis=axis),
    "GatherND": _gather_nd,
    "GreaterOrEqual": np.greater_equal,
    "IsNaN": np.isnan,
    "LayerNormalization": _layer_norm,
    "MatMul": _matmul,
    "MatMulInteger": _matmul_integer,
    "Max": _max,
    "Mul": np.multiply,
    "Range": _range,
    "Reshape": _reshape,
    "Shape": _shape,
    "Slice": _slice,
    "Softmax": _softmax,
    "Squeeze": _squeeze,
    "Transpose": lambda x, perm=None: np.transpose(x, perm),
    "Unsqueeze": _unsqueeze,
    "Where": np.where,
}
# the attributes each operator understands (anything else is refused at load)
ATTRS: dict[str, set[str]] = {
    "Cast": {"to"}, "Concat": {"axis"}, "Gather": {"axis"}, "GatherND": {"batch_dims"},
    "LayerNormalization": {"axis", "epsilon", "stash_type"}, "Reshape": {"allowzero"},
    "Shape": {"start", "end"}, "Softmax": {"axis"}, "Transpose": {"perm"},
}
