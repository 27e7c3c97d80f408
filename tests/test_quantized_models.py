"""Quantized model cases (model_cases/quantized_models.py) on a tiny two-layer float model built
here: each quantizer runs, the oracle is the quantized model's own output, and the tolerance is
one quantization step read from the model, tight enough that a two-step error fails."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from harness.compare import Comparator

from model_cases import quantized_models as Q

pytest.importorskip("onnxruntime.quantization")


def _float_model() -> onnx.ModelProto:
    rng = np.random.default_rng(7)
    w1 = numpy_helper.from_array(rng.standard_normal((8, 16)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array((rng.standard_normal((16, 4)) * 0.5).astype(np.float32), "w2")
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("MatMul", ["r", "w2"], ["y"])]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])], [w1, w2])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


@pytest.mark.parametrize("method", Q.METHODS)
def test_quantized_oracle_and_one_step_tolerance(tmp_path, method):
    import onnxruntime as ort

    float_model = _float_model()
    onnx.save(float_model, tmp_path / "float.onnx")
    rng = np.random.default_rng(8)
    xs = [rng.standard_normal((n, 8)).astype(np.float32) for n in (1, 16, 5)]
    Q._quantize(str(tmp_path / "float.onnx"), str(tmp_path / "q.onnx"), method, "x", xs)
    model = onnx.load(tmp_path / "q.onnx")
    ops = {n.op_type for n in model.graph.node}
    assert {"dynamic": "MatMulInteger", "static-qdq": "QuantizeLinear", "static-qoperator": "QLinearMatMul"}[method] in ops
    assert all(n.domain in ("", "ai.onnx") for n in model.graph.node)  # standard ops only: our references compose over them (the oracle)
    expected, inter = Q._oracle(model, [{"x": x} for x in xs])
    atol, why = Q.output_step(model, float_model, inter)
    w2_max = float(np.abs(numpy_helper.to_array(float_model.graph.initializer[1])).max())
    if method != "dynamic":  # the head MatMul is quantized: the output is DequantizeLinear's
        out_dq = next(n for n in model.graph.node if n.output[0] == "y")
        scale = float(numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == out_dq.input[1])))
        assert atol == pytest.approx(scale) and "output's DequantizeLinear" in why
    else:
        assert atol > w2_max * 1e-4 and "max|W|" in why
        assert atol / w2_max < 0.2  # one step of an activation range of a few units over 255 levels
    # the quantized model differs from the float one (else the case tests nothing quantized) ...
    floats = [np.maximum(x @ numpy_helper.to_array(float_model.graph.initializer[0]), 0) @ numpy_helper.to_array(float_model.graph.initializer[1]) for x in xs]
    assert max(np.abs(e[0] - f).max() for e, f in zip(expected, floats)) > 1e-4
    tol = Q.Tolerance(rtol=Q.FLOAT32_MODEL.rtol, atol=atol)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for x, e in zip(xs, expected):
        got = session.run(None, {"x": x})
        assert Comparator().compare(e, got, tol).outcome == "pass"
        # ... and an answer two steps off somewhere fails
        wrong = [got[0].copy()]
        wrong[0].flat[0] += 2.5 * atol
        assert Comparator().compare(e, wrong, tol).outcome == "mismatch"


def _tail_model(head: str) -> onnx.ModelProto:
    """q (uint8) -> DequantizeLinear (scale 0.05) -> head -> y."""
    inits = [numpy_helper.from_array(np.array(0.05, np.float32), "s"), numpy_helper.from_array(np.array(0, np.uint8), "z"),
             numpy_helper.from_array(np.array([1.0, -2.0], np.float32), "b"),
             numpy_helper.from_array(np.array([[0.5, -3.0], [1.0, 0.25]], np.float32), "w")]
    second = helper.make_node("Add", ["d", "b"], ["y"]) if head == "Add" else helper.make_node("MatMul", ["d", "w"], ["y"])
    graph = helper.make_graph([helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"]), second], "tail",
                              [helper.make_tensor_value_info("q", TensorProto.UINT8, [1, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def test_output_step_after_the_last_quantized_tensor():
    # a constant added after the last DequantizeLinear keeps its grid: one step
    atol, why = Q.output_step(_tail_model("Add"), _tail_model("Add"), [])
    assert atol == pytest.approx(0.05) and "only Add" in why
    # a float MatMul after it: one input step times the largest weight
    atol, why = Q.output_step(_tail_model("MatMul"), _tail_model("MatMul"), [])
    assert atol == pytest.approx(0.05 * 3.0) and "max|W|" in why


def test_composed_oracle_is_ours_and_refuses_a_node_without_a_reference():
    # DequantizeLinear (scale 0.5, zero point 10) then Relu: (x - 10) * 0.5 clipped at 0, by hand
    inits = [numpy_helper.from_array(np.array(0.5, np.float32), "s"), numpy_helper.from_array(np.array(10, np.uint8), "z")]
    nodes = [helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"]), helper.make_node("Relu", ["d"], ["y"])]
    graph = helper.make_graph(nodes, "dq", [helper.make_tensor_value_info("q", TensorProto.UINT8, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    (out,), (values,) = Q._oracle(model, [{"q": np.array([0, 10, 13, 255], np.uint8)}])
    assert out[0].tolist() == [0.0, 0.0, 1.5, 122.5] and values["d"].tolist() == [-5.0, 0.0, 1.5, 122.5]
    assert Q.ORACLE == "ours"
    scaler = helper.make_node("Scaler", ["x"], ["y"], domain="ai.onnx.ml", scale=[2.0])
    graph = helper.make_graph([scaler], "ml", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    ml = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 1)], ir_version=10)
    with pytest.raises(ValueError, match="no reference"):
        Q._oracle(ml, [{"x": np.ones(2, np.float32)}])
