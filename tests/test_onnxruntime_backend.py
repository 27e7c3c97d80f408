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


# -- variants: optimization levels and execution providers as backends of their own ----------------
def _relu_model():
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)


def test_a_provider_this_build_lacks_is_unavailable_with_the_reason():
    from harness.backends import load_backend_class

    cls = load_backend_class("onnxruntime:NoSuchProvider")
    assert cls.name == "onnxruntime:NoSuchProvider"
    ok, reason = cls.available()
    assert not ok
    assert "NoSuchProvider" in reason and "CPUExecutionProvider" in reason  # names what is there instead


def test_an_unavailable_provider_run_is_unavailable_not_a_cpu_run(tmp_path, capsys):
    from harness.cli import main
    from harness.suites import onnx_official as official

    corpus = tmp_path / "corpus"
    official.build_corpus(corpus, ["onnx-simple"])
    code = main(["run", "--corpus", str(corpus), "--store", str(tmp_path / "r.sqlite"), "--suite", "onnx-simple",
                 "--backend", "onnxruntime:NoSuchProvider", "-k", "relu", "-j", "1"])
    out = capsys.readouterr().out
    assert code == 1, "a requested backend that cannot load fails the run"
    line = [l for l in out.splitlines() if "onnxruntime:NoSuchProvider" in l][0]
    assert "unavailable: execution provider NoSuchProvider is not in this onnxruntime build" in line


def test_the_provider_variant_asks_the_session_for_that_provider(monkeypatch):
    # the one place a GPU provider differs from the CPU: provider selection; mocked there only
    import onnxruntime

    from harness.backends import load_backend_class

    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"])
    cls = load_backend_class("onnxruntime:CUDAExecutionProvider")
    assert cls.available() == (True, "")
    asked = []
    real = onnxruntime.InferenceSession

    def session(data, sess_options=None, providers=None):
        asked.append(list(providers))
        return real(data, sess_options=sess_options, providers=["CPUExecutionProvider"])

    monkeypatch.setattr(onnxruntime, "InferenceSession", session)
    backend = cls()
    backend.load()
    with pytest.raises(RuntimeError, match="did not use CUDAExecutionProvider"):
        backend.prepare(_relu_model())  # the session fell back to the CPU: said, not hidden
    assert asked == [["CUDAExecutionProvider", "CPUExecutionProvider"]]


@pytest.mark.parametrize("spec, options, setting", [
    ("onnxruntime-noopt", {}, ("optimization", "disable")),
    ("onnxruntime", {"optimization": "disabled"}, ("optimization", "disabled")),
    ("onnxruntime:CPUExecutionProvider", {}, ("providers", "CPUExecutionProvider")),
])
def test_variants_run_and_record_their_setting(spec, options, setting):
    from harness.backends import load_backend_class

    backend = load_backend_class(spec)(**options)
    backend.load()
    assert backend.environment()[setting[0]] == setting[1]
    (y,) = backend.prepare(_relu_model()).run({"x": np.array([-1.0, 0.0, 2.0], np.float32)})
    np.testing.assert_array_equal(y, [0.0, 0.0, 2.0])


def test_an_unknown_optimization_level_is_refused_by_name():
    backend = OnnxRuntimeBackend(optimization="fastest")
    backend.load()
    with pytest.raises(ValueError, match="fastest"):
        backend.prepare(_relu_model())


@pytest.mark.parametrize("message", ["No corresponding Numpy type for Tensor Type. Float8E8M0",
                                     "Numpy_type 267 can't be converted to MLDataType."])
def test_a_type_the_binding_cannot_carry_is_unsupported(message):
    backend = OnnxRuntimeBackend()
    assert backend.classify_error(RuntimeError(message), "run") == "unsupported"
