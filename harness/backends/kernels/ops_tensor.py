"""Tensor construction and rearrangement: Identity, Constant*, Reshape, Flatten, Squeeze,
Unsqueeze, Transpose, Concat, Split, Slice, Pad, Tile, Expand, Range, OneHot, Compress,
NonZero, TopK, Unique, ReverseSequence.

Kernels return views where numpy can (Reshape, Transpose, Slice); no kernel writes into its
inputs.
"""

from __future__ import annotations

import math

import numpy as np

from ._util import ML_FLOATS, STRING, float32_if_ml, ints, normalize_axes, normalize_axis, scalar
from .registry import register


@register("Identity", since=1)
def identity(node):
    def run(x):
        return (x,)

    return run


# -- constants --------------------------------------------------------------------------------


@register("Constant", since=1)
def constant(node):
    a = node.attrs
    if "value" in a:
        value = np.asarray(a["value"])
    elif "sparse_value" in a:
        value = np.asarray(a["sparse_value"])
    elif "value_float" in a:
        value = np.array(a["value_float"], dtype=np.float32)
    elif "value_floats" in a:
        value = np.array(a["value_floats"], dtype=np.float32)
    elif "value_int" in a:
        value = np.array(a["value_int"], dtype=np.int64)
    elif "value_ints" in a:
        value = np.array(a["value_ints"], dtype=np.int64)
    elif "value_string" in a:
        value = np.array(a["value_string"], dtype=object)
    elif "value_strings" in a:
        value = np.array(a["value_strings"], dtype=object)
    else:
        raise ValueError("Constant has no value attribute")

    def run():
        return (value,)

    return run


@register("ConstantOfShape", since=9)
def constant_of_shape(node):
    value = node.attrs.get("value")
    fill = np.zeros(1, dtype=np.float32) if value is None else np.asarray(value).reshape(-1)

    def run(shape):
        return (np.full(ints(shape), fill[0], dtype=fill.dtype),)

    return run


@register("Shape", since=1)
def shape(node):
    start = node.attrs.get("start", 0)
    end = node.attrs.get("end")

    def run(x):
        dims = np.shape(x)
        return (np.array(dims[slice(start, end)], dtype=np.int64),)

    return run


@register("Size", since=1)
def size(node):
    def run(x):
        return (np.array(np.size(x), dtype=np.int64),)

    return run


# -- reshaping --------------------------------------------------------------------------------


def _target_shape(x: np.ndarray, shape, allowzero: bool) -> list[int]:
    dims = ints(shape)
    if not allowzero:
        # a 0 copies the input's dimension (Reshape doc)
        dims = [x.shape[i] if d == 0 else d for i, d in enumerate(dims)]
    return dims


@register("Reshape", since=1)
def reshape_v1(node):
    dims = node.attrs.get("shape", [])

    def run(x):
        return (x.reshape(_target_shape(x, dims, False)),)

    return run


@register("Reshape", since=5)
def reshape(node):
    allowzero = bool(node.attrs.get("allowzero", 0))

    def run(x, shape):
        return (x.reshape(_target_shape(x, shape, allowzero)),)

    return run


@register("Flatten", since=1)
def flatten(node):
    axis = node.attrs.get("axis", 1)

    def run(x):
        ax = axis + x.ndim if axis < 0 else axis
        lead = math.prod(x.shape[:ax])
        return (x.reshape(lead, math.prod(x.shape[ax:])),)

    return run


def _squeeze(x, axes):
    if axes is None or len(axes) == 0:
        return np.squeeze(x)
    return np.squeeze(x, axis=normalize_axes(axes, x.ndim))


def _unsqueeze(x, axes):
    rank = x.ndim + len(axes)
    shape = list(x.shape)
    for a in sorted(normalize_axes(axes, rank)):
        shape.insert(a, 1)
    return x.reshape(shape)


@register("Squeeze", since=1)
def squeeze_v1(node):
    axes = node.attrs.get("axes")

    def run(x):
        return (_squeeze(x, axes),)

    return run


@register("Squeeze", since=13)
def squeeze(node):
    def run(x, axes=None):
        return (_squeeze(x, None if axes is None else ints(axes)),)

    return run


@register("Unsqueeze", since=1)
def unsqueeze_v1(node):
    axes = node.attrs["axes"]

    def run(x):
        return (_unsqueeze(x, axes),)

    return run


@register("Unsqueeze", since=13)
def unsqueeze(node):
    def run(x, axes):
        return (_unsqueeze(x, ints(axes)),)

    return run


@register("Transpose", since=1)
def transpose(node):
    perm = node.attrs.get("perm")

    def run(x):
        return (np.transpose(x, perm),)

    return run


# -- joining and splitting --------------------------------------------------------------------


@register("Concat", since=1)
def concat(node):
    axis = node.attrs.get("axis", 1)  # Concat-1 defaulted to 1; it is required from 4 on

    def run(*xs):
        ax = normalize_axis(axis, xs[0].ndim)
        return (np.concatenate(xs, axis=ax),)

    return run


def _split(x, axis, sizes, n_outputs):
    ax = normalize_axis(axis, x.ndim)
    if sizes is None:
        dim = x.shape[ax]
        chunk = -(-dim // n_outputs)  # ceil: the last chunk may be smaller (Split-18)
        sizes = [min(chunk, max(dim - chunk * i, 0)) for i in range(n_outputs)]
    bounds = np.cumsum([0, *sizes])
    index = [slice(None)] * x.ndim
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        index[ax] = slice(int(lo), int(hi))
        parts.append(x[tuple(index)])
    return parts


@register("Split", since=1)
def split_v1(node):
    axis = node.attrs.get("axis", 0)
    attr_split = node.attrs.get("split")
    n = len(node.outputs)

    def run(x, split=None):
        sizes = attr_split if attr_split else (ints(split) if split is not None else None)
        return _split(x, axis, sizes, n)

    return run


@register("Split", since=13)
def split(node):
    axis = node.attrs.get("axis", 0)
    n = node.attrs.get("num_outputs", len(node.outputs))

    def run(x, split=None):
        return _split(x, axis, ints(split) if split is not None else None, n)

    return run


def _position(p, dim, lo, hi):
    """A Slice start or end on an axis of length ``dim``: a negative one counts from the back,
    then it is clamped to [lo, hi]."""
    return min(max(p + dim if p < 0 else p, lo), hi)


def _slice(x, starts, ends, axes, steps):
    rank = x.ndim
    axes = normalize_axes(axes, rank) if axes is not None and len(axes) else range(len(starts))
    steps = steps if steps is not None and len(steps) else [1] * len(starts)
    index = [slice(None)] * rank
    for s, e, a, st in zip(starts, ends, axes, steps):
        dim = x.shape[a]
        # stepping backward, a start stays on an element and an end may be -1, "before 0"
        s = _position(s, dim, 0, dim if st > 0 else dim - 1)
        e = _position(e, dim, 0 if st > 0 else -1, dim if st > 0 else dim - 1)
        index[a] = slice(s, None if e < 0 else e, st)
    return x[tuple(index)]


@register("Slice", since=1)
def slice_v1(node):
    starts, ends = node.attrs["starts"], node.attrs["ends"]
    axes = node.attrs.get("axes")

    def run(x):
        return (_slice(x, starts, ends, axes, None),)

    return run


@register("Slice", since=10)
def slice_(node):
    def run(x, starts, ends, axes=None, steps=None):
        return (_slice(x, ints(starts), ints(ends), None if axes is None else ints(axes), None if steps is None else ints(steps)),)

    return run


# -- padding, tiling, broadcasting ------------------------------------------------------------

_PAD_MODES = {"constant": "constant", "reflect": "reflect", "edge": "edge", "wrap": "wrap"}


def pad(x: np.ndarray, pads: list[int], mode: str, value, axes=None) -> np.ndarray:
    rank = x.ndim
    axes = list(range(rank)) if axes is None else list(normalize_axes(axes, rank))
    n = len(axes)
    begin = [0] * rank
    end = [0] * rank
    for i, a in enumerate(axes):
        begin[a], end[a] = pads[i], pads[i + n]
    # negative pads crop (Pad doc)
    crop = tuple(slice(-b if b < 0 else 0, x.shape[k] + e if e < 0 else None) for k, (b, e) in enumerate(zip(begin, end)))
    x = x[crop]
    widths = [(max(b, 0), max(e, 0)) for b, e in zip(begin, end)]
    if not any(b or e for b, e in widths):
        return x.copy()
    if mode == "constant":
        out = np.empty(tuple(d + b + e for d, (b, e) in zip(x.shape, widths)), dtype=x.dtype)
        out[...] = value if value is not None else np.zeros((), dtype=x.dtype) if x.dtype != STRING else ""
        out[tuple(slice(b, b + d) for d, (b, _) in zip(x.shape, widths))] = x
        return out
    if x.dtype in ML_FLOATS:
        return np.pad(x.astype(np.float32), widths, mode=_PAD_MODES[mode]).astype(x.dtype)
    return np.pad(x, widths, mode=_PAD_MODES[mode])


@register("Pad", since=1)
def pad_v1(node):
    pads = node.attrs.get("pads", node.attrs.get("paddings"))
    mode = node.attrs.get("mode", "constant")
    value = node.attrs.get("value", 0.0)

    def run(x):
        return (pad(x, pads, mode, np.asarray(value).astype(x.dtype)),)

    return run


@register("Pad", since=11)
def pad_kernel(node):
    mode = node.attrs.get("mode", "constant")

    def run(x, pads, constant_value=None, axes=None):
        value = None if constant_value is None or np.size(constant_value) == 0 else np.asarray(constant_value).reshape(-1)[0]
        return (pad(x, ints(pads), mode, value, None if axes is None else ints(axes)),)

    return run


@register("Tile", since=1)
def tile(node):
    def run(x, repeats, axis=None):
        if axis is not None:  # Tile-1: tile ``repeats`` times along one axis
            reps = [1] * x.ndim
            reps[normalize_axis(int(scalar(axis)), x.ndim)] = int(scalar(repeats))
            return (np.tile(x, reps),)
        return (np.tile(x, ints(repeats)),)

    return run


@register("Expand", since=8)
def expand(node):
    def run(x, shape):
        target = np.broadcast_shapes(x.shape, tuple(ints(shape)))
        return (np.broadcast_to(x, target).copy(),)

    return run


# -- generators -------------------------------------------------------------------------------


@register("Range", since=11)
def range_(node):
    stash = node.attrs.get("stash_type", 1)

    def run(start, limit, delta):
        dt = start.dtype
        s, l, d = scalar(start), scalar(limit), scalar(delta)
        n = max(int(math.ceil((l - s) / d)), 0) if d else 0
        if dt.kind in "iu":
            return (np.arange(n, dtype=np.int64).astype(dt) * dt.type(d) + dt.type(s),)
        if not stash and dt in (np.dtype(np.float16), *ML_FLOATS):
            # Range-27, stash_type 0: successive additions in the input type
            out = np.empty(n, dtype=dt)
            acc = dt.type(s)
            for i in range(n):
                out[i] = acc
                acc = dt.type(float(acc) + float(dt.type(d)))
            return (out,)
        cd = np.dtype(np.float32) if dt in ML_FLOATS or dt == np.float16 else dt
        return ((cd.type(s) + np.arange(n, dtype=cd) * cd.type(d)).astype(dt),)

    return run


@register("OneHot", since=9)
def one_hot(node):
    axis = node.attrs.get("axis", -1)

    def run(indices, depth, values):
        d = int(scalar(depth))
        idx = np.asarray(indices)
        idx = np.where(idx < 0, idx + d, idx).astype(np.int64)
        rank = idx.ndim + 1
        ax = normalize_axis(axis, rank)
        hot = np.expand_dims(idx, ax) == np.arange(d).reshape((-1,) + (1,) * (rank - ax - 1))
        off, on = values.reshape(-1)[0], values.reshape(-1)[1]
        return (np.where(hot, on, off).astype(values.dtype),)

    return run


# -- selection --------------------------------------------------------------------------------


@register("Compress", since=9)
def compress(node):
    axis = node.attrs.get("axis")

    def run(x, condition):
        cond = np.asarray(condition, dtype=bool).reshape(-1)
        if axis is None:
            return (np.compress(cond, x.reshape(-1)),)
        return (np.compress(cond, x, axis=normalize_axis(axis, x.ndim)),)

    return run


@register("NonZero", since=9)
def non_zero(node):
    def run(x):
        x = float32_if_ml(x)
        if x.ndim == 0:
            return (np.zeros((0, int(bool(x))), dtype=np.int64),)
        return (np.array(np.nonzero(x), dtype=np.int64).reshape(x.ndim, -1),)

    return run


def topk(x: np.ndarray, k: int, axis: int, largest: bool):
    """Values and indices of the k largest (smallest) entries along axis, always sorted (an
    unsorted order is "undefined" in the spec, so sorted is a valid one)."""
    ax = normalize_axis(axis, x.ndim)
    keys = float32_if_ml(x)
    if largest:
        if keys.dtype.kind == "u":
            keys = keys.astype(np.int64) if keys.dtype.itemsize < 8 else keys.astype(np.float64)
        keys = -keys if keys.dtype != np.bool_ else ~keys
    # stable: equal values keep index order, the lower index first (TopK doc)
    order = np.argsort(keys, axis=ax, kind="stable")
    order = np.take(order, np.arange(k), axis=ax)
    return np.take_along_axis(x, order, axis=ax), order.astype(np.int64)


@register("TopK", since=1)
def topk_v1(node):
    k = node.attrs["k"]
    axis = node.attrs.get("axis", -1)

    def run(x):
        return topk(x, k, axis, True)

    return run


@register("TopK", since=10)
def topk_kernel(node):
    axis = node.attrs.get("axis", -1)
    largest = bool(node.attrs.get("largest", 1))

    def run(x, k):
        return topk(x, int(scalar(k)), axis, largest)

    return run


@register("Unique", since=11)
def unique(node):
    axis = node.attrs.get("axis")
    sort = node.attrs.get("sorted", 1)

    def run(x):
        data = float32_if_ml(x)
        if axis is None:
            data = data.reshape(-1)
            ax = None
        else:
            ax = normalize_axis(axis, x.ndim)
        y, first, inverse, counts = np.unique(data, return_index=True, return_inverse=True, return_counts=True, axis=ax)
        inverse = inverse.reshape(-1)
        if not sort:
            # order of first occurrence: renumber the sorted uniques by where they first appear
            order = np.argsort(first, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            y = np.take(y, order, axis=0 if ax is None else ax)
            first, counts, inverse = first[order], counts[order], rank[inverse]
        return (
            y.astype(x.dtype, copy=False),
            first.astype(np.int64),
            inverse.astype(np.int64),
            counts.astype(np.int64),
        )

    return run


@register("ReverseSequence", since=10)
def reverse_sequence(node):
    batch_axis = node.attrs.get("batch_axis", 1)
    time_axis = node.attrs.get("time_axis", 0)

    def run(x, sequence_lens):
        y = x.copy()
        for b, n in enumerate(ints(sequence_lens)):
            src = [slice(None)] * x.ndim
            src[batch_axis] = b
            src[time_axis] = slice(0, n)
            dst = list(src)
            dst[time_axis] = slice(n - 1, None, -1) if n > 0 else slice(0, 0)
            y[tuple(src)] = x[tuple(dst)]
        return (y,)

    return run
