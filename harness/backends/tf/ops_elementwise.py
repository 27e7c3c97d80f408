"""Elementwise operators: arithmetic, comparison and logic (numpy broadcasting, which TensorFlow's
ops share), unary math, activations, and the variadic Max / Min / Sum / Mean.

The versions named are those of opset 7 and later (multidirectional broadcasting); the legacy
``broadcast``/``axis`` attributes of opsets 1-6 have no lowering yet (``unsupported``)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from ..base import Unsupported
from .registry import lowers


def _int(x: tf.Tensor) -> bool:
    return x.dtype.is_integer


# -- arithmetic ----------------------------------------------------------------------------------
@lowers("Add", 7, 13, 14)
def add(node, a, b):
    return tf.math.add(a, b) if a.dtype != tf.bool else tf.math.logical_or(a, b)


@lowers("Sub", 7, 13, 14)
def sub(node, a, b):
    return tf.math.subtract(a, b)


@lowers("Mul", 7, 13, 14)
def mul(node, a, b):
    return tf.math.multiply(a, b)


@lowers("Div", 7, 13, 14)
def div(node, a, b):
    # integers: the quotient truncated toward zero, as C and every ONNX runtime compute it
    return tf.truncatediv(a, b) if _int(a) else tf.math.divide(a, b)


@lowers("Pow", 7, 12, 13, 15)
def pow_(node, x, y):
    if x.dtype == y.dtype:
        return tf.math.pow(x, y)
    if x.dtype.is_floating:
        return tf.math.pow(x, tf.cast(y, x.dtype))
    # an integer base with a float exponent: the power in float64, brought back to the base's type
    return tf.cast(tf.math.pow(tf.cast(x, tf.float64), tf.cast(y, tf.float64)), x.dtype)


@lowers("Mod", 10, 13, 28)
def mod(node, a, b, *, fmod=0):
    if fmod:
        return tf.truncatemod(a, b)  # C fmod: the sign of the dividend
    r = tf.math.floormod(a, b)  # the sign of the divisor
    if a.dtype.is_floating:  # A - floor(A / B) * B at an infinite B: x for the same sign, B otherwise
        same = tf.math.equal(a > 0, b > 0)
        fix = tf.math.logical_and(tf.math.is_inf(b), tf.math.logical_and(tf.math.is_finite(a), a != 0))
        r = tf.where(fix, tf.where(same, a, b), r)
    return r


@lowers("Neg", 6, 13)
def neg(node, x):
    return tf.math.negative(x)


@lowers("Abs", 6, 13)
def abs_(node, x):
    return x if x.dtype.is_unsigned else tf.math.abs(x)


@lowers("Reciprocal", 6, 13)
def reciprocal(node, x):
    return tf.math.reciprocal(x)


@lowers("Sign", 9, 13)
def sign(node, x):
    return tf.math.sign(x)


# -- math functions ------------------------------------------------------------------------------
_UNARY = {
    "Floor": ((6, 13), tf.math.floor), "Ceil": ((6, 13), tf.math.ceil), "Sqrt": ((6, 13), tf.math.sqrt),
    "Exp": ((6, 13), tf.math.exp), "Log": ((6, 13), tf.math.log), "Tanh": ((6, 13), tf.math.tanh),
    "Sigmoid": ((6, 13), tf.math.sigmoid), "Erf": ((9, 13), tf.math.erf),
    "Sin": ((7, 22), tf.math.sin), "Cos": ((7, 22), tf.math.cos), "Tan": ((7, 22), tf.math.tan),
    "Asin": ((7, 22), tf.math.asin), "Acos": ((7, 22), tf.math.acos), "Atan": ((7, 22), tf.math.atan),
    "Sinh": ((9, 22), tf.math.sinh), "Cosh": ((9, 22), tf.math.cosh), "Asinh": ((9, 22), tf.math.asinh),
    "Acosh": ((9, 22), tf.math.acosh), "Atanh": ((9, 22), tf.math.atanh),
    "Round": ((11, 22), tf.math.round),  # round half to even, as the spec asks
    "Softsign": ((1, 22), tf.math.softsign), "Softplus": ((1, 22), tf.math.softplus),
}


def _unary(fn):
    return lambda node, x: fn(x)


for _op, (_versions, _fn) in _UNARY.items():
    lowers(_op, *_versions)(_unary(_fn))


@lowers("IsNaN", 9, 13, 20)
def isnan(node, x):
    return tf.math.is_nan(x)


@lowers("IsInf", 10, 20)
def isinf(node, x, *, detect_negative=1, detect_positive=1):
    neg = tf.math.logical_and(tf.math.is_inf(x), x < 0) if detect_negative else tf.zeros_like(x, dtype=tf.bool)
    pos = tf.math.logical_and(tf.math.is_inf(x), x > 0) if detect_positive else tf.zeros_like(x, dtype=tf.bool)
    return tf.math.logical_or(neg, pos)


# -- activations ---------------------------------------------------------------------------------
@lowers("Relu", 6, 13, 14)
def relu(node, x):
    return tf.math.maximum(x, tf.zeros_like(x))


@lowers("LeakyRelu", 6, 16)
def leaky_relu(node, x, *, alpha=0.01):
    return tf.where(x < 0, x * tf.cast(alpha, x.dtype), x)


@lowers("Elu", 6, 22)
def elu(node, x, *, alpha=1.0):
    return tf.where(x < 0, tf.cast(alpha, x.dtype) * tf.math.expm1(x), x)


@lowers("Selu", 6, 22)
def selu(node, x, *, alpha=1.67326319217681884765625, gamma=1.05070102214813232421875):
    a, g = tf.cast(alpha, x.dtype), tf.cast(gamma, x.dtype)
    return tf.where(x <= 0, g * (a * tf.math.exp(x) - a), g * x)


@lowers("Celu", 12, 28)
def celu(node, x, *, alpha=1.0):
    a = tf.cast(alpha, x.dtype)
    return tf.math.maximum(tf.zeros_like(x), x) + tf.math.minimum(tf.zeros_like(x), a * tf.math.expm1(x / a))


@lowers("HardSigmoid", 6, 22)
def hard_sigmoid(node, x, *, alpha=0.2, beta=0.5):
    return tf.clip_by_value(tf.cast(alpha, x.dtype) * x + tf.cast(beta, x.dtype), tf.zeros_like(x), tf.ones_like(x))


@lowers("ThresholdedRelu", 10, 22)
def thresholded_relu(node, x, *, alpha=1.0):
    return tf.where(x > tf.cast(alpha, x.dtype), x, tf.zeros_like(x))


@lowers("PRelu", 7, 9, 16)
def prelu(node, x, slope):
    return tf.where(x < 0, x * slope, x)


# -- comparison and logic ------------------------------------------------------------------------
_COMPARE = {"Equal": ((7, 11, 13, 19), tf.math.equal), "Less": ((7, 9, 13), tf.math.less),
            "Greater": ((7, 9, 13), tf.math.greater), "LessOrEqual": ((12, 16), tf.math.less_equal),
            "GreaterOrEqual": ((12, 16), tf.math.greater_equal)}
_LOGIC = {"And": tf.math.logical_and, "Or": tf.math.logical_or, "Xor": tf.math.logical_xor}


def _binary(fn):
    return lambda node, a, b: fn(a, b)


for _op, (_versions, _fn) in _COMPARE.items():
    lowers(_op, *_versions)(_binary(_fn))
for _op, _fn in _LOGIC.items():
    lowers(_op, 7)(_binary(_fn))


@lowers("Not", 1)
def not_(node, x):
    return tf.math.logical_not(x)


@lowers("Where", 9, 16)
def where(node, cond, x, y):
    return tf.where(cond, x, y)


# -- variadic ------------------------------------------------------------------------------------
def _fold(fn):
    def run(node, *xs):
        if not xs:
            raise Unsupported(f"{node} with no input")
        out = xs[0]
        for x in xs[1:]:
            out = fn(out, x)
        return out

    return run


def _nan_max(a, b):  # NaN propagates, as in numpy's maximum and IEEE 754-2019 maximum
    if not a.dtype.is_floating:
        return tf.math.maximum(a, b)
    return tf.where(tf.math.logical_or(tf.math.is_nan(a), tf.math.is_nan(b)), a + b, tf.math.maximum(a, b))


def _nan_min(a, b):
    if not a.dtype.is_floating:
        return tf.math.minimum(a, b)
    return tf.where(tf.math.logical_or(tf.math.is_nan(a), tf.math.is_nan(b)), a + b, tf.math.minimum(a, b))


lowers("Max", 8, 12, 13)(_fold(_nan_max))
lowers("Min", 8, 12, 13)(_fold(_nan_min))
lowers("Sum", 8, 13)(_fold(tf.math.add))


@lowers("Mean", 8, 13)
def mean(node, *xs):
    return _fold(tf.math.add)(node, *xs) / tf.cast(len(xs), xs[0].dtype)


@lowers("Clip", 11, 12, 13)
def clip(node, x, lo=None, hi=None):
    # absent bounds "default to numeric_limits::lowest() and numeric_limits::max()": finite
    info = x.dtype
    lo = tf.cast(lo, x.dtype) if lo is not None else tf.constant(info.min, dtype=x.dtype)
    hi = tf.cast(hi, x.dtype) if hi is not None else tf.constant(info.max, dtype=x.dtype)
    return tf.math.minimum(tf.math.maximum(x, lo), hi)


@lowers("Clip", 6)
def clip_6(node, x, *, min=-3.4028234663852886e38, max=3.4028234663852886e38):  # noqa: A002 - spec names
    wide = tf.cast(x, tf.float32) if x.dtype in (tf.float16, tf.bfloat16) else x
    return tf.cast(tf.clip_by_value(wide, tf.cast(min, wide.dtype), tf.cast(max, wide.dtype)), x.dtype)


@lowers("BitShift", 11, 28)
def bit_shift(node, x, y, *, direction="LEFT"):
    shifted = tf.bitwise.left_shift(x, y) if direction == "LEFT" else tf.bitwise.right_shift(x, y)
    # BitShift-28: "If Y is negative, or is greater than or equal to the number of bits of T, then
    # the result is whatever the sign bit extension alone produces: -1 for a right shift on a
    # negative X ... and 0 in every other case" (TensorFlow leaves such shifts undefined)
    out_of_range = tf.math.logical_or(y < 0, y >= x.dtype.size * 8) if not y.dtype.is_unsigned else y >= x.dtype.size * 8
    fill = tf.where(x < 0, -tf.ones_like(x), tf.zeros_like(x)) if direction == "RIGHT" and not x.dtype.is_unsigned else tf.zeros_like(x)
    return tf.where(out_of_range, fill, shifted)


# -- later activations and bitwise ops -----------------------------------------------------------
@lowers("Gelu", 20)
def gelu(node, x, *, approximate="none"):
    half = tf.cast(0.5, x.dtype)
    if approximate == "tanh":  # y = 0.5 * x * (1 + Tanh(u)) = x * sigmoid(2u), without 1 + tanh's cancellation
        u = tf.cast(np.sqrt(2 / np.pi), x.dtype) * (x + tf.cast(0.044715, x.dtype) * x * x * x)
        return x * tf.math.sigmoid(u + u)
    if approximate != "none":
        raise ValueError(f"{node}: approximate {approximate!r}")
    # 0.5 * x * (1 + erf(x/sqrt(2))) as 0.5 * x * erfc(-x/sqrt(2)): the same value, without the
    # cancellation of 1 + erf for negative x
    return half * x * tf.math.erfc(-x / tf.cast(np.sqrt(2.0), x.dtype))


@lowers("Swish", 24)
def swish(node, x, *, alpha=1.0):
    return x * tf.math.sigmoid(tf.cast(alpha, x.dtype) * x)


for _op, _fn in {"BitwiseAnd": tf.bitwise.bitwise_and, "BitwiseOr": tf.bitwise.bitwise_or,
                 "BitwiseXor": tf.bitwise.bitwise_xor}.items():
    lowers(_op, 18)(_binary(_fn))


@lowers("BitwiseNot", 18)
def bitwise_not(node, x):
    return tf.bitwise.invert(x)


@lowers("Shrink", 9)
def shrink(node, x, *, bias=0.0, lambd=0.5):
    # "If x < -lambd, y = x + bias; If x > lambd, y = x - bias; Otherwise, y = 0"
    lam, b = tf.cast(lambd, x.dtype), tf.cast(bias, x.dtype)
    return tf.where(x < -lam, x + b, tf.where(x > lam, x - b, tf.zeros_like(x)))


@lowers("HardSwish", 14, 22)
def hard_swish(node, x):  # x * max(0, min(1, alpha * x + beta)), alpha = 1/6, beta = 0.5
    return x * tf.clip_by_value(x * tf.cast(1 / 6, x.dtype) + tf.cast(0.5, x.dtype), tf.zeros([], x.dtype), tf.ones([], x.dtype))


@lowers("Mish", 18, 22)
def mish(node, x):  # x * tanh(softplus(x))
    return x * tf.math.tanh(tf.math.softplus(x))
