"""The Apache TVM (Relax) backend: load, compile and run, an operator the frontend lacks, the cache."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from harness.backends import load_backend_class
from harness.backends.tvm import TvmBackend

from .util import col2im_model, reduce_sum_with_axes_input

pytest.importorskip("tvm", reason="apache-tvm is not installed (pip install 'onnx-harness[tvm]')")


def _model(nodes, inputs, outputs, opset=14):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


@pytest.fixture(scope="module")
def backend():
    b = load_backend_class("tvm")(opt_level=2)
    assert type(b) is TvmBackend
    b.load()
    return b


def test_tvm_is_available_and_records_target_and_opt_level(backend):
    assert TvmBackend.available() == (True, "")
    env = backend.environment()
    assert env["apache-tvm"] == backend.version() and env["target"] == "llvm" and env["opt_level"] == 2


def test_compiles_and_runs_feeding_inputs_by_name(backend):
    model = _model([helper.make_node("Sub", ["a", "b"], ["y"])], [("a", [3]), ("b", [3])], [("y", [3])])
    (y,) = backend.prepare(model).run({"b": np.ones(3, np.float32), "a": np.array([5.0, 0.0, -2.0], np.float32)})
    np.testing.assert_array_equal(y, np.array([4.0, -1.0, -3.0], np.float32))


def test_several_outputs_come_back_in_order(backend):
    model = _model([helper.make_node("Split", ["x"], ["y", "z"])], [("x", [4])], [("y", [2]), ("z", [2])], opset=11)
    y, z = backend.prepare(model).run({"x": np.arange(4, dtype=np.float32)})
    np.testing.assert_array_equal(y, [0.0, 1.0])
    np.testing.assert_array_equal(z, [2.0, 3.0])


def test_a_compiled_model_is_cached_by_its_hash(backend):
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [("x", [2])], [("y", [2])])
    first = backend.prepare(model)
    again = backend.prepare(model)
    assert again.vm is first.vm
    other = _model([helper.make_node("Neg", ["x"], ["y"])], [("x", [2])], [("y", [2])])
    assert backend.prepare(other).vm is not first.vm


def test_an_operator_the_frontend_lacks_is_unsupported(backend):
    with pytest.raises(Exception) as info:
        backend.prepare(col2im_model())
    assert backend.classify_error(info.value, "prepare") == "unsupported"
    assert "Col2Im" in str(info.value)


def test_a_failure_while_running_is_an_error(backend):
    session = backend.prepare(_model([helper.make_node("Relu", ["x"], ["y"])], [("x", [3])], [("y", [3])]))
    with pytest.raises(Exception) as info:
        session.run({"x": np.ones(4, np.float32)})  # not the compiled shape: the VM refuses it
    assert backend.classify_error(info.value, "run") == "error"


def test_a_shape_result_comes_back_as_an_int64_tensor(backend):
    graph = helper.make_graph([helper.make_node("Shape", ["x"], ["y"], start=1)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])], [helper.make_tensor_value_info("y", TensorProto.INT64, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)], ir_version=8)
    (y,) = backend.prepare(model).run({"x": np.ones((2, 3, 4), np.float32)})
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y, [3, 4])


def test_a_parameter_the_frontend_needs_constant_is_unsupported(backend):
    with pytest.raises(Exception) as info:
        backend.prepare(reduce_sum_with_axes_input())
    assert backend.classify_error(info.value, "prepare") == "unsupported"
