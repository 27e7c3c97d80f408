"""Concat: join tensors along ``axis`` (ONNX spec: Concat-1, 4, 11, 13).

Concat-1 has an optional axis defaulting to 1; from Concat-4 the axis is required; Concat-11
allows negative axes, counted from the back."""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import MAX_ELEMENTS, NAN_IEEE, Ctx, Plan
from harness.registry import Example, Operator

op = Operator("Concat")


@op.reference(1, 4, 11, 13)
def concat(*xs, axis=1):
    return np.concatenate(xs, axis=axis)


def _draw(d, dtype, negative: bool, axis_required: bool):
    shape = list(S.shapes(d, min_dims=1, max_dims=4, min_side=0, max_side=3))
    rank = len(shape)
    axis = d(S.st.integers(-rank if negative else 0, rank - 1))
    inputs = []
    for _ in range(d(S.st.integers(1, 3))):
        shape[axis] = d(S.st.integers(0, 3))
        inputs.append(S.arrays(d, dtype, shape=tuple(shape)))
    return Example(inputs, {"axis": axis})


@op.strategy(1)
def draw_1(d, dtype, opset):
    ex = _draw(d, dtype, negative=False, axis_required=False)
    if ex.attrs["axis"] == 1 and ex.inputs[0].ndim > 1 and d(S.st.booleans()):
        ex.attrs = {}  # the default axis of Concat-1
    return ex


@op.strategy(4)
def draw_4(d, dtype, opset):
    return _draw(d, dtype, negative=False, axis_required=True)


@op.strategy(11, 13)
def draw_11(d, dtype, opset):
    return _draw(d, dtype, negative=True, axis_required=True)


@op.edges(1, 4, 11, 13)
def edges(dtype, opset):
    x = S.edge_values(dtype).reshape(1, -1)
    return [Example([x, x[:, :0], x], {"axis": 1}, name="with_empty"),
            Example([x, x], {"axis": 0}, name="edge_values")]


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=0.0)
def fuzz(c: Ctx) -> Plan | None:
    a = c.take("float", 0, lambda v: v.rank >= 1)
    if a is None:
        return None
    axis = c.pick(a.rank)
    ins = [a]
    for slot in range(1, 1 + c.pick(3)):
        fits = lambda v: v.rank == a.rank and all(d == e for i, (d, e) in enumerate(zip(v.shape, a.shape)) if i != axis)  # noqa: E731
        b = c.take("float", slot, fits)
        if b is None or c.pick(4) == 3:
            shape = list(a.shape)
            shape[axis] = 1 + c.pick(3)
            b = c.const(c.floats(tuple(shape)))
        ins.append(b)
    if sum(v.size for v in ins) > MAX_ELEMENTS or all(v.const for v in ins):
        return None
    return Plan(ins, {"axis": axis - a.rank if c.pick(2) else axis})
