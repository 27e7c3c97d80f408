"""Pieces shared by the quantization family (ONNX spec: QuantizeLinear, DequantizeLinear,
DynamicQuantizeLinear, QLinearMatMul, QLinearConv): the granularity of a scale / zero point
(per tensor, per axis, blocked), the conversion of an exact (float64) value to a quantized type
(round half to even and saturate for integers; the float 8 / float 4 tables of Cast for small
floats, through cast.py's element conversion written from those tables), and value helpers.

Arithmetic in a named precision ``p`` (float32, float16, bfloat16) is modelled as IEEE does it:
the operands are values of ``p`` and the result is the exact result rounded once to ``p``. A
float64 quotient or product of two values of a narrower type, rounded to that type, is that
correctly rounded result (53 >= 2 * 24 + 2 bits: no double-rounding error).
"""

from __future__ import annotations

import math
from typing import Callable

import ml_dtypes
import numpy as np

from harness import strategies as S
from harness.registry import Reading, SilentCheck

from .tensor.cast import to_float

st = S.st

#: integer targets' saturation ranges (QuantizeLinear-21's list, extended by the types)
INT_TARGETS = ("int8", "uint8", "int16", "uint16", "int4", "uint4", "int32")
SMALL_FLOATS = S.FLOAT8 + ("float4e2m1",)


def f64(x) -> np.ndarray:
    """Exact float64 values of any numeric array (int32, int16, float8, bfloat16 ... are exact)."""
    with np.errstate(all="ignore"):
        return np.asarray(x).astype(np.float64)


def in_type(v: np.ndarray, label: str) -> np.ndarray:
    """``v`` (float64) rounded once to float type ``label`` (numpy / ml_dtypes round to nearest
    even; overflow gives inf), returned as float64."""
    with np.errstate(all="ignore"):
        return np.asarray(v, dtype=np.float64).astype(S.np_dtype(label)).astype(np.float64)


def expand(param, shape: tuple[int, ...], axis: int, block_size: int = 0) -> np.ndarray:
    """A scale or zero point (float64) broadcast to ``shape``: a scalar (or one element) per
    tensor; a 1-D vector along ``axis`` (negative counts from the back); blocked: the parameter
    has the input's rank and each of its entries along ``axis`` covers ``block_size`` inputs."""
    p = f64(param)
    rank = len(shape)
    if p.ndim == 0 or (p.ndim == 1 and p.size == 1 and not block_size):
        return np.broadcast_to(p.reshape(()), shape)
    ax = axis + rank if axis < 0 else axis
    if not 0 <= ax < rank:
        raise ValueError(f"axis {axis} outside [-{rank}, {rank - 1}]")
    if block_size:
        if p.ndim != rank:
            raise ValueError("a blocked scale has the input's rank")
        p = np.repeat(p, block_size, axis=ax)
        return np.take(p, np.arange(shape[ax]), axis=ax)
    if p.ndim != 1 or p.size != shape[ax]:
        raise ValueError(f"a per-axis scale has length {shape[ax]} (the axis), got shape {p.shape}")
    return np.broadcast_to(p.reshape((-1,) + (1,) * (rank - ax - 1)), shape)


def saturate_int(q: np.ndarray, label: str, nan_to: float = 0.0) -> np.ndarray:
    """Integers (float64, already rounded, +-inf allowed) saturated to ``label``'s range; NaN
    (the spec-silent point of each op) becomes ``nan_to``."""
    lo, hi = S.finite_range(label)
    q = np.where(np.isnan(q), nan_to, q)
    return np.clip(q, lo, hi).astype(np.int64).astype(S.np_dtype(label))


def to_quantized(v: np.ndarray, label: str, saturate: int = 1, fnuz_inf_nan: bool = False,
                 nan_to: float = 0.0) -> np.ndarray:
    """Exact values ``v`` (float64) converted to the quantized type ``label``: integers round
    half to even then saturate; small floats follow Cast's tables (``saturate``; +-inf to NaN in
    the FNUZ types under saturation as Cast-19..23 wrote it when ``fnuz_inf_nan``)."""
    v = np.asarray(v, dtype=np.float64)
    if S.is_int(label):
        return saturate_int(np.rint(v), label, nan_to)
    out = [to_float(float(e), label, bool(saturate), fnuz_inf_nan) for e in v.reshape(-1)]
    with np.errstate(all="ignore"):
        return np.array(out, dtype=np.float64).astype(S.np_dtype(label)).reshape(v.shape)


def type_max(label: str) -> float:
    return float(ml_dtypes.finfo(S.np_dtype(label)).max) if S.is_float(label) else float(S.finite_range(label)[1])


def values(label: str, vals, shape=None) -> np.ndarray:
    """Python numbers as an array of ``label`` (exact when representable)."""
    arr = np.array(vals, dtype=np.float64 if S.is_float(label) else object)
    with np.errstate(all="ignore"):
        out = arr.astype(np.float64).astype(S.np_dtype(label)) if S.is_float(label) else arr.astype(S.np_dtype(label))
    return out.reshape(shape) if shape is not None else out


def draw_scale_values(d, n: int, negative: bool = True) -> list[float]:
    """Scales: powers of two (x / scale exact, so drawn ties stay ties), a few mantissas,
    now and then negative."""
    out = []
    for _ in range(n):
        mag = 2.0 ** d(st.integers(-6, 3)) * d(st.sampled_from([1.0, 1.0, 1.25, 1.5, 0.75, 1.1]))
        out.append(-mag if negative and d(st.integers(0, 7)) == 0 else mag)
    return out


def draw_units(d, n: int, lo: float, hi: float) -> np.ndarray:
    """Values in quantized units around [lo, hi]: integers, exact halves (ties), fractions,
    and now and then values beyond both ends (saturation)."""
    span = max(hi - lo, 1.0)
    whole = st.integers(int(math.floor(lo - span / 4)), int(math.ceil(hi + span / 4)))
    frac = st.sampled_from([0.0, 0.5, 0.5, -0.5, 0.25, 0.75, 0.125])
    vals = d(st.lists(st.tuples(whole, frac), min_size=n, max_size=n))
    return np.array([a + b for a, b in vals], dtype=np.float64)


def per_axis_choice(d, shape: tuple[int, ...], blocked: bool, per_axis: bool = True):
    """(axis attribute or None, param shape, block_size or 0): per tensor, per axis (rank >= 2,
    axis drawn negative half the time) or blocked (same rank, one axis in blocks)."""
    rank = len(shape)
    kinds = ["tensor"]
    if per_axis and rank >= 2:
        kinds.append("axis")
    if blocked and rank >= 2 and all(s > 0 for s in shape):
        kinds.append("blocked")
    kind = d(st.sampled_from(kinds))
    if kind == "tensor":
        return None, (), 0
    ax = d(st.integers(0, rank - 1))
    attr = ax - rank if d(st.booleans()) else ax
    if kind == "axis":
        return attr, (shape[ax],), 0
    bs = d(st.integers(1, max(1, shape[ax])))
    pshape = list(shape)
    pshape[ax] = -(-shape[ax] // bs)
    return attr, tuple(pshape), bs


# -- spec-silent points whose readings are whole alternative results -------------------------
def same(a, b) -> np.ndarray:
    """Where ``a`` and ``b`` hold the same value (compared as float64; a NaN is the same as a NaN)."""
    a64, b64 = f64(a), f64(b)
    return (a64 == b64) | (np.isnan(a64) & np.isnan(b64))


def where_readings_differ(readings: list[np.ndarray]) -> list:
    """A point's ``where``: the elements on which some reading differs from the first (None: none does)."""
    differ = np.zeros(np.shape(readings[0]), dtype=bool)
    for r in readings[1:]:
        differ |= ~same(readings[0], r)
    return [differ if differ.any() else None]


def each_one_of(readings: list[np.ndarray], actual) -> np.ndarray:
    """Where ``actual`` is the value of one of ``readings``."""
    a = np.asarray(actual)
    ok = np.zeros(a.shape, dtype=bool)
    for r in readings:
        ok |= same(r, a)
    return ok


class WholeReadings:
    """A spec-silent point's pieces when ``results(inputs, attrs, since)`` computes every reading
    as a whole first output, ours first: the point's ``where`` (the elements on which a reading
    differs from ours), the invariant that each such element is one reading's value, and the
    k-th reading."""

    def __init__(self, results: Callable[[list, dict, int], list[np.ndarray]]) -> None:
        self.results = results

    def where(self, inputs, attrs, expected, since) -> list:
        return where_readings_differ(self.results(inputs, attrs, since))

    def one_of(self, c: SilentCheck) -> bool:
        return bool(each_one_of(self.results(c.inputs, c.attrs, c.since), c.actual[0])[c.masks[0]].all())

    def reading(self, k: int) -> Reading:
        return lambda c: [self.results(c.inputs, c.attrs, c.since)[k]]
