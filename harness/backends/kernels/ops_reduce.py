"""Reductions (Reduce*) and ArgMax/ArgMin.

The axes are an attribute before ReduceSum-13 and the other Reduce*-18, an optional input
from then on; empty axes reduce everything unless ``noop_with_empty_axes`` is set. Float16
and the ml_dtypes floats accumulate in float32; the result has the input's dtype.
"""

from __future__ import annotations

import math

import numpy as np

from ._util import ML_FLOATS, normalize_axes, normalize_axis
from .registry import register


def _acc_dtype(dt: np.dtype):
    if dt == np.float16 or dt in ML_FLOATS:
        return np.float32
    return None


def _identity_low(dt: np.dtype):
    if dt.kind == "b":
        return False
    if dt.kind in "iu":
        return np.iinfo(dt).min
    return -np.inf


def _identity_high(dt: np.dtype):
    if dt.kind == "b":
        return True
    if dt.kind in "iu":
        return np.iinfo(dt).max
    return np.inf


def _sum(x, axes, keepdims):
    return np.sum(x, axis=axes, keepdims=keepdims, dtype=_acc_dtype(x.dtype))


def _real(x):
    """x for a transcendental reduction: integers in float64 (the result is cast back)."""
    return x.astype(np.float64) if x.dtype.kind in "iub" else x.astype(_acc_dtype(x.dtype) or x.dtype, copy=False)


def _log_sum_exp(x, axes, keepdims):
    x = _real(x)
    if x.size == 0:
        return np.log(np.sum(np.exp(x), axis=axes, keepdims=keepdims))
    m = np.max(x, axis=axes, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    s = np.log(np.sum(np.exp(x - m), axis=axes, keepdims=True)) + m
    return s if keepdims or axes == () else np.squeeze(s, axis=axes)


def _mean(x, axes, keepdims):
    if x.dtype.kind not in "iu":
        return np.mean(x, axis=axes, keepdims=keepdims, dtype=_acc_dtype(x.dtype))
    # integer mean: the integer sum divided by the count, truncated toward zero
    count = x.size if axes is None else math.prod(x.shape[a] for a in axes)
    total = np.sum(x, axis=axes, keepdims=keepdims, dtype=np.uint64 if x.dtype.kind == "u" else np.int64)
    if not count:
        return total
    q = total // count
    if x.dtype.kind == "i":
        q += ((q < 0) & (q * count != total)).astype(q.dtype)
    return q


def _square(x):
    return np.square(x.astype(_acc_dtype(x.dtype) or x.dtype, copy=False))


_REDUCERS = {
    "ReduceSum": _sum,
    "ReduceMean": _mean,
    "ReduceMax": lambda x, a, k: np.max(x, axis=a, keepdims=k, initial=_identity_low(x.dtype)),
    "ReduceMin": lambda x, a, k: np.min(x, axis=a, keepdims=k, initial=_identity_high(x.dtype)),
    "ReduceProd": lambda x, a, k: np.prod(x, axis=a, keepdims=k, dtype=_acc_dtype(x.dtype)),
    "ReduceL1": lambda x, a, k: _sum(np.abs(x), a, k),
    "ReduceL2": lambda x, a, k: np.sqrt(_sum(np.square(_real(x)), a, k)),
    "ReduceLogSum": lambda x, a, k: np.log(_sum(_real(x), a, k)),
    "ReduceLogSumExp": _log_sum_exp,
    "ReduceSumSquare": lambda x, a, k: _sum(_square(x), a, k),
}

#: the opset from which each reduction takes its axes as an input
_AXES_INPUT_SINCE = {name: (13 if name == "ReduceSum" else 18) for name in _REDUCERS}


def _reduce_factory(name: str, axes_as_input: bool):
    reduce = _REDUCERS[name]

    def factory(node):
        keepdims = bool(node.attrs.get("keepdims", 1))
        noop = bool(node.attrs.get("noop_with_empty_axes", 0))
        attr_axes = node.attrs.get("axes")

        def run(x, axes=None):
            if not axes_as_input:
                axes = attr_axes
            dt = x.dtype
            if axes is None or np.size(axes) == 0:
                # noop_with_empty_axes reduces over no axis: the elementwise part still
                # applies (ReduceSumSquare squares, ReduceL1 takes |x|), as the function
                # bodies of those ops define
                ax = () if noop else None
            else:
                ax = normalize_axes(axes, x.ndim)
            y = reduce(x.astype(np.float32) if dt in ML_FLOATS else x, ax, keepdims)
            return (np.asarray(y).astype(dt, copy=False),)

        return run

    return factory


for _name in _REDUCERS:
    register(_name, since=1)(_reduce_factory(_name, axes_as_input=False))
    register(_name, since=_AXES_INPUT_SINCE[_name])(_reduce_factory(_name, axes_as_input=True))


def _arg_factory(fn):
    def factory(node):
        axis = node.attrs.get("axis", 0)
        keepdims = bool(node.attrs.get("keepdims", 1))
        last = bool(node.attrs.get("select_last_index", 0))

        def run(x):
            if x.dtype in ML_FLOATS:
                x = x.astype(np.float32)
            ax = normalize_axis(axis, x.ndim)
            if last:
                idx = x.shape[ax] - 1 - fn(np.flip(x, axis=ax), axis=ax)
            else:
                idx = fn(x, axis=ax)
            idx = np.asarray(idx, dtype=np.int64)
            return (np.expand_dims(idx, ax) if keepdims else idx,)

        return run

    return factory


register("ArgMax", since=1)(_arg_factory(np.argmax))
register("ArgMin", since=1)(_arg_factory(np.argmin))
