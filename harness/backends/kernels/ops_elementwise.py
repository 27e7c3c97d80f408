"""Elementwise math: unary functions, arithmetic, activations, Softmax and friends.

float16 goes through numpy's own loops (which compute in float32 and round once); the
ml_dtypes floats (bfloat16, float8) are widened to float32 and narrowed back.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ._util import ML_FLOATS, broadcasting, float32_if_ml, normalize_axis
from .registry import register

# -- erf ------------------------------------------------------------------------------------
# numpy has no erf. We fit piecewise Chebyshev interpolants to math.erf/math.erfc at import
# time: erf(x) = x * g(x^2) on |x| <= 1, erfc(x) = exp(-x^2) * h(x) on 1 < x <= 26 (erf is
# +-1 to double precision beyond 6). The fits reach double precision.

_CHEB = np.polynomial.chebyshev


def _fit(fn, lo: float, hi: float, degree: int) -> tuple[np.ndarray, float, float]:
    nodes = np.cos(np.pi * (np.arange(degree + 1) + 0.5) / (degree + 1))
    xs = lo + (nodes + 1) * (hi - lo) / 2
    return _CHEB.chebfit(nodes, [fn(float(v)) for v in xs], degree), lo, hi


_ERF_SMALL = _fit(lambda t: math.erf(math.sqrt(t)) / math.sqrt(t), 0.0, 1.0, 20)
_ERFC_PIECES = [
    _fit(lambda x: math.erfc(x) * math.exp(x * x), lo, hi, 24)
    for lo, hi in ((1.0, 2.0), (2.0, 3.5), (3.5, 6.0), (6.0, 10.0), (10.0, 26.0))
]


def _cheb_eval(fit, x: np.ndarray) -> np.ndarray:
    coef, lo, hi = fit
    return _CHEB.chebval((2 * x - (lo + hi)) / (hi - lo), coef)


def erfc(x: np.ndarray) -> np.ndarray:
    """Complementary error function 1 - erf(x), in float64, without the cancellation of
    computing 1 - erf(x) for large x."""
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    tail = np.zeros_like(x)  # erfc(|x|) for |x| > 1
    for fit in _ERFC_PIECES:
        m = (a > fit[1]) & (a <= fit[2])
        if m.any():
            xs = a[m]
            tail[m] = np.exp(-xs * xs) * _cheb_eval(fit, xs)
    out = np.where(a > 1.0, np.where(x > 0, tail, 2.0 - tail), 1.0 - erf(np.where(a > 1.0, 0.0, x)))
    out[x > 26.0] = 0.0  # below the smallest double
    out[x < -6.0] = 2.0
    out[np.isnan(x)] = np.nan
    return out


def erf(x: np.ndarray) -> np.ndarray:
    """Error function, elementwise, in float64 (the caller narrows)."""
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    out = np.ones_like(x)
    small = a <= 1.0
    if small.any():
        xs = a[small]
        out[small] = xs * _cheb_eval(_ERF_SMALL, xs * xs)
    for fit in _ERFC_PIECES[:3]:  # beyond 6, erf is 1 to double precision
        m = (a > fit[1]) & (a <= fit[2])
        if m.any():
            xs = a[m]
            out[m] = 1.0 - np.exp(-xs * xs) * _cheb_eval(fit, xs)
    out[np.isnan(x)] = np.nan
    return np.copysign(out, x)


# -- building blocks --------------------------------------------------------------------------


def _narrowing(fn):
    """Wrap a composite float function: float16 and ml_dtypes inputs are computed in float32
    and narrowed once (rounding every intermediate to float16 can cost most of the digits,
    e.g. Gelu's 1 + erf(x / sqrt 2) in the negative tail)."""

    def run(x, *rest):
        dt = x.dtype
        if dt in ML_FLOATS or dt == np.float16:
            return fn(x.astype(np.float32), *rest).astype(dt)
        return fn(x, *rest)

    return run


def _unary(ufunc):
    """A kernel factory for a numpy ufunc applied elementwise, with an in-place variant."""

    def factory(node):
        def run(x):
            if x.dtype in ML_FLOATS:
                return (ufunc(x.astype(np.float32)).astype(x.dtype),)
            return (ufunc(x),)

        def run_inplace(x):
            if x.dtype in ML_FLOATS:
                return run(x)
            return (ufunc(x, out=x),)

        run.inplace = run_inplace
        return run

    return factory


for _name, _ufunc, _since in (
    ("Abs", np.abs, 1),
    ("Neg", np.negative, 1),
    ("Ceil", np.ceil, 1),
    ("Floor", np.floor, 1),
    ("Sqrt", np.sqrt, 1),
    ("Exp", np.exp, 1),
    ("Log", np.log, 1),
    ("Sin", np.sin, 7),
    ("Cos", np.cos, 7),
    ("Tan", np.tan, 7),
    ("Asin", np.arcsin, 7),
    ("Acos", np.arccos, 7),
    ("Atan", np.arctan, 7),
    ("Sinh", np.sinh, 9),
    ("Cosh", np.cosh, 9),
    ("Tanh", np.tanh, 1),
    ("Asinh", np.arcsinh, 9),
    ("Acosh", np.arccosh, 9),
    ("Atanh", np.arctanh, 9),
    ("Sign", np.sign, 9),
    ("Round", np.round, 11),  # round half to even, as np.round does (Round-11 doc)
):
    register(_name, since=_since)(_unary(_ufunc))


@register("Reciprocal", since=1)
def reciprocal(node):
    def run(x):
        if x.dtype in ML_FLOATS:
            return ((1.0 / x.astype(np.float32)).astype(x.dtype),)
        return (np.reciprocal(x),)

    def run_inplace(x):
        if x.dtype in ML_FLOATS:
            return run(x)
        return (np.reciprocal(x, out=x),)

    run.inplace = run_inplace
    return run


@register("Erf", since=9)
def erf_kernel(node):
    def run(x):
        return (erf(x).astype(x.dtype),)

    return run


@register("IsNaN", since=9)
def isnan(node):
    def run(x):
        x = float32_if_ml(x)
        return (np.isnan(x),)

    return run


@register("IsInf", since=10)
def isinf(node):
    neg = node.attrs.get("detect_negative", 1)
    pos = node.attrs.get("detect_positive", 1)

    def run(x):
        x = float32_if_ml(x)
        if neg and pos:
            return (np.isinf(x),)
        if pos:
            return (np.isposinf(x),)
        if neg:
            return (np.isneginf(x),)
        return (np.zeros(x.shape, dtype=bool),)

    return run


# -- arithmetic -------------------------------------------------------------------------------


def _binary(ufunc):
    def run(a, b):
        dt = a.dtype
        if dt in ML_FLOATS:
            return (ufunc(a.astype(np.float32), b.astype(np.float32)).astype(dt),)
        return (ufunc(a, b),)

    def run_inplace(a, b):
        if a.dtype in ML_FLOATS:
            return run(a, b)
        try:
            return (ufunc(a, b, out=a),)
        except ValueError:  # b broadcasts a to a larger shape: a cannot hold the result
            return run(a, b)

    run.inplace = run_inplace
    return lambda node: broadcasting(node, run)


register("Add", since=1)(_binary(np.add))
register("Sub", since=1)(_binary(np.subtract))
register("Mul", since=1)(_binary(np.multiply))


def _trunc_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division rounding toward zero (Div-14 doc), exact for int64."""
    q = np.floor_divide(a, b)
    if a.dtype.kind == "i":
        # floor and trunc differ when the signs differ and the division is inexact
        q += ((q < 0) & (q * b != a)).astype(q.dtype)
    return q


def _divide(a, b):
    dt = a.dtype
    if dt.kind in "iu":
        return (_trunc_divide(a, b),)
    if dt in ML_FLOATS:
        return ((a.astype(np.float32) / b.astype(np.float32)).astype(dt),)
    return (np.divide(a, b),)


def _divide_inplace(a, b):
    if a.dtype.kind != "f":
        return _divide(a, b)
    try:
        return (np.divide(a, b, out=a),)
    except ValueError:
        return _divide(a, b)


_divide.inplace = _divide_inplace


@register("Div", since=1)
def div(node):
    return broadcasting(node, _divide)


def _power(x, y):
    dt = x.dtype
    if dt.kind in "iu":
        if y.dtype.kind in "iu" and not (y < 0).any():
            return (np.power(x, y.astype(dt)),)
        return (np.power(x.astype(np.float64), y.astype(np.float64)).astype(dt),)
    # in the wider of the two types: an exponent narrowed to the base's type may round to 0
    # (float16 0 ** float32 -6e-27 is inf, not 0 ** -0 = 1)
    cd = np.float32 if dt in ML_FLOATS else dt
    if y.dtype.kind == "f":
        cd = np.result_type(cd, np.float32 if y.dtype in ML_FLOATS else y.dtype)
    return (np.power(x.astype(cd, copy=False), y.astype(cd, copy=False)).astype(dt, copy=False),)


@register("Pow", since=1)
def pow_(node):
    return broadcasting(node, _power)


@register("Mod", since=10)
def mod(node):
    fmod = node.attrs.get("fmod", 0)

    def run(a, b):
        dt = a.dtype
        a, b = float32_if_ml(a), float32_if_ml(b)
        if fmod:
            r = np.fmod(a, b)
        elif dt.kind in "iu":
            r = np.mod(a, b)
        else:
            # A - floor(A / B) * B with the Mod-28 special cases: a finite x with an infinite
            # y of the same sign is x, of the other sign is y; np.mod gives nan/inf there
            r = np.mod(a, b)
            fix = np.isinf(b) & np.isfinite(a) & (a != 0)
            if fix.any():
                ab = np.broadcast_arrays(a, b)
                r = np.where(fix, np.where(np.signbit(ab[0]) == np.signbit(ab[1]), ab[0], ab[1]), r)
        return (np.asarray(r).astype(dt, copy=False),)

    return run


def _variadic(ufunc, mean: bool = False):
    def factory(node):
        def run(*xs):
            dt = xs[0].dtype
            widen = dt in ML_FLOATS
            acc = xs[0].astype(np.float32) if widen else xs[0]
            for x in xs[1:]:
                acc = ufunc(acc, x.astype(np.float32) if widen else x)
            if len(xs) == 1:
                acc = acc.copy() if acc is xs[0] else acc
            if mean:
                acc = acc / len(xs)
            return (np.asarray(acc).astype(dt, copy=False),)

        def run_inplace(*xs):
            acc = xs[0]
            if len(xs) < 2 or acc.dtype in ML_FLOATS or np.broadcast_shapes(*(x.shape for x in xs)) != acc.shape:
                return run(*xs)
            for x in xs[1:]:
                ufunc(acc, x, out=acc)
            if mean:
                acc /= len(xs)
            return (acc,)

        run.inplace = run_inplace
        return run

    return factory


register("Sum", since=1)(_variadic(np.add))
register("Mean", since=1)(_variadic(np.add, mean=True))
register("Max", since=1)(_variadic(np.maximum))
register("Min", since=1)(_variadic(np.minimum))


@register("Clip", since=1)
def clip_attrs(node):
    lo = node.attrs.get("min", -np.inf)
    hi = node.attrs.get("max", np.inf)

    def run(x):
        return (np.minimum(np.maximum(x, lo), hi).astype(x.dtype, copy=False),)

    return run


def _bounds(dt: np.dtype, lo, hi):
    """Clip-11+ bounds; an absent one is numeric_limits::lowest() / max() (Clip doc), so an
    absent bound still maps -inf / inf to the finite extremes."""
    if dt.kind == "f":
        info = np.finfo(dt)
        lo = info.min if lo is None else np.asarray(lo).astype(dt)
        hi = info.max if hi is None else np.asarray(hi).astype(dt)
    else:
        lo = None if lo is None else np.asarray(lo).astype(dt)
        hi = None if hi is None else np.asarray(hi).astype(dt)
    return lo, hi


@register("Clip", since=11)
def clip(node):
    def run(x, lo=None, hi=None):
        dt = x.dtype
        if dt in ML_FLOATS:
            import ml_dtypes

            info = ml_dtypes.finfo(dt)
            y = x.astype(np.float32)
            y = np.clip(y, float(info.min) if lo is None else np.float32(lo), float(info.max) if hi is None else np.float32(hi))
            return (y.astype(dt),)
        lo, hi = _bounds(dt, lo, hi)
        y = x if lo is None else np.maximum(x, lo)
        y = y if hi is None else np.minimum(y, hi)
        return (y.copy() if y is x else y,)

    def run_inplace(x, lo=None, hi=None):
        if x.dtype in ML_FLOATS:
            return run(x, lo, hi)
        lo, hi = _bounds(x.dtype, lo, hi)
        if lo is not None:
            np.maximum(x, lo, out=x)
        if hi is not None:
            np.minimum(x, hi, out=x)
        return (x,)

    run.inplace = run_inplace
    return run


# -- activations ------------------------------------------------------------------------------


def _activation(fn):
    """A kernel factory for a float activation ``fn(x, attrs) -> y``."""

    def factory(node):
        attrs = node.attrs
        f = _narrowing(functools.partial(fn, attrs=attrs))

        def run(x):
            return (np.asarray(f(x)).astype(x.dtype, copy=False),)

        return run

    return factory


def _sigmoid(x):
    # split by sign so that exp never overflows
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


@register("Relu", since=1)
def relu(node):
    def run(x):
        if x.dtype in ML_FLOATS:
            return (np.maximum(x.astype(np.float32), 0).astype(x.dtype),)
        if x.dtype in _RELU_BY_BLOCKS and x.flags.c_contiguous:
            return (_relu_by_blocks(x, np.empty_like(x)),)
        return (np.maximum(x, x.dtype.type(0)),)

    def run_inplace(x):
        if x.dtype in ML_FLOATS:
            return run(x)
        if x.dtype in _RELU_BY_BLOCKS:
            return (relu_in_place(x),)
        return (np.maximum(x, x.dtype.type(0), out=x),)

    run.inplace = run_inplace
    return run


#: float types whose ReLU takes the maximum with a block of zeros at a time: numpy's float
#: maximum of two arrays runs several times faster than with a scalar 0, and than a masked
#: copy of zeros on values of mixed signs (whose mask defeats branch prediction)
_RELU_BY_BLOCKS = frozenset({np.dtype(np.float32), np.dtype(np.float64)})
#: ... of this many elements (a block of zeros per type, kept)
_RELU_BLOCK = 1 << 16
_RELU_ZEROS: dict[np.dtype, np.ndarray] = {}


def _relu_by_blocks(x, out):
    """np.maximum(x, 0) into ``out`` (both C-contiguous, of a type of _RELU_BY_BLOCKS), block
    by block against a kept block of zeros: the same bits as np.maximum(x, 0)."""
    zeros = _RELU_ZEROS.get(x.dtype)
    if zeros is None:
        zeros = np.zeros(_RELU_BLOCK, dtype=x.dtype)
        zeros.flags.writeable = False
        _RELU_ZEROS[x.dtype] = zeros
    src, dst = x.reshape(-1), out.reshape(-1)
    for i in range(0, src.size, _RELU_BLOCK):
        part = src[i : i + _RELU_BLOCK]
        np.maximum(part, zeros[: part.size], out=dst[i : i + _RELU_BLOCK])
    return out


def relu_in_place(x):
    """max(0, x) in place, with np.maximum(x, 0)'s bits: every element <= 0 (-0.0 too) becomes
    +0.0; NaN stays as it is, sign and payload."""
    if x.flags.c_contiguous:
        return _relu_by_blocks(x, x)
    zero = x.dtype.type(0)
    np.copyto(x, zero, where=np.less_equal(x, zero))  # NaN, compared false, stays
    return x


@register("Sigmoid", since=1)
def sigmoid(node):
    def run(x):
        if x.dtype in ML_FLOATS:
            return (_sigmoid(x.astype(np.float32)).astype(x.dtype),)
        return (_sigmoid(x),)

    return run


@register("LeakyRelu", since=1)
def leaky_relu(node):
    alpha = node.attrs.get("alpha", 0.01)

    def run(x):
        dt = x.dtype
        y = x.astype(np.float32) if dt in ML_FLOATS else x
        return (np.where(y >= 0, y, y * y.dtype.type(alpha)).astype(dt, copy=False),)

    return run


@register("PRelu", since=1)
def prelu(node):
    def run(x, slope):
        dt = x.dtype
        x, slope = float32_if_ml(x), float32_if_ml(slope)
        if slope.ndim and slope.ndim < x.ndim and node.opset < 7 and slope.shape[0] == x.shape[1]:
            # PRelu-6 and earlier: a 1-D slope of size C applies per channel
            slope = slope.reshape((-1,) + (1,) * (x.ndim - 2))
        return (np.where(x < 0, x * slope, x).astype(dt, copy=False),)

    return run


register("Elu", since=1)(_activation(lambda x, attrs: np.where(x > 0, x, attrs.get("alpha", 1.0) * np.expm1(x))))
register("Celu", since=12)(
    _activation(
        lambda x, attrs: np.maximum(x, 0) + np.minimum(0, attrs.get("alpha", 1.0) * np.expm1(x / attrs.get("alpha", 1.0)))
    )
)


@register("Selu", since=1)
def selu(node):
    alpha = node.attrs.get("alpha", 1.67326319217681884765625)
    gamma = node.attrs.get("gamma", 1.05070102214813232421875)

    def fn(x, attrs=None):
        return gamma * np.where(x > 0, x, alpha * np.expm1(x))

    return _activation(fn)(node)


register("HardSigmoid", since=1)(
    _activation(lambda x, attrs: np.clip(attrs.get("alpha", 0.2) * x + attrs.get("beta", 0.5), 0, 1))
)
def _times_gate(x, gate):
    """x * gate for gates that vanish as x goes to an infinity: the limit 0 there, not inf * 0."""
    return np.where(np.isinf(x) & (gate == 0), 0, x * gate)


register("HardSwish", since=14)(
    _activation(lambda x, attrs: _times_gate(x, np.clip(x / 6 + 0.5, 0, 1)))  # alpha 1/6, beta 0.5 (HardSwish doc)
)
register("ThresholdedRelu", since=10)(_activation(lambda x, attrs: np.where(x > attrs.get("alpha", 1.0), x, 0)))
register("Softplus", since=1)(_activation(lambda x, attrs: np.logaddexp(0, x)))
register("Softsign", since=1)(_activation(lambda x, attrs: np.where(np.isinf(x), np.sign(x), x / (1 + np.abs(x)))))
register("Mish", since=18)(_activation(lambda x, attrs: _times_gate(x, np.tanh(np.logaddexp(0, x)))))
register("Swish", since=24)(
    _activation(
        # alpha == 0: sigmoid(0 * x) is 1/2 for every x, infinities included (0 * inf is NaN)
        lambda x, attrs: 0.5 * x if attrs["alpha"] == 0 else _times_gate(x, _sigmoid(x * x.dtype.type(attrs["alpha"])))
    )
)


@register("Shrink", since=9)
def shrink(node):
    bias = node.attrs.get("bias", 0.0)
    lambd = node.attrs.get("lambd", 0.5)

    def run(x):
        dt = x.dtype
        if dt.kind in "iu" and float(bias).is_integer():
            b = np.array(int(bias)).astype(dt)  # exact integer arithmetic, wrapping like the type
            return (np.where(x < -lambd, x + b, np.where(x > lambd, x - b, dt.type(0))).astype(dt),)
        y = x.astype(np.float64) if dt.kind in "iu" else x
        y = np.where(y < -lambd, y + bias, np.where(y > lambd, y - bias, 0))
        return (y.astype(dt),)

    return run


@register("Gelu", since=20)
def gelu(node):
    tanh = node.attrs.get("approximate", "none") == "tanh"
    c = math.sqrt(2 / math.pi)

    def fn(x, attrs=None):
        if tanh:
            return _times_gate(x, 0.5 * (1 + np.tanh(c * (x + 0.044715 * x**3))))
        # 0.5 * (1 + erf(x / sqrt 2)) == 0.5 * erfc(-x / sqrt 2), exact in the negative tail
        return _times_gate(x, 0.5 * erfc(-x / math.sqrt(2)))

    return _activation(fn)(node)


@register("SwiGLU", since=28)
def swiglu(node):
    alpha = node.attrs.get("alpha", 1.0)

    def run(a, b):
        dt = a.dtype
        a, b = float32_if_ml(a), float32_if_ml(b)
        return ((_times_gate(a, _sigmoid(a * a.dtype.type(alpha))) * b).astype(dt, copy=False),)

    return run


# -- Softmax, LogSoftmax, Hardmax -------------------------------------------------------------
# Before opset 13 the input is coerced to 2-D at ``axis`` (default 1) and the function applies
# to the flattened trailing block; from 13 on it applies along ``axis`` (default -1).


def _exp_is_safe(x) -> bool:
    """Whether exp(x) neither overflows nor underflows a whole row to 0, so that the usual
    shift by the row maximum can be skipped: a max along a short axis costs numpy more than
    the exp itself, while the global extremes below are cheap."""
    limit = {np.dtype(np.float32): 80.0, np.dtype(np.float64): 700.0}.get(x.dtype)
    if limit is None:  # float16 keeps the shifted form, whose roundings the official cases expect
        return False
    return bool(-limit < x.min() and x.max() < limit)  # False for NaN, which takes the slow path


def _softmax(x, axis):
    if _exp_is_safe(x):
        e = np.exp(x)
    else:
        e = x - np.max(x, axis=axis, keepdims=True)  # one fresh buffer, then worked in place
        np.exp(e, out=e)
    e /= np.sum(e, axis=axis, keepdims=True)
    return e


def _log_softmax(x, axis):
    if _exp_is_safe(x):
        return x - np.log(np.sum(np.exp(x), axis=axis, keepdims=True))
    shifted = x - np.max(x, axis=axis, keepdims=True)
    shifted -= np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    return shifted


def _hardmax(x, axis):
    idx = np.expand_dims(np.argmax(x, axis=axis), axis)
    y = np.zeros_like(x)
    np.put_along_axis(y, idx, 1, axis=axis)
    return y


def _axis_fn(fn, coerce_2d: bool):
    def factory(node):
        axis = node.attrs.get("axis", 1 if coerce_2d else -1)

        def run(x):
            dt = x.dtype
            if x.size == 0:
                return (x.copy(),)
            y = x.astype(np.float32) if dt in ML_FLOATS else x
            if coerce_2d:
                ax = normalize_axis(axis, y.ndim)
                lead = int(np.prod(y.shape[:ax]))
                out = fn(y.reshape(lead, -1), 1).reshape(y.shape)
            else:
                out = fn(y, normalize_axis(axis, y.ndim))
            return (out.astype(dt, copy=False),)

        return run

    return factory


for _name, _fn in (("Softmax", _softmax), ("LogSoftmax", _log_softmax), ("Hardmax", _hardmax)):
    register(_name, since=1)(_axis_fn(_fn, coerce_2d=True))
    register(_name, since=13)(_axis_fn(_fn, coerce_2d=False))
