"""The tract backend: load, run, an operator tract lacks, and refusals classified by tract's words."""

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper

from harness.backends import load_backend_class
from harness.backends.tract import TractBackend

from .util import col2im_model, reduce_sum_with_axes_input

pytest.importorskip("tract", reason="tract is not installed (pip install 'onnx-harness[tract]')")


def _model(nodes, inputs, outputs, elem=TensorProto.FLOAT, opset=14):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, elem, s) for n, s in inputs],
                              [helper.make_tensor_value_info(n, elem, s) for n, s in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


@pytest.fixture(scope="module")
def backend():
    b = load_backend_class("tract")()
    assert type(b) is TractBackend
    b.load()
    return b


def test_tract_is_listed_available_with_its_version(backend):
    assert TractBackend.available() == (True, "")
    assert backend.version()[0].isdigit() and backend.environment()["tract"] == backend.version()


def test_runs_a_model_feeding_inputs_by_name(backend):
    # Sub is not commutative: feeding by position in the wrong order would show
    model = _model([helper.make_node("Sub", ["a", "b"], ["y"])], [("a", [3]), ("b", [3])], [("y", [3])])
    session = backend.prepare(model)
    (y,) = session.run({"b": np.array([1.0, 1.0, 1.0], np.float32), "a": np.array([5.0, 0.0, -2.0], np.float32)})
    np.testing.assert_array_equal(y, np.array([4.0, -1.0, -3.0], np.float32))
    assert y.dtype == np.float32


def test_an_operator_tract_lacks_is_unsupported_with_tracts_message(backend):
    with pytest.raises(Exception) as info:
        backend.prepare(col2im_model())
    assert backend.classify_error(info.value, "prepare") == "unsupported"
    assert "Unimplemented(Col2Im)" in str(info.value)
    assert "Stack backtrace" not in str(info.value)  # tract's words, without the Rust frames


def test_a_type_tract_lacks_is_unsupported(backend):
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [("x", [2])], [("y", [2])], elem=TensorProto.BFLOAT16)
    with pytest.raises(Exception) as info:
        backend.prepare(model)
    assert backend.classify_error(info.value, "prepare") == "unsupported"
    assert "Bfloat16" in str(info.value)
    session = backend.prepare(_model([helper.make_node("Relu", ["x"], ["y"])], [("x", [2])], [("y", [2])]))
    with pytest.raises(Exception) as info:
        session.run({"x": np.array([1, 2], ml_dtypes.bfloat16)})
    assert backend.classify_error(info.value, "run") == "unsupported"


def test_an_invalid_model_is_rejected_and_a_failed_run_is_an_error(backend):
    dangling = _model([helper.make_node("Add", ["x", "nowhere"], ["y"])], [("x", [3])], [("y", [3])])
    with pytest.raises(Exception) as info:
        backend.prepare(dangling)
    assert backend.classify_error(info.value, "prepare") == "rejected"
    session = backend.prepare(_model([helper.make_node("Relu", ["x"], ["y"])], [("x", [3])], [("y", [3])]))
    with pytest.raises(Exception) as info:
        session.run({"x": np.ones(4, np.float32)})  # not the declared shape: tract fails while running
    assert backend.classify_error(info.value, "run") == "error"


def test_an_input_tract_needs_constant_is_unsupported(backend):
    # tract types ReduceSum-13 only with constant axes; fed as a graph input it refuses that form
    with pytest.raises(Exception) as info:
        backend.prepare(reduce_sum_with_axes_input())
    assert backend.classify_error(info.value, "prepare") == "unsupported"
