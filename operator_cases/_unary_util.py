"""Helpers shared by the elementwise unary operators (Abs, Exp, Sigmoid, Gelu, ...).

``elementwise`` registers one op-version family: a float64 reference rounded back to the
input dtype, a strategy drawing one array (plus attributes), and the standard edge examples:
the dtype's edge values (NaN, +-inf, -0.0, denormals, extremes), an empty tensor and a rank-0
tensor. Values whose result the spec leaves open to reading (the limit of a formula at an
infinity, NaN through a comparison) can be moved out of ``edge_values`` into examples of their
own, so that a disagreement on them is reported under its own case id.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import ml_dtypes
import numpy as np

from harness import strategies as S
from harness.fuzz_api import Ctx, Plan, finite, options
from harness.registry import Example, Operator

from ._common import back, wide

AttrDraw = Callable[[Callable, str], dict[str, Any]]


def f32(value: float) -> float:
    """An attribute's value as the model stores it (attributes of type FLOAT are float32)."""
    return float(np.float32(value))


def attr_float(d: Callable, dtype: str, lo: float, hi: float) -> float:
    """A float attribute drawn from [lo, hi] that is exact both as float32 and in ``dtype``, so a
    backend that converts the attribute to the input type before using it sees the same value."""
    v = np.float32(d(S.st.floats(lo, hi, width=32)))
    if dtype in ("float16", "bfloat16"):
        v = np.float32(np.asarray(v).astype(S.np_dtype(dtype)))
    return float(v)


def optional_attrs(d: Callable, **draws: Callable[[], Any]) -> dict[str, Any]:
    """Each attribute present (drawn) or absent (the schema default) at random."""
    return {name: draw() for name, draw in draws.items() if d(S.st.booleans())}


def sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-x) without overflow for large |x| (float64)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def softplus(x: np.ndarray) -> np.ndarray:
    """ln(e^x + 1) without overflow (float64)."""
    with np.errstate(all="ignore"):
        return np.logaddexp(0.0, np.asarray(x, dtype=np.float64))


def vectorize(fn: Callable[[float], float]) -> Callable[[np.ndarray], np.ndarray]:
    """A float64 elementwise function from a scalar one (math.erf, math.erfc); arrays are small."""
    vec = np.vectorize(fn, otypes=[np.float64])

    def apply(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        return vec(x) if x.size else x.copy()

    return apply


erf = vectorize(math.erf)
erfc = vectorize(math.erfc)


def at_infinity(x: np.ndarray, y: np.ndarray, neg: float | None = None, pos: float | None = None) -> np.ndarray:
    """Replace y where x is -inf/+inf by the function's limit there (the spec defines functions;
    a formula evaluated literally can give inf * 0 = NaN where the function tends to 0)."""
    y = np.array(y, dtype=np.float64, copy=True)
    if neg is not None:
        y[np.isneginf(x)] = neg
    if pos is not None:
        y[np.isposinf(x)] = pos
    return y


def bounded(dtype: str, margin: float = 1.0) -> float:
    """ln(largest finite value) - margin, rounded down to a multiple of 1/64 (exact in float32,
    as S.arrays needs its bounds): |x| below this keeps exp/cosh/sinh finite in ``dtype``."""
    return math.floor((math.log(S.finite_range(dtype)[1]) - margin) * 64) / 64


# -- edge examples ----------------------------------------------------------------------------
def split(values: np.ndarray, isolate: dict[str, Callable[[np.ndarray], np.ndarray]] | None) -> list[tuple[str, np.ndarray]]:
    """edge values, with the elements selected by each ``isolate`` predicate moved to their own
    named array."""
    out, keep = [], np.ones(values.shape, dtype=bool)
    for name, pred in (isolate or {}).items():
        with np.errstate(all="ignore"):
            sel = np.asarray(pred(wide(values)), dtype=bool) & keep
        if sel.any():
            out.append((name, values[sel]))
        keep &= ~sel
    return [("edge_values", values[keep])] + out


def standard_edges(dtype: str, attrs: list[dict[str, Any]] | None = None,
                   isolate: dict[str, Callable[[np.ndarray], np.ndarray]] | None = None,
                   drop: Callable[[np.ndarray], np.ndarray] | None = None) -> list[Example]:
    """edge_values (once per attribute set), for integer types int_boundaries, an empty tensor
    and a rank-0 tensor.

    ``drop`` removes edge values the spec gives no result for (e.g. Abs of the lowest signed
    integer); ``isolate`` moves values to separately named examples."""
    values = edge_values(dtype)
    if drop is not None:
        with np.errstate(all="ignore"):
            values = values[~np.asarray(drop(wide(values)), dtype=bool)]
    attr_sets = attrs or [{}]
    examples = []
    for k, a in enumerate(attr_sets):
        suffix = f"_{k}" if len(attr_sets) > 1 else ""
        for name, vals in split(values, isolate):
            examples.append(Example([vals], dict(a), name=name + suffix))
    dt = S.np_dtype(dtype)
    if S.is_int(dtype):
        bounds = int_boundaries(dtype)
        if drop is not None:
            bounds = bounds[~np.asarray(drop(bounds), dtype=bool)]
        if bounds.size:
            examples.append(Example([bounds], dict(attr_sets[-1]), name="int_boundaries"))
    one = np.array(1, dtype=dt) if S.is_int(dtype) else np.array(0.5, dtype=dt)
    if drop is not None and np.asarray(drop(wide(one))).any():
        one = np.zeros((), dtype=dt)
    examples.append(Example([np.zeros((2, 0, 3), dtype=dt)], dict(attr_sets[-1]), name="empty"))
    examples.append(Example([one], dict(attr_sets[-1]), name="scalar"))
    return examples


def int_boundaries(dtype: str) -> np.ndarray:
    """Integers next to the powers of two where narrower integer types end (2^7, 2^8, 2^15, 2^16,
    2^31, 2^32, 2^53, 2^63), with both signs, inside ``dtype``: a kernel that narrows or goes
    through float gets them wrong."""
    low, high = S.finite_range(dtype)
    vals = set()
    for k in (7, 8, 15, 16, 31, 32, 53, 63):
        for v in (2**k - 1, 2**k, 2**k + 1):
            vals.update(w for w in (v, -v) if low <= w <= high)
    return np.array(sorted(vals), dtype=object).astype(S.np_dtype(dtype))


def elementwise(op: Operator, versions: tuple[int, ...], fn: Callable[..., np.ndarray], *,
                lo: float | Callable[[str], float] | None = None, hi: float | Callable[[str], float] | None = None,
                draw_x: Callable[[Callable, str], np.ndarray] | None = None, attrs: AttrDraw | None = None,
                edge_attrs: list[dict[str, Any]] | None = None,
                isolate: dict[str, Callable[[np.ndarray], np.ndarray]] | None = None,
                drop: Callable[[np.ndarray], np.ndarray] | None = None,
                extra_edges: Callable[[str, int], list[Example]] | None = None) -> None:
    """Register y = fn(x, **attrs) for ``versions``: fn gets x in float64 (other dtypes as they
    are) and its result is rounded back to x's dtype. Inputs are drawn from [lo, hi] (either may
    be a function of the dtype) or by ``draw_x``; attributes by ``attrs``."""

    @op.reference(*versions)
    def reference(x, consumed_inputs=None, **kw):  # consumed_inputs: legacy, no effect on values
        return back(fn(wide(x), **kw), x)

    @op.strategy(*versions)
    def draw(d, dtype, opset):
        if draw_x is not None:
            x = draw_x(d, dtype)
        else:
            x = S.arrays(d, dtype, lo=lo(dtype) if callable(lo) else lo, hi=hi(dtype) if callable(hi) else hi)
        return Example([x], attrs(d, dtype) if attrs else {})

    @op.edges(*versions)
    def edges(dtype, opset):
        out = standard_edges(dtype, edge_attrs, isolate, drop)
        if extra_edges is not None:
            out += extra_edges(dtype, opset)
        return out


def values(dtype: str, *vals: float) -> np.ndarray:
    """A 1-D array of ``vals`` rounded to ``dtype``."""
    with np.errstate(all="ignore"):
        return np.array(vals, dtype=np.float64).astype(S.np_dtype(dtype))


def signed_min(v: np.ndarray) -> np.ndarray:
    """Where v is the lowest value of a signed integer type (its negation does not fit)."""
    v = np.asarray(v)
    if v.dtype.kind == "i":
        return v == np.iinfo(v.dtype).min
    return np.zeros(v.shape, dtype=bool)


def above_signed_min(dtype: str) -> int | None:
    """Lower bound for drawing signed integers whose negation fits; None for other types."""
    return S.finite_range(dtype)[0] + 1 if dtype in S.SIGNED else None


def _finfo(dtype: str) -> Any:
    # ml_dtypes.finfo covers numpy's float types too; numpy.finfo refuses float8_e5m2, whose
    # dtype kind is "f" (not "V" like the other ml_dtypes types)
    return ml_dtypes.finfo(S.np_dtype(dtype))


def edge_values(dtype: str) -> np.ndarray:
    """S.edge_values, with the float values built here for the float types S.finite_range cannot
    describe (float8e5m2: see _finfo)."""
    try:
        return S.edge_values(dtype)
    except ValueError:
        if not S.is_float(dtype):
            raise
    info = _finfo(dtype)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, float(info.max), float(info.min), float(info.smallest_subnormal),
            -float(info.smallest_subnormal), float(info.smallest_normal), math.inf, -math.inf, math.nan]
    with np.errstate(all="ignore"):
        return np.array(vals, dtype=np.float64).astype(S.np_dtype(dtype))


def special_arrays(d: Callable, dtype: str) -> np.ndarray:
    """Finite values of ``dtype`` mixed with NaN and +-inf (drawn in float64, then converted: a
    format without infinities gets what the conversion gives it)."""
    top = min(float(_finfo(dtype).max), 1e4)
    with np.errstate(all="ignore"):
        return S.arrays(d, "float64", lo=-top, hi=top, allow_nan=True, allow_inf=True).astype(S.np_dtype(dtype))


def eps(dtype: str) -> float:
    """The distance from 1.0 to the next larger value of a float dtype."""
    return float(_finfo(dtype).eps)


def smallest_subnormal(dtype: str) -> float:
    return float(_finfo(dtype).smallest_subnormal)


# -- fuzz templates --------------------------------------------------------------------------
def unary_template(op: Operator, attr_sets: list[dict[str, Any]] | None = None, **kw: Any) -> None:
    """How a unary op enters a generated graph: on any float value of the pool, with the
    spec's default attributes or one of ``attr_sets`` (keywords: the fields of
    :class:`harness.fuzz_api.Template`)."""

    def plan(c: Ctx) -> Plan | None:
        x = c.take("float", 0)
        if x is None:
            return None
        return Plan([x], options(c, attr_sets) if attr_sets else {})

    op.fuzz(**kw)(plan)


def all_of(pred: Callable[[np.ndarray], np.ndarray]) -> Callable[[list[np.ndarray]], bool]:
    """A template guard: ``pred`` holds for every non-NaN element of the input."""
    return lambda ins: bool(np.all(pred(finite(ins[0]))))


def literal_at_infinity(op: Operator, name: str, versions: tuple[int, ...], formula: Callable[..., np.ndarray],
                        open_at: Callable[[np.ndarray, dict], np.ndarray], expected: str,
                        limit: Callable[[np.ndarray], np.ndarray] = np.zeros_like, literally: str = "inf * 0 = NaN") -> None:
    """A spec-silent point where the spec's formula, read literally in IEEE arithmetic, gives
    NaN at an infinite input (inf * 0, inf / inf) while the function it defines tends to a limit
    (ours). Its one reading is that formula computed literally in float64 (``formula(x, **attrs)``),
    in the output's type; any value other than ours or the reading's is a mismatch.
    ``open_at(x, attrs)``: the open elements; ``limit(x)``: the function's limit there (an
    invariant: a finite value there is that limit); ``literally``: what the formula gives there."""
    from harness import schema

    def literal(c: Any) -> list[np.ndarray]:
        with np.errstate(all="ignore"):
            return [formula(np.asarray(c.inputs[0]).astype(np.float64), **c.attrs).astype(np.asarray(c.expected[0]).dtype)]

    op.spec_silent(
        name, versions,
        spec={v: " ".join(schema.schema_at(op.name, v).doc.split()) for v in versions},
        expected=expected,
        where=lambda inputs, attrs, expected_, since: [open_at(np.asarray(inputs[0]).astype(np.float64), attrs)],
        invariants={"a finite value there is the function's limit": lambda c: _finite_is_limit(c, limit)},
        readings={f"the formula read literally in IEEE arithmetic ({literally})": literal})


def _finite_is_limit(c: Any, limit: Callable[[np.ndarray], np.ndarray]) -> bool:
    open_ = c.masks[0]
    y = np.asarray(c.actual[0]).astype(np.float64)[open_]
    x = np.asarray(c.inputs[0]).astype(np.float64)[np.broadcast_to(open_, np.shape(c.inputs[0]))]
    return bool(np.all(~np.isfinite(y) | (y == limit(x))))


def near_integers(dtype: str, opset: int) -> list[Example]:
    """Ceil/Floor/Round edges: halves, the value just below 0.5, and integers at the top of the
    format's exact range (above 2**precision every value is an integer)."""
    top = 2.0 / eps(dtype)
    return [Example([values(dtype, 0.5 - eps(dtype) / 4, -0.5 + eps(dtype) / 4, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5,
                            0.9, -0.9, top / 2 - 0.5, -(top / 2 - 0.5), top - 1, -(top - 1), top + 2)], name="near_integers")]


def unit_domain_bounds(dtype: str, opset: int) -> list[Example]:
    """Acos/Asin edges: the domain's ends [-1, 1], one step outside them and half a step inside."""
    e = eps(dtype)
    return [Example([values(dtype, 1.0, -1.0, 1.0 + e, -1.0 - e, 1.0 - e / 2, -1.0 + e / 2)], name="domain_bounds")]


def near_overflow(dtype: str, opset: int) -> list[Example]:
    """Cosh/Sinh edges: just below and above where the result overflows (about ln(2 * max))."""
    top = math.log(S.finite_range(dtype)[1])
    return [Example([values(dtype, top - 0.5, -(top - 0.5), top + 1.5, -(top + 1.5))], name="near_overflow")]
