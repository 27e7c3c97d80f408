"""Our TensorFlow lowering (harness/backends/tf) in its three modes: values written by hand from
the spec, what it cannot compute said as unsupported."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper

tf = pytest.importorskip("tensorflow", reason="tensorflow is not installed (pip install 'onnx-harness[tensorflow]')")

from harness.backends.base import Unsupported  # noqa: E402
from harness.backends.tf import TensorFlowBackend, TensorFlowEagerBackend, TensorFlowXlaBackend  # noqa: E402

MODES = (TensorFlowBackend, TensorFlowEagerBackend, TensorFlowXlaBackend)


@pytest.fixture(scope="module", params=MODES, ids=[m.name for m in MODES])
def backend(request):
    b = request.param()
    b.load()
    return b


def _model(node, inputs, n_out=1, opset=21, initializers=(), out=TP.FLOAT):
    outs = [helper.make_tensor_value_info(f"y{k}", out, None) for k in range(n_out)]
    graph = helper.make_graph([node], "g", inputs, outs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def _info(name, code, shape):
    return helper.make_tensor_value_info(name, code, shape)


def test_conv_with_padding_strides_and_groups(backend):
    x = np.arange(2 * 4 * 4, dtype=np.float32).reshape(1, 2, 4, 4)
    w = np.ones((2, 1, 2, 2), np.float32)  # group 2: each output channel sums a 2x2 window of its own channel
    node = helper.make_node("Conv", ["x", "w"], ["y0"], group=2, strides=[2, 2], pads=[1, 1, 0, 0])
    (y,) = backend.prepare(_model(node, [_info("x", TP.FLOAT, [1, 2, 4, 4]), _info("w", TP.FLOAT, [2, 1, 2, 2])])).run({"x": x, "w": w})
    # output (0, 0) sees only x[0, 0] (the rest is padding); (1, 1) sees x[1:3, 1:3]
    assert y.shape == (1, 2, 2, 2)
    assert y[0, 0].tolist() == [[0.0, 3.0], [12.0, 30.0]]
    assert y[0, 1].tolist() == [[16.0, 35.0], [44.0, 94.0]]


def test_pools_take_strides_and_dilations_together(backend):
    x = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)
    node = helper.make_node("MaxPool", ["x"], ["y0"], kernel_shape=[2, 2], strides=[3, 3], dilations=[2, 2])
    (y,) = backend.prepare(_model(node, [_info("x", TP.FLOAT, [1, 1, 5, 5])])).run({"x": x})
    assert y.tolist() == [[[[12.0]]]]  # taps x[0, 0], x[0, 2], x[2, 0], x[2, 2]: the largest is 12


def test_slice_clamps_and_steps_backward(backend):
    x = np.arange(6, dtype=np.int64)
    starts, ends, steps = (helper.make_tensor(n, TP.INT64, [1], [v]) for n, v in (("s", 100), ("e", -100), ("t", -2)))
    node = helper.make_node("Slice", ["x", "s", "e", "a", "t"], ["y0"])
    axes = helper.make_tensor("a", TP.INT64, [1], [0])
    (y,) = backend.prepare(_model(node, [_info("x", TP.INT64, [6])], initializers=[starts, ends, axes, steps], out=TP.INT64)).run({"x": x})
    assert y.tolist() == [5, 3, 1]


def test_bit_shift_28_defines_out_of_range_shifts(backend):
    x = np.array([-8, 8, -8], np.int32)
    y = np.array([-1, 40, 33], np.int32)
    node = helper.make_node("BitShift", ["x", "y"], ["y0"], direction="RIGHT")
    model = _model(node, [_info("x", TP.INT32, [3]), _info("y", TP.INT32, [3])], opset=28, out=TP.INT32)
    (z,) = backend.prepare(model).run({"x": x, "y": y})
    # "-1 for a right shift on a negative X ... and 0 in every other case"
    assert z.tolist() == [-1, 0, -1]


def test_gemm_with_a_row_bias(backend):
    a = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    b = np.eye(2, dtype=np.float32)
    c = np.array([[10.0, 20.0]], np.float32)
    node = helper.make_node("Gemm", ["a", "b", "c"], ["y0"], alpha=2.0, beta=0.5)
    model = _model(node, [_info("a", TP.FLOAT, [2, 2]), _info("b", TP.FLOAT, [2, 2]), _info("c", TP.FLOAT, [1, 2])])
    (y,) = backend.prepare(model).run({"a": a, "b": b, "c": c})
    assert y.tolist() == [[7.0, 14.0], [11.0, 18.0]]


def test_an_op_version_without_a_lowering_is_unsupported_by_name(backend):
    # MaxRoiPool: the one ai.onnx op the lowering leaves out
    node = helper.make_node("MaxRoiPool", ["x", "rois"], ["y0"], pooled_shape=[1, 1])
    model = _model(node, [_info("x", TP.FLOAT, [1, 1, 2, 2]), _info("rois", TP.FLOAT, [1, 5])], opset=22)
    with pytest.raises(Unsupported, match="no lowering for MaxRoiPool-22"):
        backend.prepare(model)


def test_a_type_tensorflow_cannot_hold_is_unsupported(backend):
    node = helper.make_node("Identity", ["x"], ["y0"])
    with pytest.raises(Unsupported, match="FLOAT8E8M0"):
        backend.prepare(_model(node, [_info("x", TP.FLOAT8E8M0, [2])], opset=25))


@pytest.mark.parametrize("mode", [TensorFlowBackend, TensorFlowEagerBackend], ids=["graph", "eager"])
def test_data_dependent_bounds_are_computed_as_tensors(mode):
    """Slice, Pad and Unsqueeze with their bounds, pads and axes fed as graph inputs: values from the spec's rules."""
    backend = mode()
    backend.load()
    i64 = lambda name, n: _info(name, TP.INT64, [n])  # noqa: E731
    node = helper.make_node("Slice", ["x", "s", "e", "a", "t"], ["y0"])
    model = _model(node, [_info("x", TP.FLOAT, [2, 6]), i64("s", 1), i64("e", 1), i64("a", 1), i64("t", 1)])
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    feeds = {"x": x, "s": np.array([100]), "e": np.array([-100]), "a": np.array([-1]), "t": np.array([-2])}
    assert backend.prepare(model).run(feeds)[0].tolist() == [[5.0, 3.0, 1.0], [11.0, 9.0, 7.0]]  # clamped to [-1, 5] backward
    node = helper.make_node("Pad", ["x", "p", "", "a"], ["y0"], mode="reflect")
    model = _model(node, [_info("x", TP.FLOAT, [2, 6]), i64("p", 2), i64("a", 1)], opset=18)
    y = backend.prepare(model).run({"x": x, "p": np.array([2, -1]), "a": np.array([1])})[0]
    assert y[0].tolist() == [2.0, 1.0, 0.0, 1.0, 2.0, 3.0, 4.0]  # two mirrored in front, the last one cropped
    node = helper.make_node("Pad", ["x", "p"], ["y0"], mode="wrap")
    model = _model(node, [_info("x", TP.FLOAT, [2, 6]), i64("p", 4)], opset=19)
    y = backend.prepare(model).run({"x": x, "p": np.array([0, 1, 0, 2])})[0]
    assert y[1].tolist() == [11.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 6.0, 7.0]
    node = helper.make_node("Unsqueeze", ["x", "a"], ["y0"])
    model = _model(node, [_info("x", TP.FLOAT, [2, 6]), i64("a", 2)])
    assert backend.prepare(model).run({"x": x, "a": np.array([3, 0])})[0].shape == (1, 2, 6, 1)


def _run_one(backend, op, inputs, attrs=None, n_out=1, opset=22, out=TP.FLOAT):
    """``op`` as a one-node model on ``inputs`` (name -> array), every input a graph input."""
    codes = {np.dtype(np.float32): TP.FLOAT, np.dtype(np.int64): TP.INT64, np.dtype(np.uint8): TP.UINT8}
    node = helper.make_node(op, list(inputs), [f"y{k}" for k in range(n_out)], **(attrs or {}))
    infos = [_info(n, codes[v.dtype], list(v.shape)) for n, v in inputs.items()]
    return backend.prepare(_model(node, infos, n_out=n_out, opset=opset, out=out)).run(inputs)


def test_losses_match_our_reference(backend):
    from operator_cases.math.negative_log_likelihood_loss import negative_log_likelihood_loss
    from operator_cases.math.softmax_cross_entropy_loss import softmax_cross_entropy_loss

    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 2)).astype(np.float32)
    target = np.array([[0, 3], [1, -1], [2, 2]], np.int64)  # one ignored
    weight = np.array([0.5, 1.0, 2.0, 0.25], np.float32)
    for reduction in ("none", "sum", "mean"):
        attrs = {"reduction": reduction, "ignore_index": -1}
        (got,) = _run_one(backend, "NegativeLogLikelihoodLoss", {"x": x, "t": target, "w": weight}, attrs)
        np.testing.assert_allclose(got, negative_log_likelihood_loss(x, target, weight, **attrs), rtol=1e-6)
        loss, log_prob = _run_one(backend, "SoftmaxCrossEntropyLoss", {"x": x, "t": target}, attrs, n_out=2, opset=13)
        want_loss, want_log_prob = softmax_cross_entropy_loss(x, target, **attrs)
        np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
        np.testing.assert_allclose(log_prob, want_log_prob, rtol=1e-5)


def test_block_moves_and_range_match_our_reference(backend):
    from operator_cases.generator.range import range_27
    from operator_cases.tensor.space_to_depth import space_to_depth

    x = np.arange(2 * 3 * 4 * 6, dtype=np.float32).reshape(2, 3, 4, 6)
    for mode in ("DCR", "CRD"):
        (got,) = _run_one(backend, "SpaceToDepth", {"x": x}, {"blocksize": 2, "mode": mode}, opset=28)
        np.testing.assert_array_equal(got, space_to_depth(x, blocksize=2, mode=mode))
        (back,) = _run_one(backend, "DepthToSpace", {"x": got}, {"blocksize": 2, "mode": mode}, opset=28)
        np.testing.assert_array_equal(back, x)  # DepthToSpace undoes SpaceToDepth in the same mode
    start, limit, delta = (np.array(v, np.float32) for v in (0.1, 3.0, 0.3))
    (got,) = _run_one(backend, "Range", {"s": start, "l": limit, "d": delta}, opset=27)
    np.testing.assert_array_equal(got, range_27(start, limit, delta))  # start + i * delta, not summed


def test_activations_and_bitwise_ops(backend):
    from operator_cases.math.gelu import gelu

    x = np.linspace(-4, 4, 17, dtype=np.float32)
    for approximate in ("none", "tanh"):
        (got,) = _run_one(backend, "Gelu", {"x": x}, {"approximate": approximate}, opset=20)
        np.testing.assert_allclose(got, gelu(x, approximate=approximate), rtol=1e-6, atol=1e-7)
    a, b = np.array([0b1100, 255, 7], np.uint8), np.array([0b1010, 1, 0], np.uint8)
    assert _run_one(backend, "BitwiseXor", {"a": a, "b": b}, opset=18, out=TP.UINT8)[0].tolist() == [0b0110, 254, 7]
    assert _run_one(backend, "BitwiseNot", {"a": a}, opset=18, out=TP.UINT8)[0].tolist() == [0b11110011, 0, 248]


def test_reductions_over_axes_given_as_a_graph_input(backend):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (got,) = _run_one(backend, "ReduceSum", {"x": x, "a": np.array([1], np.int64)}, {"keepdims": 0}, opset=13)
    np.testing.assert_array_equal(got, x.sum(axis=1))  # XLA reduced over a wrong constant here, through a tf.cond
    b = np.array([[True, False], [False, False]])
    node = helper.make_node("ReduceMax", ["x", "a"], ["y0"], keepdims=0)
    model = _model(node, [_info("x", TP.BOOL, [2, 2]), _info("a", TP.INT64, [1])], opset=20, out=TP.BOOL)
    assert backend.prepare(model).run({"x": b, "a": np.array([1], np.int64)})[0].tolist() == [True, False]


def test_attention_matches_our_reference(backend):
    from operator_cases.nn.attention import attention_24

    rng = np.random.default_rng(1)
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    # grouped heads (4 query heads on 2 K/V heads), a KV cache, causal, softcap, the mode-3 weights
    inputs = {"q": f(2, 4, 3, 8), "k": f(2, 2, 3, 8), "v": f(2, 2, 3, 5), "m": rng.random((3, 5)) > 0.3,
              "pk": f(2, 2, 2, 8), "pv": f(2, 2, 2, 5)}
    attrs = {"is_causal": 1, "softcap": 2.0, "qk_matmul_output_mode": 3}
    codes = {np.dtype(np.float32): TP.FLOAT, np.dtype(np.bool_): TP.BOOL}
    node = helper.make_node("Attention", list(inputs), ["y0", "y1", "y2", "y3"], **attrs)
    model = _model(node, [_info(n, codes[v.dtype], list(v.shape)) for n, v in inputs.items()], n_out=4, opset=24)
    got = backend.prepare(model).run(inputs)
    want = attention_24(inputs["q"], inputs["k"], inputs["v"], inputs["m"], inputs["pk"], inputs["pv"], **attrs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_scatters_and_compress_match_our_reference(backend):
    from operator_cases.tensor.scatter_elements import scatter_elements_16
    from operator_cases.tensor.scatter_nd import scatter_nd_16

    data = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    idx = np.array([[-1], [0], [2], [0]], np.int64)  # row 0 twice, a negative index
    upd = np.arange(2, 18, dtype=np.float32).reshape(4, 4)
    for reduction in ("add", "mul", "max"):
        (got,) = _run_one(backend, "ScatterND", {"d": data, "i": idx, "u": upd}, {"reduction": reduction}, opset=18)
        np.testing.assert_allclose(got, scatter_nd_16(data, idx, upd, reduction=reduction), rtol=1e-6)
    eidx = np.array([[1, -1, 0], [1, 1, 3]], np.int64)
    eupd = np.array([[2, 3, 4], [5, 6, 7]], np.float32)
    (got,) = _run_one(backend, "ScatterElements", {"d": data, "i": eidx, "u": eupd}, {"axis": 1, "reduction": "mul"}, opset=18)
    np.testing.assert_allclose(got, scatter_elements_16(data, eidx, eupd, axis=1, reduction="mul"))
    cond = np.array([False, True, True])  # shorter than the axis: the last column is dropped
    node = helper.make_node("Compress", ["x", "c"], ["y0"], axis=1)
    model = _model(node, [_info("x", TP.FLOAT, [3, 4]), _info("c", TP.BOOL, [3])], opset=11)
    assert backend.prepare(model).run({"x": data, "c": cond})[0].tolist() == np.compress(cond, data, axis=1).tolist()


@pytest.mark.parametrize("mode", [TensorFlowBackend, TensorFlowEagerBackend], ids=["graph", "eager"])
def test_if_and_loop_with_a_data_dependent_condition_and_a_scan_output(mode):
    backend = mode()
    backend.load()
    out = lambda name, code=TP.FLOAT: helper.make_tensor_value_info(name, code, None)  # noqa: E731
    then_g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["t"])], "then", [], [out("t")])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [out("e")])
    node = helper.make_node("If", ["c"], ["y0"], then_branch=then_g, else_branch=else_g)
    model = _model(node, [_info("c", TP.BOOL, []), _info("x", TP.FLOAT, [2])])
    session = backend.prepare(model)
    x = np.array([1.5, -2.0], np.float32)
    assert session.run({"c": np.array(True), "x": x})[0].tolist() == [3.0, -4.0]
    assert session.run({"c": np.array(False), "x": x})[0].tolist() == [-1.5, 2.0]
    # sum += i for i < M while sum < 4: state sum, scan output the running sums
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=TP.FLOAT), helper.make_node("Add", ["s", "fi"], ["s2"]),
         helper.make_node("Less", ["s2", "four"], ["c2"]), helper.make_node("Identity", ["s2"], ["scan"])],
        "body", [_info("i", TP.INT64, []), _info("c", TP.BOOL, []), _info("s", TP.FLOAT, [])],
        [out("c2", TP.BOOL), out("s2"), out("scan")], initializer=[helper.make_tensor("four", TP.FLOAT, [], [4.0])])
    node = helper.make_node("Loop", ["m", "c", "s0"], ["y0", "y1"], body=body)
    model = _model(node, [_info("m", TP.INT64, []), _info("c", TP.BOOL, []), _info("s0", TP.FLOAT, [])], n_out=2, opset=16)
    final, sums = backend.prepare(model).run({"m": np.array(10), "c": np.array(True), "s0": np.array(0.0, np.float32)})
    assert float(final) == 6.0 and sums.tolist() == [0.0, 1.0, 3.0, 6.0]  # stops after the sum reaches 4


@pytest.mark.parametrize("mode", [TensorFlowBackend, TensorFlowEagerBackend], ids=["graph", "eager"])
def test_resize_matches_our_reference(mode):
    from operator_cases.tensor.resize import resize_19

    backend = mode()
    backend.load()
    x = np.random.default_rng(2).standard_normal((1, 2, 5, 4)).astype(np.float32)
    cases = [({"mode": "cubic", "exclude_outside": 1, "coordinate_transformation_mode": "half_pixel"}, [1.0, 1.0, 0.6, 1.7], None),
             ({"mode": "linear", "coordinate_transformation_mode": "align_corners"}, [1.0, 1.0, 0.6, 0.6], None),
             ({"mode": "nearest", "nearest_mode": "round_prefer_ceil", "keep_aspect_ratio_policy": "not_larger",
               "coordinate_transformation_mode": "asymmetric"}, None, [1, 2, 7, 7])]
    for attrs, scales, sizes in cases:
        node = helper.make_node("Resize", ["x", "", "s" if scales else "", "z" if sizes else ""], ["y0"], **attrs)
        feeds = {"x": x, **({"s": np.array(scales, np.float32)} if scales else {}), **({"z": np.array(sizes, np.int64)} if sizes else {})}
        infos = [_info("x", TP.FLOAT, list(x.shape))] + ([_info("s", TP.FLOAT, [4])] if scales else []) + (
            [_info("z", TP.INT64, [4])] if sizes else [])
        (got,) = backend.prepare(_model(node, infos, opset=19)).run(feeds)
        want = resize_19(x, None, None if scales is None else np.array(scales, np.float32), None if sizes is None else np.array(sizes), **attrs)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=str(attrs))


def test_rotary_embedding_and_center_crop_pad_match_our_reference(backend):
    from operator_cases.tensor.center_crop_pad import center_crop_pad
    from operator_cases.nn.rotary_embedding import rotary_embedding_23

    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 2, 8)).astype(np.float32)  # (batch, heads, sequence, head_size)
    cos, sin = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32)
    pos = np.array([[3, 0], [1, 2]], np.int64)
    attrs = {"interleaved": 1, "rotary_embedding_dim": 6}
    (got,) = _run_one(backend, "RotaryEmbedding", {"x": x, "c": cos, "s": sin, "p": pos}, attrs, opset=23)
    np.testing.assert_allclose(got, rotary_embedding_23(x, cos, sin, pos, **attrs), rtol=1e-6, atol=1e-6)
    data = np.arange(20, dtype=np.float32).reshape(4, 5)
    target = np.array([7, 2], np.int64)  # pad rows 4 -> 7 (the odd pixel on the right), crop columns 5 -> 2
    (got,) = _run_one(backend, "CenterCropPad", {"x": data, "t": target}, opset=18)
    np.testing.assert_array_equal(got, center_crop_pad(data, target))


@pytest.mark.parametrize("mode, padding, align, rank", [("linear", "zeros", 0, 4), ("cubic", "reflection", 1, 4), ("cubic", "border", 0, 4),
                                                        ("nearest", "reflection", 0, 5), ("linear", "border", 1, 5)])
def test_grid_sample_matches_our_reference(backend, mode, padding, align, rank):
    from operator_cases.tensor.grid_sample import grid_sample_20

    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 2, 4, 5) if rank == 4 else (1, 1, 3, 4, 5)).astype(np.float32)
    grid = (rng.integers(-40, 40, (1, 3, 2, 2) if rank == 4 else (1, 2, 3, 2, 3)) / 16).astype(np.float32)  # out of bounds too
    attrs = {"mode": mode, "padding_mode": padding, "align_corners": align}
    (got,) = _run_one(backend, "GridSample", {"x": x, "g": grid}, attrs, opset=22)
    np.testing.assert_allclose(got, grid_sample_20(x, grid, **attrs), rtol=1e-5, atol=1e-6)


# -- the lowerings of types TensorFlow holds natively, quantization, control flow, recurrences ----
def _reference(module: str, op: str, since: int):
    """Our reference for one op-version (operator_cases, written from the spec)."""
    import importlib

    from harness.registry import REGISTRY, operator_modules

    importlib.import_module(next(m for m in operator_modules() if m.rpartition(".")[2] == module))
    return REGISTRY[("", op, since)].reference


def _one(backend, op, inputs, codes, attrs=None, outs=(TP.FLOAT,), opset=25):
    """``op`` on ``inputs`` (name -> (array, ONNX type)), each a graph input; ``outs`` the output types."""
    node = helper.make_node(op, list(inputs), [f"y{k}" for k in range(len(outs))], **(attrs or {}))
    infos = [_info(n, code, list(np.shape(v))) for (n, v), code in zip(inputs.items(), codes)]
    graph = helper.make_graph([node], "g", infos, [_info(f"y{k}", t, None) for k, t in enumerate(outs)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=11)
    return backend.prepare(model).run(inputs)


@pytest.mark.parametrize("to,saturate", [(TP.FLOAT8E4M3FN, 1), (TP.FLOAT8E4M3FN, 0), (TP.FLOAT8E5M2, 1), (TP.FLOAT8E5M2, 0),
                                         (TP.INT4, 1), (TP.UINT4, 1)])
def test_cast_to_tensorflows_narrow_types_matches_our_reference(backend, to, saturate):
    x = np.array([0.0, -0.0, 0.3, 2.5, -3.5, 7.6, 300.0, 470.0, -1e6, np.inf, -np.inf, 1e-9], np.float32)
    if to in (TP.INT4, TP.UINT4):
        if backend.name == "tensorflow-xla":
            pytest.skip(_XLA_INT4)
        x = np.array([0.0, 2.5, 3.5, -2.5, 6.6, -7.5, 1.5, 0.5], np.float32)  # ties to even (inside the range: outside it is undefined)
        x = np.abs(x) if to == TP.UINT4 else x
    (got,) = _one(backend, "Cast", {"x": x}, [TP.FLOAT], {"to": to, "saturate": saturate}, outs=(to,))
    want = _reference("cast", "Cast", 25)(x, to=to, saturate=saturate)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))


_XLA_INT4 = ("TensorFlow's bug under XLA (a silent wrong result, in tensorflow.toml): int4/uint4 values crossing the "
             "jit_compile boundary are read and written with another packing ([[1, -2, 0], [3, 0, -1]] cast to int32 gives "
             "[[1, 0, -2], [0, 0, 0]])")


def test_quantize_blocked_to_int4_and_dequantize_float8_match_our_reference(backend):
    import ml_dtypes

    if backend.name == "tensorflow-xla":
        pytest.skip(_XLA_INT4)

    rng = np.random.default_rng(3)
    x = rng.uniform(-20, 20, (2, 6)).astype(np.float32)
    scale = np.array([[1.5, 2.0, 0.5], [3.0, 0.25, 1.0]], np.float32)
    zp = np.array([[1, -2, 0], [3, 0, -1]], ml_dtypes.int4)
    attrs = {"axis": 1, "block_size": 2}
    (q,) = _one(backend, "QuantizeLinear", {"x": x, "s": scale, "z": zp}, [TP.FLOAT, TP.FLOAT, TP.INT4], attrs, outs=(TP.INT4,))
    want = _reference("quantize_linear", "QuantizeLinear", 25)(x, scale, zp, **attrs)
    np.testing.assert_array_equal(q.astype(np.int8), want.astype(np.int8))
    f8 = np.array([0.5, -448, 3.25, 0.0], ml_dtypes.float8_e4m3fn)
    s = np.array(0.125, np.float32)
    (d,) = _one(backend, "DequantizeLinear", {"x": f8, "s": s}, [TP.FLOAT8E4M3FN, TP.FLOAT])
    np.testing.assert_array_equal(d, _reference("dequantize_linear", "DequantizeLinear", 25)(f8, s))


def test_a_type_without_a_tensorflow_cast_is_unsupported_naming_it(backend):
    x = np.array([1.0, 2.0], np.float32)
    with pytest.raises(Exception) as info:
        _one(backend, "Cast", {"x": x}, [TP.FLOAT], {"to": TP.FLOAT4E2M1}, outs=(TP.FLOAT4E2M1,))
    assert backend.classify_error(info.value, "run") == "unsupported"
    assert "float4_e2m1fn" in str(info.value) or "unsupported operations" in str(info.value)  # XLA's own words
    with pytest.raises(Unsupported, match="FLOAT8E8M0"):
        _one(backend, "Cast", {"x": x}, [TP.FLOAT], {"to": TP.FLOAT8E8M0}, outs=(TP.FLOAT8E8M0,))


def test_lstm_and_gru_match_our_reference(backend):
    rng = np.random.default_rng(4)
    f = lambda *shape: rng.uniform(-1, 1, shape).astype(np.float32)  # noqa: E731
    lens = np.array([3, 1], np.int32)
    x, hidden = f(3, 2, 4), 5
    lstm = {"X": x, "W": f(2, 4 * hidden, 4), "R": f(2, 4 * hidden, hidden), "B": f(2, 8 * hidden), "L": lens,
            "H": f(2, 2, hidden), "C": f(2, 2, hidden), "P": f(2, 3 * hidden)}
    attrs = {"direction": "bidirectional", "hidden_size": hidden, "clip": 0.8}
    codes = [TP.FLOAT] * 4 + [TP.INT32] + [TP.FLOAT] * 3
    got = _one(backend, "LSTM", lstm, codes, attrs, outs=(TP.FLOAT,) * 3, opset=22)
    want = _reference("lstm", "LSTM", 22)(*lstm.values(), **attrs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    gru = {"X": x, "W": f(1, 3 * hidden, 4), "R": f(1, 3 * hidden, hidden), "B": f(1, 6 * hidden), "L": lens}
    attrs = {"direction": "reverse", "hidden_size": hidden, "linear_before_reset": 1}
    got = _one(backend, "GRU", gru, [TP.FLOAT] * 4 + [TP.INT32], attrs, outs=(TP.FLOAT,) * 2, opset=22)
    want = _reference("gru", "GRU", 22)(*gru.values(), **attrs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_conv_transpose_and_dft_match_our_reference(backend):
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((1, 4, 3, 4)).astype(np.float32), rng.standard_normal((4, 3, 2, 3)).astype(np.float32)
    attrs = {"group": 2, "strides": [2, 3], "dilations": [2, 1], "pads": [1, 0, 0, 2], "output_padding": [1, 2]}
    (got,) = _one(backend, "ConvTranspose", {"x": x, "w": w}, [TP.FLOAT] * 2, attrs, opset=22)
    np.testing.assert_allclose(got, _reference("conv_transpose", "ConvTranspose", 22)(x, w, **attrs), rtol=1e-5, atol=1e-5)
    signal = rng.standard_normal((2, 6, 1)).astype(np.float32)
    for attrs in ({"onesided": 1}, {"inverse": 1}):
        (got,) = _one(backend, "DFT", {"x": signal}, [TP.FLOAT], attrs, opset=20)
        want = _reference("dft", "DFT", 20)(signal, **attrs)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=str(attrs))


def test_unique_and_linear_attention_match_our_reference(backend):
    if backend.name == "tensorflow-xla":
        pytest.skip("XLA compiles no Unique (its output shape depends on the data)")
    x = np.array([[2, 1, 2], [0, 5, 0], [2, 1, 2], [0, 1, 9]], np.int64)
    got = _one(backend, "Unique", {"x": x}, [TP.INT64], {"axis": 0}, outs=(TP.INT64,) * 4, opset=11)
    for g, w in zip(got, _reference("unique", "Unique", 11)(x, axis=0)):
        np.testing.assert_array_equal(g, w)
    rng = np.random.default_rng(6)
    f = lambda *shape: rng.uniform(-0.5, 0.5, shape).astype(np.float32)  # noqa: E731
    inputs = {"q": f(1, 3, 8), "k": f(1, 3, 4), "v": f(1, 3, 6), "s": f(1, 1, 4, 6), "g": f(1, 3, 1), "b": f(1, 3, 1)}
    attrs = {"q_num_heads": 2, "kv_num_heads": 1, "update_rule": "gated_delta"}
    got = _one(backend, "LinearAttention", inputs, [TP.FLOAT] * 6, attrs, outs=(TP.FLOAT,) * 2, opset=27)
    for g, w in zip(got, _reference("linear_attention", "LinearAttention", 27)(*inputs.values(), **attrs)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_scan_and_sequences(backend):
    # Scan: state s, scan input x (axis 1, reversed); the body gives s + x and (s + x) * 2
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "x"], ["s2"]), helper.make_node("Add", ["s2", "s2"], ["o"])], "body",
        [_info("s", TP.FLOAT, [2]), _info("x", TP.FLOAT, [2])], [_info("s2", TP.FLOAT, [2]), _info("o", TP.FLOAT, [2])])
    node = helper.make_node("Scan", ["s0", "xs"], ["y0", "y1"], body=body, num_scan_inputs=1, scan_input_axes=[1],
                            scan_input_directions=[1])
    xs = np.array([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]], np.float32)
    model = _model(node, [_info("s0", TP.FLOAT, [2]), _info("xs", TP.FLOAT, [2, 3])], n_out=2)
    last, outs = backend.prepare(model).run({"s0": np.zeros(2, np.float32), "xs": xs})
    assert last.tolist() == [6.0, 60.0]
    assert outs.tolist() == [[6.0, 60.0], [10.0, 100.0], [12.0, 120.0]]  # running sums of 3, 2, 1 (and 30, 20, 10), doubled
    # SplitToSequence, SequenceInsert at the front, ConcatFromSequence with a new axis, SequenceLength
    nodes = [helper.make_node("SplitToSequence", ["x"], ["seq"], axis=0, keepdims=0),
             helper.make_node("SequenceInsert", ["seq", "z", "p"], ["seq2"]),
             helper.make_node("ConcatFromSequence", ["seq2"], ["y0"], axis=0, new_axis=1),
             helper.make_node("SequenceLength", ["seq2"], ["y1"])]
    graph = helper.make_graph(nodes, "g", [_info("x", TP.FLOAT, [2, 2]), _info("z", TP.FLOAT, [2])],
                              [_info("y0", TP.FLOAT, None), _info("y1", TP.INT64, None)],
                              initializer=[helper.make_tensor("p", TP.INT64, [], [-2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    stacked, length = backend.prepare(model).run({"x": np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), "z": np.zeros(2, np.float32)})
    assert stacked.tolist() == [[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]]  # position -2 of 2 is the front
    assert int(length) == 3
