"""The TensorFlow backend: onnx-tf 1.10's own handlers on today's TensorFlow, through our
compatibility layer for the two names it imports that no longer exist."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper

from harness.case import Case, DataSet, Tolerance
from harness.worker import execute_case

if importlib.util.find_spec("onnx_tf") is None or importlib.util.find_spec("tensorflow") is None:
    pytest.skip("onnx-tf / tensorflow are not installed (pip install 'onnx-harness[tensorflow]')", allow_module_level=True)

from harness.backends import _onnx_tf_compat  # noqa: E402
from harness.backends.tensorflow import TensorFlowBackend  # noqa: E402


@pytest.fixture(scope="module")
def backend():
    b = TensorFlowBackend()
    b.load()
    return b


def _model(nodes, inputs, outputs, opset=13, ir=7):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir)


def _info(name, code, shape):
    return helper.make_tensor_value_info(name, code, shape)


def _case(model, feeds, expected):
    return Case(id="test/tensorflow", suite="test", model_bytes=model.SerializeToString(),
                data=[DataSet(feeds, expected)], tolerance=Tolerance(1e-4, 1e-6), tags={})


def test_compat_layer_rebuilds_the_onnx_mapping_tables():
    provided = _onnx_tf_compat.install()
    import onnx.mapping  # the stand-in (onnx >= 1.16 has none of its own)

    assert provided["tensorflow_addons.seq2seq.hardmax"] == "compat"
    assert onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[TP.FLOAT] == np.dtype(np.float32)
    assert onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(np.int64)] == TP.INT64
    assert onnx.mapping.STORAGE_TENSOR_TYPE_TO_FIELD[TP.FLOAT] == "float_data"
    # pb_wrapper reads a tensor attribute's field through both tables: float16 lives in int32_data
    m = onnx.mapping
    assert m.STORAGE_TENSOR_TYPE_TO_FIELD[m.TENSOR_TYPE_TO_STORAGE_TENSOR_TYPE[TP.FLOAT16]] == "int32_data"
    assert _onnx_tf_compat.install() == provided  # idempotent


def test_relu_passes(backend):
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_info("x", TP.FLOAT, [3])], [_info("y", TP.FLOAT, [3])])
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    result = execute_case(backend, _case(model, {"x": x}, [np.maximum(x, 0)]))
    assert result.outcome == "pass", result.message


def test_hardmax_runs_on_the_compat_hardmax(backend):
    model = _model([helper.make_node("Hardmax", ["x"], ["y"], axis=-1)], [_info("x", TP.FLOAT, [2, 3])], [_info("y", TP.FLOAT, [2, 3])])
    x = np.array([[1.0, 3.0, 3.0], [0.0, -1.0, 2.0]], np.float32)
    expected = np.array([[0, 1, 0], [0, 0, 1]], np.float32)  # ties go to the first maximum
    result = execute_case(backend, _case(model, {"x": x}, [expected]))
    assert result.outcome == "pass", result.message


def test_input_names_that_are_not_identifiers_are_fed(backend):
    model = _model([helper.make_node("Neg", ["0"], ["1"])], [_info("0", TP.FLOAT, [2])], [_info("1", TP.FLOAT, [2])])
    (y,) = backend.prepare(model).run({"0": np.array([1.0, -2.0], np.float32)})
    np.testing.assert_array_equal(y, [-1.0, 2.0])


def test_an_op_version_onnx_tf_lacks_is_unsupported_with_its_version(backend):
    # onnx-tf has LeakyRelu-1 and -6; opset 16 brought LeakyRelu-16
    model = _model([helper.make_node("LeakyRelu", ["x"], ["y"])], [_info("x", TP.FLOAT, [2])], [_info("y", TP.FLOAT, [2])], opset=16, ir=8)
    result = execute_case(backend, _case(model, {"x": np.array([-1.0, 1.0], np.float32)}, [np.array([-0.01, 1.0], np.float32)]))
    assert result.outcome == "unsupported"
    assert "LeakyRelu-16" in result.message


def test_an_operator_onnx_tf_never_had_is_unsupported(backend):
    model = _model([helper.make_node("Gelu", ["x"], ["y"])], [_info("x", TP.FLOAT, [2])], [_info("y", TP.FLOAT, [2])], opset=20, ir=9)
    result = execute_case(backend, _case(model, {"x": np.array([-1.0, 1.0], np.float32)}, [np.array([-0.1587, 0.8413], np.float32)]))
    assert result.outcome == "unsupported"
    assert "no handler for Gelu" in result.message


def test_an_exception_tensorflow_raises_while_running_is_an_error(backend, monkeypatch):
    """A seeded fault, not a real onnx-tf defect (a test must not lock one in as right): the
    session runs, then raises the error TensorFlow itself raises for a matmul of vectors."""
    import tensorflow as tf

    with pytest.raises(tf.errors.InvalidArgumentError) as raised:
        tf.linalg.matmul(tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0]))
    prepare = backend.prepare

    def faulty_prepare(model):
        session = prepare(model)

        class Faulty:
            def run(self, feeds):
                session.run(feeds)
                raise raised.value

        return Faulty()

    monkeypatch.setattr(backend, "prepare", faulty_prepare)
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_info("x", TP.FLOAT, [3])], [_info("y", TP.FLOAT, [3])])
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    result = execute_case(backend, _case(model, {"x": x}, [np.maximum(x, 0)]))
    assert result.outcome == "error", result.message
    assert result.message.startswith("data set 0: InvalidArgumentError")


def test_environment_records_the_stack(backend):
    env = backend.environment()
    for key in ("tensorflow", "keras", "tf.keras", "onnx-tf", "onnx-tf-compat", "onnx-tf-compat-provides"):
        assert env.get(key), key
    assert env["tf.keras"].startswith("tf_keras ")  # Keras 2, as onnx-tf's handlers expect
    assert TensorFlowBackend.max_opset == 15
