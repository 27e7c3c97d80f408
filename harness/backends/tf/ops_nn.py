"""Matrix products and neural-network operators: MatMul, Gemm, Softmax / LogSoftmax / Hardmax,
Conv, MaxPool / AveragePool (windows, explicit or automatic pads), the global pools,
BatchNormalization (inference), Dropout (inference).

ONNX lays images out channels-first (N, C, D1, ...); TensorFlow's CPU convolutions and pools take
channels-last, so the lowering transposes around them (an exact data movement)."""

from __future__ import annotations

import math

import numpy as np
import tensorflow as tf

from ..base import Unsupported
from ..lowering import conv_transpose_pads, softmax_like
from .registry import lowers


@lowers("MatMul", 1, 9, 13)
def matmul(node, a, b):
    if a.shape.rank == 1 or b.shape.rank == 1:  # numpy's matmul: a vector gains, then loses, a dim
        aa = tf.expand_dims(a, 0) if a.shape.rank == 1 else a
        bb = tf.expand_dims(b, -1) if b.shape.rank == 1 else b
        out = tf.linalg.matmul(*_broadcast_batch(aa, bb))
        out = tf.squeeze(out, -2) if a.shape.rank == 1 else out
        return tf.squeeze(out, -1) if b.shape.rank == 1 else out
    return tf.linalg.matmul(*_broadcast_batch(a, b))


def _broadcast_batch(a, b):
    if None in a.shape.as_list()[:-2] + b.shape.as_list()[:-2]:  # batch dims known only when it runs
        batch = tf.broadcast_dynamic_shape(tf.shape(a)[:-2], tf.shape(b)[:-2])
        return tf.broadcast_to(a, tf.concat([batch, tf.shape(a)[-2:]], 0)), tf.broadcast_to(b, tf.concat([batch, tf.shape(b)[-2:]], 0))
    batch = np.broadcast_shapes(tuple(a.shape.as_list()[:-2]), tuple(b.shape.as_list()[:-2]))
    return (tf.broadcast_to(a, batch + tuple(a.shape.as_list()[-2:])), tf.broadcast_to(b, batch + tuple(b.shape.as_list()[-2:])))


@lowers("Gemm", 7, 9, 11, 13)
def gemm(node, a, b, c=None, *, alpha=1.0, beta=1.0, transA=0, transB=0):
    y = tf.cast(alpha, a.dtype) * tf.linalg.matmul(a, b, transpose_a=bool(transA), transpose_b=bool(transB))
    return y if c is None else y + tf.cast(beta, a.dtype) * c


# -- softmax family ------------------------------------------------------------------------------
def _coerced(fn, x, axis):
    """Softmax-1/11: the input coerced to 2-D at ``axis``, normalized over the second dim."""
    shape = x.shape.as_list()
    a = axis + len(shape) if axis < 0 else axis
    flat = tf.reshape(x, [int(np.prod(shape[:a], dtype=np.int64)), int(np.prod(shape[a:], dtype=np.int64))])
    return tf.reshape(fn(flat, 1), shape)


def _hardmax(x, axis):
    n = x.shape[axis]
    if n == 0:
        return tf.zeros_like(x)
    idx = tf.math.argmax(x, axis=axis)  # the first maximum wins
    return tf.cast(tf.one_hot(idx, n, axis=axis if axis >= 0 else x.shape.rank + axis), x.dtype)


lowers("Softmax", 1, 11, 13)(softmax_like(lambda x, a: tf.nn.softmax(x, axis=a), _coerced))
lowers("LogSoftmax", 1, 11, 13)(softmax_like(lambda x, a: tf.nn.log_softmax(x, axis=a), _coerced))
lowers("Hardmax", 1, 11, 13)(softmax_like(_hardmax, _coerced))


# -- windows -------------------------------------------------------------------------------------
def _pads(node, spatial, kernel, strides, dilations, pads, auto_pad, ceil_mode=0):
    """(begin, end) pads per spatial axis, from explicit pads or ``auto_pad``."""
    n = len(spatial)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        out = []
        for L, k, s, d in zip(spatial, kernel, strides, dilations):
            total = max(0, (math.ceil(L / s) - 1) * s + (k - 1) * d + 1 - L)
            small, big = total // 2, total - total // 2
            out.append((big, small) if auto_pad == "SAME_LOWER" else (small, big))
        return out
    if auto_pad == "VALID":
        return [(0, 0)] * n
    if auto_pad not in ("NOTSET", ""):
        raise Unsupported(f"{node}: auto_pad {auto_pad!r}")
    p = list(pads) if pads else [0] * (2 * n)
    begin, end = p[:n], p[n:]
    if ceil_mode:  # extra end padding so that the last partial window counts
        for i, (L, k, s, d) in enumerate(zip(spatial, kernel, strides, dilations)):
            eff = (k - 1) * d + 1
            out_ceil = math.ceil((L + begin[i] + end[i] - eff) / s) + 1
            if (out_ceil - 1) * s >= L + begin[i]:  # a window must start inside the input or the begin pad
                out_ceil -= 1
            end[i] += max(0, (out_ceil - 1) * s + eff - (L + begin[i] + end[i]))
    return list(zip(begin, end))


def _channels_last(x):
    return tf.transpose(x, [0] + list(range(2, x.shape.rank)) + [1])


def _channels_first(x):
    return tf.transpose(x, [0, x.shape.rank - 1] + list(range(1, x.shape.rank - 1)))


@lowers("Conv", 1, 11, 22)
def conv(node, x, w, b=None, *, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None, pads=None, strides=None):
    nsp = x.shape.rank - 2
    if nsp not in (1, 2, 3):
        raise Unsupported(f"{node}: {nsp} spatial dims")
    kernel = w.shape.as_list()[2:]
    strides, dilations = strides or [1] * nsp, dilations or [1] * nsp
    pad = _pads(node, x.shape.as_list()[2:], kernel, strides, dilations, pads, auto_pad)
    xl = tf.pad(_channels_last(x), [[0, 0]] + [list(p) for p in pad] + [[0, 0]])
    filt = tf.transpose(w, list(range(2, nsp + 2)) + [1, 0])  # (k..., C/group, M)
    xs, fs = tf.split(xl, group, axis=-1), tf.split(filt, group, axis=-1)
    # tf.nn.convolution takes strides > 1 or dilations > 1, not both: then every stride-th output
    # of the stride-1 convolution (the same windows)
    both = any(s > 1 for s in strides) and any(d > 1 for d in dilations)
    step = [1] * nsp if both else strides
    y = tf.concat([tf.nn.convolution(xi, fi, strides=step, padding="VALID", dilations=dilations) for xi, fi in zip(xs, fs)],
                  axis=-1)
    if both:
        y = y[(slice(None), *[slice(None, None, s) for s in strides], slice(None))]
    y = _channels_first(y)
    return y if b is None else y + tf.reshape(b, [1, -1] + [1] * nsp)


def _windows(x, kernel, strides, dilations, pad, fill):
    """Every kernel tap of every output window of ``x`` (channels-first), padded with ``fill``:
    one strided slice per tap, so any stride and dilation together work (TensorFlow's pools
    refuse strides > 1 with dilations > 1, or strides larger than the window)."""
    nsp = len(kernel)
    xp = tf.pad(x, [[0, 0], [0, 0]] + [list(q) for q in pad], constant_values=fill)
    sizes = xp.shape.as_list()[2:]
    out = [(L - ((k - 1) * d + 1)) // s + 1 for L, k, s, d in zip(sizes, kernel, strides, dilations)]
    for tap in np.ndindex(*kernel):
        index = [slice(None), slice(None)]
        for i in range(nsp):
            start = tap[i] * dilations[i]
            index.append(slice(start, start + (out[i] - 1) * strides[i] + 1, strides[i]))
        yield xp[tuple(index)]


def _pool(node, x, kind, kernel, strides, dilations, pads, auto_pad, ceil_mode, count_include_pad=0):
    nsp = x.shape.rank - 2
    strides, dilations = strides or [1] * nsp, dilations or [1] * nsp
    spatial = x.shape.as_list()[2:]
    pad = _pads(node, spatial, kernel, strides, dilations, pads, auto_pad, ceil_mode)
    if kind == "max":
        fill = tf.constant(-np.inf if x.dtype.is_floating else x.dtype.min, x.dtype)
        out = None
        for v in _windows(x, kernel, strides, dilations, pad, fill):
            out = v if out is None else tf.math.maximum(out, v)
        return out
    total = tf.add_n(list(_windows(x, kernel, strides, dilations, pad, tf.zeros([], x.dtype))))
    ones = tf.ones([1, 1] + spatial, x.dtype)
    if count_include_pad:
        # the spec pads with zeros and divides by the whole window, counting the explicit pads
        # (not the extra end a ceil_mode window reaches)
        explicit = _pads(node, spatial, kernel, strides, dilations, pads, auto_pad)
        ones = tf.pad(ones, [[0, 0], [0, 0]] + [list(q) for q in explicit], constant_values=1.0)
        pad = [(0, e - e0) for (_, e), (_, e0) in zip(pad, explicit)]
    count = tf.add_n(list(_windows(ones, kernel, strides, dilations, pad, tf.zeros([], x.dtype))))
    return total / count


@lowers("MaxPool", 8, 10, 11, 12, 22)
def max_pool(node, x, *, kernel_shape, auto_pad="NOTSET", ceil_mode=0, dilations=None, pads=None, storage_order=0, strides=None):
    if node.wants(1):
        return _max_pool_with_indices(node, x, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode, storage_order)
    return _pool(node, x, "max", kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)


def _max_pool_with_indices(node, x, kernel, strides, dilations, pads, auto_pad, ceil_mode, storage_order):
    """2-D, no dilation: tf.nn.max_pool_with_argmax on the input padded with -inf (its indices
    count positions of the padded channels-last tensor), turned into the spec's flat index of
    the unpadded input, row-major over (N, C, H, W) (``storage_order`` 1: W before H)."""
    if x.shape.rank != 4 or any(d != 1 for d in (dilations or [1, 1])) or not x.dtype.is_floating:
        raise Unsupported(f"{node}: the Indices output beyond 2-D float pooling without dilations")
    strides = strides or [1, 1]
    n, c, h, w = x.shape.as_list()
    pad = _pads(node, [h, w], kernel, strides, [1, 1], pads, auto_pad, ceil_mode)
    xl = tf.pad(_channels_last(x), [[0, 0], list(pad[0]), list(pad[1]), [0, 0]], constant_values=-np.inf)
    values, flat = tf.nn.max_pool_with_argmax(xl, [1, *kernel, 1], [1, *strides, 1], "VALID", include_batch_in_index=True)
    hp, wp = h + sum(pad[0]), w + sum(pad[1])
    flat = tf.cast(flat, tf.int64)
    ch, rest = flat % c, flat // c
    col, rest = rest % wp - pad[1][0], rest // wp
    row, batch = rest % hp - pad[0][0], rest // hp
    index = ((batch * c + ch) * w + col) * h + row if storage_order else ((batch * c + ch) * h + row) * w + col
    return _channels_first(values), _channels_first(index)


@lowers("AveragePool", 7, 10, 11, 19, 22)
def average_pool(node, x, *, kernel_shape, auto_pad="NOTSET", ceil_mode=0, count_include_pad=0, dilations=None, pads=None,
                 strides=None):
    if not x.dtype.is_floating:
        raise Unsupported(f"{node}: {x.dtype.name}")
    return _pool(node, x, "avg", kernel_shape, strides, dilations, pads, auto_pad, ceil_mode, count_include_pad)


@lowers("LpPool", 11, 18, 22)
def lp_pool(node, x, *, kernel_shape, auto_pad="NOTSET", ceil_mode=0, dilations=None, p=2, pads=None, strides=None):
    """The p-norm of each window, pads counting as zeros (they add nothing to the sum)."""
    nsp = x.shape.rank - 2
    strides, dilations = strides or [1] * nsp, dilations or [1] * nsp
    pad = _pads(node, x.shape.as_list()[2:], kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    power = tf.cast(p, x.dtype)
    total = tf.add_n([tf.math.pow(tf.abs(v), power) for v in _windows(x, kernel_shape, strides, dilations, pad, tf.zeros([], x.dtype))])
    return tf.math.pow(total, 1 / power)


@lowers("GlobalLpPool", 2, 22)
def global_lp_pool(node, x, *, p=2):
    power = tf.cast(p, x.dtype)
    return tf.math.pow(tf.reduce_sum(tf.math.pow(tf.abs(x), power), axis=list(range(2, x.shape.rank)), keepdims=True), 1 / power)


@lowers("GlobalAveragePool", 1, 22)
def global_average_pool(node, x):
    return tf.math.reduce_mean(x, axis=list(range(2, x.shape.rank)), keepdims=True)


@lowers("GlobalMaxPool", 1, 22)
def global_max_pool(node, x):
    return tf.math.reduce_max(x, axis=list(range(2, x.shape.rank)), keepdims=True)


# -- normalization and dropout -------------------------------------------------------------------
def _channel(t, rank):
    return tf.reshape(t, [-1]) if rank == 1 else tf.reshape(t, [1, -1] + [1] * (rank - 2))


@lowers("BatchNormalization", 9, 14, 15)
def batch_norm(node, x, scale, bias, mean, var, *, epsilon=1e-5, momentum=0.9, training_mode=0):
    r = x.shape.rank
    if training_mode:  # the batch's own statistics; the running ones updated with momentum
        dims = [0] + list(range(2, r))
        cur_mean, cur_var = tf.nn.moments(x, axes=dims)
        y = (x - _channel(cur_mean, r)) / tf.math.sqrt(_channel(cur_var, r) + tf.cast(epsilon, x.dtype))
        y = y * tf.cast(_channel(scale, r), x.dtype) + tf.cast(_channel(bias, r), x.dtype)
        run_mean = mean * momentum + tf.cast(cur_mean, mean.dtype) * (1 - momentum)
        run_var = var * momentum + tf.cast(cur_var, var.dtype) * (1 - momentum)
        return y, run_mean, run_var
    eps = tf.cast(epsilon, var.dtype)
    y = (x - tf.cast(_channel(mean, r), x.dtype)) / tf.cast(tf.math.sqrt(_channel(var, r) + eps), x.dtype)
    return y * tf.cast(_channel(scale, r), x.dtype) + tf.cast(_channel(bias, r), x.dtype)


@lowers("Dropout", 10)
def dropout_10(node, x, *, ratio=0.5):
    # not training: "the output Y will either be a random dropout, or a simple copy of the input"
    return (tf.identity(x), tf.ones_like(x, dtype=tf.bool)) if node.wants(1) else tf.identity(x)


@lowers("Dropout", 12, 13, 22)
def dropout(node, x, ratio=None, training_mode=None, *, seed=None):
    """Inference: the identity and an all-true mask. Training (a graph input decided when it
    runs): each element kept with probability 1 - ratio (tf.random.uniform >= ratio, seeded by
    ``seed`` when given), the kept ones scaled by 1 / (1 - ratio)."""
    keep_all = tf.ones_like(x, dtype=tf.bool)
    if training_mode is None or tf.get_static_value(training_mode) is not None and not bool(tf.get_static_value(training_mode)):
        return (tf.identity(x), keep_all) if node.wants(1) else tf.identity(x)
    r = tf.cast(tf.reshape(ratio, []), tf.float32) if ratio is not None else tf.constant(0.5)

    def random():
        keep = tf.random.uniform(tf.shape(x), seed=seed) >= r
        scale = tf.where(r < 1, 1.0 / (1.0 - r), 0.0)
        return x * tf.cast(keep, x.dtype) * tf.cast(scale, x.dtype), keep

    y, mask = tf.cond(tf.reshape(tf.cast(training_mode, tf.bool), []), random, lambda: (tf.identity(x), keep_all))
    return (y, mask) if node.wants(1) else y


_STASH = {1: tf.float32, 10: tf.float16, 11: tf.float64, 16: tf.bfloat16}


@lowers("LayerNormalization", 17)
def layer_norm(node, x, scale, bias=None, *, axis=-1, epsilon=1e-5, stash_type=1):
    if stash_type not in _STASH:
        raise Unsupported(f"{node}: stash_type {stash_type}")
    a = axis + x.shape.rank if axis < 0 else axis
    dims = list(range(a, x.shape.rank))
    work = tf.cast(x, _STASH[stash_type])  # "Type of Mean and InvStdDev ... stage one's computation precision"
    mean = tf.math.reduce_mean(work, axis=dims, keepdims=True)
    var = tf.math.reduce_mean(tf.math.square(work - mean), axis=dims, keepdims=True)
    inv = 1.0 / tf.math.sqrt(var + tf.cast(epsilon, work.dtype))
    y = tf.cast((work - mean) * inv, x.dtype) * scale
    y = y if bias is None else y + bias
    return y, mean, inv


@lowers("RMSNormalization", 23)
def rms_norm(node, x, scale, *, axis=-1, epsilon=1e-5, stash_type=1):
    if stash_type not in _STASH:
        raise Unsupported(f"{node}: stash_type {stash_type}")
    a = axis + x.shape.rank if axis < 0 else axis
    work = tf.cast(x, _STASH[stash_type])
    rms = tf.math.sqrt(tf.math.reduce_mean(work * work, axis=list(range(a, x.shape.rank)), keepdims=True) + tf.cast(epsilon, work.dtype))
    return tf.cast(work / rms, x.dtype) * scale


@lowers("Einsum", 12, 28)
def einsum(node, *xs, equation):
    return tf.einsum(equation.replace(" ", ""), *xs)


# -- losses --------------------------------------------------------------------------------------
def _picked_loss(x, target, weight, ignore_index, reduction):
    """-x[n, target[n, d...], d...] * weight[target] (weight 1 without one), 0 where the target is
    ``ignore_index``; 'mean' divides the sum by the sum of the applied weights (ignored ones
    weigh 0: "the sum of the output will be divided by the sum of applied weights")."""
    t = tf.cast(target, tf.int64)
    keep = tf.ones_like(t, tf.bool) if ignore_index is None else tf.not_equal(t, ignore_index)
    safe = tf.where(keep, t, tf.zeros_like(t))
    moved = tf.transpose(x, [0] + list(range(2, x.shape.rank)) + [1])  # classes last
    picked = tf.gather(moved, safe, axis=t.shape.rank, batch_dims=t.shape.rank)
    w = tf.ones_like(picked) if weight is None else tf.gather(weight, safe)
    w = tf.where(keep, w, tf.zeros_like(w))
    loss = -picked * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return tf.reduce_sum(loss)
    if reduction == "mean":
        return tf.reduce_sum(loss) / tf.reduce_sum(w)
    raise ValueError(f"reduction {reduction!r}")


@lowers("NegativeLogLikelihoodLoss", 12, 13, 22)
def nll_loss(node, x, target, weight=None, *, ignore_index=None, reduction="mean"):
    return _picked_loss(x, target, weight, ignore_index, reduction)


@lowers("SoftmaxCrossEntropyLoss", 12, 13)
def softmax_cross_entropy_loss(node, scores, labels, weights=None, *, ignore_index=None, reduction="mean"):
    log_prob = tf.nn.log_softmax(scores, axis=1)  # "p = Softmax(scores), y = Log(p)" over the classes
    loss = _picked_loss(log_prob, labels, weights, ignore_index, reduction)
    return (loss, log_prob) if node.wants(1) else loss


@lowers("LpNormalization", 1, 22)
def lp_normalization(node, x, *, axis=-1, p=2):
    if p not in (1, 2):
        raise ValueError(f"{node}: p = {p} (the spec allows 1 and 2)")
    norm = tf.reduce_sum(tf.abs(x), axis=axis, keepdims=True) if p == 1 else tf.sqrt(tf.reduce_sum(x * x, axis=axis, keepdims=True))
    # "When the Lp norm is zero ... the output is defined to be zero" (-22; -1 is silent, the same)
    return tf.where(tf.equal(norm, 0), tf.zeros_like(x), x / tf.where(tf.equal(norm, 0), tf.ones_like(norm), norm))


@lowers("MeanVarianceNormalization", 9, 13)
def mean_variance_normalization(node, x, *, axes=(0, 2, 3)):
    # (X - EX) / sqrt(E(X - EX)^2)
    mean = tf.reduce_mean(x, axis=list(axes), keepdims=True)
    centered = x - mean
    return centered / tf.sqrt(tf.reduce_mean(centered * centered, axis=list(axes), keepdims=True))


@lowers("InstanceNormalization", 6, 22)
def instance_normalization(node, x, scale, bias, *, epsilon=1e-5):
    # y = scale * (x - mean) / sqrt(variance + epsilon) + B, mean and variance per instance per channel
    dims = list(range(2, x.shape.rank))
    mean = tf.reduce_mean(x, axis=dims, keepdims=True)
    var = tf.reduce_mean(tf.square(x - mean), axis=dims, keepdims=True)
    return (x - mean) / tf.sqrt(var + tf.cast(epsilon, x.dtype)) * _channel(scale, x.shape.rank) + _channel(bias, x.shape.rank)


def _stuffed(x, axis: int, stride: int):
    """``stride - 1`` zeros between neighbours along ``axis`` (the input of a transposed convolution)."""
    if stride == 1:
        return x
    shape = tf.shape(x)
    zeros = tf.zeros_like(x)
    y = tf.stack([x] + [zeros] * (stride - 1), axis=axis + 1)
    y = tf.reshape(y, tf.concat([shape[:axis], [shape[axis] * stride], shape[axis + 1:]], 0))
    return y[(slice(None),) * axis + (slice(0, (x.shape[axis] - 1) * stride + 1),)]


@lowers("ConvTranspose", 1, 11, 22)
def conv_transpose(node, x, w, b=None, *, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None,
                   output_padding=None, output_shape=None, pads=None, strides=None):
    """The full transposed convolution ((i - 1) * s + (k - 1) * d + 1 per axis) as a convolution of
    the zero-stuffed input, padded by (k - 1) * d, with the spatially flipped kernel (its channel
    axes swapped per group); then ``output_padding`` adds at the end and the pads are cut (or
    added, if negative; ``lowering.conv_transpose_pads``)."""
    n = x.shape.rank - 2
    kernel = list(kernel_shape or w.shape.as_list()[2:])
    strides, dilations = list(strides or [1] * n), list(dilations or [1] * n)
    out_pad = list(output_padding or [0] * n)
    sizes = x.shape.as_list()[2:]
    if None in sizes:
        raise Unsupported(f"{node}: spatial sizes known only when the graph runs")
    sp = conv_transpose_pads(node.since, sizes, kernel, strides, dilations, out_pad, auto_pad, output_shape, pads)
    y = x
    for k in range(n):
        y = _stuffed(y, 2 + k, strides[k])
    flipped = tf.reverse(w, list(range(2, n + 2)))  # (C, M/group, k...)
    per_group = [tf.transpose(g, [1, 0] + list(range(2, n + 2))) for g in tf.split(flipped, group, axis=0)]
    reach = [(k - 1) * d for k, d in zip(kernel, dilations)]
    y = conv(node, y, tf.concat(per_group, 0), group=group, dilations=dilations, pads=reach + reach)
    for k in range(n):
        axis = 2 + k
        begin, end = sp[k][0], sp[k][1] - out_pad[k]
        if begin < 0 or end < 0:
            grow = [[0, 0]] * (n + 2)
            grow[axis] = [max(-begin, 0), max(-end, 0)]
            y = tf.pad(y, grow)
            begin, end = max(begin, 0), max(end, 0)
        length = y.shape[axis]
        y = y[(slice(None),) * axis + (slice(begin, length - end),)]
    return y if b is None else y + tf.reshape(b, [1, -1] + [1] * n)
