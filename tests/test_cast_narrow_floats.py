"""Casts into float8e8m0 and float6 on the kernel engine and the PyTorch lowering, each value
worked out by hand from Cast-24's text and table (float8e8m0) and the float6 grids: neither
backend may round through float32 (2**-127 is a float32 subnormal; 2**60 + 1 and 2**24 + 1 are
not float32 values)."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper

E = 2.0 ** -127  # E8M0_MIN, the encoding 0
NAN = math.nan

# (source type, values, saturate, round_mode, expected powers of two)
E8M0_CASES = [
    # non-saturate + nearest (the table's second column): 0 is NaN, 2^-127 itself is in range, 3 = 1.5 * 2
    # ties up to 4, 0.7 -> 0.5, 1.5 * 2^127 rounds past E8M0_MAX: NaN, +inf NaN
    (np.float32, [0.0, E, 3.0, 0.7, 1.5 * 2.0 ** 127, math.inf], 0, "nearest", [NAN, E, 4.0, 0.5, NAN, NAN]),
    # saturate + up (the first column): 0 -> E8M0_MIN, a fraction rounds up, +inf and beyond -> E8M0_MAX
    (np.float32, [0.0, E, 3.0, 0.7, 1.5 * 2.0 ** 127, math.inf], 1, "up", [E, E, 4.0, 1.0, 2.0 ** 127, 2.0 ** 127]),
    # float64 below 2^-127 and beyond float32's range
    (np.float64, [2.0 ** -130, 1e300, 2.0 ** -127 * 1.25], 1, "down", [E, 2.0 ** 127, E]),
    (np.float64, [2.0 ** -130, 1e300, 2.0 ** -127 * 1.25], 0, "down", [NAN, NAN, E]),
    # integers by their bits: 2^24 + 1 and 2^60 + 1 are not exact powers, so "up" goes to the next one
    (np.int64, [2 ** 24 + 1, 2 ** 60 + 1, 2 ** 60, 1, 0], 1, "up", [2.0 ** 25, 2.0 ** 61, 2.0 ** 60, 1.0, E]),
    (np.uint64, [2 ** 64 - 1, 3 * 2 ** 62], 0, "down", [2.0 ** 63, 2.0 ** 63]),
    (np.uint64, [2 ** 64 - 1, 3 * 2 ** 62, 5 * 2 ** 61], 1, "nearest", [2.0 ** 64, 2.0 ** 64, 2.0 ** 63]),
]

_TYPE = {np.float32: TP.FLOAT, np.float64: TP.DOUBLE, np.int64: TP.INT64, np.uint64: TP.UINT64}


def _backend(name):
    if name == "pytorch":
        pytest.importorskip("torch", reason="torch is not installed")
        from harness.backends.pytorch import PyTorchBackend

        backend = PyTorchBackend()
    else:
        from harness.backends.kernels import KernelsBackend

        backend = KernelsBackend()
    backend.load()
    return backend


def _cast(backend, x, to, opset, **attrs):
    node = helper.make_node("Cast", ["x"], ["y"], to=to, **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", _TYPE[x.dtype.type], [len(x)])],
                              [helper.make_tensor_value_info("y", to, [len(x)])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=11)
    return backend.prepare(model).run({"x": x})[0]


@pytest.mark.parametrize("name", ["kernels", "pytorch"])
@pytest.mark.parametrize("src, values, saturate, mode, expected", E8M0_CASES)
def test_cast_to_float8e8m0_is_exact(name, src, values, saturate, mode, expected):
    y = _cast(_backend(name), np.array(values, src), TP.FLOAT8E8M0, 24, saturate=saturate, round_mode=mode)
    assert y.dtype == ml_dtypes.float8_e8m0fnu
    np.testing.assert_array_equal(y.astype(np.float64), np.array(expected))


@pytest.mark.parametrize("name", ["kernels", "pytorch"])
@pytest.mark.parametrize("to, dtype, expected", [
    # e2m3: steps 1/8 below 2, 1/4 to 4, 1/2 to 7.5; 0.0625 is a tie between 0 and 0.125: even, 0
    (TP.FLOAT6E2M3, ml_dtypes.float6_e2m3fn, [0.25, 7.5, -7.5, 0.0, 3.25, -0.375]),
    # e3m2: steps 1/16 below 0.5 (subnormals), 1/4 in [1, 2), 4 in [16, 28]; 0.3 -> 0.3125, 7.7 -> 8, 3.25 -> 3.0 (tie, even)
    (TP.FLOAT6E3M2, ml_dtypes.float6_e3m2fn, [0.3125, 8.0, -28.0, 0.0625, 3.0, -0.375]),
])
def test_cast_to_float6_rounds_to_nearest_even_and_saturates(name, to, dtype, expected):
    x = np.array([0.3, 7.7, -100.0, 0.0625, 3.25, -0.37], np.float32)
    y = _cast(_backend(name), x, to, 28)
    assert y.dtype == dtype
    assert y.astype(np.float64).tolist() == expected
