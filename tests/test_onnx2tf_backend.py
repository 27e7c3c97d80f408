"""The second TensorFlow path: onnx2tf's SavedModel through TensorFlow and its .tflite through
LiteRT. The layout test is the one that matters: onnx2tf computes channel-last, and the binding
must give outputs back in ONNX's layout even where shapes cannot tell (a [1, 2, 2, 2] output)."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from harness.backends import load_backend_class
from harness.backends.base import Unsupported
from harness.backends.onnx2tf import output_shapes

pytest.importorskip("onnx2tf", reason="onnx2tf is not installed (pip install 'onnx-harness[onnx2tf]')")

NAMES = ["onnx2tf", "onnx2tf-litert"]


def _model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs], list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


@pytest.fixture(scope="module", params=NAMES)
def backend(request):
    b = load_backend_class(request.param)()
    b.load()
    return b


def test_a_channel_first_output_comes_back_in_onnx_layout_even_when_its_shape_is_symmetric(backend):
    # a 1x1 convolution with two output channels, the first the input's channel 0, the second
    # channel 1 doubled: [1, 2, 2, 2] in, [1, 2, 2, 2] out; a channel-last answer would mix them
    w = numpy_helper.from_array(np.array([[[[1.0]], [[0.0]]], [[[0.0]], [[2.0]]]], dtype=np.float32), "w")
    model = _model([helper.make_node("Conv", ["x", "w"], ["y"])], [("x", [1, 2, 2, 2])], [("y", [1, 2, 2, 2])], [w])
    x = np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2)
    (y,) = backend.prepare(model).run({"x": x})
    expected = np.array([[[[0, 1], [2, 3]], [[8, 10], [12, 14]]]], dtype=np.float32)  # written out by hand
    np.testing.assert_allclose(y, expected, rtol=1e-6)


def test_several_outputs_keep_their_order_and_shapes(backend):
    model = _model([helper.make_node("Sub", ["a", "b"], ["d"]), helper.make_node("Neg", ["a"], ["n"])],
                   [("a", [3]), ("b", [3])], [("n", [3]), ("d", [3])])
    n, d = backend.prepare(model).run({"a": np.array([5, 0, -2], np.float32), "b": np.array([1, 1, 1], np.float32)})
    np.testing.assert_array_equal(n, [-5, 0, 2])
    np.testing.assert_array_equal(d, [4, -1, -3])


def test_an_operator_onnx2tf_lacks_is_unsupported_with_its_words(backend):
    model = _model([helper.make_node("Swish", ["x"], ["y"])], [("x", [4])], [("y", [4])], opset=24)
    with pytest.raises(Exception) as info:
        backend.prepare(model)
    assert backend.classify_error(info.value, "prepare") == "unsupported"
    assert "Swish" in str(info.value) and "/tmp/" not in str(info.value)


def test_an_output_without_a_static_shape_is_unsupported_with_the_reason():
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [("x", ["n", 3])], [("y", ["n", 3])])
    with pytest.raises(Unsupported, match="no static shape"):
        output_shapes(model)


def test_a_plain_rank3_reshape_keeps_onnx_element_order(backend):
    # onnx2tf guesses layouts from ranks: a [2, 3, 4] -> [4, 2, 3] reshape must still move no element
    shape = numpy_helper.from_array(np.array([4, 2, 3], dtype=np.int64), "shape")
    model = _model([helper.make_node("Reshape", ["x", "shape"], ["y"])], [("x", [2, 3, 4])], [("y", [4, 2, 3])], [shape], opset=14)
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (y,) = backend.prepare(model).run({"x": x})
    np.testing.assert_array_equal(y, np.arange(24, dtype=np.float32).reshape(4, 2, 3))


def test_the_layout_rule_transposes_only_channel_last_shapes():
    from harness.backends.onnx2tf import to_onnx_layout

    nhwc = np.zeros((1, 5, 6, 3))
    assert to_onnx_layout(nhwc, [1, 3, 5, 6], channel_last_if_unsure=False).shape == (1, 3, 5, 6)
    same = np.arange(8).reshape(1, 2, 2, 2)
    assert to_onnx_layout(same, [1, 2, 2, 2], channel_last_if_unsure=False) is same
    np.testing.assert_array_equal(to_onnx_layout(same, [1, 2, 2, 2], channel_last_if_unsure=True), np.moveaxis(same, -1, 1))
