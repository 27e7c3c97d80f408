"""Resize-11/13/18/19: nearest, linear and cubic resampling, one axis after another.

Each resized axis: its scale (``scales[i]``, or ``sizes[i] / in_size`` after
``keep_aspect_ratio_policy``), its output length (``floor(in * (roi_end - roi_start) * scale)``,
or the size), each output coordinate mapped back by ``coordinate_transformation_mode`` (the spec's
formulas, in float64), then the taps gathered and weighted: nearest by ``nearest_mode``, linear
two taps, cubic four with ``cubic_coeff_a`` (outside taps clamped to the edge, or with
``exclude_outside`` given weight 0 and the rest renormalized); tf_crop_and_resize puts
``extrapolation_value`` where the coordinate falls outside [0, length - 1]. Everything is a
TensorFlow op on the traced values, so scales and sizes may be graph inputs. Antialiasing has no
lowering yet; linear and cubic of integer data neither (the spec does not say how they round)."""

from __future__ import annotations

import tensorflow as tf

from ..base import Unsupported
from .registry import lowers

_F = tf.float64


def _source(mode, x, scale, n_in, n_out, start, end):
    """x_original for output coordinates ``x`` (float64) on one axis."""
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        adjustment = tf.cast(n_out, _F) / (scale * n_in)
        offset = n_in / 2 * (1 - adjustment)
        return offset + (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return tf.where(n_out > 1, (x + 0.5) / scale - 0.5, tf.zeros_like(x))
    if mode == "align_corners":  # length_resized is the target scale * length, fractional from a scale
        target = scale * n_in  # (the spec's resize_downsample_scales_linear_align_corners example)
        return tf.where(tf.equal(target, 1), tf.zeros_like(x), x * (n_in - 1) / tf.where(tf.equal(target, 1), tf.ones_like(target), target - 1))
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    if mode == "tf_crop_and_resize":
        span = tf.maximum(tf.cast(n_out, _F) - 1, 1)
        return tf.where(n_out > 1, start * (n_in - 1) + x * (end - start) * (n_in - 1) / span,
                        tf.fill(tf.shape(x), 0.5 * (start + end) * (n_in - 1)))
    raise ValueError(f"coordinate_transformation_mode {mode!r}")


def _cubic_weights(t, a):
    """The four taps at offsets -1, 0, 1, 2 of a point t in [0, 1) past its floor."""
    def far(d):  # 1 < |d| < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    def near(d):  # |d| <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _resize_axis(out, d, scale, n_out, start, end, *, mode, ctm, nearest_mode, a, exclude_outside, extrapolation):
    n_in_i = tf.shape(out, out_type=tf.int64)[d]
    n_in = tf.cast(n_in_i, _F)
    pos = _source(ctm, tf.cast(tf.range(n_out), _F), scale, n_in, n_out, start, end)
    if mode == "nearest":
        rounded = {"round_prefer_floor": tf.math.ceil(pos - 0.5), "round_prefer_ceil": tf.math.floor(pos + 0.5),
                   "floor": tf.math.floor(pos), "ceil": tf.math.ceil(pos)}[nearest_mode]
        taps = [(tf.cast(rounded, tf.int64), tf.ones_like(pos))]
    else:
        base = tf.math.floor(pos)
        t = pos - base
        first = tf.cast(base, tf.int64)
        if mode == "linear":
            taps = [(first, 1 - t), (first + 1, t)]
        else:
            taps = list(zip([first - 1, first, first + 1, first + 2], _cubic_weights(t, a)))
        if exclude_outside:
            inside = [tf.cast((i >= 0) & (i < n_in_i), _F) * w for i, w in taps]
            total = tf.add_n(inside)
            taps = [(i, w / total) for (i, _), w in zip(taps, inside)]
    shape = [1] * out.shape.rank
    shape[d] = -1
    result = None
    for i, w in taps:
        picked = tf.gather(out, tf.clip_by_value(i, 0, n_in_i - 1), axis=d)
        term = picked if mode == "nearest" else picked * tf.reshape(tf.cast(w, out.dtype), shape)
        result = term if result is None else result + term
    if ctm == "tf_crop_and_resize":
        outside = tf.reshape((pos < 0) | (pos > n_in - 1), shape)
        result = tf.where(outside, tf.cast(extrapolation, out.dtype), result)
    return result


@lowers("Resize", 11, 13, 18, 19)
def resize(node, x, roi=None, scales=None, sizes=None, *, antialias=0, axes=None, coordinate_transformation_mode="half_pixel",
           cubic_coeff_a=-0.75, exclude_outside=0, extrapolation_value=0.0, keep_aspect_ratio_policy="stretch", mode="nearest",
           nearest_mode="round_prefer_floor"):
    if antialias:
        raise Unsupported(f"{node}: antialias")
    if mode != "nearest" and not x.dtype.is_floating:
        raise Unsupported(f"{node}: {mode} resampling of {x.dtype.name}")
    rank = x.shape.rank
    on = [a + rank if a < 0 else a for a in axes] if axes is not None else list(range(rank))
    dims = tf.cast(tf.shape(x, out_type=tf.int64), _F)
    have_sizes = sizes is not None and sizes.shape.num_elements() != 0
    if have_sizes:
        wanted = tf.cast(tf.reshape(sizes, [-1]), _F)
        ratio = wanted / tf.gather(dims, on)
        if keep_aspect_ratio_policy in ("not_larger", "not_smaller"):
            common = tf.reduce_min(ratio) if keep_aspect_ratio_policy == "not_larger" else tf.reduce_max(ratio)
            ratio = tf.fill(tf.shape(ratio), common)
            lengths = tf.cast(tf.math.floor(ratio * tf.gather(dims, on) + 0.5), tf.int64)  # round_int: halves up
        else:
            lengths = tf.cast(wanted, tf.int64)
        scale_of = ratio
    else:
        scale_of = tf.cast(tf.reshape(scales, [-1]), _F)
    n = len(on)
    if roi is not None and roi.shape.num_elements() != 0:
        r = tf.cast(tf.reshape(roi, [-1]), _F)
        if r.shape[0] == 2 * rank and n != rank:  # a roi over every axis
            r = tf.concat([tf.gather(r, on), tf.gather(r, [rank + a for a in on])], 0)
        starts, ends = r[:n], r[n:]
    else:
        starts, ends = tf.zeros([n], _F), tf.ones([n], _F)
    out = x
    for k, d in enumerate(on):
        scale = scale_of[k]
        if have_sizes:
            n_out = lengths[k]
        else:
            extent = (ends[k] - starts[k]) if coordinate_transformation_mode == "tf_crop_and_resize" else 1.0
            n_out = tf.cast(tf.math.floor(dims[d] * extent * scale), tf.int64)
        out = _resize_axis(out, d, scale, n_out, starts[k], ends[k], mode=mode, ctm=coordinate_transformation_mode,
                           nearest_mode=nearest_mode, a=tf.constant(cubic_coeff_a, _F), exclude_outside=exclude_outside,
                           extrapolation=extrapolation_value)
    return out


@lowers("Resize", 10)
@lowers("Upsample", 9)
def resize_10(node, x, scales, *, mode="nearest"):
    # the legacy resampling: x_original = x_resized / scale, nearest taking the floor
    return resize(node, x, None, scales, mode=mode, coordinate_transformation_mode="asymmetric", nearest_mode="floor")
