"""Resampling kernels: Resize, Upsample, GridSample, AffineGrid.

Resize is separable: every resized axis gets a small (out x in) interpolation matrix (or, for
nearest, an index vector) built once per shape and applied with one matmul / take per axis;
linear and cubic on int64 / uint64 data use exact rational weights and coordinates (object arrays).
GridSample gathers all 2^r (linear) or 4^r (cubic) taps at once with vectorised indexing.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .nn_util import BFLOAT16
from .registry import register, register_each


def _float_dtype(dtype):
    return np.float64 if np.dtype(dtype) == np.float64 else np.float32


def _resize_float_dtype(dtype):
    """float64 for double and for integers (float32 holds 24 bits: an int32 average would lose its low bits)."""
    return np.float64 if np.dtype(dtype) == np.float64 or np.dtype(dtype).kind in "iu" else np.float32


def _finish(y, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if y.dtype == object:  # exact values (64-bit data): round(Fraction) rounds half to even
            flat = [min(max(round(Fraction(v)), info.min), info.max) for v in y.reshape(-1)]
            return np.array(flat, dtype=dtype).reshape(y.shape)
        return np.clip(np.rint(y), info.min, info.max).astype(dtype)
    if dtype == np.bool_:
        return y != 0
    return y.astype(dtype, copy=False)


# --------------------------------------------------------------------------- Resize: 1-D plans


def _cubic_kernel(t, a):
    t = np.abs(t)
    t2, t3 = t * t, t * t * t
    return np.where(
        t <= 1,
        (a + 2) * t3 - (a + 3) * t2 + 1,
        np.where(t < 2, a * t3 - 5 * a * t2 + 8 * a * t - 4 * a, 0),
    )


def _linear_kernel(t):
    return np.maximum(1 - np.abs(t), 0)


def _original_coords(mode, L_in, L_out, scale, roi_start, roi_end, out_float, exact=False):
    """x_original per output index: float64, or (``exact``: the arguments Fractions) Fractions."""
    x = np.array([Fraction(j) for j in range(L_out)], dtype=object) if exact else np.arange(L_out, dtype=np.float64)
    half = Fraction(1, 2) if exact else 0.5
    zeros = x * 0
    if mode == "half_pixel":
        return (x + half) / scale - half
    if mode == "half_pixel_symmetric":
        adjustment = L_out / out_float
        center = L_in * half
        offset = center * (1 - adjustment)
        return offset + (x + half) / scale - half
    if mode == "pytorch_half_pixel":
        return (x + half) / scale - half if L_out > 1 else zeros
    if mode == "align_corners":
        # length_resized is the (possibly fractional) in * scale, as in the official cases
        if L_out > 1 and out_float != 1:
            return x * (L_in - 1) / (out_float - 1)
        return zeros
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + half) / scale
    if mode == "tf_crop_and_resize":
        if L_out > 1:
            return roi_start * (L_in - 1) + x * (roi_end - roi_start) * (L_in - 1) / (L_out - 1)
        return zeros + half * (roi_start + roi_end) * (L_in - 1)
    raise ValueError(f"unsupported coordinate_transformation_mode {mode!r}")


def _nearest_index(xo, nearest_mode, L_in):
    if nearest_mode == "round_prefer_ceil":
        idx = np.floor(xo + 0.5)
    elif nearest_mode == "floor":
        idx = np.floor(xo)
    elif nearest_mode == "ceil":
        idx = np.ceil(xo)
    else:  # round_prefer_floor (default)
        idx = np.ceil(xo - 0.5)
    return np.clip(idx, 0, L_in - 1).astype(np.int64)


class _AxisPlan:
    """How one axis is resampled: ('take', idx) or ('matrix', M); plus an out-of-range mask."""

    __slots__ = ("kind", "data", "outside", "identity")

    def __init__(self, kind, data, outside=None, identity=False):
        self.kind, self.data, self.outside, self.identity = kind, data, outside, identity


def _axis_plan(p, L_in, L_out, scale, roi_start, roi_end, out_float):
    exact = p.get("exact", False)  # 64-bit integer data: weights as Fractions (float64 holds neither them nor the data)
    if exact:
        scale, roi_start, roi_end, out_float = (Fraction(v) for v in (scale, roi_start, roi_end, out_float))
    xo = _original_coords(p["ctm"], L_in, L_out, scale, roi_start, roi_end, out_float, exact)
    outside = None
    if p["ctm"] == "tf_crop_and_resize":
        out_mask = (xo < 0) | (xo > L_in - 1)
        if out_mask.any():
            outside = out_mask
    if p["mode"] == "nearest":
        idx = _nearest_index(xo, p["nearest_mode"], L_in)
        identity = L_in == L_out and np.array_equal(idx, np.arange(L_in)) and outside is None
        return _AxisPlan("take", idx, outside, identity)
    if p["mode"] == "linear":
        radius = 1.0
        kern = _linear_kernel
    else:
        radius = 2.0
        a = Fraction(p["cubic_a"]) if exact else p["cubic_a"]

        def kern(t):
            return _cubic_kernel(t, a)

    stretch = 1 / scale if (p["antialias"] and scale < 1) else 1
    support = radius * stretch
    base = np.array([math.floor(v) for v in xo], dtype=np.int64) if exact else np.floor(xo).astype(np.int64)
    ntaps_left = int(math.ceil(support)) - 1
    ntaps = 2 * int(math.ceil(support))
    taps = base[:, None] + np.arange(-ntaps_left, ntaps - ntaps_left)[None, :]
    w = kern((taps - xo[:, None]) / stretch)
    inside = (taps >= 0) & (taps < L_in)
    if p["exclude_outside"]:
        w = np.where(inside, w, 0)
    if p["exclude_outside"] or stretch != 1:
        s = w.sum(axis=1, keepdims=True)
        w = w / np.where(s == 0, 1, s)
    taps = np.clip(taps, 0, L_in - 1)
    M = np.zeros((L_out, L_in), dtype=object if exact else np.float64)
    np.add.at(M, (np.repeat(np.arange(L_out), taps.shape[1]), taps.reshape(-1)), w.reshape(-1))
    identity = L_in == L_out and outside is None and bool(np.all(M == np.eye(L_in)))
    return _AxisPlan("matrix", M, outside, identity)


def _apply_matrix(x, M, axis):
    if x.dtype != object and not np.isfinite(x).all():
        return _apply_taps(x, M, axis)
    if axis == x.ndim - 1:
        return np.matmul(x, M.T)
    pre = int(np.prod(x.shape[:axis], dtype=np.int64))
    post = int(np.prod(x.shape[axis + 1 :], dtype=np.int64))
    x3 = x.reshape(pre, x.shape[axis], post)
    y = np.matmul(M, x3)
    return y.reshape(x.shape[:axis] + (M.shape[0],) + x.shape[axis + 1 :])


def _apply_taps(x, M, axis):
    """M applied along ``axis`` over its nonzero weights only: an input element that no output
    interpolates from (weight 0 in M's row) leaves that output alone, NaN and inf included, where a
    matrix product would spread them to every output (0 * NaN is NaN)."""
    xt = np.moveaxis(x, axis, 0)
    rows, cols = np.nonzero(M)
    y = np.zeros((M.shape[0],) + xt.shape[1:], dtype=x.dtype)
    np.add.at(y, rows, M[rows, cols].reshape((-1,) + (1,) * (xt.ndim - 1)) * xt[cols])
    return np.moveaxis(y, 0, axis)


def _resize(x, plans, p):
    y = x
    outside_full = None
    float_path = p["mode"] != "nearest"
    if float_path:
        y = y.astype(object if p.get("exact") else _resize_float_dtype(x.dtype), copy=False)
    for axis, plan in enumerate(plans):
        if plan is None:
            continue
        if not plan.identity:
            if plan.kind == "take":
                y = np.take(y, plan.data, axis=axis)
            else:
                y = _apply_matrix(y, plan.data.astype(y.dtype, copy=False), axis)
        if plan.outside is not None:
            shape = [1] * x.ndim
            shape[axis] = plan.outside.shape[0]
            m = plan.outside.reshape(shape)
            outside_full = m if outside_full is None else (outside_full | m)
    if outside_full is not None:
        fill = np.asarray(p["extrapolation_value"], dtype=np.float64)
        fill = _finish(fill, y.dtype) if y.dtype.kind in "iu" else fill.astype(y.dtype)  # an integer output: rounded as the averages are
        y = np.where(outside_full, fill, y)
    if float_path:
        return _finish(y, x.dtype)
    return np.ascontiguousarray(y)


def _round_half_up(v):
    return int(math.floor(v + 0.5))


def _make_resize(node, version):
    attrs = node.attrs
    p = {
        "mode": attrs.get("mode", "nearest"),
        "ctm": attrs.get("coordinate_transformation_mode", "half_pixel") if version >= 11 else "asymmetric",
        "nearest_mode": attrs.get("nearest_mode", "round_prefer_floor") if version >= 11 else "floor",
        "cubic_a": float(attrs.get("cubic_coeff_a", -0.75)),
        "exclude_outside": int(attrs.get("exclude_outside", 0)),
        "extrapolation_value": float(attrs.get("extrapolation_value", 0.0)),
        "antialias": int(attrs.get("antialias", 0)),
    }
    if p["mode"] in ("bilinear",):
        p["mode"] = "linear"
    if p["mode"] in ("bicubic",):
        p["mode"] = "cubic"
    policy = attrs.get("keep_aspect_ratio_policy", "stretch")
    axes_attr = attrs.get("axes")
    cache: dict = {}
    wide = (np.dtype(np.int64), np.dtype(np.uint64))

    def plan_for(x_shape, roi, scales, sizes, p):
        r = len(x_shape)
        axes = [a % r for a in axes_attr] if axes_attr else list(range(r))
        n = len(axes)
        full_scales = [1.0] * r
        out_sizes = list(x_shape)
        out_float = [float(s) for s in x_shape]
        roi_s = [0.0] * r
        roi_e = [1.0] * r
        if roi is not None and np.asarray(roi).size == 2 * n:
            rv = np.asarray(roi, dtype=np.float64).reshape(-1)
            for i, a in enumerate(axes):
                roi_s[a], roi_e[a] = float(rv[i]), float(rv[i + n])
        if sizes is not None and np.asarray(sizes).size:
            sv = [int(v) for v in np.asarray(sizes).reshape(-1)]
            if policy in ("not_larger", "not_smaller"):
                ratios = [sv[i] / x_shape[a] for i, a in enumerate(axes)]
                s = min(ratios) if policy == "not_larger" else max(ratios)
                for a in axes:
                    out_sizes[a] = _round_half_up(s * x_shape[a])
                    # the common scale drives the coordinate transform (as onnxruntime and the
                    # ONNX reference evaluator do), not the per-axis out/in ratio after rounding
                    full_scales[a] = s
                    out_float[a] = s * x_shape[a]
            else:
                for i, a in enumerate(axes):
                    out_sizes[a] = sv[i]
                    full_scales[a] = sv[i] / x_shape[a] if x_shape[a] else 1.0
                    out_float[a] = float(sv[i])
        else:
            sc = [float(v) for v in np.asarray(scales, dtype=np.float32).reshape(-1)]
            for i, a in enumerate(axes):
                full_scales[a] = sc[i]
                # the product is formed in float32, as the scales are float32
                if p["ctm"] == "tf_crop_and_resize":
                    of = float(np.float32(x_shape[a]) * np.float32(roi_e[a] - roi_s[a]) * np.float32(sc[i]))
                else:
                    of = float(np.float32(x_shape[a]) * np.float32(sc[i]))
                out_float[a] = of
                out_sizes[a] = int(math.floor(of))
        plans = []
        for a in range(r):
            # scale 1 maps every index to itself, except in the two modes that shift or crop
            if out_sizes[a] == x_shape[a] and full_scales[a] == 1.0 and p["ctm"] not in ("tf_crop_and_resize", "tf_half_pixel_for_nn"):
                plans.append(None)
                continue
            plans.append(_axis_plan(p, x_shape[a], out_sizes[a], full_scales[a], roi_s[a], roi_e[a], out_float[a]))
        return plans

    def run(x, *rest):
        if version == 10:
            roi, scales, sizes = None, rest[0], None
        else:
            roi = rest[0] if len(rest) > 0 else None
            scales = rest[1] if len(rest) > 1 else None
            sizes = rest[2] if len(rest) > 2 else None
        if scales is not None and np.asarray(scales).size == 0:
            scales = None
        px = {**p, "exact": p["mode"] != "nearest" and x.dtype in wide}
        key = (
            px["exact"],
            x.shape,
            None if roi is None else np.asarray(roi).tobytes(),
            None if scales is None else np.asarray(scales).tobytes(),
            None if sizes is None else np.asarray(sizes).tobytes(),
        )
        plans = cache.get(key)
        if plans is None:
            plans = cache[key] = plan_for(x.shape, roi, scales, sizes, px)
        return (_resize(x, plans, px),)

    return run


register_each("Resize", (10, 11), _make_resize)


@register("Upsample", since=1)
def upsample_1(node):
    attrs = node.attrs
    mode = attrs.get("mode", "nearest")
    if node.opset < 7:
        scales = [1.0, 1.0, float(attrs.get("height_scale", 1.0)), float(attrs.get("width_scale", 1.0))]
    else:
        scales = [float(v) for v in attrs.get("scales", [])]
    inner = _make_resize(_FakeNode({"mode": mode}), 10)

    def run(x):
        return inner(x, np.asarray(scales, dtype=np.float32))

    return run


@register("Upsample", since=9)
def upsample_9(node):
    inner = _make_resize(_FakeNode({"mode": node.attrs.get("mode", "nearest")}), 10)

    def run(x, scales):
        return inner(x, scales)

    return run


class _FakeNode:
    def __init__(self, attrs):
        self.attrs = attrs


# --------------------------------------------------------------------------- GridSample


def _reflect(x, lo, hi):
    span = hi - lo
    if span <= 0:
        return np.zeros_like(x)
    d = np.abs(x - lo)
    flips = np.floor(d / span)
    extra = d - flips * span
    return np.where(np.fmod(flips, 2) == 0, lo + extra, hi - extra)


def _grid_finish(y, dtype):
    """GridSample's integer outputs: "computed as floating point and cast to integer at the end"
    (the cast truncates toward zero, as C's conversion; NaN, from a NaN grid position, gives 0)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(np.trunc(np.nan_to_num(y)), info.min, info.max).astype(dtype)
    return y.astype(dtype, copy=False)


def _make_grid_sample(node, legacy):
    attrs = node.attrs
    mode = attrs.get("mode", "bilinear" if legacy else "linear")
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    padding = attrs.get("padding_mode", "zeros")
    align = int(attrs.get("align_corners", 0))

    def run(x, grid):
        N, C = x.shape[:2]
        S = x.shape[2:]
        r = len(S)
        O = grid.shape[1:-1]
        P = int(np.prod(O, dtype=np.int64))
        fd = _float_dtype(x.dtype if x.dtype.kind == "f" else grid.dtype)
        out_shape = (N, C) + tuple(O)
        if N * C * P == 0:
            return (np.zeros(out_shape, dtype=x.dtype),)
        g = grid.astype(np.float64).reshape(N, P, r)
        # a NaN position (or an infinite one reflected without end) samples nothing: NaN
        nowhere = np.isnan(g).any(axis=-1)
        if padding == "reflection":
            nowhere |= np.isinf(g).any(axis=-1)
        coords = []
        for i in range(r):
            gi = np.where(nowhere, 0.0, g[:, :, r - 1 - i])
            L = S[i]
            c = (gi + 1) / 2 * (L - 1) if align else ((gi + 1) * L - 1) / 2
            if padding != "reflection":  # an infinite position is out of bound, a few pixels out is as good
                c = np.clip(c, -L - 4.0, 2.0 * L + 4.0)
            if mode != "cubic":
                if padding == "border":
                    c = np.clip(c, 0, L - 1)
                elif padding == "reflection":
                    c = _reflect(c, 0.0, L - 1.0) if align else _reflect(c, -0.5, L - 0.5)
                    c = np.clip(c, 0, L - 1)
            coords.append(c)
        xf = x.reshape(N, C, -1)
        if x.dtype.kind != "f" and x.dtype != BFLOAT16:
            xf = xf.astype(np.float64)
        elif xf.dtype != fd:
            xf = xf.astype(fd)
        strides = [int(np.prod(S[i + 1 :], dtype=np.int64)) for i in range(r)]

        def fix_index(idx, L):
            """(index, valid) for a tap index along an axis of length L under the padding mode."""
            valid = (idx >= 0) & (idx < L)
            if padding == "zeros":
                return np.clip(idx, 0, L - 1), valid
            if padding == "border":
                return np.clip(idx, 0, L - 1), None
            ref = _reflect(idx.astype(np.float64), 0.0, L - 1.0) if align else _reflect(idx.astype(np.float64), -0.5, L - 0.5)
            return np.clip(np.rint(ref), 0, L - 1).astype(np.int64), None

        if mode == "nearest":
            flat = np.zeros((N, P), dtype=np.int64)
            valid = np.ones((N, P), dtype=bool)
            for i in range(r):
                idx = np.rint(coords[i]).astype(np.int64)
                idx, v = fix_index(idx, S[i])
                flat += idx * strides[i]
                if v is not None:
                    valid &= v
            y = np.take_along_axis(xf, flat[:, None, :], axis=2)
            y = np.where(valid[:, None, :], y, 0)
        else:
            if mode == "linear":
                offs = (0, 1)
            else:
                offs = (-1, 0, 1, 2)
            per_axis = []
            for i in range(r):
                base = np.floor(coords[i])
                t = coords[i] - base
                base = base.astype(np.int64)
                entries = []
                for o in offs:
                    if mode == "linear":
                        w = (1 - t) if o == 0 else t
                    else:
                        w = _cubic_kernel(t - o, -0.75)
                    idx, v = fix_index(base + o, S[i])
                    entries.append((idx * strides[i], w, v))
                per_axis.append(entries)
            y = None
            for combo in np.ndindex(*([len(offs)] * r)):
                flat = np.zeros((N, P), dtype=np.int64)
                w = np.ones((N, P), dtype=np.float64)
                valid = np.ones((N, P), dtype=bool)
                for i, k in enumerate(combo):
                    fi, wi, vi = per_axis[i][k]
                    flat = flat + fi
                    w = w * wi
                    if vi is not None:
                        valid &= vi
                # a tap out of bound under zeros padding is 0: it adds nothing (never 0 x its clamped neighbour)
                with np.errstate(invalid="ignore"):
                    v = np.where(valid[:, None, :], np.take_along_axis(xf, flat[:, None, :], axis=2) * w[:, None, :].astype(xf.dtype), 0)
                y = v if y is None else y + v
        if x.dtype.kind == "f" or x.dtype == BFLOAT16:
            y = np.where(nowhere[:, None, :], np.nan, y)
        else:
            y = np.where(nowhere[:, None, :], 0, y)
        y = y.reshape(out_shape)
        return (_grid_finish(y, x.dtype) if x.dtype != y.dtype else y,)

    return run


register_each("GridSample", (16, 20), lambda node, since: _make_grid_sample(node, legacy=since < 20))


# --------------------------------------------------------------------------- AffineGrid


@register("AffineGrid", since=20)
def affine_grid(node):
    align = int(node.attrs.get("align_corners", 0))

    def run(theta, size):
        size = [int(v) for v in np.asarray(size).reshape(-1)]
        N = size[0]
        sp = size[2:]
        r = len(sp)
        fd = theta.dtype if theta.dtype == np.float64 else np.float32
        lin = []
        for L in sp:
            if align:
                v = np.linspace(-1.0, 1.0, L) if L > 1 else np.zeros(L)
            else:
                v = (2.0 * np.arange(L) + 1.0) / L - 1.0
            lin.append(v)
        mesh = np.meshgrid(*lin, indexing="ij")  # spatial order (D, H, W)
        # homogeneous coordinates ordered (x, y, [z], 1) where x runs along the last axis
        base = np.stack([mesh[r - 1 - i] for i in range(r)] + [np.ones(sp)], axis=-1)
        base = base.reshape(-1, r + 1).astype(fd)
        th = theta.astype(fd).reshape(N, r, r + 1)
        grid = np.matmul(base[None], th.transpose(0, 2, 1))  # (N, P, r)
        return (grid.reshape((N,) + tuple(sp) + (r,)).astype(theta.dtype, copy=False),)

    return run
