"""Expand (ONNX spec: Expand-8, 13).

"Broadcast the input tensor following the given shape and the broadcast rule. The broadcast rule
is similar to numpy.array(input) * numpy.ones(shape): Dimensions are right alignment; Two
corresponding dimensions must have the same value, or one of them is equal to 1." Unlike
numpy.broadcast_to the broadcast is bidirectional: "It is possible that the output.shape is not
equal to shape, when some dimensions in shape is equal to 1, or the shape.ndim <
input.shape.ndim." So a 1 in ``shape`` keeps the input's dim, and a shorter ``shape`` keeps the
input's leading dims.

- Expand-8: ``shape`` is a 1-D int64 input.
- Expand-13 adds bfloat16 (types only).

A shape that does not broadcast with the input's, or a negative entry, raises ValueError.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import MAX_ELEMENTS, NAN_IEEE, Ctx, Plan, broadcast_shape, size_of
from harness.registry import Example, Operator

op = Operator("Expand")
st = S.st
VERSIONS = (8, 13)
MAX_OUT = 256


def _out_shape(in_shape, shape) -> tuple[int, ...]:
    rank = max(len(in_shape), len(shape))
    a = (1,) * (rank - len(in_shape)) + tuple(in_shape)
    b = (1,) * (rank - len(shape)) + tuple(shape)
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            raise ValueError(f"Expand: {tuple(in_shape)} and {tuple(shape)} do not broadcast")
        out.append(x if y == 1 else y)
    return tuple(out)


@op.reference(*VERSIONS)
def expand(x, shape):
    x = np.asarray(x)
    shape = np.asarray(shape)
    if shape.ndim != 1:
        raise ValueError(f"Expand: shape must be 1-D, got rank {shape.ndim}")
    dims = [int(v) for v in shape]
    if any(v < 0 for v in dims):
        raise ValueError(f"Expand: negative dimension in {dims}")
    out = _out_shape(x.shape, dims)
    return np.broadcast_to(x.reshape((1,) * (len(out) - x.ndim) + x.shape), out).copy()


def _draw_shape(d, in_shape) -> list[int]:
    """A target shape that broadcasts with ``in_shape`` in both directions."""
    dims = []
    for v in in_shape:
        k = d(st.integers(0, 3))
        if k == 0:
            dims.append(1)                                   # keeps the input's dim
        elif v == 1 and k == 1:
            dims.append(d(st.integers(0 if d(st.integers(0, 7)) == 0 else 2, 4)))  # grows it (or empties it)
        else:
            dims.append(v)
    mode = d(st.integers(0, 3))
    if mode == 1:
        dims = [d(st.integers(1, 3)) for _ in range(d(st.integers(1, 2)))] + dims   # more dims than the input
    elif mode == 2 and dims:
        dims = dims[d(st.integers(1, len(dims))):]                                 # fewer dims than the input
    return dims


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    shape = list(S.shapes(d, min_dims=0, max_dims=3, max_side=4, min_side=0 if d(st.integers(0, 7)) == 0 else 1))
    for i in range(len(shape)):  # size-1 dims are where the input grows
        if d(st.booleans()):
            shape[i] = 1
    x = S.arrays(d, dtype, shape=tuple(shape))
    dims = _draw_shape(d, x.shape)
    out = _out_shape(x.shape, dims)
    while int(np.prod(out)) > MAX_OUT:
        dims = dims[1:]
        out = _out_shape(x.shape, dims)
    return Example([x, np.array(dims, dtype=np.int64)])


def _fill(dtype, shape):
    return np.resize(S.edge_values(dtype), shape)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    i = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    return [
        Example([S.edge_values(dtype).reshape(-1, 1), i(2, 1, 3)], name="edge_values"),   # (2, n, 3)
        Example([_fill(dtype, (2, 3, 4)), i(4)], name="fewer_dims"),                       # (2, 3, 4)
        Example([_fill(dtype, (2, 1, 4)), i(3, 1)], name="fewer_dims_grow"),               # (2, 3, 4)
        Example([_fill(dtype, (3, 1)), i(1, 1, 4)], name="ones_keep_input_dims"),          # (1, 3, 4)
        Example([_fill(dtype, ()), i(2, 3)], name="scalar_input"),
        Example([_fill(dtype, (2, 3)), np.zeros((0,), np.int64)], name="empty_shape"),     # unchanged
        Example([_fill(dtype, (1, 3)), i(0, 3)], name="to_empty"),                         # (0, 3)
        Example([_fill(dtype, (0, 1)), i(1, 4)], name="empty_input"),                      # (0, 4)
        Example([_fill(dtype, (1, 1)), i(1, 1)], name="all_ones"),
    ]


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=0.0)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0, lambda v: v.rank <= 3)
    if x is None:
        return None
    shape = [d if d != 1 or not c.pick(2) else 1 + c.pick(4) for d in x.shape]
    if c.pick(2):
        shape = [1 + c.pick(3)] + shape
    if c.pick(4) == 0 and shape:  # a 1 in the target shape keeps the input's dim (bidirectional broadcast)
        shape[c.pick(len(shape))] = 1
    out = broadcast_shape(x.shape, tuple(shape))
    if out is None or size_of(out) > MAX_ELEMENTS:
        return None
    return Plan([x, c.ints(shape)])
