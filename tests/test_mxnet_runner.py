"""The MXNet 1.9.1 runner (examples/mxnet-runner), a runtime in its own Python environment.

Runs where ``HARNESS_MXNET_PYTHON`` names an interpreter with mxnet installed (``tox -e mxnet``
builds one with examples/mxnet-runner/make_env.sh); skipped with that reason elsewhere."""

import os
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from harness.backends import load_backend_class
from harness.backends.base import Unsupported
from harness.worker import execute_case
from harness.case import Case, DataSet
from harness.schema import model_tags

PYTHON = os.environ.get("HARNESS_MXNET_PYTHON", "")
RUNNER = Path(__file__).resolve().parents[1] / "examples" / "mxnet-runner" / "runner.py"
pytestmark = pytest.mark.skipif(not PYTHON, reason="HARNESS_MXNET_PYTHON is not set (tox -e mxnet builds an MXNet environment)")


def _backend():
    cls = load_backend_class(f"exec:{PYTHON} {RUNNER}")
    backend = cls()
    backend.load()
    return backend


def _model(op, inputs, outputs, dtype=TensorProto.FLOAT, **attrs):
    graph = helper.make_graph([helper.make_node(op, [n for n, _ in inputs], [n for n, _ in outputs], **attrs)], "g",
                              [helper.make_tensor_value_info(n, dtype, s) for n, s in inputs],
                              [helper.make_tensor_value_info(n, dtype, s) for n, s in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


def test_the_runner_reports_mxnet_and_runs_a_relu():
    backend = _backend()
    assert backend.version() == "1.9.1" and backend.environment()["mxnet"] == "1.9.1"
    x = np.array([[-1.5, 0.0, 2.25], [3.0, -0.0, -7.0]], dtype=np.float32)
    session = backend.prepare(_model("Relu", [("x", [2, 3])], [("y", [2, 3])]))
    np.testing.assert_array_equal(session.run({"x": x})[0], np.array([[0, 0, 2.25], [3, 0, 0]], dtype=np.float32))


def test_a_missing_translator_and_an_unheld_dtype_are_unsupported_with_mxnets_words():
    backend = _backend()
    with pytest.raises(Unsupported, match="Operator Det not implemented|No conversion function"):
        backend.prepare(_model("Det", [("x", [2, 2])], [("y", [])]))
    session = backend.prepare(_model("Add", [("a", [2]), ("b", [2])], [("c", [2])], dtype=TensorProto.UINT16))
    with pytest.raises(Unsupported, match="no uint16 tensors"):
        session.run({"a": np.array([1, 2], np.uint16), "b": np.array([3, 4], np.uint16)})


def test_a_case_through_the_harness_is_judged_against_its_oracle():
    model = _model("Sigmoid", [("x", [4])], [("y", [4])])
    x = np.array([-2.0, 0.0, 0.5, 3.0], dtype=np.float32)
    expected = np.array([0.11920292202211755, 0.5, 0.6224593312018546, 0.9525741268224334], dtype=np.float32)  # 1 / (1 + e^-x)
    case = Case("t/sigmoid", "test", model_bytes=model.SerializeToString(), data=[DataSet({"x": x}, [expected])], tags=model_tags(model))
    result = execute_case(_backend(), case)
    assert result.outcome == "pass", result.message
    wrong = Case("t/sigmoid_wrong", "test", model_bytes=model.SerializeToString(), data=[DataSet({"x": x}, [expected + 0.01])], tags=model_tags(model))
    assert execute_case(_backend(), wrong).outcome == "mismatch"
