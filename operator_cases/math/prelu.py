"""PRelu: f(x) = slope * x for x < 0, f(x) = x for x >= 0, elementwise (ONNX spec: PRelu-1, 6,
7, 9, 16).

- PRelu-1 and 6: "If Slope is of size 1, the value is shared across different channels"; the
  spec names no other broadcasting, so slope is drawn either of size 1 (shape [1]) or of X's
  own shape. PRelu-1's ``consumed_inputs`` is a legacy attribute with no effect on values.
- PRelu-7 on: slope is unidirectionally broadcast to X (numpy rules, slope's rank <= X's, each
  dim 1 or X's); the output has X's shape.
- PRelu-9 adds int32, int64, uint32, uint64; PRelu-16 bfloat16. Integer results are exact
  (Python ints); signed x and slope are drawn so that slope * x fits in the type (the spec does
  not say what an overflowing product gives). Unsigned x is never < 0, so y = x.
The branch is chosen by x alone: where x >= 0 the result is x whatever the slope (NaN or inf
slope included), which the edges test; NaN x gives NaN.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_ASSUMED, Ctx, Plan, broadcast_shape, broadcast_variant
from harness.registry import Example, Operator

from .._common import back, wide
from .._unary_util import int_boundaries, values

op = Operator("PRelu")


def _prelu(x, slope, unidirectional):
    if not unidirectional and slope.size == 1:
        slope = slope.reshape(())
    slope = np.broadcast_to(slope, x.shape)
    if S.is_int(S.label_of(x.dtype)):
        xo, so = x.astype(object), slope.astype(object)
        return np.where(x < 0, so * xo, xo).astype(x.dtype)
    w, s = wide(x), wide(slope)
    with np.errstate(all="ignore"):
        return back(np.where(w < 0, s * w, w), x)


@op.reference(1, 6)
def prelu_1(x, slope, consumed_inputs=None):
    return _prelu(x, slope, unidirectional=False)


@op.reference(7, 9, 16)
def prelu_7(x, slope):
    return _prelu(x, slope, unidirectional=True)


def _values(d, dtype, shape, role):
    """x or slope values; for signed integers both are bounded so that slope * x fits."""
    if dtype in S.SIGNED:
        high = S.finite_range(dtype)[1]
        if role == "slope":
            return S.arrays(d, dtype, shape=shape, lo=-100, hi=100)
        return S.arrays(d, dtype, shape=shape, lo=-(high // 100), hi=high)
    if S.is_int(dtype):
        return S.arrays(d, dtype, shape=shape)
    return S.arrays(d, dtype, shape=shape, lo=-3.0, hi=3.0) if role == "slope" else S.arrays(d, dtype, shape=shape)


@op.strategy(1, 6)
def draw_1(d, dtype, opset):
    shape = S.shapes(d, min_dims=1)
    slope_shape = (1,) if d(S.st.booleans()) else shape
    return Example([_values(d, dtype, shape, "x"), _values(d, dtype, slope_shape, "slope")])


@op.strategy(7, 9, 16)
def draw_7(d, dtype, opset):
    shape = S.shapes(d)
    keep = d(S.st.integers(0, len(shape)))
    slope_shape = tuple(1 if d(S.st.booleans()) else n for n in shape[len(shape) - keep:])
    return Example([_values(d, dtype, shape, "x"), _values(d, dtype, slope_shape, "slope")])


def _edges(dtype, unidirectional):
    dt = S.np_dtype(dtype)
    x = S.edge_values(dtype)
    one = lambda v: np.array([v], dtype=dt)  # noqa: E731
    if S.is_int(dtype):
        out = [Example([x, one(1)], name="edge_values_slope1"), Example([x, one(0)], name="edge_values_slope0")]
        if dtype in S.SIGNED:
            x2 = x[x != S.finite_range(dtype)[0]]  # -1 * lowest does not fit
            out.append(Example([x2, one(-1)], name="edge_values_slope_minus1"))
        else:
            out.append(Example([x, np.full(x.shape, S.finite_range(dtype)[1], dtype=dt)], name="edge_values_slope_max"))
        out.append(Example([int_boundaries(dtype), one(1)], name="int_boundaries_slope1"))
        grid = np.arange(-12, 12).reshape(2, 3, 4) if dtype in S.SIGNED else np.arange(24).reshape(2, 3, 4)
        grid = grid.astype(dt)
        slope = np.array([2, -3, 0], dtype=object).astype(dt) if dtype in S.SIGNED else np.array([2, 3, 0], dtype=dt)
    else:
        # nonzero slopes: 0 * -inf would be a question of reading, not of the spec
        slope_full = np.resize(values(dtype, 0.5, -2.0, 3.0), x.shape)
        out = [Example([x, one(0.25)], name="edge_values"), Example([x, slope_full], name="edge_values_elementwise")]
        xs = values(dtype, -2.0, -1.0, -0.0, 0.0, 1.0, 2.0)
        with np.errstate(all="ignore"):
            out.append(Example([xs, np.full(xs.shape, np.nan).astype(dt)], name="nan_slope"))
            out.append(Example([xs, np.full(xs.shape, np.inf).astype(dt)], name="inf_slope"))
        grid = values(dtype, *np.linspace(-3.0, 2.75, 24)).reshape(2, 3, 4)
        slope = values(dtype, 0.5, -1.5, 2.0)
    if unidirectional:
        out.append(Example([grid, slope.reshape(3, 1)], name="broadcast_channel"))
        out.append(Example([grid, slope[:1].reshape(())], name="scalar_slope"))
        out.append(Example([grid, np.resize(slope, 4)], name="broadcast_last"))
        out.append(Example([np.zeros((2, 0, 3), dtype=dt), slope.reshape(3)], name="empty"))
        out.append(Example([np.array(-2, dtype=dt) if dtype not in S.UNSIGNED else np.array(2, dtype=dt), slope[:1].reshape(())],
                           name="scalar"))
    else:
        out.append(Example([grid, slope[:1]], name="shared_slope"))
        out.append(Example([np.zeros((2, 0, 3), dtype=dt), slope[:1]], name="empty"))
    return out


@op.edges(1, 6)
def edges_1(dtype, opset):
    return _edges(dtype, unidirectional=False)


@op.edges(7, 9, 16)
def edges_7(dtype, opset):
    return _edges(dtype, unidirectional=True)


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_ASSUMED, ulps=1.0)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0)
    if x is None:
        return None
    # slope broadcasts unidirectionally to X (PRelu-7 on)
    slope = c.operand(x, 1, shape_of=lambda xs, s: xs if broadcast_shape(xs, s) == xs else None,
                      const_shape=lambda c2, a: broadcast_variant(c2, a.shape), lo=-1.0, hi=1.0)
    return Plan([x, slope])
