"""Elementwise operators: arithmetic, math functions, activations, comparisons, logic, bits.

Binary operators broadcast numpy-style (the multidirectional broadcasting of onnx/Broadcasting.md,
op-versions 7 and later); versions 1 and 6 align B to A by their legacy ``broadcast``/``axis``
attributes. Legacy versions that differ from a later one only by ``consumed_inputs`` (an in-place
hint) share its lowering.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from ..base import Unsupported
from . import dtypes
from ._util import consumed, widen
from .registry import lowers


def _float_math(fn):
    """Run ``fn`` in float32 for half types torch lacks a CPU kernel for, then cast back; an
    integer input (Erf-9 allows them) gives its own type back, as the schema says (torch promotes
    it to float; the value is truncated: the spec gives no rounding rule)."""

    def run(x):
        try:
            out = fn(x)
            return out.to(x.dtype) if not x.dtype.is_floating_point and out.dtype != x.dtype else out
        except RuntimeError:
            if x.dtype in (torch.float16, torch.bfloat16):
                return fn(x.float()).to(x.dtype)
            raise

    return run


# -- arithmetic ------------------------------------------------------------------------------
@lowers("Add", 7, 13, 14)
def add(node, a, b):
    if a.dtype == torch.bool:
        return a | b
    return a + b


@lowers("Sub", 7, 13, 14)
def sub(node, a, b):
    return a - b


@lowers("Mul", 7, 13, 14)
def mul(node, a, b):
    if a.dtype == torch.bool:
        return a & b
    return a * b


@lowers("Div", 7, 13, 14)
def div(node, a, b):
    if a.dtype.is_floating_point or a.dtype.is_complex:
        return a / b
    if node.in_type(0) == dtypes.TP.UINT64:
        return _udivmod(a, b)[0]
    # integer division truncates toward zero (the C semantics the spec's reference uses)
    return torch.div(a, b, rounding_mode="trunc")


@lowers("Mod", 10, 13, 28)
def mod(node, a, b, *, fmod=0):
    if node.in_type(0) == dtypes.TP.UINT64:
        return _udivmod(a, b)[1]  # both modes agree on unsigned values
    if not a.dtype.is_floating_point:
        return torch.fmod(a, b) if fmod else torch.remainder(a, b)
    r = _fmod(a, b)  # A - trunc(A / B) * B: the dividend's sign
    if not fmod:  # A - floor(A / B) * B: the divisor's sign, "+-0 with the sign of y"
        adjust = (r != 0) & (torch.signbit(r) != torch.signbit(b))
        r = torch.where(adjust, (r.double() + b.double()).to(r.dtype), r)
        # (which also gives Mod-28's "x when the signs agree, else y" for a finite x modulo +-inf)
        r = torch.where(r == 0, torch.copysign(torch.zeros_like(r), b), r)
    return r


def _fmod(a, b):
    """C fmod, exact. torch's vectorized CPU fmod (and remainder) gives NaN wherever the quotient
    a / b overflows (16 or more float32 elements: 100 fmod -1.2e-38), so narrower types run in
    float64, where their quotient fits, and float64 first reduces a by b * 2**k (a multiple of b,
    which keeps the remainder) so that no quotient exceeds 2**1100 / 2**550."""
    if a.dtype != torch.float64:
        return torch.fmod(a.double(), b.double()).to(a.dtype)
    r = a
    for half in (550, 275, 0):  # b * 2**(2 * half), an infinite one leaves r as it is
        r = torch.fmod(r, b * 2.0**half * 2.0**half)
    return r


def _udivmod(a, b):
    """Quotient and remainder of uint64 values held in int64 (divlu of Hacker's Delight: halve
    the dividend so a signed division is exact, then correct the quotient by one)."""
    ge = lambda x, y: dtypes.ordered(x) >= dtypes.ordered(y)  # noqa: E731 - unsigned x >= y
    big = b < 0  # divisor >= 2**63: the quotient is 0 or 1
    small = torch.where(big, torch.ones_like(b), b)
    q = torch.div(torch.bitwise_right_shift(a, 1) & 0x7FFFFFFFFFFFFFFF, small, rounding_mode="trunc") << 1
    r = a - q * small
    q = torch.where(ge(r, small), q + 1, q)
    q = torch.where(big, ge(a, b).to(a.dtype), q)
    return q, a - q * b


@lowers("Pow", 7, 12, 13, 15)
def pow_(node, x, y):
    if x.dtype.is_floating_point and y.dtype == x.dtype:
        return torch.pow(x, y)
    if not x.dtype.is_floating_point and not y.dtype.is_floating_point:
        return torch.pow(widen(x), widen(y)).to(x.dtype)
    return torch.pow(x.double(), y.double()).to(x.dtype)


# -- the legacy broadcast of versions 1-6: b is aligned to a at ``axis`` (or at the end) ---------
def _legacy(fn):
    def run(node, a, b, *, broadcast=0, axis=None, consumed_inputs=None):
        if broadcast and b.dim() < a.dim():
            start = a.dim() - b.dim() if axis is None else (axis + a.dim() if axis < 0 else axis)
            b = b.reshape([1] * start + list(b.shape) + [1] * (a.dim() - start - b.dim()))
        return fn(node, a, b)

    return run


lowers("Add", 1, 6)(_legacy(add))
lowers("Sub", 1, 6)(_legacy(sub))
lowers("Mul", 1, 6)(_legacy(mul))
lowers("Div", 1, 6)(_legacy(div))
lowers("Pow", 1)(_legacy(pow_))


@lowers("Neg", 6, 13)
def neg(node, x):
    return -x


@lowers("Abs", 6, 13)
def abs_(node, x):
    return x.clone() if node.in_type(0) in dtypes.UNSIGNED else torch.abs(x)


@lowers("Reciprocal", 6, 13)
def reciprocal(node, x):
    return torch.reciprocal(x)


@lowers("Sign", 9, 13)
def sign(node, x):
    if node.in_type(0) in dtypes.UNSIGNED:
        return (x != 0).to(x.dtype)
    # NaN has no sign: NaN back, as numpy gives and our reference expects (torch.sign gives 0)
    return torch.where(torch.isnan(x), x, torch.sign(x)) if x.dtype.is_floating_point else torch.sign(x)


def _variadic(fn, ordering=False):
    def run(node, *xs):
        unsigned64 = ordering and node.in_type(0) == dtypes.TP.UINT64
        if unsigned64:
            xs = [dtypes.ordered(x) for x in xs]
        out = xs[0]
        for x in xs[1:]:
            out = fn(out, x)
        return dtypes.ordered(out) if unsigned64 else out

    return run


sum_ = lowers("Sum", 6, 8, 13)(_variadic(torch.add))
max_ = lowers("Max", 6, 8, 12, 13)(_variadic(torch.maximum, ordering=True))
min_ = lowers("Min", 6, 8, 12, 13)(_variadic(torch.minimum, ordering=True))


@lowers("Mean", 6, 8, 13)
def mean(node, *xs):
    out = xs[0]
    for x in xs[1:]:
        out = out + x
    return out / len(xs)


@lowers("Clip", 11, 12, 13)
def clip(node, x, lo=None, hi=None):
    # absent bounds "default to numeric_limits::lowest() and numeric_limits::max()": finite, so
    # an infinite input becomes the type's largest finite value
    info = torch.finfo(x.dtype) if x.dtype.is_floating_point else torch.iinfo(x.dtype)
    unsigned64 = node.in_type(0) == dtypes.TP.UINT64  # the int64 limits are uint64's once ordered
    key = dtypes.ordered if unsigned64 else (lambda t: t)
    lo = key(lo.to(x.dtype)) if lo is not None else torch.tensor(info.min, dtype=x.dtype)
    hi = key(hi.to(x.dtype)) if hi is not None else torch.tensor(info.max, dtype=x.dtype)
    return key(torch.minimum(torch.maximum(key(x), lo), hi))


@lowers("Clip", 6)
def clip_6(node, x, *, min=-3.4028234663852886e38, max=3.4028234663852886e38):  # noqa: A002 - spec names
    # the float attributes may lie outside a half type's range: clamp in float32, then round once
    if x.dtype in (torch.float16, torch.bfloat16):
        return torch.clamp(x.float(), min, max).to(x.dtype)
    return torch.clamp(x, min, max)


# -- math functions --------------------------------------------------------------------------
def _unary(op: str, versions: tuple[int, ...], fn):
    run = _float_math(fn)
    lowers(op, *versions)(lambda node, x: run(x))


for _op, _versions, _fn in (
    ("Floor", (6, 13), torch.floor), ("Ceil", (6, 13), torch.ceil), ("Sqrt", (6, 13), torch.sqrt),
    ("Exp", (6, 13), torch.exp), ("Log", (6, 13), torch.log), ("Tanh", (6, 13), torch.tanh),
    ("Sigmoid", (6, 13), torch.sigmoid), ("Erf", (9, 13), torch.erf),
    ("Sin", (7, 22), torch.sin), ("Cos", (7, 22), torch.cos), ("Tan", (7, 22), torch.tan),
    ("Asin", (7, 22), torch.asin), ("Acos", (7, 22), torch.acos), ("Atan", (7, 22), torch.atan),
    ("Sinh", (9, 22), torch.sinh), ("Cosh", (9, 22), torch.cosh), ("Asinh", (9, 22), torch.asinh),
    ("Acosh", (9, 22), torch.acosh), ("Atanh", (9, 22), torch.atanh),
    ("Round", (11, 22), torch.round),  # round half to even, as the spec asks
    ("Softsign", (1, 22), F.softsign),
):
    _unary(_op, _versions, _fn)


@lowers("IsNaN", 9, 13, 20)
def isnan(node, x):
    return torch.isnan(x)


@lowers("IsInf", 10, 20)
def isinf(node, x, *, detect_negative=1, detect_positive=1):
    if detect_negative and detect_positive:
        return torch.isinf(x)
    if detect_negative:
        return torch.isneginf(x)
    if detect_positive:
        return torch.isposinf(x)
    return torch.zeros_like(x, dtype=torch.bool)


# -- activations -----------------------------------------------------------------------------
@lowers("Relu", 6, 13, 14)
def relu(node, x):
    return torch.relu(x) if x.dtype != torch.int8 else torch.clamp(x, min=0)


@lowers("LeakyRelu", 6, 16)
def leaky_relu(node, x, *, alpha=0.01):
    return torch.where(x < 0, x * alpha, x)


@lowers("PRelu", 7, 9, 16)
def prelu(node, x, slope):
    if node.in_type(0) in dtypes.UNSIGNED:  # "f(x) = x for x >= 0" everywhere
        return x.expand(torch.broadcast_shapes(x.shape, slope.shape)).clone()
    return torch.where(x < 0, x * slope, x)


@lowers("PRelu", 6)
def prelu_6(node, x, slope):
    # before numpy broadcasting (version 7) a 1-D slope of length C is per channel (axis 1)
    if slope.dim() == 1 and x.dim() > 2 and slope.numel() == x.shape[1]:
        slope = slope.reshape([-1] + [1] * (x.dim() - 2))
    return torch.where(x < 0, x * slope, x)


@lowers("Elu", 6, 22)
def elu(node, x, *, alpha=1.0):
    return torch.where(x < 0, alpha * torch.expm1(x), x)


@lowers("Selu", 6, 22)
def selu(node, x, *, alpha=1.67326319217681884765625, gamma=1.05070102214813232421875):
    return torch.where(x <= 0, gamma * (alpha * torch.exp(x) - alpha), gamma * x)


@lowers("Celu", 12, 28)
def celu(node, x, *, alpha=1.0):
    return torch.clamp(x, min=0) + torch.clamp(alpha * torch.expm1(x / alpha), max=0)


@lowers("ThresholdedRelu", 10, 22)
def thresholded_relu(node, x, *, alpha=1.0):
    return torch.where(x > alpha, x, torch.zeros_like(x))


@lowers("HardSigmoid", 6, 22)
def hard_sigmoid(node, x, *, alpha=0.2, beta=0.5):
    return torch.clamp(alpha * x + beta, 0, 1)


@lowers("HardSwish", 14, 22)
def hard_swish(node, x):
    # half types in float32, rounded once (three roundings in float16 land up to 8 ulps off)
    v = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    return (v * torch.clamp(v / 6 + 0.5, 0, 1)).to(x.dtype)


@lowers("Softplus", 1, 22)
def softplus(node, x):
    # ln(exp(x) + 1) = max(x, 0) + ln(1 + exp(-|x|)): no overflow, and no cut-off (x + 2e-9 at
    # x = 20 is not x in float64); half types in float32, rounded once
    v = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    return (torch.clamp(v, min=0) + torch.log1p(torch.exp(-torch.abs(v)))).to(x.dtype)


@lowers("Mish", 18, 22)
def mish(node, x):
    return _float_math(lambda v: v * torch.tanh(F.softplus(v)))(x)


@lowers("Gelu", 20)
def gelu(node, x, *, approximate="none"):
    # float32 and narrower in float64, rounded once: torch's gelu forms 0.5 * x * (1 + erf(...)) in
    # the input's type, where x * 2 overflows at the type's largest values (inf for x, NaN for -x)
    if x.dtype in (torch.float16, torch.bfloat16, torch.float32):
        return F.gelu(x.double(), approximate=approximate).to(x.dtype)
    return _float_math(lambda v: F.gelu(v, approximate=approximate))(x)


@lowers("Swish", 24)
def swish(node, x, *, alpha=1.0):
    return x * torch.sigmoid(alpha * x)


@lowers("Shrink", 9)
def shrink(node, x, *, bias=0.0, lambd=0.5):
    if x.dtype.is_floating_point:
        out = torch.where(x < -lambd, x + bias, torch.where(x > lambd, x - bias, torch.zeros_like(x)))
        return out.to(x.dtype)
    # integers exactly (comparing with a float or adding one rounds through float32): x < -lambd
    # is x < ceil(-lambd), x > lambd is x > floor(lambd); a non-integral bias has no integer result
    if bias != int(bias):
        raise Unsupported(f"Shrink of integers with the non-integral bias {bias}")
    b = torch.tensor(int(bias), dtype=x.dtype, device=x.device)
    below = _less(x, math.ceil(-lambd), node.in_type(0))
    above = ~_less(x, math.floor(lambd) + 1, node.in_type(0))
    return torch.where(below, x + b, torch.where(above, x - b, torch.zeros_like(x)))


def _less(x, t, code):
    """x < t for an integer tensor x (of ONNX type ``code``) and any Python int t, exactly."""
    lo, hi = (0, 2**64 - 1) if code == dtypes.TP.UINT64 else (torch.iinfo(x.dtype).min, torch.iinfo(x.dtype).max)
    if t <= lo or t > hi:
        return torch.full(x.shape, t > hi, dtype=torch.bool, device=x.device)
    if code == dtypes.TP.UINT64:
        bits = torch.tensor(t - 2**64 if t >= 2**63 else t, dtype=torch.int64, device=x.device)
        return dtypes.ordered(x) < dtypes.ordered(bits)
    return x < torch.tensor(t, dtype=x.dtype, device=x.device)


# -- comparisons and logic -------------------------------------------------------------------
def _compare(op: str, versions: tuple[int, ...], fn):
    ordering = fn in (torch.gt, torch.lt, torch.ge, torch.le)  # (not the bitwise ones)

    def run(node, a, b):
        if ordering and node.in_type(0) == dtypes.TP.UINT64:
            return fn(dtypes.ordered(a), dtypes.ordered(b))
        return fn(a, b)

    lowers(op, *versions)(run)


for _op, _versions, _fn in (
    ("Equal", (7, 11, 13, 19), torch.eq), ("Greater", (7, 9, 13), torch.gt), ("Less", (7, 9, 13), torch.lt),
    ("GreaterOrEqual", (12, 16), torch.ge), ("LessOrEqual", (12, 16), torch.le),
    ("And", (7,), torch.logical_and), ("Or", (7,), torch.logical_or), ("Xor", (7,), torch.logical_xor),
    ("BitwiseAnd", (18,), torch.bitwise_and), ("BitwiseOr", (18,), torch.bitwise_or), ("BitwiseXor", (18,), torch.bitwise_xor),
):
    _compare(_op, _versions, _fn)


@lowers("Not", 1)
def not_(node, x):
    return torch.logical_not(x)


@lowers("BitwiseNot", 18)
def bitwise_not(node, x):
    return torch.bitwise_not(x)  # carriers of uint16/uint32 are wrapped back by the executor


@lowers("BitShift", 11, 28)
def bit_shift(node, x, y, *, direction="LEFT"):
    code = node.in_type(0)
    bits = {dtypes.TP.UINT8: 8, dtypes.TP.UINT16: 16, dtypes.TP.UINT32: 32, dtypes.TP.UINT64: 64, dtypes.TP.INT8: 8,
            dtypes.TP.INT16: 16, dtypes.TP.INT32: 32, dtypes.TP.INT64: 64}.get(code, x.element_size() * 8)
    y = y.to(x.dtype)
    # a shift by a negative amount or by the width or more leaves only the sign fill (BitShift-28)
    out_of_range = (y < 0) | (y >= bits)
    ys = y.clamp(0, bits - 1)
    zero = torch.zeros((), dtype=x.dtype, device=x.device)
    if direction == "LEFT":
        return torch.where(out_of_range, zero, torch.bitwise_left_shift(x, ys))
    if code == dtypes.TP.UINT64:
        # int64 carries uint64's bits: shift, then clear the copies of the sign bit that came in
        ones = torch.full_like(x, -1)
        mask = torch.where(ys > 0, ~torch.bitwise_left_shift(ones, (64 - ys).clamp(max=63)), ones)
        return torch.where(out_of_range, zero, torch.bitwise_right_shift(x, ys) & mask)
    out = torch.bitwise_right_shift(x, ys)
    if code in dtypes.UNSIGNED:
        return torch.where(out_of_range, zero, out)
    return torch.where(out_of_range, torch.where(x < 0, torch.full_like(x, -1), torch.zeros_like(x)), out)


@lowers("Where", 9, 16)
def where(node, cond, x, y):
    return torch.where(cond, x, y)


# -- version 1: as version 6 (or 7) apart from ``consumed_inputs`` and the legacy broadcast ------
for _op, _fn in (
    ("Neg", neg), ("Abs", abs_), ("Reciprocal", reciprocal), ("Relu", relu), ("LeakyRelu", leaky_relu),
    ("Elu", elu), ("Selu", selu), ("HardSigmoid", hard_sigmoid), ("PRelu", prelu_6), ("Clip", clip_6),
    ("Sum", sum_), ("Max", max_), ("Min", min_), ("Mean", mean),
):
    lowers(_op, 1)(consumed(_fn))
for _op, _fn in (("Floor", torch.floor), ("Ceil", torch.ceil), ("Sqrt", torch.sqrt), ("Exp", torch.exp),
                 ("Log", torch.log), ("Tanh", torch.tanh), ("Sigmoid", torch.sigmoid)):
    lowers(_op, 1)(consumed(lambda node, x, _run=_float_math(_fn): _run(x)))
for _op, _fn in (("Equal", torch.eq), ("Greater", torch.gt), ("Less", torch.lt), ("And", torch.logical_and),
                 ("Or", torch.logical_or), ("Xor", torch.logical_xor)):
    lowers(_op, 1)(_legacy(lambda node, a, b, _fn=_fn: _fn(a, b)))


# -- bit reinterpretation --------------------------------------------------------------------
_EXACT = {  # ONNX type -> torch dtype of exactly its width, for viewing bits
    dtypes.TP.FLOAT: torch.float32, dtypes.TP.DOUBLE: torch.float64, dtypes.TP.FLOAT16: torch.float16,
    dtypes.TP.BFLOAT16: torch.bfloat16, dtypes.TP.INT8: torch.int8, dtypes.TP.UINT8: torch.uint8,
    dtypes.TP.INT16: torch.int16, dtypes.TP.UINT16: torch.int16, dtypes.TP.INT32: torch.int32,
    dtypes.TP.UINT32: torch.int32, dtypes.TP.INT64: torch.int64, dtypes.TP.UINT64: torch.int64,
    dtypes.TP.BOOL: torch.bool,
}


@lowers("BitCast", 26)
def bit_cast(node, x, *, to):
    src = node.in_type(0)
    if src in _EXACT and to in _EXACT:
        exact = x.to(_EXACT[src]) if x.dtype != _EXACT[src] else x  # wraps carriers to their width
        out = exact.contiguous().view(_EXACT[to])
        if to in (dtypes.TP.UINT16, dtypes.TP.UINT32):
            out = out.to(torch.int64) & ((1 << (16 if to == dtypes.TP.UINT16 else 32)) - 1)
        return out.to(dtypes.CARRIER[to])
    if src in _NARROW_BITS and to in _NARROW_BITS:  # 8 bits or fewer: through the bit pattern
        bits = _bits(x, src)
        if to in dtypes.NARROW_FLOATS and bool(_shared(to)[bits].any()):
            raise Unsupported(f"BitCast to {dtypes.type_name(to)}: NaN payloads are not kept by its float32 carrier")
        return _from_bits(bits, to)
    raise Unsupported(f"BitCast between {dtypes.type_name(src or 0)} and {dtypes.type_name(to)}")


#: ONNX types of 8 bits or fewer -> their width
_NARROW_BITS = {dtypes.TP.INT8: 8, dtypes.TP.UINT8: 8, dtypes.TP.BOOL: 8, dtypes.TP.INT4: 4, dtypes.TP.UINT4: 4,
                **{code: 2 for code in dtypes.WRAPPED if dtypes.WRAPPED[code][0] == 2},
                **{code: (4 if code == dtypes.TP.FLOAT4E2M1 else 8) for code in dtypes.NARROW_FLOATS - dtypes.FLOAT6
                   if code in dtypes.NUMPY}}


def _float_table(code):
    """float32 carrier of every bit pattern of a narrow float type (ml_dtypes' conversion, the one
    that fills the carrier at the interface)."""
    patterns = np.arange(1 << _NARROW_BITS[code], dtype=np.uint8).view(dtypes.NUMPY[code])
    return torch.from_numpy(patterns.astype(np.float32))


def _shared(code):
    """Per bit pattern: its carrier is also another pattern's (float8e5m2's NaN payloads, which
    ml_dtypes' conversion to float32 makes one NaN per sign)."""
    table = _float_table(code).view(torch.int32)
    return (table.unsqueeze(-1) == table).sum(-1) > 1


def _bits(x, code):
    if code in dtypes.NARROW_FLOATS:
        table = _float_table(code).view(torch.int32)
        same = x.contiguous().view(torch.int32).unsqueeze(-1) == table
        if bool((same & _shared(code)).any()):
            raise Unsupported(f"BitCast from {dtypes.type_name(code)}: NaN payloads are not kept by its float32 carrier")
        if not bool(same.any(-1).all()):  # a NaN made by torch, not read in: any NaN of its sign
            t = _float_table(code)
            same = same | (torch.isnan(x).unsqueeze(-1) & torch.isnan(t) & (torch.signbit(x).unsqueeze(-1) == torch.signbit(t)))
        return same.to(torch.uint8).argmax(dim=-1).to(torch.int64)
    return x.to(torch.int64) & ((1 << _NARROW_BITS[code]) - 1)


def _from_bits(bits, code):
    if code in dtypes.NARROW_FLOATS:
        return _float_table(code)[bits]
    if code == dtypes.TP.BOOL:
        return bits != 0
    width = _NARROW_BITS[code]
    if code in dtypes.UNSIGNED:
        return bits.to(dtypes.CARRIER[code])
    return (((bits + (1 << (width - 1))) & ((1 << width) - 1)) - (1 << (width - 1))).to(dtypes.CARRIER[code])
