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
