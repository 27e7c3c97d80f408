"""Reductions (Reduce*, ArgMax/ArgMin).

Axes come from the ``axes`` attribute up to ReduceSum-11 / Reduce*-13 and from the optional
second input from ReduceSum-13 / Reduce*-18 on, where ``noop_with_empty_axes`` decides what no
axes means ("no reduction is applied, but other operations will be performed": ReduceSumSquare
is then a Square). Reducing over an empty set gives the operation's identity, as TensorFlow's
reductions do (0, 1, -inf / +inf for floats; the integer limits for integers)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from ..base import Unsupported

from .ops_tensor import axes_of
from ..lowering import REDUCTIONS
from .registry import lowers

_NAN_SAFE = {"max": tf.math.reduce_max, "min": tf.math.reduce_min}


#: reductions through TensorFlow ops with float kernels only (sqrt, log, logsumexp)
_FLOAT_ONLY = ("l2", "logsum", "logsumexp")


def _reduce(kind: str, x, axes: list[int], keepdims: int):
    if kind in _FLOAT_ONLY and not (x.dtype.is_floating or x.dtype.is_complex):
        raise Unsupported(f"Reduce {kind}: TensorFlow's sqrt / log / logsumexp have no {x.dtype.name} kernel")
    k = bool(keepdims)
    if kind in _NAN_SAFE and x.dtype == tf.bool:  # the largest of booleans is any, the smallest all
        return (tf.math.reduce_any if kind == "max" else tf.math.reduce_all)(x, axis=axes, keepdims=k)
    if kind in _NAN_SAFE:
        out = _NAN_SAFE[kind](x, axis=axes, keepdims=k)
        if x.dtype.is_floating:  # TensorFlow's max/min skip NaN; the spec's max of a NaN is NaN
            nan = tf.math.reduce_any(tf.math.is_nan(x), axis=axes, keepdims=k)
            out = tf.where(nan, tf.constant(np.nan, x.dtype), out)
        return out
    if kind == "sum":
        return tf.math.reduce_sum(x, axis=axes, keepdims=k)
    if kind == "mean":
        return tf.math.reduce_mean(x, axis=axes, keepdims=k)
    if kind == "prod":
        return tf.math.reduce_prod(x, axis=axes, keepdims=k)
    if kind == "l1":
        return tf.math.reduce_sum(tf.math.abs(x), axis=axes, keepdims=k)
    if kind == "l2":
        return tf.math.sqrt(tf.math.reduce_sum(x * x, axis=axes, keepdims=k))
    if kind == "sumsquare":
        return tf.math.reduce_sum(x * x, axis=axes, keepdims=k)
    if kind == "logsum":
        return tf.math.log(tf.math.reduce_sum(x, axis=axes, keepdims=k))
    if kind == "logsumexp":
        return tf.math.reduce_logsumexp(x, axis=axes, keepdims=k)
    raise AssertionError(kind)


def _no_reduction(kind: str, x):
    if kind in ("logsum",) and not x.dtype.is_floating:
        raise Unsupported(f"Reduce {kind}: TensorFlow's log has no {x.dtype.name} kernel")
    if kind in ("l1", "l2"):
        return tf.math.abs(x)
    if kind == "sumsquare":
        return x * x
    if kind == "logsum":
        return tf.math.log(x)
    return x


def _register(op: str, kind: str, attr_versions: tuple[int, ...], input_versions: tuple[int, ...]) -> None:
    if attr_versions:
        @lowers(op, *attr_versions)
        def with_attr(node, x, *, axes=None, keepdims=1):
            rank = x.shape.rank
            return _reduce(kind, x, axes_of(axes, rank) if axes else list(range(rank)), keepdims)

    if input_versions:
        @lowers(op, *input_versions)
        def with_input(node, x, axes=None, *, keepdims=1, noop_with_empty_axes=0):
            given = tf.get_static_value(axes) if axes is not None else np.zeros(0, np.int64)
            if given is None and axes.shape.num_elements() is not None:
                # a graph input of known length: whether it is empty is known when tracing, so no
                # tf.cond (XLA's compile-time constant of a tf.cond's output is wrong: "Axes
                # contains duplicate dimension")
                if axes.shape.num_elements() > 0:
                    return _reduce(kind, x, axes, keepdims)
                given = np.zeros(0, np.int64)
            if given is None:  # a graph input in graph mode: TensorFlow reduces over a tensor of axes
                every = tf.range(x.shape.rank, dtype=axes.dtype)
                if noop_with_empty_axes:
                    return tf.cond(tf.size(axes) > 0, lambda: _reduce(kind, x, axes, keepdims), lambda: _no_reduction(kind, x))
                return _reduce(kind, x, tf.cond(tf.size(axes) > 0, lambda: axes, lambda: every), keepdims)
            if np.size(given) == 0:
                if noop_with_empty_axes:
                    return _no_reduction(kind, x)
                return _reduce(kind, x, list(range(x.shape.rank)), keepdims)
            return _reduce(kind, x, axes_of(given, x.shape.rank), keepdims)


for _op, _kind, _attr, _input in REDUCTIONS:
    _register(_op, _kind, _attr, _input)


def _arg(fn):
    def run(node, x, *, axis=0, keepdims=1, select_last_index=0):
        a = axis + x.shape.rank if axis < 0 else axis
        data = tf.reverse(x, [a]) if select_last_index else x
        idx = fn(data, axis=a, output_type=tf.int64)  # the first extreme wins
        if select_last_index:
            idx = tf.cast(tf.shape(x)[a], tf.int64) - 1 - idx
        return tf.expand_dims(idx, a) if keepdims else idx

    return run


lowers("ArgMax", 1, 11, 12, 13)(_arg(tf.math.argmax))
lowers("ArgMin", 1, 11, 12, 13)(_arg(tf.math.argmin))
