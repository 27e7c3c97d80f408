import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper

from harness.backends.onnxruntime import OnnxRuntimeBackend

pytest.importorskip("onnxruntime")


def _identity_via_cast(dtype_code, opset=25, ir=13):
    # x -> Cast(float) -> Cast(back): exercises binding of the input and the output
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["f"], to=TensorProto.FLOAT), helper.make_node("Cast", ["f"], ["y"], to=dtype_code)],
        "g", [helper.make_tensor_value_info("x", dtype_code, [5])], [helper.make_tensor_value_info("y", dtype_code, [5])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir)


@pytest.mark.parametrize("code, dtype, values", [
    (TensorProto.BFLOAT16, ml_dtypes.bfloat16, [1.5, -2.0, 0.0, 3.25, -0.5]),
    (TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn, [1.5, -2.0, 0.0, 3.25, -0.5]),
    (TensorProto.INT4, ml_dtypes.int4, [1, -2, 7, -8, 0]),
    (TensorProto.UINT4, ml_dtypes.uint4, [1, 2, 15, 0, 9]),
    (TensorProto.INT2, ml_dtypes.int2, [1, -2, -1, 0, 1]),
    (TensorProto.UINT2, ml_dtypes.uint2, [3, 2, 1, 0, 3]),
])
def test_types_numpy_lacks_round_trip_through_the_binding(code, dtype, values):
    backend = OnnxRuntimeBackend()
    backend.load()
    x = np.array(values, dtype=dtype)
    (y,) = backend.prepare(_identity_via_cast(code)).run({"x": x})
    assert y.dtype == x.dtype
    np.testing.assert_array_equal(y.astype(np.float32), x.astype(np.float32))


def test_ort_errors_are_classified():
    backend = OnnxRuntimeBackend()
    backend.load()
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    too_new = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=99)
    with pytest.raises(Exception) as info:
        backend.prepare(too_new)
    assert backend.classify_error(info.value, "prepare") == "rejected"
