"""Inputs the operator cases used to avoid, now drawn as spec-silent points (issue 32, "draw what
is still avoided"): each point accepts our choice (pass) and its named readings (unspecified),
and any other value there is a mismatch."""

from __future__ import annotations

import numpy as np
import pytest

from harness.worker import execute_case
from harness.registry import REGISTRY, Example, load_all
from harness.suites.operators import build_case

from .seeded_faults import _kernel, _Kernels


def fixed(op, value):
    """A backend whose ``op`` kernel returns ``value`` whatever its inputs."""
    return type(f"Fixed{op}", (_Kernels,), {"name": f"fixed-{op.lower()}", "kernels": (_kernel(op, lambda self, *a, **k: (value,)),)})()


def pow_case(base, exponent, dtype="int32", exp_dtype="int32", since=15):
    load_all()
    example = Example([np.array(base, dtype), np.array(exponent, exp_dtype)], name="edge")
    return build_case(REGISTRY[("", "Pow", since)], example, dtype, since, "edge")


BASES = [-3, -2, -1, 1, 2, 3]


@pytest.mark.parametrize("got, outcome", [
    ([0, 0, -1, 1, 0, 0], "pass"),              # the real result truncated toward zero (ours)
    ([0, -1, -1, 1, 0, 0], "unspecified"),      # rounded toward -inf
    ([0, 0, 1, 1, 0, 0], "mismatch"),           # (-1)^-1 is -1 in every reading
    ([-2147483648, 0, -1, 1, 0, 0], "mismatch"),
])
def test_pow_negative_integer_exponent(got, outcome):
    case = pow_case(BASES, -1)
    assert case.tags["spec_silent"] == ["Pow.int_negative_exponent"]
    assert execute_case(fixed("Pow", np.array(got, np.int32)), case).outcome == outcome


@pytest.mark.parametrize("got, outcome", [(-2**31, "pass"), (2**31 - 1, "unspecified"), (0, "mismatch")])
def test_pow_zero_to_a_negative_exponent(got, outcome):
    case = pow_case([0], [-2], exp_dtype="float32")
    assert case.tags["spec_silent"] == ["Pow.int_zero_negative_exponent"]
    assert execute_case(fixed("Pow", np.array([got], np.int32)), case).outcome == outcome


@pytest.mark.parametrize("got, outcome", [
    ([2**62, 3**39, 0], "pass"),                                      # 2^64 wraps to 0
    ([2**62, 3**39, 2**63 - 1], "unspecified"),                       # saturated
    ([2**62, 3**39, -2**63], "unspecified"),                          # through double, x86's conversion
    ([2**62, 3**39, 1], "mismatch"),
    ([2**62, 3**39 - 11, 0], "mismatch"),                             # an in-range power is exact
])
def test_pow_integer_overflow(got, outcome):
    case = pow_case([2, 3, 2], [62, 39, 64], dtype="int64", exp_dtype="int64")
    assert case.tags["spec_silent"] == ["Pow.int_overflow"]
    assert execute_case(fixed("Pow", np.array(got, np.int64)), case).outcome == outcome


def reduce_case(op, since, x, dtype="float16"):
    load_all()
    attrs = {"keepdims": 0} if since >= 18 or (op == "ReduceSum" and since >= 13) else {"axes": [1], "keepdims": 0}
    inputs = [np.array(x, dtype)] + ([np.array([1], np.int64)] if "axes" not in attrs else [])
    return build_case(REGISTRY[("", op, since)], Example(inputs, attrs, name="edge"), dtype, since, "edge")


T = 2.0 ** 15


@pytest.mark.parametrize("got, outcome", [
    ([16384, 10], "pass"),                 # accumulated wide
    ([np.inf, 10], "unspecified"),         # left to right in float16: 2^15 + 2^15 overflows
    ([np.nan, 10], "mismatch"),            # no reading gives NaN here (inf - 2^15 stays inf)
    ([16000, 10], "mismatch"),
    ([16384, 11], "mismatch"),             # a row that does not overflow is fixed
])
def test_reduce_sum_narrow_accumulation(got, outcome):
    case = reduce_case("ReduceSum", 13, [[T, T, -T, -T / 2], [1, 2, 3, 4]])
    assert case.tags["spec_silent"] == ["ReduceSum.narrow_accumulation"]
    assert execute_case(fixed("ReduceSum", np.array(got, np.float16)), case).outcome == outcome


@pytest.mark.parametrize("got, outcome", [([20480, 5], "pass"), ([np.inf, 5], "unspecified"), ([0, 5], "mismatch")])
def test_reduce_l2_narrow_accumulation_reads_the_function_body_in_the_type(got, outcome):
    case = reduce_case("ReduceL2", 18, [[3 * T / 8, T / 2, 0], [3, 4, 0]])
    assert case.tags["spec_silent"] == ["ReduceL2.narrow_accumulation"]
    assert execute_case(fixed("ReduceL2", np.array(got, np.float16)), case).outcome == outcome


def test_a_float16_reduction_that_stays_in_range_reaches_no_point():
    assert "spec_silent" not in reduce_case("ReduceSum", 13, [[1, 2, 3, 4]]).tags


def instance_case():
    load_all()
    x = np.array([[[[T, T], [T / 2, T / 2]], [[-T / 2, T / 2], [-T / 2, T / 2]], [[1, 2], [3, 4]]]], np.float16)
    ex = Example([x, np.array([2, 2, 1], np.float16), np.array([0.5, 0.5, 0], np.float16)], name="edge")
    return build_case(REGISTRY[("", "InstanceNormalization", 22)], ex, "float16", 22, "edge")


@pytest.mark.parametrize("channels, outcome", [
    ([[2.5, 2.5, -1.5, -1.5], [-1.5, 2.5, -1.5, 2.5]], "pass"),
    ([[np.nan] * 4, [0.5] * 4], "unspecified"),   # in float16: the mean overflows (NaN), the variance does (B)
    ([[0.5] * 4, [0.5] * 4], "unspecified"),      # the mean wide, the squares in float16 (onnx.reference)
    ([[-1.5] * 4, [0.5] * 4], "mismatch"),
])
def test_instance_normalization_narrow_accumulation(channels, outcome):
    case = instance_case()
    third = [-1.3416, -0.4472, 0.4472, 1.3416]
    y = np.array([channels[0], channels[1], third], np.float16).reshape(1, 3, 2, 2)
    assert case.tags["spec_silent"] == ["InstanceNormalization.narrow_accumulation"]
    assert execute_case(fixed("InstanceNormalization", y), case).outcome == outcome


E = [3.0, 0.7, 1.5, 1e-40, np.inf, 0.0, 2.0 ** 127 * 1.5]


@pytest.mark.parametrize("attrs, want", [
    ({}, [4, 1, 2, 2.0 ** -127, 2.0 ** 127, 2.0 ** -127, 2.0 ** 127]),                  # saturate + up: the table's first column
    ({"round_mode": "down"}, [2, 0.5, 1, 2.0 ** -127, 2.0 ** 127, 2.0 ** -127, 2.0 ** 127]),
    ({"round_mode": "nearest"}, [4, 0.5, 2, 2.0 ** -127, 2.0 ** 127, 2.0 ** -127, 2.0 ** 127]),  # 3 and 1.5 are ties: up
    ({"saturate": 0, "round_mode": "nearest"}, [4, 0.5, 2, np.nan, np.nan, np.nan, np.nan]),   # the second column
])
def test_cast_to_float8e8m0_follows_round_mode_and_the_table(attrs, want):
    from operator_cases.tensor.cast import cast_24

    got = cast_24(np.array(E, np.float32), to=24, **attrs).astype(np.float64)
    np.testing.assert_array_equal(got, np.array(want, np.float64))


def cast_case(x, to, attrs=None, since=25):
    load_all()
    import onnx

    ex = Example([np.array(x, np.float32)], {"to": getattr(onnx.TensorProto, to.upper()), **(attrs or {})}, name="edge")
    return build_case(REGISTRY[("", "Cast", since)], ex, "float32", since, "edge")


@pytest.mark.parametrize("got, outcome", [([0, 2, 2, 1], "pass"), ([0, 1, 2, 1], "unspecified"),   # truncation
                                          ([1, 2, 3, 1], "unspecified"),                               # half away from zero
                                          ([0, 2, 1, 1], "mismatch")])
def test_float_to_uint2_rounding_is_a_point_with_three_readings(got, outcome):
    case = cast_case([0.5, 1.5, 2.5, 1.0], "uint2")
    assert case.tags["spec_silent"] == ["Cast.float_to_2bit"]
    import ml_dtypes
    assert execute_case(fixed("Cast", np.array(got).astype(ml_dtypes.uint2)), case).outcome == outcome


@pytest.mark.parametrize("got, outcome", [([np.nan, 1.0], "pass"), ([2.0 ** -127, 1.0], "unspecified"), ([0.5, 1.0], "mismatch")])
def test_float8e8m0_outside_the_table_accepts_the_other_column(got, outcome):
    import ml_dtypes

    case = cast_case([0.0, 1.0], "float8e8m0", {"saturate": 0, "round_mode": "up"})
    assert case.tags["spec_silent"] == ["Cast.float8e8m0_untabulated"]
    assert execute_case(fixed("Cast", np.array(got, np.float32).astype(ml_dtypes.float8_e8m0fnu)), case).outcome == outcome


def test_dequantize_linear_takes_float8e8m0_scales_as_named_edges():
    import ml_dtypes

    load_all()
    entry = REGISTRY[("", "DequantizeLinear", 24)]
    names = {e.name for e in entry.edges("int8", 24)}
    assert {"float8e8m0_scale", "float8e8m0_scale_per_axis", "float8e8m0_scale_blocked", "float8e8m0_scale_nan"} <= names
    y = entry.reference(np.array([1, -2, 4], np.int8), np.array(2.0 ** 127, np.float32).astype(ml_dtypes.float8_e8m0fnu),
                        output_dtype=1)
    np.testing.assert_array_equal(np.asarray(y).astype(np.float64), [2.0 ** 127, -np.inf, np.inf])
