"""Random kernels: Dropout, Bernoulli, RandomNormal(Like), RandomUniform(Like), Multinomial.

A ``seed`` attribute seeds a generator created once per node, so a prepared model with a seed
draws a reproducible stream; without a seed each node gets fresh entropy.
"""

from __future__ import annotations

import functools

import numpy as np
from onnx import helper

from .registry import register


def _rng(attrs):
    seed = attrs.get("seed")
    if seed is None:
        return np.random.default_rng()
    # float seeds (Random*, Bernoulli, Multinomial) map to their bit pattern
    return np.random.default_rng(int(np.float64(seed).view(np.uint64)))


def _dtype(attrs, default):
    dt = attrs.get("dtype")
    if dt is None:
        return np.dtype(default)
    return np.dtype(helper.tensor_dtype_to_np_dtype(int(dt)))


def _dropout_train(x, ratio, rng, mask_dtype):
    keep = rng.random(x.shape) >= ratio
    scale = 1.0 / (1.0 - ratio)
    y = (x.astype(np.float64) * keep * scale).astype(x.dtype)
    return y, keep.astype(mask_dtype)


# --------------------------------------------------------------------------- Dropout


def _wants_mask(node) -> bool:
    """Whether the node names its optional mask output. At inference Y is X itself (no copy,
    as Identity) and a mask nobody reads is not built."""
    return len(node.outputs) > 1 and bool(node.outputs[1])


@register("Dropout", since=1)
def dropout_1(node):
    # Opsets 1 and 6: ``is_test`` nonzero is Y = X; its default 0 is training, a random dropout
    # (judged by the comparator by its spec). Opsets 7 to 11 have no training switch: Y = X and an
    # all-true mask, the inference behaviour opset 12 states.
    mask_dtype = np.bool_ if node.opset >= 10 else None
    training = node.opset < 7 and not node.attrs.get("is_test", 0)
    ratio = float(np.float32(node.attrs.get("ratio", 0.5)))
    rng = _rng(node.attrs)
    masked = _wants_mask(node)

    def run(x):
        if training and ratio != 0:
            return _dropout_train(x, ratio, rng, x.dtype)
        return (x, np.ones(x.shape, dtype=mask_dtype or x.dtype)) if masked else (x,)

    return run


@register("Dropout", since=12)
def dropout_12(node):
    rng = _rng(node.attrs)
    masked = _wants_mask(node)

    def run(x, ratio=None, training_mode=None):
        r = 0.5 if ratio is None else float(np.asarray(ratio).reshape(()))
        training = training_mode is not None and bool(np.asarray(training_mode).reshape(()))
        if not training or r == 0:
            return (x, np.ones(x.shape, dtype=np.bool_)) if masked else (x,)
        return _dropout_train(x, r, rng, np.bool_)

    return run


# --------------------------------------------------------------------------- Bernoulli


@register("Bernoulli", since=15)
def bernoulli(node):
    attrs = node.attrs
    rng = _rng(attrs)

    def run(x):
        out = _dtype(attrs, x.dtype)
        return ((rng.random(x.shape) < x.astype(np.float64)).astype(out),)

    return run


# --------------------------------------------------------------------------- RandomNormal / RandomUniform


def _sampling(node, dist, like: bool):
    """The kernel of a sampling op: ``draw(rng, shape)`` (``dist(attrs)`` binds the distribution's
    attributes) cast to the ``dtype`` attribute, of the ``shape`` attribute (default type
    float32) or, ``like``, of the input's shape (and type)."""
    attrs = node.attrs
    draw = dist(attrs)
    rng = _rng(attrs)
    if like:
        def run_like(x):
            return (draw(rng, x.shape).astype(_dtype(attrs, x.dtype)),)

        return run_like
    shape = tuple(int(s) for s in attrs["shape"])
    out = _dtype(attrs, np.float32)

    def run():
        return (draw(rng, shape).astype(out),)

    return run


def _normal(attrs):
    mean = float(attrs.get("mean", 0.0))
    scale = float(attrs.get("scale", 1.0))
    return lambda rng, shape: rng.normal(mean, scale, size=shape)


def _uniform(attrs):
    low = float(attrs.get("low", 0.0))
    high = float(attrs.get("high", 1.0))
    return lambda rng, shape: rng.uniform(low, high, size=shape)


for _name, _dist in (("RandomNormal", _normal), ("RandomUniform", _uniform)):
    register(_name, since=1)(functools.partial(_sampling, dist=_dist, like=False))
    register(_name + "Like", since=1)(functools.partial(_sampling, dist=_dist, like=True))


# --------------------------------------------------------------------------- Multinomial


@register("Multinomial", since=7)
def multinomial(node):
    attrs = node.attrs
    rng = _rng(attrs)
    n = int(attrs.get("sample_size", 1))
    out = _dtype({"dtype": attrs.get("dtype", 6)}, np.int32)

    def run(x):
        logits = x.astype(np.float64)
        logits = logits - logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        cdf = np.cumsum(p, axis=1)
        cdf /= cdf[:, -1:]
        u = rng.random((x.shape[0], n))
        idx = np.empty((x.shape[0], n), dtype=np.int64)
        for b in range(x.shape[0]):
            idx[b] = np.searchsorted(cdf[b], u[b], side="right")
        return (np.minimum(idx, x.shape[1] - 1).astype(out),)

    return run
