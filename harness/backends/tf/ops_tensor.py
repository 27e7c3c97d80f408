"""Shape, layout and data movement: Reshape, Transpose, Concat, Squeeze, Unsqueeze, Flatten,
Shape, Size, Gather, Slice, Expand, Tile, Pad, Split, Constant, ConstantOfShape, Range,
Identity.

Inputs that give shapes, axes, bounds or counts are used as tensors (Reshape, Expand, Tile,
ConstantOfShape, Split, the reductions' axes, Slice, Pad, Squeeze/Unsqueeze, TopK, OneHot): a value
known when the graph is traced takes the static path, a graph input is computed with TensorFlow
ops on the traced shapes (``per_axis``), so graph mode runs it as data. XLA compiles only shapes
it can infer; a data-dependent one is its "must be a compile-time constant", unsupported there."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from ..base import Unsupported
from .lowering import tf_dtype
from .registry import lowers


def static(node, t, what: str) -> np.ndarray:
    """The value of ``t`` at trace time (eager tensors always have one)."""
    value = tf.get_static_value(t)
    if value is None:
        raise Unsupported(f"{node}: {what} is data-dependent (a graph input); graph and XLA mode need it when tracing")
    return np.asarray(value)


def per_axis(values, axes, rank: int, default) -> list:
    """One int64 scalar tensor per axis of a rank-``rank`` tensor: ``values[k]`` on axis
    ``axes[k]`` (negative axes counted from the back; all axes in order when ``axes`` is None),
    ``default`` (a scalar tensor or a function of the axis) elsewhere. Works on traced values."""
    values = tf.reshape(tf.cast(values, tf.int64), [-1])
    if axes is None:
        axes = tf.range(tf.size(values, out_type=tf.int64), dtype=tf.int64)
    axes = tf.reshape(tf.cast(axes, tf.int64), [-1])
    axes = tf.where(axes < 0, axes + rank, axes)
    out = []
    for d in range(rank):
        hit = tf.equal(axes, d)
        fallback = default(d) if callable(default) else default
        out.append(tf.where(tf.reduce_any(hit), tf.reduce_sum(tf.where(hit, values, tf.zeros_like(values))), fallback))
    return out


def axes_of(axes, rank: int) -> list[int]:
    out = [int(a) + rank if int(a) < 0 else int(a) for a in np.ravel(axes)]
    if any(not 0 <= a < rank for a in out):
        raise ValueError(f"axes {list(np.ravel(axes))} out of range for rank {rank}")
    return out


@lowers("Identity", 1, 13, 14, 16, 19, 21, 23, 24, 25)
def identity(node, x=None):
    return x if x is None or isinstance(x, list) else tf.identity(x)  # an optional or a sequence as it is


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
    given = tf.get_static_value(axes)
    if given is not None:
        return tf.squeeze(x, axis=axes_of(given, x.shape.rank))
    rank, count = x.shape.rank, axes.shape.num_elements()
    drop = per_axis(tf.ones_like(axes, tf.int64), axes, rank, tf.constant(0, tf.int64))
    keep = tf.equal(tf.stack(drop), 0)
    out = tf.reshape(x, tf.boolean_mask(tf.shape(x, out_type=tf.int64), keep))
    out.set_shape([None] * (rank - count))
    return out


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
    given = tf.get_static_value(axes)
    if given is not None:
        return _unsqueeze(x, given)
    rank = x.shape.rank + axes.shape.num_elements()
    new = tf.equal(tf.stack(per_axis(tf.ones_like(axes, tf.int64), axes, rank, tf.constant(0, tf.int64))), 1)
    source = tf.maximum(tf.cumsum(tf.cast(tf.logical_not(new), tf.int64)) - 1, 0)  # the input dim each kept one copies
    dims = tf.concat([tf.shape(x, out_type=tf.int64), tf.ones([1], tf.int64)], 0)  # a rank-0 input has none
    return tf.reshape(x, tf.where(new, tf.ones([rank], tf.int64), tf.gather(dims, source)))


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
    if rank is None:  # known only when it runs (a tf.cond's branches of different ranks)
        n = tf.size(dims, out_type=tf.int64)
        clamp = lambda v: tf.clip_by_value(v + n if v < 0 else tf.constant(v, tf.int64), 0, n)  # noqa: E731
        return dims[clamp(start):(n if end is None else clamp(end))]
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
    if any(v is not None and tf.get_static_value(v) is None for v in (starts, ends, axes, steps)) or None in x.shape.as_list():
        return _slice_traced(x, starts, ends, axes, steps)  # bounds or lengths known only when it runs
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


def _slice_traced(x, starts, ends, axes, steps):
    """Slice with bounds known only when the graph runs: per axis, the spec's clamped range of
    indices (tf.range stops before ``end``, so -1 going backward is "before the first element")
    gathered."""
    rank = x.shape.rank
    dims = tf.shape(x, out_type=tf.int64)
    one = tf.constant(1, tf.int64)
    steps = tf.ones_like(tf.cast(starts, tf.int64)) if steps is None else steps
    s_all = per_axis(starts, axes, rank, tf.constant(0, tf.int64))
    e_all = per_axis(ends, axes, rank, lambda d: dims[d])
    t_all = per_axis(steps, axes, rank, one)
    out = x
    for d in range(rank):
        n, s, e, t = dims[d], s_all[d], e_all[d], t_all[d]
        tf.debugging.assert_none_equal(t, tf.constant(0, tf.int64), message="Slice: a step of 0")
        s, e = tf.where(s < 0, s + n, s), tf.where(e < 0, e + n, e)
        lo, hi = tf.where(t > 0, tf.constant(0, tf.int64), -one), tf.where(t > 0, n, n - 1)
        s, e = tf.clip_by_value(s, lo, hi), tf.clip_by_value(e, lo, hi)
        out = tf.gather(out, tf.range(s, e, t), axis=d)
    return out


@lowers("Expand", 8, 13)
def expand(node, x, shape):
    return tf.broadcast_to(x, tf.broadcast_dynamic_shape(tf.shape(x, out_type=tf.int64), tf.cast(shape, tf.int64)))


@lowers("Tile", 6, 13)
def tile(node, x, repeats):
    return tf.tile(x, tf.cast(repeats, tf.int64))


@lowers("Pad", 11, 13, 18, 19, 21, 23, 24, 25)
def pad(node, x, pads, constant_value=None, axes=None, *, mode="constant"):
    """Pads given as values or graph inputs alike: begins and ends per axis as int64 tensors
    (``per_axis``), a negative one crops (the spec's pads are 'number of pad values', numpy's
    negative counts remove); constant mode through tf.pad, the others as a gather of the
    index each output element copies (edge clamps, reflect mirrors on the end values, wrap
    takes the index modulo the length)."""
    rank = x.shape.rank
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise Unsupported(f"{node}: mode {mode!r}")
    count = tf.size(pads, out_type=tf.int64) // 2
    flat = tf.reshape(tf.cast(pads, tf.int64), [-1])
    zero = tf.constant(0, tf.int64)
    begins, ends = per_axis(flat[:count], axes, rank, zero), per_axis(flat[count:], axes, rank, zero)
    dims = tf.shape(x, out_type=tf.int64)
    out = x
    if mode == "constant":
        widths = tf.stack([tf.stack([tf.maximum(b, 0), tf.maximum(e, 0)]) for b, e in zip(begins, ends)]) if rank else tf.zeros([0, 2], tf.int64)
        value = tf.zeros([], x.dtype) if constant_value is None else tf.reshape(constant_value, [])
        out = tf.pad(x, widths, constant_values=value)
        padded = tf.shape(out, out_type=tf.int64)
        for d, (b, e) in enumerate(zip(begins, ends)):  # negative pads crop
            cut_b, cut_e = tf.maximum(-b, 0), tf.maximum(-e, 0)
            out = tf.gather(out, tf.range(cut_b, padded[d] - cut_e), axis=d)
        return out
    for d, (b, e) in enumerate(zip(begins, ends)):
        n = dims[d]
        i = tf.range(-b, n + e)
        if mode == "edge":
            i = tf.clip_by_value(i, 0, n - 1)
        elif mode == "wrap":
            i = tf.math.floormod(i, n)
        else:  # reflect: period 2(n - 1), the end values not repeated
            period = tf.maximum(2 * (n - 1), 1)
            i = tf.math.floormod(i, period)
            i = tf.where(i >= n, period - i, i)
        out = tf.gather(out, i, axis=d)
    return out


@lowers("Split", 13, 18)
def split(node, x, split=None, *, axis=0, num_outputs=None):
    a = axis + x.shape.rank if axis < 0 else axis
    n = x.shape[a]
    if split is not None:
        return tuple(tf.split(x, tf.cast(split, tf.int64), axis=a, num=len(node.outputs)))
    else:
        parts = num_outputs or len(node.outputs)
        if n is None:  # a length known only when it runs
            n = tf.shape(x, out_type=tf.int64)[a]
            chunk = (n + parts - 1) // parts
            sizes = tf.stack([tf.maximum(tf.minimum(chunk, n - chunk * k), 0) for k in range(parts)])
            return tuple(tf.split(x, sizes, axis=a, num=parts))
        chunk = -(-n // parts)  # the last part may be smaller (Split-18)
        sizes = [min(chunk, n - chunk * k) for k in range(parts)]
    return tuple(tf.split(x, sizes, axis=a))


@lowers("Constant", 1, 9, 11, 12, 13, 19, 21, 23, 24, 25)
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


@lowers("Range", 11, 27)
def range_(node, start, limit, delta, *, stash_type=1):
    """``output[i] = start + (i * delta)`` for i below max(ceil((limit - start) / delta), 0): each
    element computed from ``start``, not by successive additions (as tf.range's float kernel
    would); -27's stash_type 1 works on float16/bfloat16 in float32 and casts back."""
    if start.dtype.is_integer:
        # scalars as they are (a Reshape would hide their value from tf.get_static_value)
        return tf.range(*(v if v.shape.rank == 0 else tf.reshape(v, []) for v in (start, limit, delta)), dtype=start.dtype)
    work = tf.float32 if node.since >= 27 and stash_type == 1 and start.dtype in (tf.float16, tf.bfloat16) else start.dtype
    s, l, d = (tf.cast(tf.reshape(v, []), work) for v in (start, limit, delta))
    n = tf.cast(tf.maximum(tf.math.ceil((l - s) / d), 0), tf.int64)
    return tf.cast(s + tf.cast(tf.range(n), work) * d, start.dtype)


def _blocks(x, b, order, split_depth):
    """DepthToSpace (``split_depth``) / SpaceToDepth by the spec's reshape-transpose-reshape;
    ``order`` DCR puts the block offsets outside the channel, CRD inside."""
    n, c, h, w = tf.unstack(tf.shape(x, out_type=tf.int64))
    if split_depth:
        if order == "DCR":
            t = tf.transpose(tf.reshape(x, tf.stack([n, b, b, c // (b * b), h, w])), [0, 3, 4, 1, 5, 2])
        else:
            t = tf.transpose(tf.reshape(x, tf.stack([n, c // (b * b), b, b, h, w])), [0, 1, 4, 2, 5, 3])
        return tf.reshape(t, tf.stack([n, c // (b * b), h * b, w * b]))
    t = tf.reshape(x, tf.stack([n, c, h // b, b, w // b, b]))
    t = tf.transpose(t, [0, 3, 5, 1, 2, 4] if order == "DCR" else [0, 1, 3, 5, 2, 4])
    return tf.reshape(t, tf.stack([n, c * b * b, h // b, w // b]))


@lowers("DepthToSpace", 1, 11, 13, 28)
def depth_to_space(node, x, *, blocksize, mode="DCR"):
    return _blocks(x, blocksize, mode, True)


@lowers("SpaceToDepth", 1, 13, 28)
def space_to_depth(node, x, *, blocksize, mode="DCR"):
    return _blocks(x, blocksize, mode, False)


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
    kk = tf.reshape(tf.cast(k, tf.int32), [])
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
    # "the number of classes": a float depth is taken as its integer part
    d = tf.cast(tf.reshape(depth, []), tf.int64) if depth.dtype.is_integer else tf.cast(tf.math.floor(tf.reshape(depth, [])), tf.int64)
    idx = tf.cast(indices, tf.int64)
    idx = tf.where(idx < 0, idx + d, idx)
    a = axis + indices.shape.rank + 1 if axis < 0 else axis
    return tf.one_hot(idx, tf.cast(d, tf.int32), on_value=values[1], off_value=values[0], axis=a, dtype=values.dtype)


# -- scatter, gather, selection ------------------------------------------------------------------
_SCATTER = {"none": tf.tensor_scatter_nd_update, "add": tf.tensor_scatter_nd_add,
            "max": tf.tensor_scatter_nd_max, "min": tf.tensor_scatter_nd_min}


def _scatter_nd(node, data, indices, updates, reduction):
    if reduction in ("max", "min", "mul") and data.dtype == tf.bool:
        raise Unsupported(f"{node}: reduction {reduction!r} on booleans")
    k = indices.shape[-1]
    shape = tf.shape(data, out_type=indices.dtype)
    wrapped = tf.where(indices < 0, indices + shape[:k], indices)  # "Index values are allowed to be negative"
    if reduction != "mul":
        return _SCATTER[reduction](data, wrapped, updates)
    # TensorFlow has no multiplying scatter: the product of each slot's updates (1 where none)
    # by unsorted_segment_prod over the slots' linear index, then one multiplication
    strides = tf.math.cumprod(shape[:k], exclusive=True, reverse=True)
    linear = tf.reshape(tf.reduce_sum(wrapped * strides, axis=-1), [-1])
    slots = tf.reduce_prod(shape[:k])
    rows = tf.reshape(updates, tf.concat([[-1], shape[k:]], 0))
    factors = tf.math.unsorted_segment_prod(rows, linear, slots)
    return data * tf.reshape(factors, shape)


@lowers("ScatterND", 11, 13, 16, 18)
def scatter_nd(node, data, indices, updates, *, reduction="none"):
    return _scatter_nd(node, data, tf.cast(indices, tf.int64), updates, reduction)


@lowers("Scatter", 9, 11)  # ScatterElements before it was renamed
@lowers("ScatterElements", 11, 13, 16, 18)
def scatter_elements(node, data, indices, updates, *, axis=0, reduction="none"):
    """Every update's full coordinates (its own position, with ``indices`` on ``axis``), then a
    ScatterND of single elements."""
    rank = data.shape.rank
    a = axis + rank if axis < 0 else axis
    idx = tf.cast(indices, tf.int64)
    n = tf.shape(data, out_type=tf.int64)[a]
    idx = tf.where(idx < 0, idx + n, idx)
    grids = tf.meshgrid(*[tf.range(tf.shape(idx, out_type=tf.int64)[d]) for d in range(rank)], indexing="ij")
    grids[a] = idx
    return _scatter_nd(node, data, tf.stack(grids, axis=-1), updates, reduction)


@lowers("GatherND", 11, 12, 13)
def gather_nd(node, data, indices, *, batch_dims=0):
    idx = tf.cast(indices, tf.int64)
    k = indices.shape[-1]
    dims = tf.shape(data, out_type=tf.int64)[batch_dims:batch_dims + k]
    return tf.gather_nd(data, tf.where(idx < 0, idx + dims, idx), batch_dims=batch_dims)


@lowers("Compress", 9, 11, 28)
def compress(node, x, condition, *, axis=None):
    """numpy.compress: slices past the condition's length are dropped; no axis flattens first."""
    if axis is None:
        x, a = tf.reshape(x, [-1]), 0
    else:
        a = axis + x.shape.rank if axis < 0 else axis
    n = tf.size(condition)
    kept = tf.gather(x, tf.range(tf.minimum(n, tf.shape(x)[a])), axis=a)
    return tf.boolean_mask(kept, condition[:tf.shape(kept)[a]], axis=a)


@lowers("NonZero", 9, 13)
def non_zero(node, x):
    return tf.transpose(tf.where(tf.not_equal(x, tf.zeros([], x.dtype))))  # row-major order, as numpy's nonzero


@lowers("EyeLike", 9, 22)
def eye_like(node, x, *, dtype=None, k=0):
    out = tf_dtype(dtype) if dtype is not None else x.dtype
    rows, cols = tf.shape(x, out_type=tf.int64)[0], tf.shape(x, out_type=tf.int64)[1]
    on = tf.equal(tf.range(cols)[None, :] - tf.range(rows)[:, None], k)
    if out == tf.string:
        raise Unsupported(f"{node}: a string identity")
    return tf.cast(on, out)


@lowers("CenterCropPad", 18)
def center_crop_pad(node, x, shape, *, axes=None):
    """Per axis: a centred window of the target length, its start rounded down when cropping,
    the extra pad pixel on the right when padding; the padding is zero."""
    rank = x.shape.rank
    on = [a + rank if a < 0 else a for a in axes] if axes is not None else list(range(rank))
    targets = tf.reshape(tf.cast(shape, tf.int64), [-1])
    out = x
    for k, d in enumerate(on):
        n, t = tf.shape(out, out_type=tf.int64)[d], targets[k]
        offset = tf.where(n >= t, (n - t) // 2, -((t - n) // 2))
        source = tf.range(t) + offset
        inside = (source >= 0) & (source < n)
        picked = tf.gather(out, tf.clip_by_value(source, 0, tf.maximum(n - 1, 0)), axis=d)
        mask = tf.reshape(inside, [-1 if i == d else 1 for i in range(rank)])
        out = tf.where(mask, picked, tf.zeros_like(picked))
    return out


@lowers("ReverseSequence", 10, 28)
def reverse_sequence(node, x, sequence_lens, *, batch_axis=1, time_axis=0):
    return tf.reverse_sequence(x, tf.cast(sequence_lens, tf.int64), seq_axis=time_axis, batch_axis=batch_axis)
