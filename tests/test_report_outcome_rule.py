"""One rule decides rejected vs unsupported vs error, for every backend (README "Outcomes"): a
missing op, op-version, type or IR version is ``unsupported``; a model is ``rejected`` only when
the ONNX checker finds it invalid too; a backend's own failure on a valid model is ``error``.
Checked with ONNX Runtime's real messages (models that make it fail) and onnx.reference."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from harness.backends.base import invalid_model_reason

ort = pytest.importorskip("onnxruntime")


def one_node(op: str, itype: int, otype: int, oshape: list[int] | None, opset: int = 13, domain: str = "", ir: int | None = None,
             inputs: int = 1, **attrs) -> onnx.ModelProto:
    ins = [h.make_tensor_value_info(f"x{i}", itype, [2, 3]) for i in range(inputs)]
    node = h.make_node(op, [f"x{i}" for i in range(inputs)], ["y"], domain=domain, **attrs)
    imports = [h.make_opsetid("", opset)] + ([h.make_opsetid(domain, 1)] if domain else [])
    model = h.make_model(h.make_graph([node], "g", ins, [h.make_tensor_value_info("y", otype, oshape)]), opset_imports=imports)
    model.ir_version = ir or 8
    return model


CASES = {
    # ORT's own inserted Cast fails on a model the ONNX checker accepts: ORT's bug, not the model's
    "ArgMax-1 float16 (ORT's cast insertion)": (one_node("ArgMax", T.FLOAT16, T.INT64, [1, 3], opset=1), "error", "InsertedPrecisionFreeCast"),
    "an op ORT does not know": (one_node("FooBar", T.FLOAT, T.FLOAT, [2, 3]), "unsupported", "No Op registered for FooBar"),
    "a custom-domain op": (one_node("Foo", T.FLOAT, T.FLOAT, [2, 3], domain="com.vendor"), "unsupported", "is not a registered function/op"),
    "a missing kernel": (one_node("Abs", T.BFLOAT16, T.BFLOAT16, [2, 3]), "unsupported", "NOT_IMPLEMENTED"),
    # an IR version neither ORT nor the checker reads: invalid by both
    "an IR version nobody reads": (one_node("Relu", T.FLOAT, T.FLOAT, [2, 3], opset=14, ir=99), "rejected", "Unsupported model IR version"),
    "a type the op does not allow": (one_node("Det", T.INT32, T.INT32, [], opset=11), "rejected", "Type Error"),
    "incompatible shapes": (one_node("MatMul", T.FLOAT, T.FLOAT, [2, 3], inputs=2), "rejected", "Incompatible dimensions"),
    "a wrong output type": (one_node("Relu", T.FLOAT, T.INT32, [2, 3], opset=14), "rejected", "does not match expected type"),
    "too few inputs": (one_node("Col2Im", T.FLOAT, T.FLOAT, [2, 3], opset=18), "rejected", "not in range"),
}


@pytest.fixture(scope="module")
def onnxruntime_backend():
    from harness.backends.onnxruntime import OnnxRuntimeBackend

    backend = OnnxRuntimeBackend()
    backend.load()
    return backend


@pytest.mark.parametrize("name", list(CASES))
def test_onnxruntime_load_failures_follow_the_rule(onnxruntime_backend, name):
    model, outcome, words = CASES[name]
    if outcome != "unsupported":  # a missing op or IR version is unsupported whatever the checker says
        assert (invalid_model_reason(model) != "") == (outcome == "rejected")
    with pytest.raises(Exception) as info:
        onnxruntime_backend.prepare(model)
    assert words in str(info.value)
    assert onnxruntime_backend.classify_error(info.value, "prepare") == outcome
    if outcome == "rejected":  # both opinions are in the message
        assert "the ONNX checker finds the model invalid too" in str(info.value)


def test_onnxruntime_messages_at_run_time():
    from harness.backends.onnxruntime import OnnxRuntimeBackend

    backend = OnnxRuntimeBackend()
    missing = RuntimeError("[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation for ArgMax(13) node with name ''")
    crash = RuntimeError("[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running Conv node.")
    assert backend.classify_error(missing, "run") == "unsupported"
    assert backend.classify_error(crash, "run") == "error"
    # a type refused by ORT's schema is a missing type only at load, where prepare has ruled out an invalid model
    refused = RuntimeError("[ONNXRuntimeError] : 10 : INVALID_GRAPH : Type Error: Type 'tensor(int32)' of input parameter (x0) of operator (Det) in node () is invalid.")
    assert backend.classify_error(refused, "prepare") == "unsupported"
    old = RuntimeError("[ONNXRuntimeError] : 1 : FAIL : model.cc:256 Unsupported model IR version: 12, max supported IR version: 11")
    assert backend.classify_error(old, "prepare") == "unsupported"
    invalid = RuntimeError("[ONNXRuntimeError] : 1 : FAIL : Node () Op (MatMul) [ShapeInferenceError] Incompatible dimensions")
    assert backend.classify_error(invalid, "prepare") == "error", "not Rejected: prepare found the model valid"


def test_reference_unknown_ops_are_unsupported():
    from harness.backends.reference import ReferenceBackend

    backend = ReferenceBackend()
    for model in (CASES["an op ORT does not know"][0], CASES["a custom-domain op"][0]):
        with pytest.raises(Exception) as info:
            backend.prepare(model)
        assert backend.classify_error(info.value, "prepare") == "unsupported"


def test_kernels_custom_domain_is_unsupported_and_an_unimported_one_rejected():
    from harness.backends.base import Rejected, Unsupported
    from harness.backends.kernels import KernelsBackend

    backend = KernelsBackend()
    backend.load()
    custom = CASES["a custom-domain op"][0]
    with pytest.raises(Unsupported, match="no kernels for opset domain 'com.vendor'"):
        backend.prepare(custom)
    del custom.opset_import[1]  # the node's domain no longer imported: invalid
    with pytest.raises(Rejected, match="used but not imported"):
        backend.prepare(custom)
