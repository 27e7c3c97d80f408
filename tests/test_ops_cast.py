"""Cast and CastLike: hand-computed values against our reference, the torch lowering and the
spec-silent point NaN -> float4e2m1."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper

from operator_cases.tensor.cast import _nan_to_float4, _zero_or_six, cast_19, cast_24, convert
from harness.registry import SilentCheck

torch = pytest.importorskip("torch", reason="torch is not installed")

from harness.backends.pytorch import PyTorchBackend  # noqa: E402
from harness.backends.pytorch.ops_cast import cast_to  # noqa: E402


# -- our reference ------------------------------------------------------------------------------
def test_float_to_int4_rounds_half_to_even():
    # int4.md: "rounding to the nearest-integer (with ties to even)": 1.5 -> 2, 2.5 -> 2, -0.75 -> -1, 11.5 -> 12
    x = np.array([1.5, 2.5, -0.75, -1.5, 0.4], np.float16)
    assert convert(x, "int4").astype(np.int8).tolist() == [2, 2, -1, -2, 0]
    assert convert(np.array([11.5, 0.5, 14.5], np.float32), "uint4").astype(np.uint8).tolist() == [12, 0, 14]


def test_inf_to_fnuz_saturating_is_nan_before_cast_24_and_flt_max_after():
    # Cast-19 table (saturate): "Inf | FLT_MAX | NaN | FLT_MAX | NaN"; Cast-24: FLT_MAX (240 for E4M3FNUZ)
    x = np.array([np.inf, -np.inf, 1000.0], np.float16)
    y19 = cast_19(x, to=TP.FLOAT8E4M3FNUZ).astype(np.float32)
    assert np.isnan(y19[0]) and np.isnan(y19[1]) and y19[2] == 240.0
    assert cast_24(x, to=TP.FLOAT8E4M3FNUZ).astype(np.float32).tolist() == [240.0, -240.0, 240.0]


def test_float8e5m2_without_saturation_keeps_inf():
    # Cast-19 table (saturate=0): "Inf | NaN | NaN | Inf | NaN" and "[x] > FLT_MAX | NaN | NaN | Inf | NaN"
    y = cast_19(np.array([np.inf, 1e6, -1e6], np.float32), to=TP.FLOAT8E5M2, saturate=0).astype(np.float32)
    assert y.tolist() == [math.inf, math.inf, -math.inf]


def test_nan_to_float4_is_open_and_bounded():
    x = np.array([np.nan, 1.0, np.inf], np.float32)
    (mask,) = _nan_to_float4([x], {"to": TP.FLOAT4E2M1}, [], 23)
    assert mask.tolist() == [True, False, False]
    assert _nan_to_float4([x], {"to": TP.FLOAT8E4M3FN}, [], 23) == [None]
    got = np.array([-0.0, 1.0, 6.0], ml_dtypes.float4_e2m1fn)
    assert _zero_or_six(SilentCheck([x], {}, [], [got], [mask], 23))
    assert not _zero_or_six(SilentCheck([x], {}, [], [np.array([1.0, 1.0, 6.0], ml_dtypes.float4_e2m1fn)], [mask], 23))


# -- the torch lowering ---------------------------------------------------------------------------
def test_torch_float_to_int4_rounds_half_to_even():
    y = cast_to(torch.tensor([1.5, 2.5, -0.75, -1.5, 11.5], dtype=torch.float16), TP.FLOAT16, TP.INT4)
    assert y.tolist() == [2, 2, -1, -2, -4]  # 11.5 -> 12 keeps its low 4 bits: -4
    y = cast_to(torch.tensor([11.5, 0.5, 14.5], dtype=torch.float32), TP.FLOAT, TP.UINT4)
    assert y.tolist() == [12, 0, 14]


def test_torch_finite_float64_beyond_float32_saturates_to_fnuz_max_at_cast_19():
    # 1e300 is finite: "[x] > FLT_MAX | FLT_MAX" (240), not the "Inf | NaN" row
    y = cast_to(torch.tensor([1e300, -1e300, math.inf], dtype=torch.float64), TP.DOUBLE, TP.FLOAT8E4M3FNUZ, fnuz_inf_nan=True)
    assert y[:2].tolist() == [240.0, -240.0] and math.isnan(y[2])


@pytest.mark.parametrize("opset, expected", [(19, [math.nan, math.nan, 240.0]), (24, [240.0, -240.0, 240.0])])
def test_torch_inf_to_fnuz_follows_the_version_table(opset, expected):
    node = helper.make_node("Cast", ["x"], ["y"], to=TP.FLOAT8E4M3FNUZ)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TP.FLOAT16, [3])],
                              [helper.make_tensor_value_info("y", TP.FLOAT8E4M3FNUZ, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)
    backend = PyTorchBackend()
    backend.load()
    (y,) = backend.prepare(model).run({"x": np.array([np.inf, -np.inf, 1000.0], np.float16)})
    np.testing.assert_array_equal(y.astype(np.float32), np.array(expected, np.float32))
