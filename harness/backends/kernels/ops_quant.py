"""Linear quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul.

Scales are per tensor (scalar), per axis (1-D) or blocked (same rank as the input, one
dimension divided into blocks of ``block_size``), as in QuantizeLinear-21+.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ._util import ML_FLOATS, ML_INTS, normalize_axis, np_dtype, widen
from .ops_cast import cast
from .ops_matrix import matmul
from .registry import register


def _int_range(dt: np.dtype) -> tuple[int, int]:
    if dt in ML_INTS:
        info = ml_dtypes.iinfo(dt)
        return int(info.min), int(info.max)
    info = np.iinfo(dt)
    return int(info.min), int(info.max)


def _is_int_target(dt: np.dtype) -> bool:
    return dt.kind in "iu" or dt in ML_INTS


def broadcast_param(param: np.ndarray, x: np.ndarray, axis: int, block_size: int) -> np.ndarray:
    """A scale or zero point reshaped/expanded so that it broadcasts against x."""
    param = np.asarray(param)
    if param.ndim == 0 or param.size == 1 and param.ndim <= 1:
        return param.reshape(())
    ax = normalize_axis(axis, x.ndim)
    if param.ndim == 1 and not block_size:
        return param.reshape((-1,) + (1,) * (x.ndim - ax - 1))
    # blocked: repeat every scale block_size times along the axis, trim to the input
    if block_size:
        param = np.repeat(param, block_size, axis=ax)
        index = [slice(None)] * param.ndim
        index[ax] = slice(0, x.shape[ax])
        return param[tuple(index)]
    return param


def quantize(x, scale, zero_point, out_dtype, axis, block_size, saturate, precision=None):
    s = broadcast_param(scale, x, axis, block_size)
    cd = precision or (np.dtype(np.float32) if s.dtype in ML_FLOATS else s.dtype)
    if cd.kind not in "f":
        cd = np.dtype(np.float32)
    q = widen(np.asarray(x)).astype(cd) / widen(s).astype(cd)
    if _is_int_target(out_dtype):
        q = np.rint(q.astype(np.float64))  # ties to even (QuantizeLinear doc)
        if zero_point is not None:
            q = q + widen(broadcast_param(zero_point, x, axis, block_size)).astype(np.float64)
        lo, hi = _int_range(out_dtype)
        return np.clip(q, lo, hi).astype(out_dtype)
    if zero_point is not None:
        q = q.astype(np.float32) + widen(broadcast_param(zero_point, x, axis, block_size))
    if out_dtype in (np.dtype(ml_dtypes.float4_e2m1fn), np.dtype(ml_dtypes.float6_e2m3fn), np.dtype(ml_dtypes.float6_e3m2fn)):
        # float4.md's Cast table: NaN -> the largest value (the type has no NaN; float6 read the
        # same way, as our reference does); ml_dtypes would give -0
        q = np.where(np.isnan(q), np.float32(ml_dtypes.finfo(out_dtype).max), q)
    return cast(q.astype(np.float32), out_dtype, saturate)


@register("QuantizeLinear", since=10)
def quantize_linear(node):
    axis = node.attrs.get("axis", 1)
    block_size = node.attrs.get("block_size", 0)
    saturate = bool(node.attrs.get("saturate", 1))
    output_dtype = node.attrs.get("output_dtype", 0)
    precision = node.attrs.get("precision", 0)

    def run(x, y_scale, y_zero_point=None):
        if y_zero_point is not None:
            out = y_zero_point.dtype
        elif output_dtype:
            out = np_dtype(output_dtype)
        else:
            out = np.dtype(np.uint8)
        prec = np_dtype(precision) if precision else None
        return (quantize(x, y_scale, y_zero_point, out, axis, block_size, saturate, prec),)

    return run


@register("DequantizeLinear", since=10)
def dequantize_linear(node):
    axis = node.attrs.get("axis", 1)
    block_size = node.attrs.get("block_size", 0)
    output_dtype = node.attrs.get("output_dtype", 0)

    def run(x, x_scale, x_zero_point=None):
        out = np_dtype(output_dtype) if output_dtype else x_scale.dtype
        if out == ml_dtypes.float8_e8m0fnu:
            out = np.dtype(np.float32)
        v = widen(x).astype(np.float32 if x.dtype.itemsize < 4 or x.dtype in ML_FLOATS else np.float64)
        if x_zero_point is not None:
            v = v - widen(broadcast_param(x_zero_point, x, axis, block_size)).astype(v.dtype)
        s = widen(broadcast_param(x_scale, x, axis, block_size))
        cd = np.float32 if out in ML_FLOATS or out == np.float16 else out
        y = v.astype(cd) * s.astype(cd)
        return (y.astype(out),)

    return run


@register("DynamicQuantizeLinear", since=11)
def dynamic_quantize_linear(node):
    def run(x):
        x = x.astype(np.float32, copy=False)
        # ReduceMin / ReduceMax and Min / Max with 0: a NaN in x propagates (np.minimum, not Python's min)
        lo = np.minimum(np.float32(0), np.min(x)) if x.size else np.float32(0)
        hi = np.maximum(np.float32(0), np.max(x)) if x.size else np.float32(0)
        with np.errstate(over="ignore", invalid="ignore"):  # the function body's Sub and Div, in float32 (an overflow is inf)
            scale = np.float32(np.float32(hi - lo) / np.float32(255))
            if scale == 0:
                return (np.zeros(x.shape, np.uint8), np.array(scale), np.array(0, np.uint8))
            zf = np.clip(np.rint(0.0 - np.float32(lo) / scale), 0, 255)
            zp = np.uint8(0 if np.isnan(zf) else zf)  # the uint8 Cast of NaN is undefined: 0 here
            v = np.clip(np.rint(x / scale) + zp, 0, 255)
            y = np.where(np.isnan(v), 0, v).astype(np.uint8)
        return (y, np.array(scale, dtype=np.float32), np.array(zp, dtype=np.uint8))

    return run


def _rows(param: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Per-row parameter of QLinearMatMul's ``a``: a 1-D vector of M applies along rows."""
    p = np.asarray(param)
    if p.ndim == 1 and p.size > 1:
        return p.reshape(-1, 1)
    return p


@register("QLinearMatMul", since=10)
def qlinear_matmul(node):
    def run(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point):
        fa = widen(a).astype(np.float64) - widen(_rows(a_zero_point, a)).astype(np.float64)
        fb = widen(b).astype(np.float64) - widen(np.asarray(b_zero_point)).astype(np.float64)
        acc = matmul(fa, fb)
        sa = widen(_rows(a_scale, a)).astype(np.float32)
        sb = widen(np.asarray(b_scale)).astype(np.float32)
        # acc * a_scale * b_scale / y_scale in float32, left to right (the text names no precision); the
        # quotient too, whatever the scales' type: rounding the product to float16 scales first rounded twice
        real = (acc.astype(np.float32) * sa) * sb
        out = y_zero_point.dtype
        return (quantize(real, y_scale, y_zero_point, out, 1, 0, True, np.dtype(np.float32)),)

    return run
