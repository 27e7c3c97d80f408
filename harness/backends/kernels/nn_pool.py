"""Pooling kernels: MaxPool, AveragePool, LpPool, Global*Pool, MaxRoiPool, MaxUnpool, RoiAlign.

Windowed pooling never loops over output pixels: it loops over the (few) kernel positions and
combines one strided view of the padded input per position (np.maximum / np.add).
"""

from __future__ import annotations

import math

import numpy as np

from .nn_util import BFLOAT16, ints, kernel_offsets, pad_to_windows, prod, spatial_geometry, window_slices
from .registry import register


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


# --------------------------------------------------------------------------- MaxPool


def max_pool(x, g, want_indices=False, storage_order=0):
    xp = pad_to_windows(x, g.out, g.begin, g.strides, g.dilations, g.kernel, _lowest(x.dtype))
    offsets = list(kernel_offsets(g.kernel))
    y = None
    arg = None
    for k, off in enumerate(offsets):
        v = xp[window_slices(off, g.out, g.strides, g.dilations)]
        if y is None:
            y = v.copy()
            if want_indices:
                arg = np.zeros(y.shape, dtype=np.int64)
            continue
        if want_indices:
            better = v > y
            np.copyto(y, v, where=better)
            arg[better] = k
        else:
            np.maximum(y, v, out=y)
    if not want_indices:
        return y, None
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


def _sum_windows(xp, g, acc_dtype, power=None):
    y = None
    for off in kernel_offsets(g.kernel):
        v = xp[window_slices(off, g.out, g.strides, g.dilations)]
        if power is not None:
            v = np.abs(v.astype(acc_dtype, copy=False))
            v = v * v if power == 2 else v**power
        if y is None:
            y = v.astype(acc_dtype, copy=True)
        else:
            y += v
    return y


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
        xp = pad_to_windows(x, g.out, g.begin, g.strides, g.dilations, g.kernel, 0)
        y = _sum_windows(xp, g, acc)
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
        xp = pad_to_windows(x, g.out, g.begin, g.strides, g.dilations, g.kernel, 0)
        y = _sum_windows(xp, g, acc, power=p)
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
        r = rois.astype(np.float64)
        for i in range(R):
            b = int(r[i, 0])
            x1, y1, x2, y2 = (int(np.round(v * scale)) for v in r[i, 1:5])
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
        r = rois.astype(np.float64)
        off = 0.5 if half_pixel else 0.0
        for i in range(R):
            b = int(batch_indices[i])
            x1, y1, x2, y2 = r[i, :4] * scale - off
            rw, rh = x2 - x1, y2 - y1
            if not half_pixel:
                rw, rh = max(rw, 1.0), max(rh, 1.0)
            bh, bw = rh / oh, rw / ow
            gh = sampling_ratio if sampling_ratio > 0 else int(math.ceil(rh / oh))
            gw = sampling_ratio if sampling_ratio > 0 else int(math.ceil(rw / ow))
            gh, gw = max(gh, 1), max(gw, 1)
            ys = (y1 + np.arange(oh)[:, None] * bh + (np.arange(gh)[None, :] + 0.5) * bh / gh).reshape(-1)
            xs = (x1 + np.arange(ow)[:, None] * bw + (np.arange(gw)[None, :] + 0.5) * bw / gw).reshape(-1)
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
            if mode == "max":
                v = np.maximum(
                    np.maximum(v_ll * w_ll, v_lh * w_lh), np.maximum(v_hl * w_hl, v_hh * w_hh)
                ).reshape(C, oh, gh, ow, gw)
                y[i] = v.max(axis=(2, 4))
            else:
                v = (v_ll * w_ll + v_lh * w_lh + v_hl * w_hl + v_hh * w_hh).reshape(C, oh, gh, ow, gw)
                y[i] = v.mean(axis=(2, 4))
        return (y.astype(x.dtype, copy=False),)

    return run


@register("RoiAlign", since=10)
def roi_align_10(node):
    return _roi_align_factory(node, half_pixel_default=False)


@register("RoiAlign", since=16)
def roi_align_16(node):
    return _roi_align_factory(node, half_pixel_default=True)
