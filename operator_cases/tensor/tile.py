"""Tile (ONNX spec: Tile-1, 6, 13).

- Tile-1: "Repeat the elements of a tensor along an axis." Inputs ``input``, ``tiles`` ("Number
  of repeated copies to make of the input tensor") and ``axis`` ("Axis along which to repeat"),
  all three of type T (float16/float/double: the schema's T1 = int64 constraint is not used by
  any input). We read it as ``tiles`` whole copies of the input concatenated along ``axis``
  (output_dim[axis] = input_dim[axis] * tiles, the Caffe2 Tile op it came from); ``tiles`` and
  ``axis`` hold one non-negative integer value each (the spec gives no shape: scalars and
  1-element vectors are drawn), axis in [0, rank-1].
- Tile-6: "Constructs a tensor by tiling a given tensor. This is the same as function `tile` in
  Numpy, but no broadcast." ``repeats`` is a 1-D int64 tensor "of the same length as input's
  dimension number"; output_dim[i] = input_dim[i] * repeats[i]. All tensor types.
- Tile-13 adds bfloat16 (types only).

A ``repeats`` of the wrong length, negative repeats, or a non-integral / out-of-range Tile-1
``tiles``/``axis`` raise ValueError.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import MAX_ELEMENTS, NAN_IEEE, Ctx, Plan, size_of
from harness.registry import Example, Operator

op = Operator("Tile")
st = S.st
VERSIONS = (6, 13)
MAX_OUT = 256


def _tile(x, reps):
    x = np.asarray(x)
    if len(reps) != x.ndim:
        raise ValueError(f"Tile: {len(reps)} repeats for an input of rank {x.ndim}")
    if any(r < 0 for r in reps):
        raise ValueError(f"Tile: negative repeats {reps}")
    return np.tile(x, tuple(reps)).reshape(tuple(d * r for d, r in zip(x.shape, reps))).copy()


def _integral(v, what: str) -> int:
    v = np.asarray(v)
    if v.size != 1:
        raise ValueError(f"Tile-1: {what} must hold one value, got shape {v.shape}")
    f = float(v.reshape(-1)[0])
    if not np.isfinite(f) or f != int(f):
        raise ValueError(f"Tile-1: {what} = {f} is not an integer")
    return int(f)


@op.reference(1)
def tile_1(x, tiles, axis):
    x = np.asarray(x)
    tiles, axis = _integral(tiles, "tiles"), _integral(axis, "axis")
    if not 0 <= axis < x.ndim:
        raise ValueError(f"Tile-1: axis {axis} outside [0, {x.ndim - 1}]")
    reps = [1] * x.ndim
    reps[axis] = tiles
    return _tile(x, reps)


@op.reference(*VERSIONS)
def tile_6(x, repeats):
    repeats = np.asarray(repeats)
    if repeats.ndim != 1:
        raise ValueError(f"Tile: repeats must be 1-D, got rank {repeats.ndim}")
    return _tile(x, [int(r) for r in repeats])


def _draw_x(d, dtype, min_dims):
    return S.arrays(d, dtype, min_dims=min_dims, max_dims=3, max_side=4,
                    min_side=0 if d(st.integers(0, 7)) == 0 else 1)


@op.strategy(1)
def draw_1(d, dtype, opset):
    x = _draw_x(d, dtype, 1)
    axis = d(st.integers(0, x.ndim - 1))
    room = MAX_OUT // max(1, x.size)
    tiles = d(st.integers(0 if d(st.integers(0, 7)) == 0 else 1, max(1, min(4, room))))
    # the spec gives no shape for tiles/axis: a scalar, or a 1-element vector as in Caffe2
    shape = d(st.sampled_from([(), (1,)]))
    return Example([x] + [np.full(shape, v, dtype=S.np_dtype(dtype)) for v in (tiles, axis)])


@op.strategy(*VERSIONS)
def draw_6(d, dtype, opset):
    x = _draw_x(d, dtype, 0 if d(st.integers(0, 9)) == 0 else 1)
    reps, size = [], max(1, x.size)
    for _ in range(x.ndim):
        hi = max(1, min(3, MAX_OUT // size))
        r = d(st.integers(0 if d(st.integers(0, 7)) == 0 else 1, hi))
        reps.append(r)
        size *= max(1, r)
    return Example([x, np.array(reps, dtype=np.int64)])


def _fill(dtype, shape):
    return np.resize(S.edge_values(dtype), shape)


@op.edges(1)
def edges_1(dtype, opset):
    t = lambda v: np.array(S.np_dtype(dtype).type(v))  # noqa: E731
    x = _fill(dtype, (2, 3))
    return [
        Example([x, t(2), t(0)], name="axis_0"),                          # (4, 3)
        Example([x, t(3), t(1)], name="axis_1"),                          # (2, 9)
        Example([x, t(0), t(1)], name="tiles_zero"),                      # (2, 0)
        Example([S.edge_values(dtype), t(2), t(0)], name="edge_values"),
        Example([_fill(dtype, (0, 2)), t(3), t(1)], name="empty"),        # (0, 6)
    ]


@op.edges(*VERSIONS)
def edges_6(dtype, opset):
    i = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    x = _fill(dtype, (2, 3))
    return [
        Example([x, i(1, 2)], name="spec_example"),                       # (2, 6)
        Example([x, i(2, 1)], name="rows"),
        Example([S.edge_values(dtype), i(3)], name="edge_values"),
        Example([x, i(0, 2)], name="repeats_zero"),                       # (0, 6)
        Example([x, i(1, 1)], name="repeats_one"),
        Example([_fill(dtype, (0, 2)), i(3, 2)], name="empty"),           # (0, 4)
        Example([_fill(dtype, ()), np.zeros((0,), np.int64)], name="scalar"),
        Example([_fill(dtype, (1, 2, 1)), i(2, 1, 3)], name="rank3"),
    ]


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=0.0)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0, lambda v: v.rank >= 1)
    if x is None:
        return None
    reps = [1 + (c.pick(3) if c.pick(2) else 0) for _ in x.shape]
    if size_of(tuple(d * r for d, r in zip(x.shape, reps))) > MAX_ELEMENTS:
        return None
    return Plan([x, c.ints(reps)])
