"""The rest written for TensorFlow: GroupNormalization, LRN, Det, ImageDecoder (tf.io), the
training optimizers (Adagrad, Momentum, Adam; ai.onnx.preview.training), TensorScatter,
AffineGrid, MaxUnpool, and Binarizer / ArrayFeatureExtractor / LabelEncoder (ai.onnx.ml)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from ..base import Unsupported
from ..lowering import membership_sets, optimizer_groups
from .ops_nn import _STASH, _channel
from .registry import lowers

_TRAINING = "ai.onnx.preview.training"
_ML = "ai.onnx.ml"


@lowers("GroupNormalization", 18, 21)
def group_norm(node, x, scale, bias, *, epsilon=1e-5, num_groups, stash_type=1):
    """Mean and variance per (batch, group) in stash_type (21; 18 works in the input's type), then
    scale and bias per channel (21) or per group (18)."""
    work = tf.cast(x, _STASH[stash_type]) if node.since >= 21 else x
    shape = tf.shape(x)
    grouped = tf.reshape(work, tf.stack([shape[0], num_groups, -1]))
    mean, var = tf.nn.moments(grouped, axes=[2], keepdims=True)
    normed = tf.cast(tf.reshape((grouped - mean) / tf.sqrt(var + tf.cast(epsilon, work.dtype)), shape), x.dtype)
    c = x.shape[1]
    if node.since == 18:
        scale, bias = tf.repeat(scale, c // num_groups), tf.repeat(bias, c // num_groups)
    return normed * _channel(scale, x.shape.rank) + _channel(bias, x.shape.rank)


@lowers("LRN", 1, 13)
def lrn(node, x, *, alpha=1e-4, beta=0.75, bias=1.0, size):
    """square_sum over the channels c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2);
    y = x / (bias + alpha / size * square_sum) ** beta."""
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    sq = tf.pad(x * x, [[0, 0], [before, after]] + [[0, 0]] * (x.shape.rank - 2))
    c = tf.shape(x)[1]
    total = tf.add_n([sq[:, k:k + c] for k in range(size)])
    return x / tf.pow(tf.cast(bias, x.dtype) + tf.cast(alpha / size, x.dtype) * total, tf.cast(beta, x.dtype))


@lowers("Det", 11, 22)
def det(node, x):
    return tf.linalg.det(x)


@lowers("Binarizer", 1, domain=_ML)
def binarizer(node, x, *, threshold=0.0):
    return tf.cast(x > tf.cast(threshold, x.dtype), x.dtype)


@lowers("ArrayFeatureExtractor", 1, domain=_ML)
def array_feature_extractor(node, x, indices):
    """Selects along the last axis; a 1-D input keeps a leading axis of 1."""
    out = tf.gather(x, tf.reshape(tf.cast(indices, tf.int64), [-1]), axis=x.shape.rank - 1)
    return tf.reshape(out, [1, -1]) if x.shape.rank == 1 else out


@lowers("TensorScatter", 24)
def tensor_scatter(node, past, update, write_indices=None, *, axis=-2, mode="linear"):
    """Each batch entry's update written into past along ``axis`` from its write index
    (``circular`` wraps the positions modulo the axis length)."""
    a = axis + past.shape.rank if axis < 0 else axis
    n, size = tf.shape(update)[a], tf.shape(past)[a]
    batch = tf.shape(past)[0]
    starts = tf.cast(write_indices, tf.int32) if write_indices is not None else tf.zeros([batch], tf.int32)
    pos = starts[:, None] + tf.range(n)[None, :]  # [B, n]
    if mode == "circular":
        pos = tf.math.floormod(pos, size)
    moved = [0, a] + [d for d in range(1, past.shape.rank) if d != a]  # batch, the axis, the rest
    back = [moved.index(d) for d in range(past.shape.rank)]
    target, values = tf.transpose(past, moved), tf.transpose(update, moved)
    index = tf.stack([tf.broadcast_to(tf.range(batch)[:, None], tf.shape(pos)), pos], axis=-1)  # [B, n, 2]
    return tf.transpose(tf.tensor_scatter_nd_update(target, index, values), back)


@lowers("Adagrad", 1, domain=_TRAINING)
def adagrad(node, r, t, *tensors, decay_factor=0.0, epsilon=1e-6, norm_coefficient=0.0):
    xs, gs, hs = optimizer_groups(tensors, 3)
    rate = tf.reshape(r, []) / (1 + tf.cast(tf.reshape(t, []), r.dtype) * decay_factor)
    new_x, new_h = [], []
    for x, g, h in zip(xs, gs, hs):
        g_reg = norm_coefficient * x + g
        h_new = h + g_reg * g_reg
        new_x.append(x - tf.cast(rate, x.dtype) * g_reg / (tf.sqrt(h_new) + epsilon))
        new_h.append(h_new)
    return tuple(new_x + new_h)


@lowers("Momentum", 1, domain=_TRAINING)
def momentum(node, r, t, *tensors, alpha, beta, mode, norm_coefficient):
    """The first iteration (T = 0) uses beta = 1; ``nesterov`` steps by g + alpha * v_new."""
    xs, gs, vs = optimizer_groups(tensors, 3)
    rate = tf.reshape(r, [])
    first = tf.equal(tf.reshape(t, []), 0)
    new_x, new_v = [], []
    for x, g, v in zip(xs, gs, vs):
        g_reg = norm_coefficient * x + g
        v_new = alpha * v + tf.where(first, tf.constant(1.0, x.dtype), tf.constant(beta, x.dtype)) * g_reg
        step = g_reg + alpha * v_new if mode == "nesterov" else v_new
        new_x.append(x - tf.cast(rate, x.dtype) * step)
        new_v.append(v_new)
    return tuple(new_x + new_v)


@lowers("Adam", 1, domain=_TRAINING)
def adam(node, r, t, *tensors, alpha=0.9, beta=0.999, epsilon=1e-6, norm_coefficient=0.0, norm_coefficient_post=0.0):
    """From T > 0 the rate is R * sqrt(1 - beta**T) / (1 - alpha**T)."""
    xs, gs, vs, hs = optimizer_groups(tensors, 4)
    rate = tf.cast(tf.reshape(r, []), tf.float64)
    step = tf.cast(tf.reshape(t, []), tf.float64)
    rate = tf.where(step > 0, rate * tf.sqrt(1 - tf.pow(tf.constant(beta, tf.float64), step)) /
                    (1 - tf.pow(tf.constant(alpha, tf.float64), step)), rate)
    new_x, new_v, new_h = [], [], []
    for x, g, v, h in zip(xs, gs, vs, hs):
        g_reg = norm_coefficient * x + g
        v_new = alpha * v + (1 - alpha) * g_reg
        h_new = beta * h + (1 - beta) * g_reg * g_reg
        x_new = x - tf.cast(rate, x.dtype) * v_new / (tf.sqrt(h_new) + epsilon)
        new_x.append((1 - norm_coefficient_post) * x_new)
        new_v.append(v_new)
        new_h.append(h_new)
    return tuple(new_x + new_v + new_h)


_BYTES = [bytes([i]) for i in range(256)]


@lowers("ImageDecoder", 20)
def image_decoder(node, encoded, *, pixel_format="RGB"):
    """tf.io.decode_image of the byte stream (made a string by joining each byte's one-byte
    string), as (H, W, C) uint8: RGB, BGR (channels reversed) or Grayscale; a format TensorFlow
    cannot decode is its "Unknown image file format" (unsupported)."""
    if pixel_format not in ("RGB", "BGR", "Grayscale"):
        raise Unsupported(f"{node}: pixel_format {pixel_format!r}")
    contents = tf.strings.reduce_join(tf.gather(tf.constant(_BYTES), tf.cast(encoded, tf.int32)))
    channels = 1 if pixel_format == "Grayscale" else 3
    # a JPEG with libjpeg's accurate integer IDCT (decode_image would take the fast one)
    image = tf.cond(tf.io.is_jpeg(contents), lambda: tf.io.decode_jpeg(contents, channels=channels, dct_method="INTEGER_ACCURATE"),
                    lambda: tf.io.decode_image(contents, channels=channels, dtype=tf.uint8, expand_animations=False))
    return tf.reverse(image, [-1]) if pixel_format == "BGR" else image


@lowers("LabelEncoder", 1, 2, 4, domain=_ML)
def label_encoder(node, x, **attrs):
    """Each element mapped to the value of its key (the last of repeated keys), else the default;
    float keys NaN match any NaN (version 4's keys_* / values_* / default_*; version 1's
    classes_strings maps strings to their index and back)."""
    keys, values, default = _label_table(node, x, attrs)
    hit = tf.equal(x[..., None], keys)
    if x.dtype.is_floating:
        hit = hit | (tf.math.is_nan(x)[..., None] & tf.math.is_nan(keys))
    n = keys.shape[0]
    last = n - 1 - tf.argmax(tf.cast(tf.reverse(hit, [-1]), tf.int32), axis=-1)  # the last matching key
    found = tf.reduce_any(hit, axis=-1)
    return tf.where(found, tf.gather(values, tf.maximum(last, 0)), default)


def _label_table(node, x, attrs):
    def pick(kind):
        for name, dtype in ((f"{kind}_tensor", None), (f"{kind}_int64s", tf.int64), (f"{kind}_floats", tf.float32),
                            (f"{kind}_strings", tf.string)):
            if attrs.get(name) is not None:
                return attrs[name] if dtype is None else tf.constant(attrs[name], dtype)
        return None

    if "classes_strings" in attrs:  # version 1: strings <-> their index
        classes = tf.constant(attrs["classes_strings"])
        index = tf.range(classes.shape[0], dtype=tf.int64)
        if x.dtype == tf.string:
            return classes, index, tf.constant(attrs.get("default_int64", -1), tf.int64)
        return index, classes, tf.constant(attrs.get("default_string", "_Unused"))
    keys, values = pick("keys"), pick("values")
    if keys is None or values is None:
        raise Unsupported(f"{node}: no keys_* / values_* attributes")
    if attrs.get("default_tensor") is not None:
        default = tf.reshape(attrs["default_tensor"], [])
    elif values.dtype == tf.string:
        default = tf.constant(attrs.get("default_string", "_Unused"))
    elif values.dtype.is_floating:
        default = tf.constant(attrs.get("default_float", -0.0), values.dtype)
    else:
        default = tf.constant(attrs.get("default_int64", -1), values.dtype)
    return tf.cast(keys, x.dtype) if keys.dtype != x.dtype and keys.dtype != tf.string else keys, values, tf.cast(default, values.dtype)


@lowers("AffineGrid", 20)
def affine_grid(node, theta, size, *, align_corners=0):
    """Positions evenly spaced in [-1, 1] per spatial axis (pixel centres at the ends with
    align_corners, else at half a pixel in), in homogeneous form, times theta: (N, [D,] H, W, 2 or 3)
    with x first."""
    rank = size.shape[0] - 2  # the size's length is known when tracing, its values need not be
    dims = tf.cast(tf.reshape(size, [-1]), tf.int32)
    work = theta.dtype

    def axis(n):
        step = tf.cast(tf.range(n), work)  # exact; XLA has no bfloat16 Range
        count = tf.cast(n, work)
        if align_corners:
            return tf.where(n > 1, step * 2 / tf.maximum(count - 1, 1) - 1, tf.zeros_like(step))
        return (step * 2 + 1) / count - 1

    grids = tf.meshgrid(*[axis(dims[2 + k]) for k in range(rank)], indexing="ij")  # ([D,] H, W) each
    coords = list(reversed(grids)) + [tf.ones_like(grids[0])]  # x, y[, z], 1
    base = tf.reshape(tf.stack(coords, axis=-1), [-1, rank + 1])  # (P, r + 1)
    out = tf.einsum("pk,njk->npj", base, theta)  # (N, P, r)
    return tf.reshape(out, tf.concat([dims[:1], dims[2:], [rank]], 0))


@lowers("MaxUnpool", 9, 11, 22)
def max_unpool(node, x, indices, output_shape=None, *, kernel_shape, pads=None, strides=None):
    """Zeros of the unpooled shape ((i - 1) * s + k - pads per axis) with each value put at its
    flat index; a larger output_shape pads at the end ('pads' ignored when it is given)."""
    n = len(kernel_shape)
    strides = list(strides or [1] * n)
    p = list(pads) if pads and output_shape is None else [0] * (2 * n)
    sizes = x.shape.as_list()
    inferred = sizes[:2] + [(i - 1) * s + k - p[d] - p[d + n] for d, (i, s, k) in enumerate(zip(sizes[2:], strides, kernel_shape))]
    total = int(np.prod(inferred))
    out = tf.scatter_nd(tf.reshape(tf.cast(indices, tf.int64), [-1, 1]), tf.reshape(x, [-1]), [total])
    out = tf.reshape(out, inferred)
    if output_shape is None:
        return out
    shape = tf.cast(tf.reshape(output_shape, [-1]), tf.int64)
    return tf.pad(out, tf.stack([tf.zeros_like(shape), shape - tf.constant(inferred, tf.int64)], axis=1))



# -- random generators: the harness judges them by distribution, not by value ----------------
def _seed(seed):
    return None if seed is None else int(seed) if float(seed).is_integer() else int(abs(seed) * 2**31)


def _random_type(code, like=None):
    from .lowering import tf_dtype

    return tf_dtype(code) if code else (like.dtype if like is not None else tf.float32)


def _sampled(sample, shape, a, b, seed, dtype):
    """RandomUniform's and RandomNormal's values: ``sample`` (tf.random.uniform or normal, with
    its two parameters) drawn in float64, then cast to the output type."""
    return tf.cast(sample(shape, a, b, tf.float64, seed=_seed(seed)), dtype)


@lowers("RandomUniform", 1, 22)
def random_uniform(node, *, dtype=1, high=1.0, low=0.0, seed=None, shape):
    return _sampled(tf.random.uniform, list(shape), low, high, seed, _random_type(dtype))


@lowers("RandomUniformLike", 1, 22)
def random_uniform_like(node, x, *, dtype=None, high=1.0, low=0.0, seed=None):
    return _sampled(tf.random.uniform, tf.shape(x), low, high, seed, _random_type(dtype, x))


@lowers("RandomNormal", 1, 22)
def random_normal(node, *, dtype=1, mean=0.0, scale=1.0, seed=None, shape):
    return _sampled(tf.random.normal, list(shape), mean, scale, seed, _random_type(dtype))


@lowers("RandomNormalLike", 1, 22)
def random_normal_like(node, x, *, dtype=None, mean=0.0, scale=1.0, seed=None):
    return _sampled(tf.random.normal, tf.shape(x), mean, scale, seed, _random_type(dtype, x))


@lowers("Bernoulli", 15, 22)
def bernoulli(node, x, *, dtype=None, seed=None):
    """1 where a uniform draw falls below the probability x."""
    draw = tf.random.uniform(tf.shape(x), dtype=tf.float64, seed=_seed(seed)) < tf.cast(x, tf.float64)
    return tf.cast(draw, _random_type(dtype, x))


@lowers("Multinomial", 7, 22)
def multinomial(node, x, *, dtype=6, sample_size=1, seed=None):
    """sample_size class indices per row drawn from the unnormalized log-probabilities x."""
    return tf.cast(tf.random.categorical(tf.cast(x, tf.float64), sample_size, seed=_seed(seed)), _random_type(dtype))


@lowers("RoiAlign", 10, 16, 22)
def roi_align(node, x, rois, batch_indices, *, coordinate_transformation_mode=None, mode="avg", output_height=1,
              output_width=1, sampling_ratio=0, spatial_scale=1.0):
    """Per region: the bin grid of output_height x output_width, sampling_ratio^2 points per bin
    (regularly spaced), each the bilinear interpolation of its four neighbours (0 outside the map,
    clamped at the edges), pooled by mean ("avg") or largest ("max"). "half_pixel" shifts the
    region by -0.5 (RoiAlign-10 behaved as "output_half_pixel": no shift, regions at least 1).
    An adaptive sampling_ratio (0) depends on each region's size: it needs the regions when tracing."""
    half_pixel = (coordinate_transformation_mode or ("output_half_pixel" if node.since == 10 else "half_pixel")) == "half_pixel"
    n_rois = rois.shape[0]
    if n_rois is None:
        raise Unsupported(f"{node}: a region count known only when the graph runs")
    h, w = tf.shape(x)[2], tf.shape(x)[3]
    hf, wf = tf.cast(h, tf.float64), tf.cast(w, tf.float64)
    work = tf.cast(x, tf.float64)
    boxes = tf.cast(rois, tf.float64) * spatial_scale - (0.5 if half_pixel else 0.0)
    pooled = []
    for r in range(n_rois):
        x1, y1, x2, y2 = tf.unstack(boxes[r])
        rw, rh = x2 - x1, y2 - y1
        if not half_pixel:
            rw, rh = tf.maximum(rw, 1.0), tf.maximum(rh, 1.0)
        if sampling_ratio > 0:
            gh = gw = sampling_ratio
        else:
            from .ops_tensor import static

            gh = int(np.ceil(static(node, rh, "the region height") / output_height))
            gw = int(np.ceil(static(node, rw, "the region width") / output_width))
        bin_h, bin_w = rh / output_height, rw / output_width
        ys = y1 + tf.constant([ph + (iy + 0.5) / gh for ph in range(output_height) for iy in range(gh)], tf.float64) * bin_h
        xs = x1 + tf.constant([pw + (ix + 0.5) / gw for pw in range(output_width) for ix in range(gw)], tf.float64) * bin_w
        yy, xx = tf.meshgrid(ys, xs, indexing="ij")
        valid = (yy >= -1.0) & (yy <= hf) & (xx >= -1.0) & (xx <= wf)
        yy, xx = tf.maximum(yy, 0.0), tf.maximum(xx, 0.0)
        y_low = tf.minimum(tf.cast(tf.floor(yy), tf.int32), h - 1)
        x_low = tf.minimum(tf.cast(tf.floor(xx), tf.int32), w - 1)
        y_high, x_high = tf.minimum(y_low + 1, h - 1), tf.minimum(x_low + 1, w - 1)
        yy = tf.where(y_low >= h - 1, tf.cast(y_low, tf.float64), yy)
        xx = tf.where(x_low >= w - 1, tf.cast(x_low, tf.float64), xx)
        ly, lx = yy - tf.cast(y_low, tf.float64), xx - tf.cast(x_low, tf.float64)
        img = tf.gather(work, tf.cast(batch_indices[r], tf.int32))  # C, H, W

        def at(yi, xi):
            return tf.gather_nd(tf.transpose(img, [1, 2, 0]), tf.stack([yi, xi], -1))  # (gy, gx, C)

        value = ((1 - ly) * (1 - lx))[..., None] * at(y_low, x_low) + ((1 - ly) * lx)[..., None] * at(y_low, x_high) + \
            (ly * (1 - lx))[..., None] * at(y_high, x_low) + (ly * lx)[..., None] * at(y_high, x_high)
        value = tf.where(valid[..., None], value, tf.zeros_like(value))
        value = tf.reshape(value, [output_height, gh, output_width, gw, -1])
        pooled.append(tf.reduce_max(value, axis=[1, 3]) if mode == "max" else tf.reduce_sum(value, axis=[1, 3]) / max(gh * gw, 1))
    if not pooled:  # no region: (0, C, output_height, output_width)
        return tf.zeros(tf.stack([0, tf.shape(x)[1], output_height, output_width]), x.dtype)
    out = tf.transpose(tf.stack(pooled, 0), [0, 3, 1, 2])  # (rois, C, oh, ow)
    return tf.cast(out, x.dtype)


def _bilinear_zero(img, yy, xx):
    """img (N, H, W, C); yy, xx (N, ...) -> (N, ..., C): bilinear samples, zero outside the image."""
    h, w = tf.shape(img)[1], tf.shape(img)[2]
    batch = tf.broadcast_to(tf.reshape(tf.range(tf.shape(img)[0]), [-1] + [1] * (yy.shape.rank - 1)), tf.shape(yy))
    y0, x0 = tf.floor(yy), tf.floor(xx)
    out = 0
    for dy in (0, 1):
        for dx in (0, 1):
            yi, xi = y0 + dy, x0 + dx
            weight = (1 - tf.abs(yy - yi)) * (1 - tf.abs(xx - xi))
            yc, xc = tf.cast(yi, tf.int32), tf.cast(xi, tf.int32)
            inside = (yc >= 0) & (yc < h) & (xc >= 0) & (xc < w)
            picked = tf.gather_nd(img, tf.stack([batch, tf.clip_by_value(yc, 0, h - 1), tf.clip_by_value(xc, 0, w - 1)], -1))
            out = out + (tf.where(inside, weight, tf.zeros_like(weight)))[..., None] * picked
    return out


@lowers("DeformConv", 19, 22)
def deform_conv(node, x, w, offset, b=None, mask=None, *, dilations=None, group=1, kernel_shape=None, offset_group=1, pads=None,
                strides=None):
    """2-D: each kernel tap k of each output position samples the input bilinearly (zero outside)
    at its regular place plus the offset (y, x) of its offset group, times the mask; the samples
    are then weighted like a grouped convolution, plus the bias."""
    if x.shape.rank != 4:
        raise Unsupported(f"{node}: {x.shape.rank - 2} spatial dimensions")
    n, c, h, wd = x.shape.as_list()
    kh, kw = kernel_shape or w.shape.as_list()[2:]
    sh, sw = strides or [1, 1]
    dh, dw = dilations or [1, 1]
    pt, pl, pb, pr = pads or [0, 0, 0, 0]
    oh = (h + pt + pb - ((kh - 1) * dh + 1)) // sh + 1
    ow = (wd + pl + pr - ((kw - 1) * dw + 1)) // sw + 1
    off = tf.reshape(offset, [-1, offset_group, kh * kw, 2, oh, ow])
    msk = tf.reshape(mask, [-1, offset_group, kh * kw, oh, ow]) if mask is not None else None
    oy = tf.reshape(tf.cast(tf.range(oh) * sh - pt, x.dtype), [1, oh, 1])
    ox = tf.reshape(tf.cast(tf.range(ow) * sw - pl, x.dtype), [1, 1, ow])
    per_group = c // offset_group
    image = tf.transpose(x, [0, 2, 3, 1])  # N, H, W, C
    cols = []  # per offset group: (N, K, oh, ow, C / offset_group)
    for g in range(offset_group):
        img = image[..., g * per_group:(g + 1) * per_group]
        taps = []
        for k in range(kh * kw):
            ky, kx = divmod(k, kw)
            sampled = _bilinear_zero(img, oy + ky * dh + off[:, g, k, 0], ox + kx * dw + off[:, g, k, 1])
            taps.append(sampled * msk[:, g, k][..., None] if msk is not None else sampled)
        cols.append(tf.stack(taps, 1))
    cols = tf.concat(cols, -1)  # (N, K, oh, ow, C)
    oc = w.shape[0]
    cg, og = c // group, oc // group
    wt = tf.reshape(w, [group, og, cg, kh * kw])
    cols = tf.reshape(cols, [-1, kh * kw, oh, ow, group, cg])
    y = tf.reshape(tf.einsum("gock,nkyxgc->ngoyx", wt, cols), [-1, oc, oh, ow])
    return y if b is None else y + tf.reshape(b, [1, -1, 1, 1])


@lowers("TreeEnsemble", 5, domain=_ML)
def tree_ensemble(node, x, *, aggregate_function=1, leaf_targetids, leaf_weights, n_targets, nodes_falseleafs,
                  nodes_falsenodeids, nodes_featureids, nodes_modes, nodes_splits, nodes_trueleafs, nodes_truenodeids,
                  tree_roots, post_transform=0, membership_values=None, nodes_missing_value_tracks_true=None,
                  nodes_hitrates=None):
    """Every node's test on every row at once (modes 0..5: <=, <, >=, >, ==, !=; 6: membership in
    its set, the sets being membership_values split at NaNs; NaN goes the way
    nodes_missing_value_tracks_true says), then each tree walked from its root for as many steps
    as it has nodes; the leaves' weights aggregated per target (average, sum, min, max) and
    post-transformed (softmax, logistic, softmax over the nonzero scores, probit)."""
    modes = np.asarray(nodes_modes.numpy() if hasattr(nodes_modes, "numpy") else nodes_modes).reshape(-1).astype(int)
    splits = tf.constant(np.asarray(nodes_splits.numpy() if hasattr(nodes_splits, "numpy") else nodes_splits, np.float64).reshape(-1))
    weights = tf.constant(np.asarray(leaf_weights.numpy() if hasattr(leaf_weights, "numpy") else leaf_weights, np.float64).reshape(-1))
    count = len(modes)
    vals = tf.gather(tf.cast(x, tf.float64), list(nodes_featureids), axis=1)  # (R, nodes)
    tests = [vals <= splits, vals < splits, vals >= splits, vals > splits, tf.equal(vals, splits), tf.not_equal(vals, splits)]
    cond = tf.zeros_like(vals, tf.bool)
    for m, t in enumerate(tests):
        cond = tf.where(tf.constant(modes == m)[None, :], t, cond)
    if membership_values is not None:
        members = np.asarray(membership_values.numpy() if hasattr(membership_values, "numpy") else membership_values, np.float64).reshape(-1)
        which = iter(membership_sets(members))
        for i in np.flatnonzero(modes == 6):
            s = next(which, [])
            hit = tf.reduce_any(tf.equal(vals[:, i:i + 1], tf.constant(s or [np.nan], tf.float64)[None, :]), axis=1)
            cond = tf.concat([cond[:, :i], hit[:, None], cond[:, i + 1:]], axis=1)
    missing = tf.constant([bool(v) for v in (nodes_missing_value_tracks_true or [0] * count)])
    cond = tf.where(tf.math.is_nan(vals), missing[None, :], cond)
    true_ids, false_ids = tf.constant(list(nodes_truenodeids)), tf.constant(list(nodes_falsenodeids))
    true_leaf, false_leaf = tf.constant([bool(v) for v in nodes_trueleafs]), tf.constant([bool(v) for v in nodes_falseleafs])
    rows = tf.shape(vals)[0]
    targets = tf.constant(list(leaf_targetids))
    total = tf.zeros([rows, n_targets], tf.float64)
    low = tf.fill([rows, n_targets], tf.constant(np.inf, tf.float64))
    high = -low
    hits = tf.zeros([rows, n_targets], tf.float64)
    for root in tree_roots:
        cur, done, leaf = tf.fill([rows], root), tf.zeros([rows], tf.bool), tf.fill([rows], -1)
        for _ in range(count + 1):
            go = tf.gather(cond, cur, batch_dims=1)
            nxt = tf.where(go, tf.gather(true_ids, cur), tf.gather(false_ids, cur))
            is_leaf = tf.where(go, tf.gather(true_leaf, cur), tf.gather(false_leaf, cur))
            leaf = tf.where(~done & is_leaf, nxt, leaf)
            done = done | is_leaf
            cur = tf.where(done, cur, nxt)
        picked = tf.one_hot(tf.gather(targets, leaf), n_targets, dtype=tf.float64)
        w = tf.gather(weights, leaf)[:, None]
        total += picked * w
        hits += picked
        low = tf.where(picked > 0, tf.minimum(low, w), low)
        high = tf.where(picked > 0, tf.maximum(high, w), high)
    out = {0: total / len(tree_roots), 2: tf.where(hits > 0, low, 0.0), 3: tf.where(hits > 0, high, 0.0)}.get(aggregate_function, total)
    if post_transform == 1:
        out = tf.nn.softmax(out, axis=1)
    elif post_transform == 2:
        out = tf.math.sigmoid(out)
    elif post_transform == 3:  # softmax over the nonzero scores only
        nz = tf.not_equal(out, 0)
        e = tf.where(nz, tf.exp(out - tf.reduce_max(tf.where(nz, out, -np.inf), axis=1, keepdims=True)), 0.0)
        out = e / tf.maximum(tf.reduce_sum(e, axis=1, keepdims=True), 1e-300)
    elif post_transform == 4:
        out = np.sqrt(2.0) * tf.math.erfinv(2 * out - 1)
    return tf.cast(out, x.dtype)
