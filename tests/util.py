"""Small in-memory cases for the harness's own tests."""

from __future__ import annotations

import sys
import types

import numpy as np
import onnx
from onnx import TensorProto, helper

from harness.case import Case, DataSet, Tolerance


def relu_case(case_id: str = "test/relu", graph_name: str = "g", opset: int = 14, x: np.ndarray | None = None) -> Case:
    x = np.array([-1.0, 0.5, 2.0], np.float32) if x is None else x
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        graph_name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(x.shape))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=7)
    return Case(
        id=case_id, suite="test", model_bytes=model.SerializeToString(),
        data=[DataSet({"x": x}, [np.maximum(x, 0)])], tolerance=Tolerance(), tags={"op": "Relu"},
    )


def reduce_sum_with_axes_input() -> onnx.ModelProto:
    """ReduceSum-13 with its axes a graph input, not a constant: a form compilers that need the
    axes at compile time (tract, TVM's frontend) refuse."""
    graph = helper.make_graph([helper.make_node("ReduceSum", ["x", "axes"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]), helper.make_tensor_value_info("axes", TensorProto.INT64, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def col2im_model() -> onnx.ModelProto:
    """Col2Im-18 on a float [1, 4, 4], its image_shape [3, 3] and block_shape [2, 2] constants: an
    operator tract and TVM's frontend lack."""
    info = helper.make_tensor_value_info
    graph = helper.make_graph([helper.make_node("Col2Im", ["x", "s", "b"], ["y"])], "g",
                              [info("x", TensorProto.FLOAT, [1, 4, 4])], [info("y", TensorProto.FLOAT, [1, 1, 3, 3])],
                              [helper.make_tensor("s", TensorProto.INT64, [2], [3, 3]), helper.make_tensor("b", TensorProto.INT64, [2], [2, 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def check_scan_8_pads_a_shorter_batch_entry(backend) -> None:
    """Scan-8 (a batch axis first, sequence_lens an input) on batch 2, max length 3,
    sequence_lens [1, 3], a body that adds each element to the state: batch 0 stops after one
    step, its scan output padded."""
    f = TensorProto.FLOAT
    info = helper.make_tensor_value_info
    body = helper.make_graph([helper.make_node("Add", ["s", "e"], ["s_out"]), helper.make_node("Identity", ["s_out"], ["y"])],
                             "body", [info("s", f, [1]), info("e", f, [1])], [info("s_out", f, [1]), info("y", f, [1])])
    graph = helper.make_graph([helper.make_node("Scan", ["lens", "s0", "x"], ["s", "y"], body=body, num_scan_inputs=1)], "g",
                              [info("lens", TensorProto.INT64, [2]), info("s0", f, [2, 1]), info("x", f, [2, 3, 1])],
                              [info("s", f, [2, 1]), info("y", f, [2, 3, 1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)], ir_version=3)
    x = np.array([[[1], [2], [3]], [[10], [20], [30]]], np.float32)
    s, y = backend.prepare(model).run({"lens": np.array([1, 3], np.int64), "s0": np.zeros((2, 1), np.float32), "x": x})
    assert s.ravel().tolist() == [1, 60]
    assert y.shape == (2, 3, 1) and y[0, 0, 0] == 1 and y[1].ravel().tolist() == [10, 30, 60]


def fake_framework(monkeypatch, name: str, build, source: str) -> types.ModuleType:
    """A models-suite builder module ``name`` for the framework "fake" (needing only onnx), its
    cases those ``build(say)`` yields, its source file ``source``; set ``module.reason`` to make
    the framework missing."""
    from harness.suites import models

    module = types.ModuleType(name)
    module.__file__ = source
    module.FRAMEWORK = "fake"
    module.DISTRIBUTIONS = ("onnx",)
    module.reason = None
    module.missing = lambda: module.reason
    module.build = build
    monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setitem(models.FRAMEWORKS, "fake", name)
    return module


def model_bytes(case: Case) -> onnx.ModelProto:
    return case.load_model()
