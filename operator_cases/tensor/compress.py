"""Compress: the slices of ``input`` along ``axis`` whose ``condition`` is true (ONNX spec:
Compress-9, 11, 28).

"Compress behaves like numpy.compress": with no ``axis`` the input is flattened first.
``condition`` is a 1-D bool tensor; it "can be less than the input length along the axis [...]
data slices or elements exceeding the condition length are discarded". A condition longer than
the axis is not described, so no case draws one. Compress-11 allows a negative axis ("Accepted
range is [-r, r-1]"); Compress-28 adds bfloat16. Data movement only: every dtype and special
value is copied exactly.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan
from harness.registry import Example, Operator

from .._tensor_util import axis_for, fill, side

op = Operator("Compress")
op.draws(9, 11, 28, share=0.25)  # a wide type sweep of one behaviour: the edge examples carry the special values
st = S.st
VERSIONS = (9, 11, 28)


@op.reference(*VERSIONS)
def compress(x, condition, *, axis=None):
    x = np.asarray(x)
    cond = np.asarray(condition, dtype=bool).reshape(-1)
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = int(axis) + x.ndim if int(axis) < 0 else int(axis)
    if cond.size > x.shape[axis]:
        raise ValueError(f"Compress: condition of length {cond.size} longer than the axis ({x.shape[axis]}): the strategy must not draw it")
    return np.take(x, np.flatnonzero(cond), axis=axis)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    x = S.arrays(d, dtype, shape=tuple(side(d) for _ in range(d(st.integers(1, 3)))))
    attrs = {}
    if d(st.integers(0, 3)):
        attrs["axis"] = axis_for(d, x.ndim, negative=opset >= 11)
        n = x.shape[attrs["axis"]]
    else:
        n = x.size
    length = d(st.integers(0, n)) if d(st.integers(0, 3)) == 0 else n
    cond = np.array(d(st.lists(st.booleans(), min_size=length, max_size=length)), dtype=bool)
    return Example([x, cond], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    b = lambda *v: np.array(v, dtype=bool)  # noqa: E731
    x = S.edge_values(dtype)
    grid = fill(dtype, (3, 2))
    last = -1 if opset >= 11 else 1
    return [
        Example([x, np.resize(b(True, False, True), x.shape)], {"axis": 0}, name="edge_values"),
        Example([grid, b(False, True, True)], {"axis": 0}, name="spec_axis0"),
        Example([grid, b(False, True)], {"axis": last}, name="last_axis"),
        Example([grid, b(False, True, False, False, True)], name="flattened_short_condition"),
        Example([grid, b(True, True)], {"axis": 0}, name="short_condition"),
        Example([grid, b(False, False, False)], {"axis": 0}, name="all_false"),
        Example([grid, np.zeros((0,), bool)], {"axis": 1}, name="empty_condition"),
        Example([fill(dtype, (0, 2)), np.zeros((0,), bool)], {"axis": 0}, name="empty_input"),
        Example([fill(dtype, (2, 0)), b(True, False)], {"axis": 0}, name="empty_slices"),
    ]


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=0.0)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0, lambda v: v.rank >= 1 and v.size > 0)
    if x is None:
        return None
    flat = c.pick(4) == 0
    n = x.size if flat else None
    attrs = {}
    if not flat:
        axis = c.pick(x.rank)
        n = x.shape[axis]
        attrs["axis"] = axis - x.rank if c.since >= 11 and c.pick(2) else axis
    length = n - c.pick(2) if n > 1 else n
    cond = c.rng.uniform(size=length) < 0.6
    return Plan([x, c.const(cond, "bool")], attrs)
