"""Quantization family: the spec's own examples and hand-computed values (ties to even, saturation,
float 8 / float 4 bit patterns from the Cast tables) against our references."""

import math

import ml_dtypes
import numpy as np
import pytest

from operator_cases.quantization.dequantize_linear import dequantize
from operator_cases.quantization.dynamic_quantize_linear import dynamic_quantize
from operator_cases.nn.qlinear_conv import qlinear_conv
from operator_cases.math.qlinear_mat_mul import qlinear_matmul
from operator_cases.quantization.quantize_linear import quantize

f32 = lambda v: np.array(v, dtype=np.float32)  # noqa: E731
u8 = lambda v: np.array(v, dtype=np.uint8)  # noqa: E731
i8 = lambda v: np.array(v, dtype=np.int8)  # noqa: E731


def bits(a) -> list[int]:
    return [int(b) for b in np.asarray(a).view(np.uint8).reshape(-1)]


# -- QuantizeLinear ------------------------------------------------------------------------------
@pytest.mark.parametrize("since", [10, 13, 19, 21, 23, 24, 25, 28])
def test_quantize_spec_example(since):
    # the operator page's example: y_scale 2, y_zero_point 128
    y = quantize(f32([0, 2, 3, 1000, -254, -1000]), f32(2), u8(128), since=since)
    assert y.dtype == np.uint8
    assert y.tolist() == [128, 129, 130, 255, 1, 0]


def test_quantize_ties_to_even_and_default_zero_point():
    y = quantize(f32([0.5, 1.5, 2.5, 3.5, -0.5, -1.5, 254.5, 255.5, 256.0]), f32(1), None, since=13)
    assert y.dtype == np.uint8  # no zero point, no output_dtype: uint8
    assert y.tolist() == [0, 2, 2, 4, 0, 0, 254, 255, 255]
    y = quantize(f32([-128.5, -127.5, 126.5, 127.5]), f32(1), i8(0), since=13)
    assert y.tolist() == [-128, -128, 126, 127]


def test_quantize_zero_point_is_added_after_rounding():
    # 2.5 / 1 -> 2 (even), then + 1 = 3; adding first would give round(3.5) = 4
    assert quantize(f32([2.5]), f32(1), u8(1), since=19).tolist() == [3]


def test_quantize_infinity_saturates_and_scale_zero():
    y = quantize(f32([math.inf, -math.inf, 1.0, -1.0, 0.0]), f32(0), i8(3), since=21)
    # inf / 0 and 1 / 0 saturate; 0 / 0 is NaN: the spec-silent point nan_to_int, our choice 0
    assert y.tolist() == [127, -128, 127, -128, 0]


def test_quantize_int4_int16_uint16_ranges():
    x = f32([-9, -8.5, -7.5, 7.5, 8, 0.5])
    assert quantize(x, f32(1), np.array(0, ml_dtypes.int4), since=21).astype(np.int8).tolist() == [-8, -8, -8, 7, 7, 0]
    assert quantize(x + 8, f32(1), np.array(0, ml_dtypes.uint4), since=21).astype(np.int8).tolist() == [0, 0, 0, 15, 15, 8]
    y = quantize(f32([40000, -40000, 32766.5]), f32(1), np.array(0, np.int16), since=21)
    assert y.tolist() == [32767, -32768, 32766]
    y = quantize(f32([70000, -1, 65534.5]), f32(1), None, since=21, output_dtype=4)  # 4 = UINT16
    assert y.dtype == np.uint16 and y.tolist() == [65535, 0, 65534]


def test_quantize_per_axis_negative_axis_and_blocked():
    x = f32([[1, 2, 3], [4, 5, 6]])
    y = quantize(x, f32([1, 2, 4]), u8([0, 10, 20]), since=13, axis=-1)
    # column scales 1, 2, 4: [1, 1, 0.75 -> 1] + zero points
    assert y.tolist() == [[1, 11, 21], [4, 12, 22]]  # 5 / 2 = 2.5 -> 2; 6 / 4 = 1.5 -> 2
    xb = f32([[2, 4, 6, 8, 10]])
    # blocks of 2 along axis 1: scales [2, 4, 1] cover columns [0, 1], [2, 3], [4]
    y = quantize(xb, f32([[2, 4, 1]]), u8([[0, 0, 100]]), since=21, axis=1, block_size=2)
    assert y.tolist() == [[1, 2, 2, 2, 110]]  # 6 / 4 = 1.5 -> 2, 8 / 4 = 2


def test_quantize_float8_bit_patterns():
    x = f32([0.0, 0.5, 1.0, 448.0, 464.0, 480.0, -math.inf, math.nan, -0.0])
    zero = np.array(0, ml_dtypes.float8_e4m3fn)
    sat = quantize(x, f32(1), zero, since=19)
    # e4m3fn: 1.0 = 0 0111 000, 448 = 0 1111 110 (the largest), 464 is the tie between 448 and
    # (unrepresentable) 480: to even -> 448; 480 saturates to 448; -inf -> -448; NaN = 0x7F
    assert bits(sat)[:7] == [0x00, 0x30, 0x38, 0x7E, 0x7E, 0x7E, 0xFE]
    assert np.isnan(sat.astype(np.float32)[7]) and bits(sat)[8] == 0x00  # -0 / 1 + (+0) = +0 (IEEE sum)
    nosat = quantize(x, f32(1), zero, since=19, saturate=0)
    assert bits(nosat)[:5] == [0x00, 0x30, 0x38, 0x7E, 0x7E]
    assert np.isnan(nosat.astype(np.float32)[5:8]).all()  # beyond 464 and +-inf: NaN without saturation
    e5 = quantize(f32([1.0, 57344.0, 61440.0, math.inf, -math.inf]), f32(1), np.array(0, ml_dtypes.float8_e5m2), since=21, saturate=0)
    assert bits(e5) == [0x3C, 0x7B, 0x7C, 0x7C, 0xFC]  # 61440 is the tie above 57344: to even -> inf without saturation


def test_quantize_fnuz_infinity_follows_the_cast_table_of_its_opset():
    z = np.array(0, ml_dtypes.float8_e4m3fnuz)
    assert bits(quantize(f32([math.inf]), f32(1), z, since=19)) == [0x80]  # Cast-19..23: NaN (0x80 in FNUZ)
    assert bits(quantize(f32([math.inf]), f32(1), z, since=24)) == [0x7F]  # Cast-24: FLT_MAX = 240
    assert bits(quantize(f32([-0.0]), f32(1), z, since=24)) == [0x00]  # no -0 in FNUZ


def test_quantize_float8_zero_point_is_added():
    # "the quantization formula remains the same for consistency": 1 / 1 + 1 = 2
    y = quantize(f32([1.0]), f32(1), np.array(1, ml_dtypes.float8_e4m3fn), since=19)
    assert y.astype(np.float32).tolist() == [2.0]


def test_quantize_float4e2m1_table():
    x = f32([0.25, 0.75, 2.5, 5.0, 7.0, -7.0, math.nan, math.inf, 1.75])
    y = quantize(x, f32(1), np.array(0, ml_dtypes.float4_e2m1fn), since=23)
    # grid 0, .5, 1, 1.5, 2, 3, 4, 6: ties to the even mantissa; saturates at 6; NaN -> 6 (float4.md)
    assert y.astype(np.float32).tolist() == [0.0, 1.0, 2.0, 4.0, 6.0, -6.0, 6.0, 6.0, 2.0]


def test_quantize_division_precision():
    # x = 2.5 + 2**-12: in float32 (the scale's type) x / 1 is above the tie -> 3; with precision
    # float16 (10) x becomes 2.5 in float16 first -> the tie -> 2 (even)
    x = np.array([2.5 + 2.0**-12], np.float32)
    assert quantize(x, f32(1), i8(0), since=23).tolist() == [3]
    assert quantize(x, f32(1), i8(0), since=23, precision=10).tolist() == [2]
    assert quantize(x, np.array(1, np.float16), i8(0), since=23).tolist() == [2]  # a float16 scale: the same


# -- DequantizeLinear ----------------------------------------------------------------------------
def test_dequantize_spec_example_and_int32():
    y = dequantize(u8([0, 3, 128, 255]), f32(2), u8(128), since=10)
    assert y.dtype == np.float32 and y.tolist() == [-256.0, -250.0, 0.0, 254.0]
    y = dequantize(np.array([-(2**31), 2**31 - 1], np.int32), f32(0.5), None, since=13)
    assert y.tolist() == [-(2.0**30), 2.0**30]  # 2**31 - 1 is 2**31 in float32


def test_dequantize_per_axis_blocked_and_output_dtype():
    x = i8([[1, 2, 3, 4, 5]])
    y = dequantize(x, f32([[1, 10, 100]]), i8([[0, 1, 2]]), since=21, axis=-1, block_size=2)
    assert y.tolist() == [[1.0, 2.0, 20.0, 30.0, 300.0]]
    y = dequantize(i8([[2], [4]]), f32([0.5, 0.25]), None, since=13, axis=0)
    assert y.tolist() == [[1.0], [1.0]]
    y = dequantize(i8([3]), f32(0.1), None, since=23, output_dtype=10)  # FLOAT16
    assert y.dtype == np.float16 and y.tolist() == [np.float16(np.float16(3) * np.float16(0.1))]


def test_dequantize_float8_and_float4_inputs():
    x = np.array([1.0, -448.0, math.nan, 0.5], ml_dtypes.float8_e4m3fn)
    y = dequantize(x, f32(2), None, since=19)
    assert y[[0, 1, 3]].tolist() == [2.0, -896.0, 1.0] and math.isnan(y[2])
    y = dequantize(np.array([1.0], ml_dtypes.float8_e4m3fn), f32(1), np.array(1.0, ml_dtypes.float8_e4m3fn), since=19)
    assert y.tolist() == [0.0]  # the formula holds with a float 8 zero point
    codes = np.arange(16, dtype=np.uint8).view(ml_dtypes.float4_e2m1fn)
    y = dequantize(codes, f32(1), None, since=23)
    assert y.tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def test_dequantize_multiplication_in_the_output_type():
    # 2049 is not a float16 value: taken to float16 first (2048, the even neighbour), times 1
    y = dequantize(np.array([2049, 2051], np.int16), np.array(1, np.float16), None, since=21)
    assert y.tolist() == [2048.0, 2052.0]


# -- DynamicQuantizeLinear -----------------------------------------------------------------------
def test_dynamic_quantize_spec_example():
    y, scale, zp = dynamic_quantize(f32([0, 2, -3, -2.5, 1.34, 0.5]))
    assert scale == np.float32(5.0) / np.float32(255.0)
    assert int(zp) == 153  # 3 / 0.0196078 = 153.0
    assert y.tolist() == [153, 255, 0, 26, 221, 179]


def test_dynamic_quantize_zero_and_infinite_range():
    y, scale, zp = dynamic_quantize(f32([0.0, 0.0]))
    assert float(scale) == 0.0 and int(zp) == 0 and y.tolist() == [0, 0]
    y, scale, zp = dynamic_quantize(f32([3e38, -3e38, 1.0]))
    # float32 Sub overflows: y_scale = inf, min / inf = -0 -> zero point 0, x / inf = 0
    assert math.isinf(float(scale)) and int(zp) == 0 and y.tolist() == [0, 0, 0]
    y, scale, zp = dynamic_quantize(f32([1.0, 2.0]))  # all positive: the range starts at 0
    # in exact arithmetic 1 / (2 / 255) = 127.5 -> 128; the body's float32 steps give y_scale =
    # fl(2 / 255) = 0.0078431377 (above 2 / 255), and fl(1 / y_scale) = 127.49999237 (the float32
    # below 127.5) -> 127
    assert int(zp) == 0 and y.tolist() == [127, 255]



def test_dynamic_quantize_nan_propagates_through_the_range():
    """The spec-silent point nonfinite's choice: ReduceMax / ReduceMin of x with a NaN is NaN (IEEE 754-2019
    maximum), so the range, y_scale and the zero point are NaN (cast to uint8 as 0), not the range of the rest."""
    y, scale, zp = dynamic_quantize(f32([np.nan, 1.0, -1.0]))
    assert math.isnan(float(scale)) and int(zp) == 0 and y.tolist() == [0, 0, 0]

# -- QLinearMatMul -------------------------------------------------------------------------------
def test_qlinear_matmul_spec_example():
    a = u8([[208, 236, 0, 238], [3, 214, 255, 29]])
    b = u8([[152, 51, 244], [60, 26, 255], [0, 127, 246], [127, 254, 247]])
    y = qlinear_matmul(a, f32(0.0066), u8(113), b, f32(0.00705), u8(114), f32(0.0107), u8(118))
    assert y.tolist() == [[168, 115, 255], [1, 66, 151]]


def test_qlinear_matmul_ties_saturation_and_empty_k():
    b = i8([[1]])
    y = qlinear_matmul(i8([[1], [3], [5], [-3], [127]]), f32(1), i8(0), b, f32(1), i8(0), f32(2), i8(0))
    assert y.ravel().tolist() == [0, 2, 2, -2, 64]  # 0.5, 1.5, 2.5, -1.5 to even; 63.5 -> 64
    y = qlinear_matmul(i8([[100, 100]]), f32(1), i8(0), i8([[100], [100]]), f32(1), i8(0), f32(1), u8(0))
    assert y.tolist() == [[255]]
    y = qlinear_matmul(i8(np.zeros((2, 0))), f32(1), i8(0), i8(np.zeros((0, 3))), f32(1), i8(0), f32(1), u8(7))
    assert y.tolist() == [[7, 7, 7], [7, 7, 7]]  # the empty sum is 0


def test_qlinear_matmul_float8():
    e4 = lambda v: np.array(v, ml_dtypes.float8_e4m3fn)  # noqa: E731
    y = qlinear_matmul(e4([[448.0, -448.0, 0.0]]), f32(1), e4(0), e4([[1.0], [0.5], [2.0]]), f32(1), e4(0), f32(1), u8(0))
    assert y.tolist() == [[224]]
    y = qlinear_matmul(e4([[448.0, 448.0]]), f32(1), e4(0), e4([[1.0], [1.0]]), f32(1), e4(0), f32(1), e4(0))
    assert bits(y) == [0x7E]  # 896 saturates to 448


# -- QLinearConv ---------------------------------------------------------------------------------
def test_qlinear_conv_ties_bias_and_padding():
    x = u8([[[[1, 2], [3, 4]]]])
    w = u8([[[[1]]]])
    y = qlinear_conv(x, f32(1), u8(0), w, f32(1), u8(0), f32(2), u8(0), attrs={})
    assert y.ravel().tolist() == [0, 1, 2, 2]  # 0.5, 1, 1.5, 2 -> ties to even
    y = qlinear_conv(x, f32(1), u8(0), w, f32(1), u8(0), f32(2), u8(0), np.array([1], np.int32), attrs={})
    assert y.ravel().tolist() == [1, 2, 2, 2]  # (x + 1) / 2: 1, 1.5, 2, 2.5
    # padding holds x_zero_point: a 3 x 3 window of ones around x == x_zero_point sums to 0
    y = qlinear_conv(u8([[[[10]]]]), f32(1), u8(10), u8(np.ones((1, 1, 3, 3))), f32(1), u8(0), f32(1), u8(5),
                     attrs={"pads": [1, 1, 1, 1]})
    assert y.ravel().tolist() == [5]
    # per output channel weights: scales 1 and 0.5, zero points 0 and 2
    y = qlinear_conv(u8([[[[4]]]]), f32(1), u8(0), u8([[[[3]]], [[[6]]]]), f32([1, 0.5]), u8([0, 2]), f32(1), u8(0), attrs={})
    assert y.ravel().tolist() == [12, 8]
