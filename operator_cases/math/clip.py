"""Clip: y = min(max(x, min), max), elementwise (ONNX spec: Clip-1, 6, 11, 12, 13).

Clip-6 takes ``min``/``max`` as float attributes (defaults: the lowest and highest float);
from Clip-11 they are optional scalar inputs of the input's type; Clip-12 adds integer types.
When min > max the spec (Clip-11 on) sets every output to max: min(max(x, min), max) gives that.
An absent min/max defaults to numeric_limits::lowest()/max() (Clip-11 spec text), so an
infinite input is clipped to the largest finite value even with no bound given; onnx.reference
leaves it infinite (see crosscheck.toml).

Spec-silent: a NaN input or bound. The spec's "Min(max, Max(input, min))" inherits Max's and
Min's silence on NaN; we propagate it (IEEE 754-2019 maximum/minimum, numpy.clip); a backend
whose comparisons skip NaN gives a bound for a NaN input, and clips nothing with a NaN bound
(ONNX Runtime: Clip(-inf, min=NaN) is -inf). The edge values hold NaN.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_ASSUMED, Ctx, Plan, finite
from harness.registry import Example, Operator

from .._common import back, wide
from .._silent_util import nan_as_bound, nan_in_result, nan_or_bound

op = Operator("Clip")
op.spec_silent(
    "nan", (1, 6, 11, 12, 13),
    spec="Clip operator limits the given input within an interval.",
    expected="NaN stays NaN: IEEE 754-2019 maximum and minimum propagate it (numpy.clip); Max and Min name no NaN rule",
    where=nan_in_result,
    invariants={"a clipped NaN is NaN or a bound (the NaN taken as -inf or +inf); a NaN bound clips nothing or gives NaN":
                nan_or_bound},
    readings={"the NaN taken as -inf (max(x, min) first lets the bound win)": lambda c: nan_as_bound(c, -np.inf),
              "the NaN taken as +inf (min(x, max) last lets the upper bound win)": lambda c: nan_as_bound(c, np.inf),
              "a NaN bound clips nothing (a comparison with NaN is false)": lambda c: nan_as_bound(c, None, free=True)})
FLT_MAX = 3.4028234663852886e38


@op.reference(1, 6)
def clip_6(x, *, min=-FLT_MAX, max=FLT_MAX, consumed_inputs=None):
    return back(np.minimum(np.maximum(wide(x), min), max), x)


@op.strategy(1, 6)
def draw_6(d, dtype, opset):
    attrs = {}
    lo, hi = d(S.st.floats(-10, 10, width=32)), d(S.st.floats(-10, 10, width=32))
    if d(S.st.booleans()):
        attrs["min"] = min(lo, hi)
    if d(S.st.booleans()):
        attrs["max"] = max(lo, hi)
    return Example([S.arrays(d, dtype, lo=-20, hi=20)], attrs)


@op.reference(11, 12, 13)
def clip_11(x, min=None, max=None):
    lowest, highest = S.finite_range(S.label_of(x.dtype))
    lo = np.asarray(lowest if min is None else min, dtype=x.dtype)
    hi = np.asarray(highest if max is None else max, dtype=x.dtype)
    # NaN in x propagates, as in the spec's formula Min(max, Max(input, min))
    return np.asarray(np.minimum(np.maximum(x, lo), hi), dtype=x.dtype)


@op.strategy(11, 12, 13)
def draw_11(d, dtype, opset):
    x = S.arrays(d, dtype, lo=-20, hi=20)
    lo = S.scalar(d, dtype, lo=-10, hi=10) if d(S.st.booleans()) else None
    hi = S.scalar(d, dtype, lo=-10, hi=10) if d(S.st.booleans()) else None
    return Example([x, lo, hi])


@op.edges(1, 6)
def edges_6(dtype, opset):
    return [Example([S.edge_values(dtype)], {"min": -1.0, "max": 1.0}, name="edge_values"),
            Example([S.edge_values(dtype)], {"min": 1.0, "max": -1.0}, name="min_above_max"),
            Example([np.zeros((2, 0), dtype=S.np_dtype(dtype))], {"min": -1.0, "max": 1.0}, name="empty")]


@op.edges(11, 12, 13)
def edges_11(dtype, opset):
    x = S.edge_values(dtype)
    lo, hi = np.array(0, dtype=x.dtype), np.array(1, dtype=x.dtype)
    return [
        Example([x, lo, hi], name="edge_values"),
        Example([x, hi, lo], name="min_above_max"),
        Example([x, None, hi], name="max_only"),
        Example([x, lo], name="min_only"),
        Example([x], name="no_bounds"),
        Example([np.zeros((2, 0), dtype=x.dtype), lo, hi], name="empty"),
    ] + ([Example([x, np.array(np.nan, dtype=x.dtype), hi], name="nan_min")] if S.is_float(dtype) else [])


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_ASSUMED, ulps=0.0)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0)
    if x is None:
        return None
    vals = finite(x.wide)
    lo, hi = (float(np.min(vals)), float(np.max(vals))) if vals.size else (-1.0, 1.0)
    q = lambda: lo + (hi - lo) * c.rng.uniform(0.1, 0.9)  # noqa: E731
    mode = c.pick(5)
    if mode == 0:
        return Plan([x])
    if mode == 1:
        return Plan([x, c.const(np.array(q()))])
    if mode == 2:
        return Plan([x, None, c.const(np.array(q()))])
    a, b = sorted([q(), q()])
    if mode == 4:  # min > max: every output is max (Clip-13 text)
        a, b = b, a
    return Plan([x, c.const(np.array(a)), c.const(np.array(b))])
