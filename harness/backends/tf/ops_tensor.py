"""Shape, layout and data movement: Reshape, Transpose, Concat, Squeeze, Unsqueeze, Flatten,
Shape, Size, Gather, Slice, Expand, Tile, Pad, Split, Cast, Constant, ConstantOfShape, Range,
Identity.

Inputs that give shapes, axes or counts are used as tensors where TensorFlow's ops take them
(Reshape, Expand, Tile, ConstantOfShape, Split, the reductions' axes), so graph mode traces them
as data; Slice's bounds and TopK's k must be known when the graph is traced (an initializer, a
Constant, or any input in eager mode): a graph input there is ``unsupported`` in graph and XLA
mode, said so."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from ..base import Unsupported
from .executor import tf_dtype
from .registry import lowers


def static(node, t, what: str) -> np.ndarray:
    """The value of ``t`` at trace time (eager tensors always have one)."""
    value = tf.get_static_value(t)
    if value is None:
        raise Unsupported(f"{node}: {what} is data-dependent (a graph input); graph and XLA mode need it when tracing")
    return np.asarray(value)


def axes_of(axes, rank: int) -> list[int]:
    out = [int(a) + rank if int(a) < 0 else int(a) for a in np.ravel(axes)]
    if any(not 0 <= a < rank for a in out):
        raise ValueError(f"axes {list(np.ravel(axes))} out of range for rank {rank}")
    return out


@lowers("Identity", 1, 13, 14, 16, 19, 21, 23, 24, 25)
def identity(node, x):
    return tf.identity(x)


@lowers("Reshape", 5, 13, 14, 19, 21, 23, 24, 25)
def reshape(node, x, shape, *, allowzero=0):
    shape = tf.cast(shape, tf.int64)
    if not allowzero:  # 0 copies the input's dimension at that position
        have = tf.shape(x, out_type=tf.int64)
        have = tf.concat([have, tf.ones(tf.maximum(tf.size(shape, out_type=tf.int64) - tf.size(have, out_type=tf.int64), 0), tf.int64)], 0)
        shape = tf.where(tf.equal(shape, 0), have[:tf.size(shape)], shape)
    return tf.reshape(x, shape)


@lowers("Transpose", 1, 13, 21, 23, 24, 25)
def transpose(node, x, *, perm=None):
    return tf.transpose(x, perm=perm if perm is not None else list(reversed(range(x.shape.rank))))


@lowers("Concat", 4, 11, 13)
def concat(node, *xs, axis):
    return tf.concat(list(xs), axis=axis)


@lowers("Squeeze", 13, 21, 23, 24, 25)
def squeeze(node, x, axes=None):
    if axes is None:
        return tf.squeeze(x)
    return tf.squeeze(x, axis=axes_of(static(node, axes, "axes"), x.shape.rank))


@lowers("Squeeze", 1, 11)
def squeeze_attr(node, x, *, axes=None):
    return tf.squeeze(x) if axes is None else tf.squeeze(x, axis=axes_of(axes, x.shape.rank))


def _unsqueeze(x, axes):
    rank = x.shape.rank + len(np.ravel(axes))
    out = x
    for a in sorted(axes_of(axes, rank)):
        out = tf.expand_dims(out, a)
    return out


@lowers("Unsqueeze", 13, 21, 23, 24, 25)
def unsqueeze(node, x, axes):
    return _unsqueeze(x, static(node, axes, "axes"))


@lowers("Unsqueeze", 1, 11)
def unsqueeze_attr(node, x, *, axes):
    return _unsqueeze(x, axes)


@lowers("Flatten", 1, 9, 11, 13, 21, 23, 24, 25)
def flatten(node, x, *, axis=1):
    shape = x.shape.as_list()
    a = axis + len(shape) if axis < 0 else axis
    return tf.reshape(x, [int(np.prod(shape[:a], dtype=np.int64)), int(np.prod(shape[a:], dtype=np.int64))])


@lowers("Shape", 1, 13, 15, 19, 21, 23, 24, 25)
def shape(node, x, *, start=0, end=None):
    dims = tf.shape(x, out_type=tf.int64)
    rank = x.shape.rank
    s = max(0, min(rank, start + rank if start < 0 else start))
    e = rank if end is None else max(0, min(rank, end + rank if end < 0 else end))
    return dims[s:e]


@lowers("Size", 1, 13, 19, 21, 23, 24, 25)
def size(node, x):
    return tf.size(x, out_type=tf.int64)


@lowers("Gather", 1, 11, 13)
def gather(node, x, indices, *, axis=0):
    a = axis + x.shape.rank if axis < 0 else axis
    n = tf.cast(tf.shape(x)[a], indices.dtype)
    return tf.gather(x, tf.where(indices < 0, indices + n, indices), axis=a)


@lowers("Slice", 10, 11, 13)
def slice_(node, x, starts, ends, axes=None, steps=None):
    rank, dims = x.shape.rank, x.shape.as_list()
    starts, ends = static(node, starts, "starts"), static(node, ends, "ends")
    axes = axes_of(static(node, axes, "axes"), rank) if axes is not None else list(range(len(starts)))
    steps = static(node, steps, "steps") if steps is not None else np.ones(len(starts), np.int64)
    index = [slice(None)] * rank
    for a, s, e, st in zip(axes, starts, ends, steps):
        n, s, e, st = dims[a], int(s), int(e), int(st)
        if st == 0:
            raise ValueError("Slice: a step of 0")
        s, e = (s + n if s < 0 else s), (e + n if e < 0 else e)
        if st > 0:  # the spec's clamping: into [0, n] going forward
            index[a] = slice(min(max(s, 0), n), min(max(e, 0), n), st)
        else:  # into [-1, n - 1] going backward, where -1 is "before the first element"
            s, e = min(max(s, -1), n - 1), min(max(e, -1), n - 1)
            index[a] = slice(0, 0) if s < 0 else slice(s, None if e < 0 else e, st)
    return x[tuple(index)]


@lowers("Expand", 8, 13)
def expand(node, x, shape):
    return tf.broadcast_to(x, tf.broadcast_dynamic_shape(tf.shape(x, out_type=tf.int64), tf.cast(shape, tf.int64)))


@lowers("Tile", 6, 13)
def tile(node, x, repeats):
    return tf.tile(x, tf.cast(repeats, tf.int64))


@lowers("Pad", 11, 13, 18, 19, 21, 23, 24, 25)
def pad(node, x, pads, constant_value=None, axes=None, *, mode="constant"):
    rank = x.shape.rank
    if mode not in ("constant", "reflect"):
        raise Unsupported(f"{node}: mode {mode!r} has no lowering yet")
    given = tf.get_static_value(pads)
    if given is None:  # a graph input in graph mode: begins then ends, as TensorFlow's [rank, 2]
        if axes is not None:
            raise Unsupported(f"{node}: pads and axes both data-dependent")
        widths = tf.transpose(tf.reshape(tf.cast(pads, tf.int64), [2, rank]))
    else:
        p = [int(v) for v in np.ravel(given)]
        on = axes_of(static(node, axes, "axes"), rank) if axes is not None else list(range(rank))
        widths = [[0, 0] for _ in range(rank)]
        for k, a in enumerate(on):
            widths[a] = [p[k], p[k + len(on)]]
        if any(w < 0 for pair in widths for w in pair):
            raise Unsupported(f"{node}: negative pads (cropping)")
    if mode == "reflect":
        return tf.pad(x, widths, mode="REFLECT")
    value = tf.zeros([], x.dtype) if constant_value is None else tf.reshape(constant_value, [])
    return tf.pad(x, widths, constant_values=value)


@lowers("Split", 13, 18)
def split(node, x, split=None, *, axis=0, num_outputs=None):
    a = axis + x.shape.rank if axis < 0 else axis
    n = x.shape[a]
    if split is not None:
        return tuple(tf.split(x, tf.cast(split, tf.int64), axis=a, num=len(node.outputs)))
    else:
        parts = num_outputs or len(node.outputs)
        chunk = -(-n // parts)  # the last part may be smaller (Split-18)
        sizes = [min(chunk, n - chunk * k) for k in range(parts)]
    return tuple(tf.split(x, sizes, axis=a))


@lowers("Cast", 6, 9, 13, 19, 21, 23, 24, 25, 28)
def cast(node, x, *, to, saturate=1, round_mode="up"):
    target = tf_dtype(to)
    if x.dtype == tf.string or target == tf.string:
        raise Unsupported(f"{node}: casts from or to strings")
    return tf.cast(x, target)


@lowers("Constant", 13, 19, 21, 23, 24, 25)
def constant(node, **attrs):
    if "value" in attrs:
        return attrs["value"]
    for name, dtype in (("value_float", tf.float32), ("value_int", tf.int64)):
        if name in attrs:
            return tf.constant(attrs[name], dtype=dtype)
    for name, dtype in (("value_floats", tf.float32), ("value_ints", tf.int64)):
        if name in attrs:
            return tf.constant(attrs[name], dtype=dtype)
    raise Unsupported(f"{node}: attributes {sorted(attrs)}")


@lowers("ConstantOfShape", 9, 20, 21, 23, 24, 25)
def constant_of_shape(node, shape, *, value=None):
    fill = tf.reshape(value, []) if value is not None else tf.constant(0.0, tf.float32)
    return tf.fill(tf.cast(shape, tf.int64), fill)


@lowers("Range", 11)
def range_(node, start, limit, delta):
    return tf.range(start, limit, delta, dtype=start.dtype)


@lowers("CastLike", 15, 19, 21, 23, 24, 25)
def cast_like(node, x, like, *, saturate=1, round_mode="up"):
    if x.dtype == tf.string or like.dtype == tf.string:
        raise Unsupported(f"{node}: casts from or to strings")
    return tf.cast(x, like.dtype)


@lowers("GatherElements", 11, 13)
def gather_elements(node, x, indices, *, axis=0):
    a = axis + x.shape.rank if axis < 0 else axis
    n = tf.cast(tf.shape(x)[a], indices.dtype)
    return tf.experimental.numpy.take_along_axis(x, tf.where(indices < 0, indices + n, indices), axis=a)


@lowers("Trilu", 14)
def trilu(node, x, k=None, *, upper=1):
    kk = tf.reshape(tf.cast(k, tf.int64), []) if k is not None else tf.constant(0, tf.int64)
    rows, cols = tf.shape(x, out_type=tf.int64)[-2], tf.shape(x, out_type=tf.int64)[-1]
    diff = tf.range(cols)[None, :] - tf.range(rows)[:, None]  # j - i
    keep = diff >= kk if upper else diff <= kk
    return tf.where(keep, x, tf.zeros_like(x))


def _cumulate(node, x, axis, exclusive, reverse, fn):
    return fn(x, axis=tf.reshape(axis, []), exclusive=bool(exclusive), reverse=bool(reverse))


@lowers("CumSum", 11, 14)
def cum_sum(node, x, axis, *, exclusive=0, reverse=0):
    return _cumulate(node, x, axis, exclusive, reverse, tf.math.cumsum)


@lowers("CumProd", 26)
def cum_prod(node, x, axis, *, exclusive=0, reverse=0):
    return _cumulate(node, x, axis, exclusive, reverse, tf.math.cumprod)


@lowers("TopK", 10, 11, 24)
def top_k(node, x, k, *, axis=-1, largest=1, sorted=1):  # noqa: A002 - spec name
    kk = int(static(node, k, "k").ravel()[0])
    a = axis + x.shape.rank if axis < 0 else axis
    perm = list(range(x.shape.rank))
    perm[a], perm[-1] = perm[-1], perm[a]
    moved = tf.transpose(x, perm)
    # tf.math.top_k keeps the lower index first among equal values, as the spec asks
    values, indices = tf.math.top_k(moved if largest else -moved, k=kk, sorted=True)
    values = values if largest else -values
    return tf.transpose(values, perm), tf.cast(tf.transpose(indices, perm), tf.int64)


@lowers("OneHot", 9, 11, 28)
def one_hot(node, indices, depth, values, *, axis=-1):
    d = int(static(node, depth, "depth").ravel()[0])
    idx = tf.cast(indices, tf.int64)
    idx = tf.where(idx < 0, idx + d, idx)
    a = axis + indices.shape.rank + 1 if axis < 0 else axis
    return tf.one_hot(idx, d, on_value=values[1], off_value=values[0], axis=a, dtype=values.dtype)
