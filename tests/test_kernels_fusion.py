"""The kernels engine's compile-time fusion of per-channel affine chains (Conv -> BatchNormalization
-> Mul -> Add folded into the Conv; BatchNormalization -> Mul -> Add into one step) and of the
Relu after them: where it is taken it gives the unfused plan's numbers within float32 rounding
on random inputs (the Relu: the same bits), and it is not taken where one of its assumptions
fails."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from harness.backends.kernels.compiler import compile_model

F = TensorProto.FLOAT
RNG_SEED = 11


def _params(rng, channels, dtype=np.float32):
    """BatchNormalization's scale, bias, mean and (positive) variance."""
    return [rng.standard_normal(channels).astype(dtype), rng.standard_normal(channels).astype(dtype),
            rng.standard_normal(channels).astype(dtype), (rng.random(channels) + 0.5).astype(dtype)]


def _model(nodes, inits, x_shape, outputs=("y",), opset=13, inputs=(), elem=F, ir_version=8):
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", elem, x_shape), *inputs],
        [helper.make_tensor_value_info(o, elem, [None] * len(x_shape)) for o in outputs],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version)


def _conv_chain(rng, bias=True, group=2, opset=13, bn_attrs=None, tail=True, dtype=np.float32):
    """Conv (3x3, pads, group) -> BatchNormalization [-> Mul -> Add by per-channel constants]."""
    M, C = 6, 4
    inits = {"w": (rng.standard_normal((M, C // group, 3, 3)) * 0.3).astype(dtype)}
    conv_in = ["x", "w"]
    if bias:
        inits["b"] = rng.standard_normal(M).astype(dtype)
        conv_in.append("b")
    for name, v in zip(("s", "bb", "m", "v"), _params(rng, M, dtype)):
        inits[name] = v
    nodes = [helper.make_node("Conv", conv_in, ["c"], pads=[1, 0, 1, 2], group=group),
             helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n" if tail else "y"], **(bn_attrs or {}))]
    if tail:
        inits["k"] = rng.standard_normal((M, 1, 1)).astype(dtype)
        inits["t"] = rng.standard_normal((1, M, 1, 1)).astype(dtype)
        nodes += [helper.make_node("Mul", ["n", "k"], ["p"]), helper.make_node("Add", ["t", "p"], ["y"])]
    return nodes, inits


def _both(model, feeds):
    """(fused plan, its outputs, unfused plan's outputs)."""
    fused = compile_model(model)
    plain = compile_model(model, fuse=False)
    return fused, fused.run(feeds), plain.run(feeds)


def _labels(plan):
    return [step[5] for step in plan.steps]


def _close(a, b):
    """Equal within float32 rounding of sums of a few dozen terms, relative to the magnitude."""
    scale = float(np.abs(b).max())
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * scale)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("tail", [True, False])
def test_conv_then_batch_norm_mul_add_is_one_conv_with_the_same_numbers(bias, tail):
    rng = np.random.default_rng(RNG_SEED)
    nodes, inits = _conv_chain(rng, bias=bias, tail=tail)
    x = rng.standard_normal((2, 4, 7, 6)).astype(np.float32)
    fused, (y,), (expected,) = _both(_model(nodes, inits, [2, 4, 7, 6]), {"x": x})
    assert [label.split("(")[0] for label in _labels(fused)] == ["Conv"]
    assert _labels(fused)[0].count("+") == (3 if tail else 1)
    assert y.dtype == np.float32 and y.shape == expected.shape
    _close(y, expected)


def test_batch_norm_mul_add_without_a_conv_is_one_affine_step_with_the_same_numbers():
    # DenseNet's BatchNormalization -> Mul -> Add before each ReLU
    rng = np.random.default_rng(RNG_SEED)
    C = 5
    inits = dict(zip(("s", "bb", "m", "v"), _params(rng, C)))
    inits["k"] = rng.standard_normal((C, 1, 1)).astype(np.float32)
    inits["t"] = rng.standard_normal((C, 1, 1)).astype(np.float32)
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "bb", "m", "v"], ["n"], epsilon=1e-3),
             helper.make_node("Mul", ["n", "k"], ["p"]), helper.make_node("Add", ["p", "t"], ["r"]),
             helper.make_node("Relu", ["r"], ["y"])]
    x = rng.standard_normal((3, C, 4, 6)).astype(np.float32)
    fused, (y,), (expected,) = _both(_model(nodes, inits, [3, C, 4, 6]), {"x": x})
    assert _labels(fused) == ["BatchNormalization(n)+Mul(p)+Add(r)+Relu(y)"]
    _close(y, expected)


def _unfused(model, feeds):
    """The plan has as many steps as the unfused one and gives exactly its numbers."""
    fused, got, expected = _both(model, feeds)
    assert _labels(fused) == _labels(compile_model(model, fuse=False))
    assert not any("+" in label for label in _labels(fused))
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)


X = np.random.default_rng(3).standard_normal((2, 4, 7, 6)).astype(np.float32)


def test_the_conv_is_not_fused_when_its_output_is_also_a_graph_output():
    nodes, inits = _conv_chain(np.random.default_rng(RNG_SEED))
    fused, (y, c), (expected_y, expected_c) = _both(_model(nodes, inits, [2, 4, 7, 6], outputs=("y", "c")), {"x": X})
    # the chain after it is still one step
    assert _labels(fused) == ["Conv(c)", "BatchNormalization(n)+Mul(p)+Add(y)"]
    np.testing.assert_array_equal(c, expected_c)
    _close(y, expected_y)


def test_not_fused_when_the_conv_output_has_a_second_reader():
    nodes, inits = _conv_chain(np.random.default_rng(RNG_SEED), tail=False)
    nodes.append(helper.make_node("Relu", ["c"], ["r"]))
    _unfused(_model(nodes, inits, [2, 4, 7, 6], outputs=("y", "r")), {"x": X})


def test_not_fused_in_training_mode():
    nodes, inits = _conv_chain(np.random.default_rng(RNG_SEED), tail=False, bn_attrs=dict(training_mode=1))
    _unfused(_model(nodes, inits, [2, 4, 7, 6], opset=15), {"x": X})


def test_not_fused_with_spatial_0():
    nodes, inits = _conv_chain(np.random.default_rng(RNG_SEED), tail=False, bn_attrs=dict(spatial=0))
    _unfused(_model(nodes, inits, [2, 4, 7, 6], opset=7), {"x": X})


def test_not_fused_when_a_parameter_can_be_fed():
    # an initializer listed as a graph input (IR >= 4) is only a default value
    nodes, inits = _conv_chain(np.random.default_rng(RNG_SEED), tail=False)
    scale = helper.make_tensor_value_info("s", F, [6])
    model = _model(nodes, inits, [2, 4, 7, 6], inputs=[scale])
    _unfused(model, {"x": X})
    _unfused(model, {"x": X, "s": np.full(6, 3.0, np.float32)})


def test_not_fused_when_the_constant_is_not_per_channel():
    rng = np.random.default_rng(RNG_SEED)
    nodes, inits = _conv_chain(rng, tail=False)
    nodes[-1].output[0] = "n"
    inits["k"] = rng.standard_normal((1, 1, 1, 6)).astype(np.float32)  # varies along the width
    nodes.append(helper.make_node("Mul", ["n", "k"], ["y"]))
    fused, (y,), (expected,) = _both(_model(nodes, inits, [2, 4, 7, 6]), {"x": X})
    # the Conv takes the BatchNormalization, not the Mul
    assert [label.split("(")[0] for label in _labels(fused)] == ["Conv", "Mul"]
    _close(y, expected)


def test_not_fused_in_float16():
    nodes, inits = _conv_chain(np.random.default_rng(RNG_SEED), dtype=np.float16)
    _unfused(_model(nodes, inits, [2, 4, 7, 6], elem=TensorProto.FLOAT16), {"x": X.astype(np.float16)})


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_not_fused_when_a_folded_value_is_not_finite():
    # variance -epsilon: 1 / sqrt(0) is infinite, the unfused steps' NaN and infinities stay theirs
    nodes, inits = _conv_chain(np.random.default_rng(RNG_SEED), tail=False, bn_attrs=dict(epsilon=0.25))
    inits["v"][2] = -0.25
    _unfused(_model(nodes, inits, [2, 4, 7, 6]), {"x": X})


def test_a_lone_batch_norm_stays_as_it_is():
    rng = np.random.default_rng(RNG_SEED)
    inits = dict(zip(("s", "bb", "m", "v"), _params(rng, 4)))
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "bb", "m", "v"], ["n"]), helper.make_node("Relu", ["n"], ["y"])]
    _unfused(_model(nodes, inits, [2, 4, 7, 6]), {"x": X})


def _conv_relu(rng, dtype=np.float32):
    w = (rng.standard_normal((6, 4, 3, 3)) * 0.3).astype(dtype)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])]
    return nodes, {"w": w}


def test_a_relu_after_a_conv_runs_in_its_step_with_the_same_bits():
    nodes, inits = _conv_relu(np.random.default_rng(RNG_SEED))
    fused, (y,), (expected,) = _both(_model(nodes, inits, [2, 4, 7, 6]), {"x": X})
    assert _labels(fused) == ["Conv(c)+Relu(y)"]
    assert (y == 0).any() and (y > 0).any()
    np.testing.assert_array_equal(y, expected)


def test_a_relu_after_a_fused_chain_runs_in_its_step():
    nodes, inits = _conv_chain(np.random.default_rng(RNG_SEED))
    nodes[-1].output[0] = "r"
    nodes.append(helper.make_node("Relu", ["r"], ["y"]))
    fused, (y,), (expected,) = _both(_model(nodes, inits, [2, 4, 7, 6]), {"x": X})
    assert _labels(fused) == ["Conv(c)+BatchNormalization(n)+Mul(p)+Add(r)+Relu(y)"]
    _close(y, expected)


def test_a_relu_is_not_taken_when_the_conv_output_has_another_reader():
    nodes, inits = _conv_relu(np.random.default_rng(RNG_SEED))
    nodes.append(helper.make_node("Neg", ["c"], ["z"]))
    _unfused(_model(nodes, inits, [2, 4, 7, 6], outputs=("y", "z")), {"x": X})


def test_a_relu_is_not_taken_in_float16():
    nodes, inits = _conv_relu(np.random.default_rng(RNG_SEED), np.float16)
    _unfused(_model(nodes, inits, [2, 4, 7, 6], elem=TensorProto.FLOAT16), {"x": X.astype(np.float16)})


# -- a channel shuffle read by a depthwise Conv ------------------------------------------------


def _shuffle_conv(rng, C, G, merge=None, group=None, bn=False, **conv_attrs):
    """Reshape (N, C, 9, 7) -> (N, G, C / G, 9, 7), Transpose [0, 2, 1, 3, 4], Reshape to
    ``merge`` (default: back to (N, C, 9, 7), written with a 0 and a -1), then a Conv of C
    filters of one channel (depthwise: ``group`` C) [-> BatchNormalization -> Relu]."""
    group = C if group is None else group
    inits = {"s1": np.array([0, G, C // G, 9, 7], np.int64),
             "s2": np.array(merge if merge is not None else [0, -1, 9, 7], np.int64),
             "w": (rng.standard_normal((C, C // group, 3, 3)) * 0.3).astype(np.float32),
             "b": rng.standard_normal(C).astype(np.float32)}
    nodes = [helper.make_node("Reshape", ["x", "s1"], ["r"]),
             helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1, 3, 4]),
             helper.make_node("Reshape", ["t", "s2"], ["m"]),
             helper.make_node("Conv", ["m", "w", "b"], ["c" if bn else "y"], group=group, kernel_shape=[3, 3], **conv_attrs)]
    if bn:
        inits.update(zip(("bs", "bb", "bm", "bv"), _params(rng, C)))
        nodes += [helper.make_node("BatchNormalization", ["c", "bs", "bb", "bm", "bv"], ["n"]),
                  helper.make_node("Relu", ["n"], ["y"])]
    return nodes, inits


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("C, G", [(12, 4), (12, 3), (10, 2)])
@pytest.mark.parametrize("conv_attrs", [dict(pads=[1, 1, 1, 1]), dict(pads=[1, 0, 2, 1], strides=[2, 2]), dict(strides=[1, 2], dilations=[2, 1])])
@pytest.mark.parametrize("block_bytes", [None, 1])
def test_a_channel_shuffle_is_read_by_the_depthwise_conv_with_the_same_bits(monkeypatch, batch, C, G, conv_attrs, block_bytes):
    from harness.backends.kernels import nn_conv

    if block_bytes is not None:  # blocks of a single run of channels each
        monkeypatch.setattr(nn_conv, "_DEPTHWISE_BLOCK_BYTES", block_bytes)
    rng = np.random.default_rng(RNG_SEED)
    nodes, inits = _shuffle_conv(rng, C, G, bn=batch == 3, **conv_attrs)
    x = rng.standard_normal((batch, C, 9, 7)).astype(np.float32)
    fused, (y,), (expected,) = _both(_model(nodes, inits, [batch, C, 9, 7]), {"x": x})
    assert _labels(fused)[0].startswith("Reshape(r)+Transpose(t)+Reshape(m)+Conv(")
    assert len(_labels(fused)) == 1
    # the shuffle itself is only a different order of reading: the same bits as the fused plan
    # without it (the plain steps differ from both by the folded BatchNormalization's rounding)
    plain_conv, _ = _shuffle_conv(np.random.default_rng(RNG_SEED), C, G, bn=batch == 3, **conv_attrs)
    shuffled = x.reshape(batch, G, C // G, 9, 7).transpose(0, 2, 1, 3, 4).reshape(batch, C, 9, 7)
    model = _model(plain_conv[3:], {k: v for k, v in inits.items() if k not in ("s1", "s2")}, [batch, C, 9, 7])
    model.graph.node[0].input[0] = "x"
    (direct,) = compile_model(model).run({"x": shuffled})
    np.testing.assert_array_equal(y, direct)
    _close(y, expected)


def test_a_channel_shuffle_merged_otherwise_takes_the_steps_path():
    # the last Reshape keeps C channels but swaps the spatial sizes (not a merge of axes 1, 2)
    rng = np.random.default_rng(RNG_SEED)
    nodes, inits = _shuffle_conv(rng, 12, 4, merge=[0, 12, 7, 9], pads=[1, 1, 1, 1])
    x = rng.standard_normal((2, 12, 9, 7)).astype(np.float32)
    fused, (y,), (expected,) = _both(_model(nodes, inits, [2, 12, 9, 7]), {"x": x})
    assert len(_labels(fused)) == 1
    np.testing.assert_array_equal(y, expected)


def test_a_channel_shuffle_before_a_conv_that_is_not_depthwise_stays_as_it_is():
    nodes, inits = _shuffle_conv(np.random.default_rng(RNG_SEED), 12, 4, group=4, pads=[1, 1, 1, 1])
    _unfused(_model(nodes, inits, [2, 12, 9, 7]), {"x": np.random.default_rng(5).standard_normal((2, 12, 9, 7)).astype(np.float32)})


# -- a Relu before a MaxPool -------------------------------------------------------------------


def _relu_pool(conv=True, pool_attrs=None, outputs=("y",), dtype=np.float32):
    """[Conv ->] Relu -> MaxPool (3x3/2, one pixel of padding at the end: Inception's)."""
    rng = np.random.default_rng(RNG_SEED)
    inits = {"w": (rng.standard_normal((6, 4, 3, 3)) * 0.3).astype(dtype)} if conv else {}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1])] if conv else []
    nodes += [helper.make_node("Relu", ["c" if conv else "x"], ["r"]),
              helper.make_node("MaxPool", ["r"], list(outputs), **(pool_attrs or dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1])))]
    return nodes, inits


@pytest.mark.parametrize("conv", [True, False])
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("pool_attrs", [None, dict(kernel_shape=[2, 3], strides=[1, 2], pads=[1, 0, 0, 1], ceil_mode=1)])
def test_a_relu_before_a_max_pool_runs_after_it_with_the_same_bits(conv, batch, pool_attrs):
    nodes, inits = _relu_pool(conv, pool_attrs)
    x = np.random.default_rng(batch).standard_normal((batch, 4, 9, 7)).astype(np.float32)
    x[-1, 1] = -np.abs(x[-1, 1])  # a channel of windows all negative (zeros out of the Conv-less Relu)
    if not conv:  # NaN, infinities, signed zeros and a subnormal straight into the Relu
        x[0, 0, :3, :3] = [[np.nan, -0.0, 0.0], [-np.inf, np.inf, -1e-45], [-0.0, -0.0, -0.0]]
    fused, (y,), (expected,) = _both(_model(nodes, inits, [batch, 4, 9, 7]), {"x": x})
    assert _labels(fused) == (["Conv(c)", "MaxPool(y)+Relu(r)"] if conv else ["MaxPool(y)+Relu(r)"])
    assert (y > 0).any() and (conv or (y == 0).any())
    np.testing.assert_array_equal(y.view(np.uint32), expected.view(np.uint32))


def test_a_relu_before_a_max_pool_stays_where_the_relu_has_another_reader():
    nodes, inits = _relu_pool()
    nodes.append(helper.make_node("Neg", ["r"], ["z"]))
    fused, _, _ = _both(_model(nodes, inits, [2, 4, 7, 6], outputs=("y", "z")), {"x": X})
    assert _labels(fused) == ["Conv(c)+Relu(r)", "MaxPool(y)", "Neg(z)"]


def test_a_relu_before_a_max_pool_with_indices_stays_where_it_is():
    nodes, inits = _relu_pool(outputs=("y", "i"))
    model = _model(nodes, inits, [2, 4, 7, 6], outputs=("y",))
    model.graph.output.append(helper.make_tensor_value_info("i", TensorProto.INT64, [None] * 4))
    fused, _, _ = _both(model, {"x": X})
    assert _labels(fused) == ["Conv(c)+Relu(r)", "MaxPool(y, i)"]


def test_a_relu_before_a_max_pool_stays_where_it_is_in_float16():
    nodes, inits = _relu_pool(conv=False)
    _unfused(_model(nodes, inits, [2, 4, 7, 6], elem=TensorProto.FLOAT16), {"x": X.astype(np.float16)})
