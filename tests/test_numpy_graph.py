"""The numpy runtime of the query graph (doc4llm/index/numpy_graph.py): the tricky operators
against hand-computed values and against onnxruntime's kernels, and the file's checks."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from doc4llm.index import numpy_graph as ng
from doc4llm.index.embed_onnx import import_runtime, runtime_importable

F32 = np.float32


# --- DynamicQuantizeLinear ----------------------------------------------------------------

def test_dynamic_quantize_rounds_half_to_even():
    step = 0.0625  # the range is 255 steps of 2**-4, so the scale is exact
    x = np.array([-2.5, -0.5, 0.5, 1.5, 2.5, 3.5, 252.5], dtype=F32) * F32(step)
    q, scale, zero = ng._dynamic_quantize(x)
    assert scale == F32(step) and scale.dtype == F32
    assert zero == 2 and zero.dtype == np.uint8  # round_half_to_even(0 - (-2.5)) = 2, not 3
    # x / scale = -2.5 -0.5 0.5 1.5 2.5 3.5 252.5 -> -2 -0 0 2 2 4 252, then + 2
    assert q.tolist() == [0, 2, 2, 4, 4, 6, 254]


def test_dynamic_quantize_saturates_and_keeps_zero_in_range():
    step = F32(0.0625)
    q, scale, zero = ng._dynamic_quantize(np.array([-1.5, 253.5], dtype=F32) * step)
    assert (scale, int(zero)) == (step, 2) and q.tolist() == [0, 255]  # 254 + 2 saturates
    q, scale, zero = ng._dynamic_quantize(np.array([1.0, 2.0], dtype=F32))  # min is taken as 0
    # float32(2/255) is a little above 2/255: 1 / scale = 127.49999 rounds down
    assert int(zero) == 0 and scale == F32(2) / F32(255) and q.tolist() == [127, 255]
    q, scale, zero = ng._dynamic_quantize(np.zeros(4, dtype=F32))  # no range: scale 1, as onnxruntime
    assert (float(scale), int(zero), q.tolist()) == (1.0, 0, [0, 0, 0, 0])


# --- MatMulInteger ------------------------------------------------------------------------

def test_matmul_integer_zero_points_by_hand():
    a = np.array([[1, 2], [3, 4]], dtype=np.uint8)
    b = np.array([[1, -1], [2, 0]], dtype=np.int8)
    # (a - 1) = [[0, 1], [2, 3]]; per column b - [1, 0] = [[0, -1], [1, 0]]
    out = ng._matmul_integer(a, b, np.array(1, np.uint8), np.array([1, 0], np.int8))
    assert out.dtype == np.int32 and out.tolist() == [[1, 0], [3, -2]]
    # scalar b zero point 2: b - 2 = [[-1, -3], [0, -2]]
    assert ng._matmul_integer(a, b, np.array(1, np.uint8), np.array(2, np.int8)).tolist() == [[0, -2], [-2, -12]]
    assert ng._matmul_integer(a, b).tolist() == [[5, -1], [11, -3]]  # no zero points


def test_matmul_integer_is_exact_where_float32_sums_would_not_be():
    worst = ng._matmul_integer(np.full((1, 2, 1536), 255, np.uint8), np.full((1536, 3), -128, np.int8),
                               np.array(0, np.uint8), np.full(3, 127, np.int8))
    assert (worst == 255 * -255 * 1536).all()  # -99,878,400: far past float32's 2**24
    rng = np.random.default_rng(0)
    a = rng.integers(0, 256, (1, 23, 1536), dtype=np.uint8)
    b = rng.integers(-128, 128, (1536, 384), dtype=np.int8)
    zb = rng.integers(-128, 128, 384, dtype=np.int8)
    want = (a.astype(np.int64) - 7) @ (b.astype(np.int64) - zb)
    np.testing.assert_array_equal(ng._matmul_integer(a, b, np.array(7, np.uint8), zb), want)


# --- Erf ----------------------------------------------------------------------------------

def test_erf_is_accurate_over_minus_6_to_6():
    x = np.linspace(-6, 6, 240_001, dtype=F32)
    want = np.array([math.erf(float(v)) for v in x])
    error = np.abs(ng.erf(x).astype(np.float64) - want)
    assert error.max() <= 1.2e-7  # measured 6e-8: one float32 ulp below 1
    assert np.median(error) < 1e-8
    special = ng.erf(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30], dtype=F32))
    assert special[:4].tolist() == [0.0, 0.0, 1.0, -1.0] and np.signbit(special[1])
    assert np.isnan(special[4]) and special[5] == F32(1e-30 * 2 / math.sqrt(math.pi))
    np.testing.assert_array_equal(ng.erf(-x), -ng.erf(x))  # odd
    with pytest.raises(ng.GraphError):
        ng.erf(np.ones(3))  # float64: not in the graph, refused


# --- the float kernels equal onnxruntime's, bit for bit -----------------------------------

@pytest.fixture(scope="module")
def ort_op():
    """Run one ONNX node on onnxruntime (imported before usearch, or not at all)."""
    import_runtime()
    if not runtime_importable():
        pytest.skip("usearch was loaded first in this process")
    ort = pytest.importorskip("onnxruntime")
    from onnx import helper

    def run(op: str, inputs: list[np.ndarray], outputs: int = 1, **attrs):
        names = [f"i{k}" for k in range(len(inputs))]
        node = helper.make_node(op, names, [f"o{k}" for k in range(outputs)], **attrs)
        graph = helper.make_graph(
            [node], "g",
            [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
             for n, a in zip(names, inputs, strict=True)],
            [helper.make_empty_tensor_value_info(f"o{k}") for k in range(outputs)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 10
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        opts.intra_op_num_threads = 1
        session = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        return session.run(None, dict(zip(names, inputs, strict=True)))

    return run


def _reference_platform() -> bool:
    """The machine the kernels were matched on: onnxruntime 1.32 on an AVX-512 x86-64 CPU.
    Elsewhere MLAS may pick other kernels (other lanes, other sum orders): the numpy graph
    is then close to onnxruntime (cosine >= 0.99), not equal, and only that is checked."""
    try:
        import onnxruntime

        flags = Path("/proc/cpuinfo").read_text(errors="replace")
    except (ImportError, OSError):
        return False
    return onnxruntime.__version__.startswith("1.32.") and " avx512f" in flags and " fma" in flags


REFERENCE_PLATFORM = _reference_platform()


@pytest.mark.skipif(not REFERENCE_PLATFORM, reason="bit equality holds on the platform it was matched on")
def test_kernels_match_onnxruntime_bit_for_bit(ort_op):
    """The ops whose rounding decides what the next DynamicQuantizeLinear sees."""
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((1, 23, 384)) * rng.uniform(0.1, 3, (1, 23, 1)) + 0.3).astype(F32)
    w, b = rng.standard_normal(384).astype(F32), rng.standard_normal(384).astype(F32)
    got = ng._layer_norm(x, w, b, axis=-1, epsilon=1e-12)[0]
    np.testing.assert_array_equal(got, ort_op("LayerNormalization", [x, w, b], axis=-1, epsilon=1e-12)[0])
    # attention of 2-128 tokens (a text is at least [CLS] [SEP]; a 1x1 product takes
    # onnxruntime's dot-product path, which sums in another order)
    for tokens in (2, 5, 8, 13, 23, 64, 128):
        scores = (rng.standard_normal((1, 12, tokens, tokens)) * 4).astype(F32)
        scores[..., -1] = np.finfo(F32).min  # a masked key
        np.testing.assert_array_equal(ng._softmax(scores), ort_op("Softmax", [scores], axis=-1)[0])
        q = rng.standard_normal((1, 12, tokens, 32)).astype(F32)
        k = rng.standard_normal((1, 12, 32, tokens)).astype(F32)
        np.testing.assert_array_equal(ng._matmul(q, k), ort_op("MatMul", [q, k])[0])
    gelu_in = (rng.standard_normal(200_000) * 2).astype(F32)
    np.testing.assert_array_equal(ng.erf(gelu_in), ort_op("Erf", [gelu_in])[0])
    for got, want in zip(ng._dynamic_quantize(x), ort_op("DynamicQuantizeLinear", [x], 3), strict=True):
        np.testing.assert_array_equal(got, want)
    a = rng.integers(0, 256, (1, 23, 1536), dtype=np.uint8)
    bq = rng.integers(-127, 128, (1536, 384), dtype=np.int8)
    az, bz = np.array(131, np.uint8), np.zeros(384, np.int8)
    np.testing.assert_array_equal(ng._matmul_integer(a, bq, az, bz), ort_op("MatMulInteger", [a, bq, az, bz])[0])


# --- the file -----------------------------------------------------------------------------

def _tiny_model(op: str = "Erf", **attrs) -> bytes:
    """x -> op(x + bias): a graph with one initializer."""
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("Add", ["x", "bias"], ["y"]), helper.make_node(op, ["y"], ["out"], **attrs)]
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 4])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.arange(4, dtype=F32) / 4, "bias")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_export_maps_and_runs_and_leaves_no_temp_file(tmp_path):
    pytest.importorskip("onnx")
    out = ng.export(_tiny_model(), tmp_path / "tiny.npg")
    assert [p.name for p in tmp_path.iterdir()] == ["tiny.npg"]
    graph = ng.NumpyGraph.load(out)
    assert graph.inputs == ["x"] and graph.outputs == ["out"]
    assert not graph.tensors["bias"].flags.writeable  # a view of the mapped file, not a copy
    x = np.array([[0.1, -0.2, 0.3, 2.0]], dtype=F32)
    np.testing.assert_array_equal(graph.run({"x": x})[0], ng.erf(x + np.arange(4, dtype=F32) / 4))


def test_unsupported_or_damaged_graphs_are_refused(tmp_path):
    pytest.importorskip("onnx")
    with pytest.raises(ng.GraphError, match="Tanh"):
        ng.export(_tiny_model("Tanh"), tmp_path / "a.npg")
    with pytest.raises(ng.GraphError, match="attribute"):
        ng.export(_tiny_model("Softmax", axis=-1, unknown=3), tmp_path / "b.npg")
    assert not list(tmp_path.iterdir())  # nothing written for a refused graph
    good = ng.export(_tiny_model(), tmp_path / "good.npg").read_bytes()
    cases = {"garbage": b"not a graph at all", "empty": b"", "truncated": good[: len(good) - 3],
             "bad header": good[:16] + b"[" + good[17:], "bad magic": b"D4LNPG0\n" + good[8:]}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ng.GraphError):
            ng.NumpyGraph.load(tmp_path / name)
            pytest.fail(f"{name} loaded")
    with pytest.raises(ng.GraphError):
        ng.NumpyGraph.load(tmp_path / "missing.npg")
