"""Interpolating kernels leave an output alone when it takes nothing from a NaN or inf: found by
kernel-engine and PyTorch fuzz campaigns (issue 35), where ONNX Runtime and our references agreed.
The kernel engine and our PyTorch lowering each had it."""

import importlib.util

import numpy as np
import pytest
from onnx import TensorProto, helper

from harness.backends import load_backend_class

BACKENDS = ["kernels", pytest.param("pytorch", marks=pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed"))]


@pytest.fixture(params=BACKENDS)
def backend(request):
    b = load_backend_class(request.param)()
    b.load()
    return b


def _run(backend, node, inputs, opset):
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in inputs.items()],
                          [helper.make_tensor_value_info(node.output[0], TensorProto.FLOAT, [])])
    return backend.prepare(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])).run(inputs)[0]


def test_linear_resize_spreads_a_nan_only_to_the_outputs_that_interpolate_from_it(backend):
    # half_pixel, scale 2: outputs sample x at -0.25, 0.25, 0.75, 1.25, 1.75, 2.25 (clamped to the
    # edge); only the first three touch x[0] = NaN: 1.25 -> 0.75 * 2 + 0.25 * 4, 1.75 -> 0.25 * 2 + 0.75 * 4
    x = np.array([[np.nan], [2.0], [4.0]], np.float32)
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear", coordinate_transformation_mode="half_pixel")
    y = _run(backend, node, {"x": x, "scales": np.array([2.0, 1.0], np.float32)}, 19)
    np.testing.assert_array_equal(y.ravel(), [np.nan, np.nan, np.nan, 2.5, 3.5, 4.0])


def test_deform_conv_samples_outside_the_image_as_zero_even_beside_a_nan_edge(backend):
    # a 1x1 kernel of weight 1: each output is the input sampled at its position plus its offset.
    # Output (0, 0) is moved 3.5 rows down, below the image (rows 3 and 4 do not exist): 0, although
    # the nearest row, 2, holds NaN ("Sampling locations outside of the padded input tensor gives
    # zero"); the rest of row 0 samples where it stands; row 2 samples NaN itself. (Row 1 also
    # touches row 2 with interpolation weight 0: spec-silent, not asserted here.)
    x = np.array([[[[1.0, 2.0], [3.0, 4.0], [np.nan, np.nan]]]], np.float32)
    offset = np.zeros((1, 2, 3, 2), np.float32)
    offset[0, 0, 0, 0] = 3.5  # dy of output (0, 0)
    node = helper.make_node("DeformConv", ["x", "w", "offset"], ["y"], kernel_shape=[1, 1])
    y = _run(backend, node, {"x": x, "w": np.ones((1, 1, 1, 1), np.float32), "offset": offset}, 19)
    np.testing.assert_array_equal(y[0, 0, 0], [0.0, 2.0])
    assert np.isnan(y[0, 0, 2]).all()
