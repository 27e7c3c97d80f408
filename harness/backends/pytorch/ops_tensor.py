"""Shape and data movement: constants, reshaping, slicing, gathering, scattering, padding."""

from __future__ import annotations

import math

import torch

from ..base import Unsupported
from . import dtypes
from ._util import axes_of, axis, ints, scalar
from .registry import lowers


# -- constants and identity ------------------------------------------------------------------
@lowers("Constant", 1, 9, 11, 12, 13, 19, 21, 23, 24, 25)
def constant(node, *, value=None, sparse_value=None, value_float=None, value_floats=None, value_int=None,
             value_ints=None, value_string=None, value_strings=None):
    if value is not None:
        return value
    if sparse_value is not None:
        return sparse_value
    if value_float is not None:
        return torch.tensor(value_float, dtype=torch.float32, device=node.device)
    if value_floats is not None:
        return torch.tensor(value_floats, dtype=torch.float32, device=node.device)
    if value_int is not None:
        return torch.tensor(value_int, dtype=torch.int64, device=node.device)
    if value_ints is not None:
        return torch.tensor(value_ints, dtype=torch.int64, device=node.device)
    raise Unsupported("torch has no string tensors (Constant value_string)")


@lowers("Identity", 1, 13, 14, 16, 19, 21, 23, 24, 25)
def identity(node, x):
    return x


@lowers("ConstantOfShape", 9, 20, 21, 23, 24, 25)
def constant_of_shape(node, shape, *, value=None):
    dims = ints(shape)
    if value is None:
        return torch.zeros(dims, dtype=torch.float32, device=node.device)
    return torch.full(dims, value.reshape(-1)[0].item(), dtype=value.dtype, device=node.device)


@lowers("Shape", 1, 13)
def shape_1(node, x):
    return torch.tensor(list(x.shape), dtype=torch.int64, device=node.device)


@lowers("Shape", 15, 19, 21, 23, 24, 25)
def shape(node, x, *, start=0, end=None):
    dims = list(x.shape)
    return torch.tensor(dims[slice(start, end)], dtype=torch.int64, device=node.device)


@lowers("Size", 1, 13, 19, 21, 23, 24, 25)
def size(node, x):
    return torch.tensor(x.numel(), dtype=torch.int64, device=node.device)


# -- reshaping -------------------------------------------------------------------------------
@lowers("Reshape", 5, 13, 14, 19, 21, 23, 24, 25)
def reshape(node, x, shape, *, allowzero=0):
    dims = ints(shape)
    if not allowzero:  # 0 copies the input's dimension (onnx Reshape)
        dims = [x.shape[i] if d == 0 else d for i, d in enumerate(dims)]
    return x.reshape(dims)


@lowers("Reshape", 1)
def reshape_1(node, x, *, shape, consumed_inputs=None):
    return reshape(node, x, shape)


@lowers("Flatten", 1, 9, 11, 13, 21, 23, 24, 25)
def flatten(node, x, *, axis=1):
    a = axis + x.dim() if axis < 0 else axis
    outer = math.prod(x.shape[:a])
    return x.reshape(outer, math.prod(x.shape[a:]))


@lowers("Transpose", 1, 13, 21, 23, 24, 25)
def transpose(node, x, *, perm=None):
    perm = list(perm) if perm is not None else list(range(x.dim() - 1, -1, -1))
    return x.permute(perm)


@lowers("Squeeze", 1, 11)
def squeeze_attr(node, x, *, axes=None):
    return _squeeze(x, axes)


@lowers("Squeeze", 13, 21, 23, 24, 25)
def squeeze(node, x, axes=None):
    return _squeeze(x, ints(axes) if axes is not None else None)


def _squeeze(x, axes):
    if axes is None:
        return x.reshape([d for d in x.shape if d != 1])
    drop = set(axes_of(axes, x.dim()))
    return x.reshape([d for i, d in enumerate(x.shape) if i not in drop])


@lowers("Unsqueeze", 1, 11)
def unsqueeze_attr(node, x, *, axes):
    return _unsqueeze(x, axes)


@lowers("Unsqueeze", 13, 21, 23, 24, 25)
def unsqueeze(node, x, axes):
    return _unsqueeze(x, ints(axes))


def _unsqueeze(x, axes):
    rank = x.dim() + len(axes)
    new = sorted(axes_of(axes, rank))
    dims = list(x.shape)
    for a in new:
        dims.insert(a, 1)
    return x.reshape(dims)


@lowers("Expand", 8, 13)
def expand(node, x, shape):
    target = torch.broadcast_shapes(tuple(x.shape), tuple(ints(shape)))
    return x.expand(target)


@lowers("Tile", 6, 13)
def tile(node, x, repeats):
    return x.repeat(*ints(repeats)) if x.dim() else x.clone()


@lowers("Tile", 1)
def tile_1(node, x, tiles, axis):
    # Tile-1 repeats one axis: "tiles: Number of repeated copies to make of the input tensor",
    # "axis: Axis along which to repeat"
    repeats = [1] * x.dim()
    repeats[int(scalar(axis))] = int(scalar(tiles))
    return x.repeat(*repeats)


@lowers("Concat", 1, 4, 11, 13)
def concat(node, *xs, axis=1):  # Concat-1's axis is optional, "Default value is 1"
    return torch.cat(xs, dim=axis)


@lowers("Split", 2, 11)
def split_attr(node, x, *, axis=0, split=None):
    return _split(node, x, axis, split)


@lowers("Split", 1)
def split_1(node, x, split_input=None, *, axis=0, split=None):
    # "The lengths of the split can be specified using argument 'axis' or optional second input
    # blob": the input (of the data's type T) wins over the attribute
    lengths = [int(v) for v in split_input.reshape(-1).tolist()] if split_input is not None else split
    return _split(node, x, axis, lengths)


@lowers("Split", 13)
def split_13(node, x, split=None, *, axis=0):
    return _split(node, x, axis, ints(split) if split is not None else None)


@lowers("Split", 18)
def split_18(node, x, split=None, *, axis=0, num_outputs=None):
    if split is None and num_outputs is not None:
        dim = x.shape[axis]
        chunk = -(-dim // num_outputs)  # ceil: the last chunk is the smaller one
        sizes = [chunk] * (dim // chunk) + ([dim % chunk] if dim % chunk else [])
        return tuple(torch.split(x, sizes, dim=axis))
    return _split(node, x, axis, ints(split) if split is not None else None)


def _split(node, x, axis, split):
    n = len(node.outputs)
    if not split:
        dim = x.shape[axis]
        if dim % n:
            raise ValueError(f"Split: dimension {dim} does not divide into {n} equal parts")
        split = [dim // n] * n
    return tuple(torch.split(x, list(split), dim=axis))


@lowers("Slice", 10, 11, 13)
def slice_(node, x, starts, ends, axes=None, steps=None):
    starts, ends = ints(starts), ints(ends)
    axes = axes_of(axes, x.dim()) if axes is not None else list(range(len(starts)))
    steps = ints(steps) if steps is not None else [1] * len(starts)
    return _slice(x, starts, ends, axes, steps)


@lowers("Slice", 1)
def slice_1(node, x, *, starts, ends, axes=None):
    axes = axes_of(axes, x.dim()) if axes is not None else list(range(len(starts)))
    return _slice(x, list(starts), list(ends), axes, [1] * len(starts))


def _slice(x, starts, ends, axes, steps):
    index: list = [slice(None)] * x.dim()
    flips = []
    for s, e, a, st in zip(starts, ends, axes, steps):
        dim = x.shape[a]
        # "All negative values in starts[i] and ends[i] have dims[axes[i]] added to them ... Then
        # starts[axes[i]] is clamped to range [0, dims[axes[i]]] for positive stepping, or to
        # range [0, dims[axes[i]]-1] for negative stepping"; ends to [0, dim] or [-1, dim-1]
        # (Python's slice clamps a start below -dim to -1 when stepping back: no element)
        s, e = s + dim if s < 0 else s, e + dim if e < 0 else e
        if st > 0:
            index[a] = slice(min(max(s, 0), dim), min(max(e, 0), dim), st)
        else:
            flips.append((a, list(range(min(max(s, 0), dim - 1), min(max(e, -1), dim - 1), st))))
    out = x[tuple(index)]
    for a, positions in flips:
        out = out.index_select(a, torch.tensor(positions, dtype=torch.int64, device=x.device))
    return out


# -- gather and scatter ----------------------------------------------------------------------
def _fix_indices(idx: torch.Tensor, dim: int) -> torch.Tensor:
    idx = idx.to(torch.int64)
    return torch.where(idx < 0, idx + dim, idx)


@lowers("Gather", 1, 11, 13)
def gather(node, x, indices, *, axis=0):
    a = axis + x.dim() if axis < 0 else axis
    idx = _fix_indices(indices, x.shape[a])
    out = x.index_select(a, idx.reshape(-1))
    return out.reshape(list(x.shape[:a]) + list(idx.shape) + list(x.shape[a + 1:]))


@lowers("GatherElements", 11, 13)
def gather_elements(node, x, indices, *, axis=0):
    a = axis + x.dim() if axis < 0 else axis
    return torch.gather(x, a, _fix_indices(indices, x.shape[a]))


@lowers("GatherND", 11, 12, 13)
def gather_nd(node, x, indices, *, batch_dims=0):
    indices = indices.to(torch.int64)
    b = batch_dims
    batch_shape = list(x.shape[:b])
    nb = math.prod(batch_shape)
    r = indices.shape[-1]
    xs = x.reshape([nb] + list(x.shape[b:]))
    idx = indices.reshape([nb, -1, r])
    dims = torch.tensor(list(x.shape[b:b + r]), dtype=torch.int64, device=x.device)
    idx = torch.where(idx < 0, idx + dims, idx)
    batch = torch.arange(nb, device=x.device).reshape(nb, 1).expand(nb, idx.shape[1])
    picked = xs[(batch,) + tuple(idx[..., k] for k in range(r))]
    return picked.reshape(list(indices.shape[:-1]) + list(x.shape[b + r:]))


_REDUCE = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}


@lowers("ScatterElements", 11, 13, 16, 18)
def scatter_elements(node, x, indices, updates, *, axis=0, reduction="none"):
    a = axis + x.dim() if axis < 0 else axis
    idx = _fix_indices(indices, x.shape[a])
    if reduction == "none":
        return x.scatter(a, idx, updates)
    key = _order_key(node, reduction)
    return key(key(x).scatter_reduce(a, idx, key(updates), reduce=_REDUCE[reduction], include_self=True))


def _order_key(node, reduction="max"):
    """For max / min of uint64 (int64 carrier): the sign-flipped order key, its own inverse."""
    if reduction in ("max", "min") and node.in_type(0) == dtypes.TP.UINT64:
        return dtypes.ordered
    return lambda t: t


@lowers("Scatter", 9, 11)
def scatter(node, x, indices, updates, *, axis=0):
    return scatter_elements(node, x, indices, updates, axis=axis)


@lowers("ScatterND", 11, 13, 16, 18)
def scatter_nd(node, x, indices, updates, *, reduction="none"):
    order = _order_key(node, reduction)
    x, updates = order(x), order(updates)
    out = x.clone()
    indices = indices.to(torch.int64)
    r = indices.shape[-1]
    dims = torch.tensor(list(x.shape[:r]), dtype=torch.int64, device=x.device)
    idx = torch.where(indices < 0, indices + dims, indices).reshape(-1, r)
    upd = updates.reshape([idx.shape[0]] + list(x.shape[r:]))
    key = tuple(idx[:, k] for k in range(r))
    if reduction == "none":
        out[key] = upd
    elif reduction == "add":
        out.index_put_(key, upd, accumulate=True)
    else:  # mul / max / min: apply in order, one update at a time (duplicates compose)
        for n in range(idx.shape[0]):
            at = tuple(int(v) for v in idx[n])
            if reduction == "mul":
                out[at] = out[at] * upd[n]
            elif reduction == "max":
                out[at] = torch.maximum(out[at], upd[n])
            else:
                out[at] = torch.minimum(out[at], upd[n])
    return order(out)


@lowers("TensorScatter", 24)
def tensor_scatter(node, past, update, write_indices=None, *, axis=-2, mode="linear"):
    out = past.clone()
    a = axis + past.dim() if axis < 0 else axis
    batch = past.shape[0]
    starts = ints(write_indices) if write_indices is not None else [0] * batch
    n = update.shape[a]
    size = past.shape[a]
    for b in range(batch):
        pos = torch.arange(starts[b], starts[b] + n, device=past.device)
        if mode == "circular":
            pos = pos % size
        target = out[b]
        target.index_copy_(a - 1, pos, update[b])
    return out


# -- padding ---------------------------------------------------------------------------------
def _pad(x, pads, mode, value, axes=None):
    rank = x.dim()
    axes = axes_of(axes, rank) if axes is not None else list(range(rank))
    n = len(axes)
    out = x
    for k, a in enumerate(axes):
        before, after = pads[k], pads[k + n]
        if before == 0 and after == 0:
            continue
        size = out.shape[a]
        pos = torch.arange(-before, size + after, device=x.device)
        if mode == "constant":
            inside = (pos >= 0) & (pos < size)
            src = pos.clamp(0, max(size - 1, 0))
            if size == 0:
                shape = list(out.shape)
                shape[a] = pos.numel()
                out = torch.full(shape, value, dtype=out.dtype, device=x.device)
                continue
            picked = out.index_select(a, src)
            mshape = [1] * rank
            mshape[a] = pos.numel()
            fill = torch.tensor(value, dtype=out.dtype, device=x.device)
            out = torch.where(inside.reshape(mshape), picked, fill)
            continue
        if mode == "edge":
            src = pos.clamp(0, size - 1)
        elif mode == "wrap":
            src = pos % size
        elif mode == "reflect":
            if size == 1:
                src = torch.zeros_like(pos)
            else:
                period = 2 * (size - 1)
                m = pos % period
                src = torch.where(m < size, m, period - m)
        else:
            raise Unsupported(f"Pad mode {mode!r}")
        out = out.index_select(a, src)
    return out


@lowers("Pad", 11, 13, 18, 19, 21, 23, 24, 25)
def pad(node, x, pads, constant_value=None, axes=None, *, mode="constant"):
    value = scalar(constant_value) if constant_value is not None else 0
    return _pad(x, ints(pads), mode, value, axes)


@lowers("Pad", 2)
def pad_2(node, x, *, pads, mode="constant", value=0.0):
    return _pad(x, list(pads), mode, value)


@lowers("Pad", 1)
def pad_1(node, x, *, paddings, mode="constant", value=0.0):
    return _pad(x, list(paddings), mode, value)  # Pad-2 renamed ``paddings`` to ``pads``


@lowers("CenterCropPad", 18)
def center_crop_pad(node, x, shape, *, axes=None):
    target = ints(shape)
    axes = axes_of(axes, x.dim()) if axes is not None else list(range(x.dim()))
    out = x
    for a, t in zip(axes, target):
        size = out.shape[a]
        if t < size:  # crop: the extra element goes to the end
            start = (size - t) // 2
            out = out.narrow(a, start, t)
        elif t > size:  # pad with zeros: the extra element goes to the end
            before = (t - size) // 2
            shape = list(out.shape)
            shape[a] = t
            canvas = torch.zeros(shape, dtype=out.dtype, device=out.device)
            canvas.narrow(a, before, size).copy_(out)
            out = canvas
    return out


# -- ranges, one-hot, selection --------------------------------------------------------------
@lowers("Range", 11, 27)
def range_(node, start, limit, delta, *, stash_type=1):
    s, l, d = scalar(start), scalar(limit), scalar(delta)
    q = (l - s) / d
    n = 0 if q <= 0 else math.ceil(q)  # max(ceil(q), 0): -inf (start = inf) is no element
    if start.dtype.is_floating_point:
        # start + i * delta, computed wider and rounded once (Range-27's stash_type asks at least float32)
        steps = torch.arange(n, dtype=torch.float64, device=start.device)
        return (steps * d + s).to(start.dtype)
    return (torch.arange(n, dtype=torch.int64, device=start.device) * int(d) + int(s)).to(start.dtype)


@lowers("OneHot", 9, 11, 28)
def one_hot(node, indices, depth, values, *, axis=-1):
    d = int(scalar(depth))
    idx = indices.to(torch.int64)
    idx = torch.where(idx < 0, idx + d, idx)
    valid = (idx >= 0) & (idx < d)
    hot = torch.nn.functional.one_hot(torch.where(valid, idx, 0), d).bool() & valid.unsqueeze(-1)
    out = torch.where(hot, values[1], values[0])
    rank = indices.dim() + 1
    a = axis + rank if axis < 0 else axis
    return out.movedim(-1, a)


@lowers("NonZero", 9, 13)
def non_zero(node, x):
    if x.dim() == 0:
        return torch.zeros((0, int(bool(x.item()))), dtype=torch.int64, device=x.device)
    return torch.nonzero(x).T.contiguous()


@lowers("Compress", 9, 11, 28)
def compress(node, x, condition, *, axis=None):
    cond = condition.to(torch.bool)
    if axis is None:
        flat = x.reshape(-1)
        keep = torch.nonzero(cond[: flat.numel()]).reshape(-1)
        return flat.index_select(0, keep)
    a = axis + x.dim() if axis < 0 else axis
    keep = torch.nonzero(cond[: x.shape[a]]).reshape(-1)
    return x.index_select(a, keep)


@lowers("TopK", 10, 11, 24)
def top_k(node, x, k, *, axis=-1, largest=1, sorted=1):  # noqa: A002 - spec name
    kk = int(scalar(k))
    key = _order_key(node)
    # a stable sort keeps the lower index first among equal values, as the spec asks
    values, indices = torch.sort(key(x), dim=axis, descending=bool(largest), stable=True)
    return key(values.narrow(axis, 0, kk)), indices.narrow(axis, 0, kk)


@lowers("TopK", 1)
def top_k_1(node, x, *, axis=-1, k):
    return top_k(node, x, k, axis=axis)  # k an attribute; always the largest, sorted


@lowers("Unique", 11, 28)
def unique(node, x, *, axis=None, sorted=1):  # noqa: A002 - spec name
    key = _order_key(node)
    data = key(x.reshape(-1) if axis is None else x)
    dim = 0 if axis is None else (axis + x.dim() if axis < 0 else axis)
    n = data.shape[dim]
    if data.numel() == 0 and n > 0:  # n empty slices, all equal (torch.unique refuses them): one value
        return (data.narrow(dim, 0, 1), torch.zeros(1, dtype=torch.int64, device=x.device),
                torch.zeros(n, dtype=torch.int64, device=x.device), torch.full((1,), n, dtype=torch.int64, device=x.device))
    # (without dim when flattened: torch.unique with dim sorts slices by a comparison NaN breaks, so
    # equal values either side of a NaN stay apart)
    values, inverse, counts = torch.unique(data, sorted=True, return_inverse=True, return_counts=True, dim=None if axis is None else dim)
    values = key(values)
    positions = torch.arange(n, device=x.device)
    first = torch.full((values.shape[dim],), n, dtype=torch.int64, device=x.device).scatter_reduce(0, inverse, positions, reduce="amin")
    if not sorted:  # order of first occurrence
        order = torch.argsort(first)
        rank = torch.empty_like(order)
        rank[order] = torch.arange(order.numel(), device=x.device)
        values = values.index_select(dim, order)
        first, counts, inverse = first[order], counts[order], rank[inverse]
    return values, first, inverse.reshape(-1), counts


@lowers("Trilu", 14)
def trilu(node, x, k=None, *, upper=1):
    diag = int(scalar(k)) if k is not None else 0
    if x.dtype == torch.bool:
        return (torch.triu(x.to(torch.uint8), diag) if upper else torch.tril(x.to(torch.uint8), diag)).bool()
    return torch.triu(x, diag) if upper else torch.tril(x, diag)


@lowers("EyeLike", 9, 22)
def eye_like(node, x, *, dtype=None, k=0):
    out_dtype = dtypes.carrier(dtype) if dtype is not None else x.dtype
    rows, cols = x.shape
    eye = torch.ones(rows, cols, dtype=torch.uint8, device=x.device).triu(k).tril(k)
    return eye.to(out_dtype)


@lowers("CumSum", 11, 14)
def cum_sum(node, x, axis_, *, exclusive=0, reverse=0):
    return _cumulate(x, int(scalar(axis_)), exclusive, reverse, torch.cumsum, 0)


@lowers("CumProd", 26)
def cum_prod(node, x, axis_, *, exclusive=0, reverse=0):
    return _cumulate(x, int(scalar(axis_)), exclusive, reverse, torch.cumprod, 1)


def _cumulate(x, a, exclusive, reverse, fn, neutral):
    a = axis(a, x.dim())
    y = x.flip(a) if reverse else x
    out = fn(y, dim=a).to(x.dtype)
    if exclusive and out.shape[a] > 0:
        pad_shape = list(out.shape)
        pad_shape[a] = 1
        out = torch.cat([torch.full(pad_shape, neutral, dtype=out.dtype, device=x.device), out.narrow(a, 0, out.shape[a] - 1)], dim=a)
    return out.flip(a) if reverse else out


@lowers("ReverseSequence", 10, 28)
def reverse_sequence(node, x, sequence_lens, *, batch_axis=1, time_axis=0):
    out = x.clone()
    lens = ints(sequence_lens)
    for b, n in enumerate(lens):
        src = x.select(batch_axis, b)
        t = time_axis if time_axis < batch_axis else time_axis - 1
        rev = src.narrow(t, 0, n).flip(t)
        out.select(batch_axis, b).narrow(t, 0, n).copy_(rev)
    return out


# -- space and depth -------------------------------------------------------------------------
@lowers("DepthToSpace", 1, 11, 13, 28)
def depth_to_space(node, x, *, blocksize, mode="DCR"):
    n, c, h, w = x.shape
    b = blocksize
    if mode == "DCR":
        y = x.reshape(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2)
    else:
        y = x.reshape(n, c // (b * b), b, b, h, w).permute(0, 1, 4, 2, 5, 3)
    return y.reshape(n, c // (b * b), h * b, w * b)


@lowers("SpaceToDepth", 1, 13, 28)
def space_to_depth(node, x, *, blocksize, mode="DCR"):
    n, c, h, w = x.shape
    b = blocksize
    y = x.reshape(n, c, h // b, b, w // b, b)
    # the inverse of DepthToSpace in the same mode (SpaceToDepth-28 added CRD)
    y = y.permute(0, 3, 5, 1, 2, 4) if mode == "DCR" else y.permute(0, 1, 3, 5, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)
