"""Pooling kernels: MaxPool, AveragePool, LpPool, Global*Pool, MaxRoiPool, MaxUnpool, RoiAlign.

Windowed pooling never loops over output pixels: it reduces one spatial axis at a time, looping
over the (few) kernel taps and combining one strided view per tap (np.maximum / np.add); taps in
the padding are skipped rather than materialised. With unit strides (and with strides, before
keeping every s-th output along the axis) a tap is one shifted operation over the whole
flattened array. MaxPool with Indices keeps an argmax per tap.
"""

from __future__ import annotations

import math

import numpy as np

from .nn_util import ints, kernel_offsets, pad_to_windows, prod, spatial_geometry, window_slices
from .registry import register, register_each


def _pool_params(attrs, nsp):
    kernel = [int(k) for k in attrs["kernel_shape"]]
    strides = ints(attrs.get("strides"), nsp, 1)
    dilations = ints(attrs.get("dilations"), nsp, 1)
    return kernel, strides, dilations


def _lowest(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return np.iinfo(dtype).min
    return -np.inf


def _acc_dtype(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        return dtype
    return np.dtype(np.float32)


def _axis_counts(L, o, s, d, k, pb, pe, include_pad):
    """Per-axis number of window taps that fall in the input (or in the padded input)."""
    starts = np.arange(o) * s - pb
    taps = starts[:, None] + np.arange(k)[None, :] * d
    lo, hi = (-pb, L + pe) if include_pad else (0, L)
    return ((taps >= lo) & (taps < hi)).sum(axis=1)


class _Geometry:
    def __init__(self, attrs, x_shape):
        nsp = len(x_shape) - 2
        self.kernel, self.strides, self.dilations = _pool_params(attrs, nsp)
        self.out, self.begin, self.end = spatial_geometry(
            x_shape[2:],
            self.kernel,
            self.strides,
            self.dilations,
            attrs.get("pads"),
            attrs.get("auto_pad", "NOTSET"),
            bool(attrs.get("ceil_mode", 0)),
        )


def _geometry_cache(attrs):
    cache: dict = {}

    def get(shape):
        g = cache.get(shape)
        if g is None:
            g = cache[shape] = _Geometry(attrs, shape)
        return g

    return get


def _tap_range(k, o, s, d, pb, L):
    """Output positions [lo, hi) whose k-th tap (o * s - pb + k * d) lies inside [0, L)."""
    off = k * d - pb
    lo = 0 if off >= 0 else -(off // s) if (-off) % s == 0 else -off // s + 1
    hi = min(o, (L - 1 - off) // s + 1) if L - 1 - off >= 0 else 0
    return lo, max(hi, lo)


#: a pooled input larger than this is reduced in blocks of channels of about _POOL_BLOCK bytes,
#: so that each block's intermediate stays in cache (measured 1.4-1.7x faster at batch 8)
_POOL_BLOCKED = 1 << 22
_POOL_BLOCK = 1 << 20


def separable_reduce(x, g, op, fill, acc_dtype=None, outer_first=False):
    """Reduce every pooling window with ``op`` (np.maximum / np.add), one axis at a time.

    Taps that fall in padding (or beyond it, with ceil_mode) are skipped, which is the same as
    padding with the identity ``fill`` but without materialising a padded copy. The axes are
    reduced innermost first, which fixes the order of a sum; ``outer_first`` (for an exact
    ``op`` such as a maximum, whose result no order changes) starts with the outermost axis,
    whose pass then reads whole contiguous rows. A large input is reduced in blocks of
    channels (every element's taps combine in the same order).
    """
    if x.ndim > 2 and x.nbytes > _POOL_BLOCKED:
        N, C = x.shape[:2]
        flat = x.reshape((1, N * C) + x.shape[2:])
        step = max(1, _POOL_BLOCK // max(1, x.nbytes // max(1, N * C)))
        y = np.empty((1, N * C) + tuple(g.out), dtype=acc_dtype or x.dtype)
        for c0 in range(0, N * C, step):
            y[:, c0 : c0 + step] = _separable_reduce(flat[:, c0 : c0 + step], g, op, fill, acc_dtype, outer_first)
        return y.reshape((N, C) + tuple(g.out))
    return _separable_reduce(x, g, op, fill, acc_dtype, outer_first)


def _separable_reduce(x, g, op, fill, acc_dtype, outer_first):
    y = x
    nsp = len(g.out)
    for i in range(nsp) if outer_first else reversed(range(nsp)):
        ax = 2 + i
        L = y.shape[ax]
        o, s, d, pb = g.out[i], g.strides[i], g.dilations[i], g.begin[i]
        if g.kernel[i] == 1 and s == 1 and pb == 0 and o == L:
            continue
        shape = list(y.shape)
        shape[ax] = o
        ranges = [_tap_range(k, o, s, d, pb, L) for k in range(g.kernel[i])]
        # start from a tap that covers every output (a copy instead of fill + op)
        first = next((k for k, (lo, hi) in enumerate(ranges) if lo == 0 and hi == o), None)
        if s == 1 and o == L and first is not None and y.flags.c_contiguous:
            y = _reduce_axis_shifted(y, ax, ranges, first, d, pb, op, acc_dtype)
            continue
        if s > 1 and (o - 1) * s < L and y.flags.c_contiguous:
            # every window at unit stride (a tap at offset 0 covers them all, the one that
            # starts this axis in the strided loop too), then every s-th: long contiguous
            # operations instead of strided ones, the same taps in the same order. Along an
            # outer axis too: a strided operation costs numpy as much per short row as a few
            # hundred elements (3x3/2 max pools 5-25% faster at batch 1, 30% at batch 8)
            full = [_tap_range(k, L, 1, d, pb, L) for k in range(g.kernel[i])]
            at0 = next((k for k, (lo, hi) in enumerate(full) if lo == 0 and hi == L), None)
            if at0 is not None:
                dense = _reduce_axis_shifted(y, ax, full, at0, d, pb, op, acc_dtype, upto=(o - 1) * s + 1)
                y = np.ascontiguousarray(dense[(slice(None),) * ax + (slice(0, (o - 1) * s + 1, s),)])
                continue
        if first is None:
            out = np.full(shape, fill, dtype=acc_dtype or y.dtype)
        else:
            out = np.empty(shape, dtype=acc_dtype or y.dtype)
        # with the accumulation in the input's own type, the first tap is not copied: the
        # second combines with it straight into the output (the same operands, in order)
        head = None
        for k in ([first] if first is not None else []) + [k for k in range(g.kernel[i]) if k != first]:
            lo, hi = ranges[k]
            if hi <= lo:
                continue
            start = lo * s - pb + k * d
            src = [slice(None)] * y.ndim
            dst = [slice(None)] * y.ndim
            src[ax] = slice(start, start + (hi - lo - 1) * s + 1, s)
            dst[ax] = slice(lo, hi)
            tgt = out[tuple(dst)]
            if k == first and out.dtype == y.dtype:
                head = y[tuple(src)]
            elif k == first:
                np.copyto(tgt, y[tuple(src)], casting="unsafe")
            elif head is not None:
                op(head[tuple(dst)], y[tuple(src)], out=tgt)
                _fill_outside(out, head, ax, lo, hi)
                head = None
            else:
                op(tgt, y[tuple(src)], out=tgt, casting="unsafe")
        if head is not None:  # no other tap
            np.copyto(out, head)
        y = out
    if y is x:
        y = x.astype(acc_dtype or x.dtype, copy=True)
    return y


def _fill_outside(out, head, ax, lo, hi):
    """The outputs before ``lo`` and from ``hi`` on along ``ax`` take ``head``'s values."""
    lead = (slice(None),) * ax
    if lo > 0:
        out[lead + (slice(0, lo),)] = head[lead + (slice(0, lo),)]
    if hi < out.shape[ax]:
        out[lead + (slice(hi, None),)] = head[lead + (slice(hi, None),)]


def _reduce_axis_shifted(y, ax, ranges, first, d, pb, op, acc_dtype, upto=None):
    """One axis of :func:`_separable_reduce` where the output is as long as the input (unit
    stride, padding as wide as the window): every tap is the whole flattened array shifted by
    its offset along ``ax``, one long contiguous ``op`` instead of one per short row. The
    outputs whose tap falls off the axis (and so took the neighbouring row's value) are saved
    before and restored after, those before ``upto`` along ``ax`` only when it is given (the
    others are dropped: past the last strided window). Each output combines the same taps in
    the same order as the row-by-row loop."""
    out = np.empty(y.shape, dtype=acc_dtype or y.dtype)
    # the tap that covers every output has offset 0: y itself; in y's own type it is not
    # copied first, the next tap combines with it straight into the output
    filled = out.dtype != y.dtype
    if filled:
        np.copyto(out, y, casting="unsafe")
    fo, fy = out.reshape(-1), y.reshape(-1)
    n = fo.size
    step = prod(y.shape[ax + 1 :])
    lead = (slice(None),) * ax
    upto = y.shape[ax] if upto is None else upto
    for k, (lo, hi) in enumerate(ranges):
        if k == first or hi <= lo:
            continue
        off = (k * d - pb) * step
        held, fh = (out, fo) if filled else (y, fy)  # what the outputs hold so far
        # (a column of the last axis is as many short copies as rows: only those kept)
        keep_below, keep_above = slice(0, min(lo, upto)), slice(hi, max(hi, upto))
        below, above = held[lead + (keep_below,)].copy(), held[lead + (keep_above,)].copy()
        if off > 0:
            op(fh[: n - off], fy[off:], out=fo[: n - off], casting="unsafe")
            if not filled:
                fo[n - off :] = fy[n - off :]
        else:
            op(fh[-off:], fy[: n + off], out=fo[-off:], casting="unsafe")
            if not filled:
                fo[:-off] = fy[:-off]
        filled = True
        out[lead + (keep_below,)] = below
        out[lead + (keep_above,)] = above
    if not filled:
        np.copyto(out, y)
    return out


# --------------------------------------------------------------------------- MaxPool


def max_pool(x, g, want_indices=False, storage_order=0):
    if not want_indices:
        return separable_reduce(x, g, np.maximum, _lowest(x.dtype), outer_first=True), None
    xp = pad_to_windows(x, g.out, g.begin, g.strides, g.dilations, g.kernel, _lowest(x.dtype))
    # which taps fall inside the input: a padding tap is never the argmax, even where its fill
    # equals the window's maximum (all -inf, or the integer type's lowest value)
    inside = pad_to_windows(np.ones(x.shape, dtype=bool), g.out, g.begin, g.strides, g.dilations, g.kernel, False)
    offsets = list(kernel_offsets(g.kernel))
    y = arg = found = None
    for k, off in enumerate(offsets):
        taps = window_slices(off, g.out, g.strides, g.dilations)
        v, real = xp[taps], inside[taps]
        if y is None:
            y, arg, found = v.copy(), np.zeros(v.shape, dtype=np.int64), real.copy()
            continue
        better = real & ((v > y) | ~found)  # the first tap of the maximum among the input's own
        np.copyto(y, v, where=better)
        arg[better] = k
        found |= real
    # kernel-position index -> input coordinates (padding not counted)
    N, C = x.shape[:2]
    sp = x.shape[2:]
    nsp = len(sp)
    offs = np.array(offsets, dtype=np.int64).reshape(len(offsets), nsp)
    flat = np.zeros(y.shape, dtype=np.int64)
    if storage_order:
        mults = [prod(sp[:i]) for i in range(nsp)]
    else:
        mults = [prod(sp[i + 1:]) for i in range(nsp)]
    for i in range(nsp):
        shape = [1] * (2 + nsp)
        shape[2 + i] = g.out[i]
        start = (np.arange(g.out[i], dtype=np.int64) * g.strides[i] - g.begin[i]).reshape(shape)
        coord = start + offs[arg, i] * g.dilations[i]
        flat += coord * mults[i]
    nc = (np.arange(N * C, dtype=np.int64) * prod(sp)).reshape((N, C) + (1,) * nsp)
    return y, flat + nc


@register("MaxPool", since=1)
def maxpool(node):
    attrs = node.attrs
    geo = _geometry_cache(attrs)
    want_indices = len(node.outputs) > 1 and bool(node.outputs[1])
    storage_order = int(attrs.get("storage_order", 0))

    def run(x):
        y, idx = max_pool(x, geo(x.shape), want_indices, storage_order)
        return (y, idx) if want_indices else (y,)

    return run


# --------------------------------------------------------------------------- AveragePool / LpPool


def _divisor(x_shape, g, include_pad):
    nsp = len(g.out)
    div = None
    for i in range(nsp):
        c = _axis_counts(
            x_shape[2 + i], g.out[i], g.strides[i], g.dilations[i], g.kernel[i], g.begin[i], g.end[i], include_pad
        )
        shape = [1] * nsp
        shape[i] = g.out[i]
        c = c.reshape(shape)
        div = c if div is None else div * c
    return div


@register("AveragePool", since=1)
def average_pool(node):
    attrs = node.attrs
    geo = _geometry_cache(attrs)
    include_pad = bool(attrs.get("count_include_pad", 0))
    div_cache: dict = {}

    def run(x):
        g = geo(x.shape)
        acc = _acc_dtype(x.dtype)
        y = separable_reduce(x, g, np.add, 0, acc)
        div = div_cache.get(x.shape)
        if div is None:
            div = div_cache[x.shape] = _divisor(x.shape, g, include_pad).astype(acc)
        y /= div
        return (y.astype(x.dtype, copy=False),)

    return run


@register("LpPool", since=1)
def lp_pool(node):
    attrs = node.attrs
    geo = _geometry_cache(attrs)
    p = attrs.get("p", 2.0 if node.opset < 2 else 2)
    p = float(p)
    if p == int(p):
        p = int(p)

    def run(x):
        g = geo(x.shape)
        acc = _acc_dtype(x.dtype)
        a = np.abs(x.astype(acc, copy=False))
        a = a * a if p == 2 else a**p
        y = separable_reduce(a, g, np.add, 0, acc)
        y = np.sqrt(y) if p == 2 else y ** (1.0 / p)
        return (y.astype(x.dtype, copy=False),)

    return run


# --------------------------------------------------------------------------- Global pools


def _spatial_axes(x):
    return tuple(range(2, x.ndim))


@register("GlobalMaxPool", since=1)
def global_max_pool(node):
    def run(x):
        return (np.max(x, axis=_spatial_axes(x), keepdims=True),)

    return run


@register("GlobalAveragePool", since=1)
def global_average_pool(node):
    def run(x):
        acc = _acc_dtype(x.dtype)
        return (np.mean(x, axis=_spatial_axes(x), dtype=acc, keepdims=True).astype(x.dtype, copy=False),)

    return run


@register("GlobalLpPool", since=1)
def global_lp_pool(node):
    p = float(node.attrs.get("p", 2))

    def run(x):
        acc = _acc_dtype(x.dtype)
        a = np.abs(x.astype(acc, copy=False))
        if p == 2:
            y = np.sqrt(np.sum(a * a, axis=_spatial_axes(x), keepdims=True))
        else:
            y = np.sum(a**p, axis=_spatial_axes(x), keepdims=True) ** (1.0 / p)
        return (y.astype(x.dtype, copy=False),)

    return run


# --------------------------------------------------------------------------- MaxRoiPool


@register("MaxRoiPool", since=1)
def max_roi_pool(node):
    ph_, pw_ = (int(v) for v in node.attrs["pooled_shape"])
    scale = float(node.attrs.get("spatial_scale", 1.0))

    def run(x, rois):
        N, C, H, W = x.shape
        R = rois.shape[0]
        y = np.zeros((R, C, ph_, pw_), dtype=x.dtype)
        acc = np.float64 if x.dtype == np.float64 else np.float32
        r = rois.astype(acc)
        for i in range(R):
            b = int(r[i, 0])
            # round half away from zero, in the tensor's precision
            x1, y1, x2, y2 = (int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1) for v in r[i, 1:5] * acc(scale))
            rw = max(x2 - x1 + 1, 1)
            rh = max(y2 - y1 + 1, 1)
            bh = rh / ph_
            bw = rw / pw_
            img = x[b]
            for ph in range(ph_):
                hs = min(max(int(math.floor(ph * bh)) + y1, 0), H)
                he = min(max(int(math.ceil((ph + 1) * bh)) + y1, 0), H)
                if he <= hs:
                    continue
                for pw in range(pw_):
                    ws = min(max(int(math.floor(pw * bw)) + x1, 0), W)
                    we = min(max(int(math.ceil((pw + 1) * bw)) + x1, 0), W)
                    if we <= ws:
                        continue
                    y[i, :, ph, pw] = img[:, hs:he, ws:we].max(axis=(1, 2))
        return (y,)

    return run


# --------------------------------------------------------------------------- MaxUnpool


@register("MaxUnpool", since=9)
def max_unpool(node):
    attrs = node.attrs

    def run(x, indices, output_shape=None):
        nsp = x.ndim - 2
        kernel = [int(k) for k in attrs["kernel_shape"]]
        strides = ints(attrs.get("strides"), nsp, 1)
        pads = ints(attrs.get("pads") if output_shape is None else None, 2 * nsp, 0)
        default = x.shape[:2] + tuple(
            (x.shape[2 + i] - 1) * strides[i] + kernel[i] - pads[i] - pads[i + nsp] for i in range(nsp)
        )
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        shape = default
        if output_shape is not None:
            shape = tuple(int(v) for v in np.asarray(output_shape).reshape(-1))
            if len(shape) == nsp:
                shape = x.shape[:2] + shape
            if shape != default:
                # indices address the pooled tensor of the default shape: keep the coordinates
                coords = np.unravel_index(idx, default)
                keep = np.ones(idx.shape, dtype=bool)
                for c, s in zip(coords, shape):
                    keep &= c < s
                y = np.zeros(prod(shape), dtype=x.dtype)
                y[np.ravel_multi_index(tuple(c[keep] for c in coords), shape)] = x.reshape(-1)[keep]
                return (y.reshape(shape),)
        y = np.zeros(prod(shape), dtype=x.dtype)
        y[idx] = x.reshape(-1)
        return (y.reshape(shape),)

    return run


# --------------------------------------------------------------------------- RoiAlign


def _bilinear_axis(coords, size):
    """Per-axis low/high index and weights, RoiAlign style (samples beyond [-1, size] are void)."""
    void = (coords < -1.0) | (coords > size)
    c = np.maximum(coords, 0.0)
    low = np.floor(c).astype(np.int64)
    at_end = low >= size - 1
    low = np.where(at_end, size - 1, low)
    high = np.where(at_end, size - 1, low + 1)
    c = np.where(at_end, low.astype(c.dtype), c)
    frac = c - low
    w_low = np.where(void, 0.0, 1.0 - frac)
    w_high = np.where(void, 0.0, frac)
    return low, high, w_low, w_high


def _roi_align_factory(node, half_pixel_default: bool):
    attrs = node.attrs
    mode = attrs.get("mode", "avg")
    oh = int(attrs.get("output_height", 1))
    ow = int(attrs.get("output_width", 1))
    sampling_ratio = int(attrs.get("sampling_ratio", 0))
    scale = float(attrs.get("spatial_scale", 1.0))
    ctm = attrs.get("coordinate_transformation_mode", "half_pixel" if half_pixel_default else "output_half_pixel")
    half_pixel = ctm == "half_pixel"

    def run(x, rois, batch_indices):
        N, C, H, W = x.shape
        R = rois.shape[0]
        acc = np.float64 if x.dtype == np.float64 else np.float32
        xf = x.astype(acc, copy=False)
        y = np.zeros((R, C, oh, ow), dtype=acc)
        # roi geometry in the tensor's precision: 5 * 0.8 is 4 in float32 but not in float64,
        # and the adaptive grid size (a ceil) depends on it
        r = rois.astype(acc)
        sc = acc(scale)
        off = acc(0.5 if half_pixel else 0.0)
        one = acc(1.0)
        for i in range(R):
            b = int(batch_indices[i])
            x1, y1, x2, y2 = r[i, :4] * sc - off
            rw, rh = x2 - x1, y2 - y1
            if not half_pixel:
                rw, rh = max(rw, one), max(rh, one)
            bh, bw = rh / acc(oh), rw / acc(ow)
            gh = sampling_ratio if sampling_ratio > 0 else int(math.ceil(rh / acc(oh)))
            gw = sampling_ratio if sampling_ratio > 0 else int(math.ceil(rw / acc(ow)))
            gh, gw = max(gh, 1), max(gw, 1)
            ys = (y1 + np.arange(oh, dtype=acc)[:, None] * bh + (np.arange(gh, dtype=acc)[None, :] + acc(0.5)) * bh / acc(gh)).reshape(-1)
            xs = (x1 + np.arange(ow, dtype=acc)[:, None] * bw + (np.arange(gw, dtype=acc)[None, :] + acc(0.5)) * bw / acc(gw)).reshape(-1)
            yl, yh, wyl, wyh = _bilinear_axis(ys, H)
            xl, xh, wxl, wxh = _bilinear_axis(xs, W)
            img = xf[b]
            v_ll = img[:, yl[:, None], xl[None, :]]
            v_lh = img[:, yl[:, None], xh[None, :]]
            v_hl = img[:, yh[:, None], xl[None, :]]
            v_hh = img[:, yh[:, None], xh[None, :]]
            w_ll = (wyl[:, None] * wxl[None, :]).astype(acc)
            w_lh = (wyl[:, None] * wxh[None, :]).astype(acc)
            w_hl = (wyh[:, None] * wxl[None, :]).astype(acc)
            w_hh = (wyh[:, None] * wxh[None, :]).astype(acc)
            # the spec: each sample's value comes "directly through bilinear interpolation", and
            # the bin pools those values, by their mean ("avg") or their largest ("max")
            v = (v_ll * w_ll + v_lh * w_lh + v_hl * w_hl + v_hh * w_hh).reshape(C, oh, gh, ow, gw)
            y[i] = v.max(axis=(2, 4)) if mode == "max" else v.mean(axis=(2, 4))
        return (y.astype(x.dtype, copy=False),)

    return run


# RoiAlign-16 made half_pixel the default coordinate_transformation_mode
register_each("RoiAlign", (10, 16), lambda node, since: _roi_align_factory(node, half_pixel_default=since >= 16))
