"""Normalization kernels: BatchNormalization, InstanceNormalization, LayerNormalization,
GroupNormalization, RMSNormalization, LRN, LpNormalization, MeanVarianceNormalization."""

from __future__ import annotations

import numpy as np

from .nn_util import BFLOAT16, IdentityCache
from .registry import register, register_each

_STASH = {1: np.float32, 10: np.float16, 11: np.float64}


def _acc(dtype):
    return np.float64 if np.dtype(dtype) == np.float64 else np.float32


def _stash(attrs, dtype):
    st = attrs.get("stash_type", 1)
    if st == 16 and BFLOAT16 is not None:
        return BFLOAT16
    return np.dtype(_STASH.get(int(st), np.float32))


def _chan(v, ndim):
    """(C,) -> broadcastable (1, C, 1, ...); per-activation (C, D1, ...) -> (1, C, D1, ...). An input
    of one dimension is N values of one channel (BatchNormalization: "The op also accepts single
    dimension input of size N in which case C is assumed to be 1"): the (1,) stays as it is."""
    v = np.asarray(v)
    if ndim == 1:
        return v.reshape(-1)
    if v.ndim <= 1:
        return v.reshape((1, -1) + (1,) * (ndim - 2))
    return v.reshape((1,) + v.shape)


# --------------------------------------------------------------------------- BatchNormalization


def _bn_factors(scale, b, mean, var, eps, acc, nd):
    """BatchNormalization's per-channel ``inv`` = scale / sqrt(var + eps) and ``shift`` =
    b - mean * inv in the accumulation type, shaped to broadcast against an input of ``nd``
    dimensions."""
    inv = _chan(scale.astype(acc) / np.sqrt(var.astype(acc) + acc(eps)), nd)
    shift = _chan(b.astype(acc), nd) - _chan(mean.astype(acc), nd) * inv
    return inv, shift


def _bn_infer(x, scale, b, mean, var, eps, inplace=False, factors=None):
    """x * inv + shift in the accumulation type; with ``inplace`` (x is ours to overwrite) the
    two passes write into x itself when it is already of that type (the same two roundings).
    ``factors`` (an IdentityCache) keeps inv and shift while the four parameters are the same
    arrays (initializers), instead of computing them again on every run."""
    acc = _acc(x.dtype)
    nd = x.ndim
    if factors is None:
        inv, shift = _bn_factors(scale, b, mean, var, eps, acc, nd)
    else:
        inv, shift = factors.get(lambda *p: _bn_factors(*p, eps, acc, nd), scale, b, mean, var, key=(acc, nd))
    xa = x.astype(acc, copy=False)
    if np.broadcast_shapes(x.shape, inv.shape, shift.shape) != x.shape:
        return (xa * inv + shift).astype(x.dtype, copy=False)
    y = np.multiply(x, inv, out=x) if inplace and xa is x else xa * inv
    np.add(y, shift, out=y)
    return y.astype(x.dtype, copy=False)


def _bn_inference_kernel(eps):
    factors = IdentityCache()

    def run(x, scale, b, mean, var):
        return (_bn_infer(x, scale, b, mean, var, eps, factors=factors),)

    def run_inplace(x, scale, b, mean, var):
        return (_bn_infer(x, scale, b, mean, var, eps, inplace=True, factors=factors),)

    run.inplace = run_inplace
    return run


def _bn_train(x, scale, b, mean, var, eps, momentum):
    acc = _acc(x.dtype)
    xa = x.astype(acc, copy=False)
    axes = (0,) + tuple(range(2, x.ndim))
    cur_mean = xa.mean(axis=axes)
    cur_var = xa.var(axis=axes)
    y = _bn_infer(x, scale, b, cur_mean, cur_var, eps)
    run_mean = mean.astype(acc) * acc(momentum) + cur_mean * acc(1 - momentum)
    run_var = var.astype(acc) * acc(momentum) + cur_var * acc(1 - momentum)
    return y, run_mean, run_var, cur_mean, cur_var


@register("BatchNormalization", since=1)
def batch_norm_1(node):
    attrs = node.attrs
    eps = float(attrs.get("epsilon", 1e-5))
    momentum = float(attrs.get("momentum", 0.9))
    n_out = sum(1 for o in node.outputs if o)
    is_test = int(attrs.get("is_test", 0))
    training = n_out > 1 and not (node.opset < 7 and is_test)
    if not training:
        return _bn_inference_kernel(eps)

    def run(x, scale, b, mean, var):
        y, rm, rv, sm, sv = _bn_train(x, scale, b, mean, var, eps, momentum)
        outs = [y, rm.astype(mean.dtype), rv.astype(var.dtype), sm.astype(mean.dtype), sv.astype(var.dtype)]
        return tuple(outs[: len(node.outputs)])

    return run


@register("BatchNormalization", since=14)
def batch_norm_14(node):
    attrs = node.attrs
    eps = float(attrs.get("epsilon", 1e-5))
    momentum = float(attrs.get("momentum", 0.9))
    training = bool(attrs.get("training_mode", 0))
    if not training:
        return _bn_inference_kernel(eps)

    def run(x, scale, b, mean, var):
        y, rm, rv, _, _ = _bn_train(x, scale, b, mean, var, eps, momentum)
        outs = [y, rm.astype(mean.dtype), rv.astype(var.dtype)]
        return tuple(outs[: max(len(node.outputs), 1)])

    return run


# --------------------------------------------------------------------------- InstanceNormalization


@register("InstanceNormalization", since=1)
def instance_norm(node):
    eps = float(node.attrs.get("epsilon", 1e-5))

    def run(x, scale, b):
        acc = _acc(x.dtype)
        xa = x.astype(acc, copy=False)
        axes = tuple(range(2, x.ndim))
        mean = xa.mean(axis=axes, keepdims=True)
        var = xa.var(axis=axes, keepdims=True)
        y = (xa - mean) / np.sqrt(var + acc(eps))
        y = y * _chan(scale.astype(acc), x.ndim) + _chan(b.astype(acc), x.ndim)
        return (y.astype(x.dtype, copy=False),)

    return run


# --------------------------------------------------------------------------- LayerNormalization


def _normalized(attrs, x, axis):
    """LayerNormalization's and RMSNormalization's common start: the stash type, the axes
    normalized over (``axis`` to the last) and ``x`` in the stash type."""
    st = _stash(attrs, x.dtype)
    return st, tuple(range(axis % x.ndim, x.ndim)), x.astype(st, copy=False)


@register("LayerNormalization", since=17)
def layer_norm(node):
    attrs = node.attrs
    axis = int(attrs.get("axis", -1))
    eps = float(attrs.get("epsilon", 1e-5))
    n_out = len(node.outputs)

    def run(x, scale, b=None):
        st, axes, xa = _normalized(attrs, x, axis)
        mean = xa.mean(axis=axes, keepdims=True)
        d = xa - mean
        var = np.mean(np.square(d), axis=axes, keepdims=True)
        inv = (1.0 / np.sqrt(var + st.type(eps))).astype(st, copy=False)
        # ((d * inv) * scale) + b, each product rounded to the stash type as before, written
        # into d (fresh, and of the full shape) when scale and b do not widen it
        sc = scale.astype(st, copy=False)
        bb = None if b is None else b.astype(st, copy=False)
        if np.broadcast_shapes(d.shape, sc.shape, () if bb is None else bb.shape) == d.shape:
            y = np.multiply(d, inv, out=d)
            y *= sc
            if bb is not None:
                y += bb
        else:
            y = d * inv * sc
            if bb is not None:
                y = y + bb
        outs = (y.astype(x.dtype, copy=False), mean, inv)
        return outs[:n_out]

    return run


# --------------------------------------------------------------------------- GroupNormalization


def _group_norm(x, scale, b, G, eps, st, per_channel):
    N, C = x.shape[:2]
    xa = x.astype(st, copy=False).reshape(N, G, (C // G) * int(np.prod(x.shape[2:])))  # explicit: N may be 0
    mean = xa.mean(axis=2, keepdims=True)
    d = xa - mean
    var = np.mean(d * d, axis=2, keepdims=True)
    y = (d / np.sqrt(var + st.type(eps))).reshape(x.shape)
    sc = scale.astype(st, copy=False)
    bb = b.astype(st, copy=False)
    if not per_channel:  # opset 18: one scale/bias per group
        sc = np.repeat(sc, C // G)
        bb = np.repeat(bb, C // G)
    y = y * _chan(sc, x.ndim) + _chan(bb, x.ndim)
    return y.astype(x.dtype, copy=False)


def group_norm(node, since):
    """GroupNormalization-18 computes in the accumulation type and takes a scale and bias per
    group or per channel (as given); 21 has stash_type and one per channel."""
    attrs = node.attrs
    G = int(attrs["num_groups"])
    eps = float(attrs.get("epsilon", 1e-5))

    def run(x, scale, b):
        if since >= 21:
            return (_group_norm(x, scale, b, G, eps, _stash(attrs, x.dtype), per_channel=True),)
        return (_group_norm(x, scale, b, G, eps, np.dtype(_acc(x.dtype)), per_channel=scale.size == x.shape[1]),)

    return run


register_each("GroupNormalization", (18, 21), group_norm)


# --------------------------------------------------------------------------- RMSNormalization


@register("RMSNormalization", since=23)
def rms_norm(node):
    attrs = node.attrs
    axis = int(attrs.get("axis", -1))
    eps = float(attrs.get("epsilon", 1e-5))

    def run(x, scale):
        st, axes, xa = _normalized(attrs, x, axis)
        ms = np.mean(xa * xa, axis=axes, keepdims=True)
        y = xa / np.sqrt(ms + st.type(eps))
        y = y * scale.astype(st, copy=False)
        return (y.astype(x.dtype, copy=False),)

    return run


# --------------------------------------------------------------------------- LRN


@register("LRN", since=1)
def lrn(node):
    attrs = node.attrs
    size = int(attrs["size"])
    alpha = float(attrs.get("alpha", 1e-4))
    beta = float(attrs.get("beta", 0.75))
    bias = float(attrs.get("bias", 1.0))
    lo = (size - 1) // 2
    hi = size - 1 - lo

    def run(x):
        acc = _acc(x.dtype)
        xa = x.astype(acc, copy=False)
        sq = xa * xa
        C = x.shape[1]
        padded = np.zeros((x.shape[0], C + lo + hi) + x.shape[2:], dtype=acc)
        padded[:, lo : lo + C] = sq
        s = padded[:, 0:C].copy()
        for k in range(1, size):
            s += padded[:, k : k + C]
        y = xa / (acc(bias) + acc(alpha / size) * s) ** acc(beta)
        return (y.astype(x.dtype, copy=False),)

    return run


# --------------------------------------------------------------------------- LpNormalization


@register("LpNormalization", since=1)
def lp_normalization(node):
    axis = int(node.attrs.get("axis", -1))
    p = int(node.attrs.get("p", 2))

    def run(x):
        acc = _acc(x.dtype)
        xa = x.astype(acc, copy=False)
        if p == 1:
            norm = np.sum(np.abs(xa), axis=axis, keepdims=True)
        else:
            norm = np.sqrt(np.sum(xa * xa, axis=axis, keepdims=True))
        with np.errstate(divide="ignore", invalid="ignore"):
            y = np.where(norm == 0, acc(0), xa / norm)
        return (y.astype(x.dtype, copy=False),)

    return run


# --------------------------------------------------------------------------- MeanVarianceNormalization


@register("MeanVarianceNormalization", since=9)
def mvn(node):
    axes = tuple(int(a) for a in node.attrs.get("axes", [0, 2, 3]))

    def run(x):
        acc = _acc(x.dtype)
        xa = x.astype(acc, copy=False)
        mean = xa.mean(axis=axes, keepdims=True)
        var = np.mean(xa * xa, axis=axes, keepdims=True) - mean * mean
        y = (xa - mean) / (np.sqrt(np.maximum(var, 0)) + acc(1e-9))
        return (y.astype(x.dtype, copy=False),)

    return run
