"""Flatten (ONNX spec: Flatten-1, 9, 11, 13, 21, 23, 24, 25).

"Flattens the input tensor into a 2D matrix. If input tensor has shape (d_0, d_1, ... d_n) then
the output will have shape (d_0 X d_1 ... d_(axis-1), d_axis X d_(axis+1) ... X dn)." ``axis``
defaults to 1; with axis = 0 the output is (1, d_0 X ... X d_n).

- Flatten-1: float types; "The value for axis must be in the range [0, R], where R is the rank
  of the input tensor."
- Flatten-9: every tensor type (integers, bool, string, ...), same axis range.
- Flatten-11: the range becomes [-r, r]; "Negative value means counting dimensions from the
  back."
- Flatten-13, 21, 23, 24, 25 only widen the types.

An axis outside the range raises ValueError.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan
from harness.registry import Example, Operator

op = Operator("Flatten")
st = S.st
NONNEG = (1, 9)
NEGATIVE = (11, 13, 21, 23, 24, 25)


def _flatten(x, axis, negative: bool):
    x = np.asarray(x)
    r = x.ndim
    axis = int(axis)
    lo = -r if negative else 0
    if not lo <= axis <= r:
        raise ValueError(f"Flatten: axis {axis} outside [{lo}, {r}]")
    if axis < 0:
        axis += r
    outer = int(np.prod(x.shape[:axis])) if axis else 1
    inner = int(np.prod(x.shape[axis:])) if axis < r else 1
    return x.reshape(outer, inner).copy()


@op.reference(*NONNEG)
def flatten_1(x, *, axis=1):
    return _flatten(x, axis, negative=False)


@op.reference(*NEGATIVE)
def flatten_11(x, *, axis=1):
    return _flatten(x, axis, negative=True)


def _draw(d, dtype, negative: bool):
    x = S.arrays(d, dtype, min_dims=1 if d(st.integers(0, 7)) else 0, max_dims=4,
                 min_side=0 if d(st.integers(0, 5)) == 0 else 1)
    r = x.ndim
    axis = d(st.integers(-r if negative else 0, r))
    if axis == 1 and d(st.booleans()):
        return Example([x])  # the default axis
    return Example([x], {"axis": axis})


@op.strategy(*NONNEG)
def draw_1(d, dtype, opset):
    return _draw(d, dtype, negative=False)


@op.strategy(*NEGATIVE)
def draw_11(d, dtype, opset):
    return _draw(d, dtype, negative=True)


def _fill(dtype, shape):
    return np.resize(S.edge_values(dtype), shape)


def _edges(dtype, negative: bool):
    x = _fill(dtype, (2, 3, 2))
    out = [
        Example([x], name="default_axis"),                               # (2, 6)
        Example([x], {"axis": 0}, name="axis_0"),                        # (1, 12)
        Example([x], {"axis": 3}, name="axis_rank"),                     # (12, 1)
        Example([S.edge_values(dtype)], {"axis": 1}, name="edge_values"),
        Example([_fill(dtype, (2, 0, 3))], {"axis": 2}, name="empty"),  # (0, 3)
        Example([_fill(dtype, (3, 0))], {"axis": 1}, name="empty_inner"),  # (3, 0)
        Example([_fill(dtype, ())], {"axis": 0}, name="scalar"),         # (1, 1)
    ]
    if negative:
        out += [Example([x], {"axis": -1}, name="negative_axis"),          # (6, 2)
                Example([x], {"axis": -3}, name="negative_axis_minus_rank")]  # (1, 12)
    return out


@op.edges(*NONNEG)
def edges_1(dtype, opset):
    return _edges(dtype, negative=False)


@op.edges(*NEGATIVE)
def edges_11(dtype, opset):
    return _edges(dtype, negative=True)


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=0.0)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0)
    if x is None:
        return None
    axis = c.pick(x.rank + 1)
    return Plan([x], {} if axis == 1 and c.pick(2) else {"axis": axis})
