"""Type conversion and (de)quantization: Cast, CastLike, QuantizeLinear, DequantizeLinear,
DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv.

TensorFlow 2.21 has dtypes for float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz), float4e2m1, int4/uint4
and int2/uint2, but casts only some pairs: float8e4m3fn/e5m2 to and from the float types (the
FNUZ kinds under XLA only), int4/uint4 to and from the integer types, float4e2m1 and the 2-bit
integers nowhere. A conversion TensorFlow lacks directly goes through a type that holds every
value on the way exactly (a 4-bit integer through int32, an integer to float 8 through float64, a
float to a 4-bit integer rounded first); a pair TensorFlow has no kernel for at all is its own
"Cast ... is not supported", named, at run time (``unsupported``).
"""

from __future__ import annotations

import tensorflow as tf
from onnx import TensorProto as TP

from .lowering import onnx_code, tf_dtype
from .ops_nn import conv
from .registry import lowers

_FLOAT8_MAX = {TP.FLOAT8E4M3FN: 448.0, TP.FLOAT8E4M3FNUZ: 240.0, TP.FLOAT8E5M2: 57344.0, TP.FLOAT8E5M2FNUZ: 57344.0}
_FNUZ = (TP.FLOAT8E4M3FNUZ, TP.FLOAT8E5M2FNUZ)
#: QuantizeLinear's saturation ranges (and the 4- and 2-bit types' wrap-around ranges)
_INT_RANGE = {TP.INT8: (-128, 127), TP.UINT8: (0, 255), TP.INT16: (-32768, 32767), TP.UINT16: (0, 65535),
              TP.INT32: (-(2**31), 2**31 - 1), TP.UINT32: (0, 2**32 - 1), TP.INT4: (-8, 7), TP.UINT4: (0, 15),
              TP.INT2: (-2, 1), TP.UINT2: (0, 3)}
_NARROW_INT = (TP.INT4, TP.UINT4, TP.INT2, TP.UINT2)
_NARROW_FLOAT = (*_FLOAT8_MAX, TP.FLOAT4E2M1)


def _code(x) -> int:
    return onnx_code(x.dtype)


def exact(x, work=tf.float64):
    """``x``'s values in ``work`` (a wider float or int32), through int32 for the 4- and 2-bit
    integers and float32 for the narrow floats (TensorFlow casts those only to some types)."""
    code = _code(x)
    if code in _NARROW_INT:
        x = tf.cast(x, tf.int32)
    elif code in _NARROW_FLOAT and work not in (tf.float32, tf.float16, tf.bfloat16):
        x = tf.cast(x, tf.float32)
    return tf.cast(x, work)


def convert(x, to: int, saturate: bool = True, fnuz_inf_nan: bool = False):
    """Cast's rules: float 8 saturating to +-FLT_MAX by default (the spec's first table: Inf and
    [x] > FLT_MAX to FLT_MAX, NaN kept), or TensorFlow's own conversion without saturation (the
    second table: NaN past the range of E4M3FN and the FNUZ kinds, Inf for E5M2); to a 4- or 2-bit
    integer a float rounds to nearest-even, then wraps like any fixed-point conversion.
    ``fnuz_inf_nan``: Cast-19..23's saturating table sent +-Inf to NaN in the FNUZ kinds
    ('Inf | FLT_MAX | NaN | FLT_MAX | NaN'); Cast-24 made it FLT_MAX."""
    target = tf_dtype(to)
    src = _code(x)
    if x.dtype == target:
        return tf.identity(x)
    if to in _FLOAT8_MAX:
        v = x if x.dtype in (tf.float16, tf.bfloat16, tf.float32, tf.float64) else exact(x, tf.float64)
        if saturate:
            top = tf.constant(_FLOAT8_MAX[to], v.dtype)
            inf = tf.math.is_inf(v)
            v = tf.where(tf.math.is_nan(v), v, tf.clip_by_value(v, -top, top))
            out = tf.cast(v, target)
            if fnuz_inf_nan and to in _FNUZ:
                out = tf.where(inf, tf.cast(tf.fill(tf.shape(v), float("nan")), target), out)
            return out
        return tf.cast(v, target)
    if to in _NARROW_INT:
        if x.dtype.is_floating or src in _NARROW_FLOAT:
            x = tf.cast(tf.round(exact(x, tf.float64)), tf.int64)
        elif x.dtype == tf.bool:
            x = tf.cast(x, tf.int32)
        return tf.cast(x, target)
    if src in _NARROW_INT or src in _NARROW_FLOAT:
        return tf.cast(exact(x, tf.int32 if src in _NARROW_INT else tf.float32), target)
    return tf.cast(x, target)


def _no_strings(node, *dtypes):
    if tf.string in dtypes:
        from ..base import Unsupported

        raise Unsupported(f"{node}: casts from or to strings")


@lowers("Cast", 6, 9, 13, 19, 21, 23, 24, 25, 28)
def cast(node, x, *, to, saturate=1, round_mode="up"):
    _no_strings(node, x.dtype, tf_dtype(to))
    return convert(x, to, bool(saturate), 19 <= node.since < 24)


@lowers("CastLike", 15, 19, 21, 23, 24, 25)
def cast_like(node, x, like, *, saturate=1, round_mode="up"):
    _no_strings(node, x.dtype, like.dtype)
    return convert(x, _code(like), bool(saturate), 19 <= node.since < 24)


# -- quantization ----------------------------------------------------------------------------
def _expand(p, x, axis: int, block_size: int):
    """A per-tensor, per-axis or blocked scale / zero point broadcastable to ``x``."""
    if p.shape.rank == 0 or (p.shape.rank == 1 and p.shape[0] == 1):
        return tf.reshape(p, [])
    rank = x.shape.rank
    a = axis + rank if axis < 0 else axis
    if p.shape.rank == 1 and not block_size:
        return tf.reshape(p, [-1 if d == a else 1 for d in range(rank)])
    code = _code(p)
    wide = exact(p, tf.int32) if code in _NARROW_INT else (exact(p, tf.float32) if code in _NARROW_FLOAT else p)
    rep = tf.repeat(wide, block_size, axis=a)
    return tf.gather(rep, tf.range(tf.shape(x)[a]), axis=a)


def _quantized_type(y_zero_point, output_dtype) -> int:
    if output_dtype:
        return output_dtype
    return _code(y_zero_point) if y_zero_point is not None else TP.UINT8


@lowers("QuantizeLinear", 10, 13, 19, 21, 23, 24, 25, 28)
def quantize_linear(node, x, y_scale, y_zero_point=None, *, axis=1, block_size=0, output_dtype=0, saturate=1, precision=0):
    """y = saturate(x / y_scale + y_zero_point): the division in ``precision`` (else the scale's
    type; an int32 scale in float32), rounded half to even; float 8 targets through Cast's
    conversion (``saturate``)."""
    to = _quantized_type(y_zero_point, output_dtype)
    scale = _expand(y_scale, x, axis, block_size)
    work = tf_dtype(precision) if precision else (scale.dtype if scale.dtype.is_floating else tf.float32)
    q = exact(x, work) / exact(scale, work)
    if to in _NARROW_FLOAT:
        if y_zero_point is not None:
            q = q + exact(_expand(y_zero_point, x, axis, block_size), q.dtype)
        return convert(q, to, bool(saturate))
    q = tf.round(tf.cast(q, tf.float64))  # round half to even
    if y_zero_point is not None:
        q = q + exact(_expand(y_zero_point, x, axis, block_size))
    lo, hi = _INT_RANGE[to]
    return tf.cast(tf.cast(tf.clip_by_value(q, lo, hi), tf.int64), tf_dtype(to))


@lowers("DequantizeLinear", 10, 13, 19, 21, 23, 24, 25, 28)
def dequantize_linear(node, x, x_scale, x_zero_point=None, *, axis=1, block_size=0, output_dtype=0):
    """y = (x - x_zero_point) * x_scale; the difference is exact in float64, the product is
    computed in the output type (``output_dtype``, else the scale's type)."""
    out = tf_dtype(output_dtype) if output_dtype else x_scale.dtype
    v = exact(x)
    if x_zero_point is not None:
        v = v - exact(_expand(x_zero_point, x, axis, block_size))
    return tf.cast(v, out) * exact(_expand(x_scale, x, axis, block_size), out)


@lowers("DynamicQuantizeLinear", 11)
def dynamic_quantize_linear(node, x):
    """The function body's formulas in float32; an empty x or a range of 0 gives scale 0 and zero
    point 0 (the body's 0 / 0, which the spec leaves silent, taken as no offset)."""
    x = tf.cast(x, tf.float32)
    empty = tf.equal(tf.size(x), 0)
    lo = tf.where(empty, 0.0, tf.minimum(tf.reduce_min(x), 0.0))
    hi = tf.where(empty, 0.0, tf.maximum(tf.reduce_max(x), 0.0))
    scale = (hi - lo) / 255.0
    safe = tf.where(tf.equal(scale, 0.0), 1.0, scale)
    zp = tf.where(tf.equal(scale, 0.0), 0.0, tf.clip_by_value(tf.round(-lo / safe), 0.0, 255.0))
    y = tf.where(tf.equal(scale, 0.0), tf.zeros_like(x) + zp, tf.clip_by_value(tf.round(x / safe) + zp, 0.0, 255.0))
    return tf.cast(y, tf.uint8), scale, tf.cast(zp, tf.uint8)


def _centred(x, zp, per_row: bool):
    """``x - zp`` in float64 (exact for 8- and 16-bit values); a 1-D zero point of ``a`` is per row."""
    v = exact(x)
    if zp is None:
        return v
    z = exact(zp)
    if per_row and z.shape.rank == 1 and z.shape[0] != 1:
        z = tf.reshape(z, [-1, 1])
    return v - z


def _requantize(y, y_zp):
    """round(y) + y_zp saturated to y_zp's type (integers), or Cast's saturating conversion (float 8)."""
    to = _code(y_zp)
    if to in _NARROW_FLOAT:
        return convert(y + exact(y_zp), to, True, True)
    lo, hi = _INT_RANGE[to]
    return tf.cast(tf.clip_by_value(tf.round(y) + exact(y_zp), lo, hi), y_zp.dtype)


@lowers("MatMulInteger", 10)
def matmul_integer(node, a, b, a_zero_point=None, b_zero_point=None):
    """The product of the centred values, in float64: exact while a sum of 8-bit products stays
    below 2**53 (any realistic K), then int32."""
    from .ops_nn import matmul

    return tf.cast(matmul(node, _centred(a, a_zero_point, True), _centred(b, b_zero_point, False)), tf.int32)


@lowers("QLinearMatMul", 10, 21)
def qlinear_matmul(node, a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp):
    """y = saturate(round(((a - a_zp) @ (b - b_zp)) * a_scale * b_scale / y_scale) + y_zp), in float64."""
    from .ops_nn import matmul

    acc = matmul(node, _centred(a, a_zp, True), _centred(b, b_zp, False))
    a_s = exact(a_scale)
    a_s = tf.reshape(a_s, [-1, 1]) if a_s.shape.rank == 1 and a_s.shape[0] != 1 else a_s
    return _requantize(acc * a_s * exact(b_scale) / exact(y_scale), y_zp)


def _int_conv(node, x, w, x_zp, w_zp, attrs):
    """The convolution of the centred values in float64 (exact while sums of 8-bit products stay
    below 2**53); a 1-D weight zero point is per output channel."""
    xc = _centred(x, x_zp, False)
    wc = exact(w)
    if w_zp is not None:
        z = exact(w_zp)
        wc = wc - (tf.reshape(z, [-1] + [1] * (w.shape.rank - 1)) if z.shape.rank == 1 and z.shape[0] != 1 else tf.reshape(z, []))
    return conv(node, xc, wc, **attrs)


@lowers("ConvInteger", 10)
def conv_integer(node, x, w, x_zero_point=None, w_zero_point=None, **attrs):
    return tf.cast(tf.round(_int_conv(node, x, w, x_zero_point, w_zero_point, attrs)), tf.int32)


@lowers("QLinearConv", 10)
def qlinear_conv(node, x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, b=None, **attrs):
    acc = _int_conv(node, x, w, x_zp, w_zp, attrs)
    rank = x.shape.rank
    if b is not None:
        acc = acc + tf.reshape(exact(b), [1, -1] + [1] * (rank - 2))
    ws = exact(w_scale)
    ws = tf.reshape(ws, [1, -1] + [1] * (rank - 2)) if ws.shape.rank == 1 and ws.shape[0] != 1 else tf.reshape(ws, [])
    return _requantize(acc * (exact(x_scale) * ws) / exact(y_scale), y_zp)
