"""The 3-minute campaigns of issue 35 on onnx.reference, the kernel engine and PyTorch: each
finding that was ours (a reference, a fuzz template, a kernel) stays fixed here."""

from __future__ import annotations

import numpy as np
import pytest

from harness.generated.campaign import Campaign, FuzzConfig
from harness.generated.spec import GenConfig
from harness.runner import BackendSpec


def _campaign(backend: str, ops: tuple[str, ...], dtypes: tuple[str, ...], graphs: int, seed: int = 1):
    config = FuzzConfig(backends=[BackendSpec(backend)], gen=GenConfig(opsets=(23,), ops=ops, dtypes=dtypes, max_nodes=3,
                                                                       nan_rate=0.0, edge_rate=0.0, patterns=()),
                        budget_s=120, seed=seed, max_graphs=graphs, isolate=False, shrink_s=10)
    return Campaign(config).run()


def test_rmsnormalization_float64_graphs_allow_the_specs_float32_stage_one():
    """RMSNormalization-23: 'if stash_type is 1, this operator casts all input variables to 32-bit
    float, perform the computation, and finally cast Normalized back to the original type of X'.
    The kernel engine does that for float64 X; the fuzz template judged it at float64's roundoff
    (a finding of the kernel campaign: 4.2e-9 off at rtol 1e-12)."""
    report = _campaign("kernels", ("RMSNormalization",), ("float64",), 40)
    assert report.stats.tested == 40 and report.findings == []


def test_groupnormalization_float64_graphs_allow_the_specs_float32_stage_one():
    """GroupNormalization-21: 'if stash_type is 1, the operator casts all input variables to 32-bit
    float, performs the computation, and finally casts the normalized results back to the
    original type of X'. PyTorch (and ONNX Runtime) do; the fuzz template judged them at float64's
    roundoff (a finding of the PyTorch campaign: 5.2e-8 off at rtol 1e-12)."""
    pytest.importorskip("torch", reason="torch is not installed")
    report = _campaign("pytorch", ("GroupNormalization",), ("float64",), 30)
    assert report.stats.tested == 30 and report.findings == []


def _kernel_run(op: str, x, const, attrs: dict, opset: int = 18):
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    from harness.backends.kernels import KernelsBackend

    x = np.asarray(x)
    graph = helper.make_graph([helper.make_node(op, ["x", "c"], ["y"], **attrs)], "g",
                              [helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)],
                              [helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(x.dtype), [None] * x.ndim)],
                              [numpy_helper.from_array(np.asarray(const), "c")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9)
    onnx.checker.check_model(model)
    return KernelsBackend().prepare(model).run({"x": x})[0]


def test_kernel_gather_elements_takes_indices_shorter_than_the_data_off_the_axis():
    """GatherElements-13: 'output[i][j][k] = input[index[i][j][k]][j][k] if axis = 0', output of
    the indices' shape: the kernel campaign's minimal graphs (data [1, 1, 3] with indices
    [1, 1, 2] raised IndexError; data [1, 2] with indices [[-1]] gave shape [1, 2])."""
    import numpy as np

    x = np.array([[[7, 8, 9]]], np.uint8)
    assert _kernel_run("GatherElements", x, np.zeros((1, 1, 2), np.int64), {"axis": 0}).tolist() == [[[7, 8]]]
    y = _kernel_run("GatherElements", np.array([[5, 6]], np.uint8), np.array([[-1]], np.int64), {"axis": 0})
    assert y.shape == (1, 1) and y.tolist() == [[5]]
    z = _kernel_run("GatherElements", np.arange(12, dtype=np.float32).reshape(3, 4), np.array([[3, 0], [1, 2]]), {"axis": 1})
    assert z.tolist() == [[3.0, 0.0], [5.0, 6.0]]


def test_kernel_integer_gemm_with_a_negative_alpha_wraps_in_unsigned_types():
    """Gemm-13 on uint32 with alpha = -1.0: the kernel raised OverflowError ('Python integer -1
    out of bounds for uint32') on the campaign's minimal graph, whose answer is 0; a nonzero
    product wraps as the type's arithmetic does (the spec gives no rule; the fuzz template no
    longer draws a negative alpha or beta on unsigned graphs, where our reference refuses the
    overflow)."""
    import numpy as np

    c = np.array([[2]], np.uint32)
    assert _kernel_run("Gemm", np.array([[0]], np.uint32), c, {"alpha": -1.0}).tolist() == [[0]]
    got = _kernel_run("Gemm", np.array([[3]], np.uint32), c, {"alpha": -1.0})
    assert got.dtype == np.uint32 and got.tolist() == [[2**32 - 6]]


def test_layernormalization_float32_stage_one_overflows_as_every_float32_evaluation_does():
    """LayerNormalization-17: 'if stash_type is 1, this operator casts all input variables to 32-bit
    float, perform the computation'. ONNX Runtime's minimal graph of the side-by-side run (X =
    [[-3.4e21, -0.65]] normalized over axis 0): (x - mean)^2 = 2.9e42 overflows float32 in any
    order, Var = inf, InvStdDev = 0, Y = [-0, 0] (onnx.reference and our kernels agree); our
    reference gave the float64 value [-0.92, 0.74]."""
    import numpy as np

    from harness.registry import load_all

    ref = load_all()[("", "LayerNormalization", 17)].reference
    scale = np.array([[0.916014, 0.7401362]], np.float32)
    y, mean, inv = ref(np.array([[-3.4336063e21, -0.64633608]], np.float32), scale, axis=0)
    assert y.tolist() == [[0.0, 0.0]] and np.signbit(y).tolist() == [[True, False]]
    assert inv.tolist() == [[0.0]] and mean.dtype == np.float32
    # a row of ordinary values normalizes as before
    y, _, _ = ref(np.array([[1.0, 2.0, 3.0]], np.float32), np.ones(3, np.float32))
    assert np.allclose(y, [[-1.2247357, 0.0, 1.2247357]], atol=1e-6)


def test_rmsnormalization_float32_stage_one_overflows_as_every_float32_evaluation_does():
    """RMSNormalization-23, stash_type 1: the kernel campaign's minimal graph X = [[-0.71, -5.8e21]]
    (axis 0): X * X overflows float32 in any order, RMS = inf, Y = [-0, -0] (the kernel engine,
    ONNX Runtime and onnx.reference on the stash_overflow example); our reference gave float64's
    [-1.9e-22, -1.19]."""
    import numpy as np

    from harness.registry import load_all

    ref = load_all()[("", "RMSNormalization", 23)].reference
    y = ref(np.array([[-0.71049, -5.7915e21]], np.float32), np.array([[1.1005418, 0.8392146]], np.float32), axis=0)
    assert np.asarray(y).tolist() == [[0.0, 0.0]] and np.signbit(y).all()
    y = ref(np.array([[3.0, 4.0]], np.float32), np.ones(2, np.float32), epsilon=0.0)
    assert np.allclose(y, [[3 / np.sqrt(12.5), 4 / np.sqrt(12.5)]], rtol=1e-6)


def test_optimized_and_unoptimized_sessions_compared_at_a_shape_the_graph_does_not_give():
    """Both ONNX Runtime sessions return a wrong shape (each a finding against the oracle): their
    comparison with each other takes the largest value of the per-element bound (drawn for the
    graph's shape), instead of ending the campaign on the bound's shape (a benchmark run did)."""
    from types import SimpleNamespace

    from harness.case import Tolerance
    from harness.generated.engine import Outcome
    from harness.generated.judge import Tester

    class Graph:
        silent: dict = {}
        outputs = [SimpleNamespace(name="y")]

        def feeds(self):
            return {}

        def expected(self):
            return [np.zeros((2, 2), np.float32)]

        def tolerances(self):
            return [Tolerance(rtol=0.0, atol=0.0, ulp=None, bound=(np.full((2, 2), 0.5),))]

    wrong = {"opt": [np.array([[0.25], [0.0]], np.float32)], "noopt": [np.array([[0.0], [0.0]], np.float32)]}
    executor = SimpleNamespace(run=lambda name, model, feeds: Outcome(wrong[name]))
    tester = Tester(executor, [BackendSpec("onnxruntime", name="opt"), BackendSpec("onnxruntime", name="noopt")],
                    {"opt": "onnxruntime", "noopt": "onnxruntime"}, [("opt", "noopt")])
    failures = tester.test(Graph(), b"")
    assert sorted(f.symptom for f in failures) == ["wrong-shape"], [f.symptom for f in failures]  # the sessions agree: 0.25 <= 2 * 0.5
    wrong["opt"] = [np.array([[1.5], [0.0]], np.float32)]
    failures = tester.test(Graph(), b"")
    assert any(f.symptom.startswith("opt-vs-noopt:") for f in failures), [f.symptom for f in failures]


def test_clip_with_a_nan_bound_may_clip_nothing():
    """Benchmark campaigns (seeds 5 and 11) met Clip-13 on float64 with a NaN min: ONNX Runtime's
    comparisons with NaN are false, so it clips nothing (-inf stays -inf; +inf still meets the
    absent max, the highest double), where we propagate the NaN. The text says nothing of NaN:
    that reading is accepted, and a value that is neither stays a mismatch."""
    from harness.registry import SilentCheck, load_all, spec_silent_point

    ref = load_all()[("", "Clip", 13)].reference
    x, lo = np.array([-np.inf, np.inf, 0.5]), np.array(np.nan)
    want = ref(x, lo, None)
    assert np.isnan(want).all()
    point = spec_silent_point("Clip.nan")
    masks = point.masks([x, lo, None], {}, [want], 13)
    ort = np.array([-np.inf, np.finfo(np.float64).max, 0.5])  # what ONNX Runtime 1.32 gives
    (holds,) = point.invariants.values()
    for actual, ok in ((want, True), (ort, True), (np.zeros(3), False), (np.array([-np.inf, np.inf, 0.5]), False)):
        assert holds(SilentCheck([x, lo, None], {}, [want], [actual], masks, 13, ref)) is ok, actual
    check = SilentCheck([x, lo, None], {}, [want], [ort], masks, 13, ref)
    assert np.array_equal(point.readings["a NaN bound clips nothing (a comparison with NaN is false)"](check)[0], ort)


def test_groupnormalization_float32_stage_one_overflows_as_every_float32_evaluation_does():
    """GroupNormalization-21: 'The floating-point precision used in the first stage is determined by
    the stash_type attribute' (float32 by default). A side-by-side campaign (seed 7) met a float32
    group whose squared deviations overflow float32: Var = inf, the normalized values are +-0
    (ONNX Runtime and onnx.reference give Y = bias); our reference gave float64's values."""
    from harness.registry import load_all

    ref = load_all()[("", "GroupNormalization", 21)].reference
    x = np.array([3e19, -2e19, 1.0, 2.5e19, 0.5, -1.0], np.float32).reshape(1, 2, 3)
    y = ref(x, np.ones(2, np.float32), np.array([0.25, -0.5], np.float32), num_groups=1)
    assert np.asarray(y).tolist() == [[[0.25, 0.25, 0.25], [-0.5, -0.5, -0.5]]]
    # a group of ordinary values normalizes as before; a double stash normalizes the big group
    y = ref(np.array([1.0, 2.0, 3.0, 4.0], np.float32).reshape(1, 2, 2), np.ones(2, np.float32), np.zeros(2, np.float32), num_groups=1)
    assert np.allclose(y, np.array([-3, -1, 1, 3]).reshape(1, 2, 2) / np.sqrt(5 + 1e-5), atol=1e-6)
    y = ref(x, np.ones(2, np.float32), np.zeros(2, np.float32), num_groups=1, stash_type=11)
    assert np.abs(np.asarray(y)).max() > 1
