"""GridSample-16/20/22: X (N, C, d1..dr) sampled at the grid's normalized locations.

From the spec: a normalized g maps to ``(g + 1) / 2 * (L - 1)`` with align_corners=1 and
``((g + 1) * L - 1) / 2`` with 0 (the grid vector lists the innermost dimension first); nearest
takes one tap (halves to even, as GridSample-20 says), linear two per axis, cubic four with the
cubic convolution kernel of A = -0.75 (torch's grid_sample, which the spec names). A tap outside
the image: zeros padding "use 0", border clamps it, reflection reflects it by the border (the edge
pixels' centres with align_corners=1, their outer edges otherwise); nearest moves the point to
the border or reflects it first, then rounds. Computed in float64 and cast once to X's type
(integers truncated toward zero: "computed as floating point and cast to integer at the end");
a NaN grid location (or an infinite one under reflection) gives NaN."""

from __future__ import annotations

import itertools

import numpy as np
import tensorflow as tf

from ..base import Unsupported
from .registry import lowers

_F = tf.float64
_A = -0.75


def _cubic(d):
    d = tf.abs(d)
    near = ((_A + 2) * d - (_A + 3)) * d * d + 1
    far = ((_A * d - 5 * _A) * d + 8 * _A) * d - 4 * _A
    return tf.where(d <= 1, near, tf.where(d < 2, far, tf.zeros_like(d)))


def _reflect(i, lo, hi):
    span = hi - lo
    d = tf.abs(i - lo)
    flips = tf.math.floor(d / span) if span > 0 else tf.zeros_like(d)
    extra = d - flips * span
    out = tf.where(tf.math.floormod(flips, 2) == 0, lo + extra, hi - extra)
    return out if span > 0 else tf.zeros_like(i)


def _pad(idx, size, padding, align):
    """(index, valid) for the integer tap positions ``idx`` (float64)."""
    if padding == "zeros":
        return tf.clip_by_value(idx, 0, size - 1), (idx >= 0) & (idx <= size - 1)
    if padding == "border":
        return tf.clip_by_value(idx, 0, size - 1), tf.ones_like(idx, tf.bool)
    lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
    return tf.clip_by_value(tf.math.round(_reflect(idx, lo, hi)), 0, size - 1), tf.ones_like(idx, tf.bool)


@lowers("GridSample", 16, 20, 22)
def grid_sample(node, x, grid, *, align_corners=0, mode=None, padding_mode="zeros"):
    mode = mode or ("bilinear" if node.since == 16 else "linear")
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    if x.dtype == tf.string or x.dtype.is_complex:
        raise Unsupported(f"{node}: sampling {x.dtype.name}")
    spatial = x.shape.as_list()[2:]
    if None in spatial:
        raise Unsupported(f"{node}: spatial sizes known only when the graph runs")
    r = len(spatial)
    g = tf.cast(grid, _F)
    coords, bad = [], tf.zeros(tf.shape(g)[:-1], tf.bool)
    for axis, size in enumerate(spatial):
        gi = g[..., r - 1 - axis]
        c = (gi + 1) / 2 * (size - 1) if align_corners else ((gi + 1) * size - 1) / 2
        bad |= tf.math.is_nan(c) | (tf.math.is_inf(c) if padding_mode == "reflection" else tf.zeros_like(bad))
        c = tf.where(bad, tf.zeros_like(c), c if padding_mode == "reflection" else tf.clip_by_value(c, -size - 4.0, 2.0 * size + 4.0))
        coords.append(c)
    if mode == "nearest" and padding_mode == "border":
        coords = [tf.clip_by_value(c, 0, size - 1) for c, size in zip(coords, spatial)]
    elif mode == "nearest" and padding_mode == "reflection":
        coords = [tf.clip_by_value(_reflect(c, *((0.0, size - 1.0) if align_corners else (-0.5, size - 0.5))), 0, size - 1)
                  for c, size in zip(coords, spatial)]
    per_axis = []
    for c, size in zip(coords, spatial):
        if mode == "nearest":
            base, offsets, weights = tf.math.round(c), [0.0], [tf.ones_like(c)]  # halves to even
        else:
            base = tf.math.floor(c)
            t = c - base
            if mode == "linear":
                offsets, weights = [0.0, 1.0], [1 - t, t]
            else:
                offsets, weights = [-1.0, 0.0, 1.0, 2.0], [_cubic(t + 1), _cubic(t), _cubic(1 - t), _cubic(2 - t)]
        per_axis.append([(*_pad(base + o, size, padding_mode, align_corners), w) for o, w in zip(offsets, weights)])
    n, ch = tf.shape(x)[0], x.shape[1]
    flat_x = tf.reshape(tf.cast(x, _F), [n, ch, -1])
    strides = [int(np.prod(spatial[a + 1:], dtype=np.int64)) for a in range(r)]
    y = None
    for combo in itertools.product(*[range(len(t)) for t in per_axis]):
        flat, w, valid = tf.zeros_like(bad, tf.int64), tf.ones_like(coords[0]), tf.ones_like(bad)
        for axis, k in enumerate(combo):
            idx, vk, wk = per_axis[axis][k]
            flat += tf.cast(idx, tf.int64) * strides[axis]
            w, valid = w * wk, valid & vk
        out_shape = tf.shape(flat)
        vals = tf.gather(flat_x, tf.reshape(flat, [n, -1]), axis=2, batch_dims=1)  # (N, C, P)
        vals = tf.reshape(vals, tf.concat([[n, ch], out_shape[1:]], 0))
        term = tf.where(tf.expand_dims(valid, 1), tf.expand_dims(w, 1) * vals, tf.zeros_like(vals))
        y = term if y is None else y + term
    y = tf.where(tf.expand_dims(bad, 1), tf.constant(float("nan"), _F), y)
    if x.dtype == tf.bool:
        return tf.not_equal(y, 0)
    return tf.cast(y, x.dtype)  # integers: truncation toward zero
