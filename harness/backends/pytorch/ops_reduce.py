"""Reductions (Reduce*, ArgMax/ArgMin).

Axes come from the ``axes`` attribute up to ReduceSum-11 / Reduce*-13 and from the optional
second input from ReduceSum-13 / Reduce*-18 on, where ``noop_with_empty_axes`` decides what no
axes means. Reducing over an empty set gives the operation's identity (0 for sums, 1 for
products, -inf / the type's minimum for max, ...), as the spec says since opset 18.
"""

from __future__ import annotations

import math

import torch

from . import dtypes
from ._util import axes_of, ints
from ..lowering import REDUCTIONS
from .registry import lowers


def _axes(x, axes, noop_with_empty_axes):
    if axes is None or len(axes) == 0:
        return None if noop_with_empty_axes else list(range(x.dim()))
    return sorted(set(axes_of(axes, x.dim())))


def _lowest(dtype):
    if dtype == torch.bool:
        return False
    return -math.inf if dtype.is_floating_point else torch.iinfo(dtype).min


def _highest(dtype):
    if dtype == torch.bool:
        return True
    return math.inf if dtype.is_floating_point else torch.iinfo(dtype).max


def _empty_result(x, dims, keepdims, value):
    shape = [1 if i in dims else d for i, d in enumerate(x.shape)] if keepdims else [d for i, d in enumerate(x.shape) if i not in dims]
    return torch.full(shape, value, dtype=x.dtype, device=x.device)


def _no_reduction(kind, x):
    """``noop_with_empty_axes`` with no axes: "no reduction is applied, but other operations will be
    performed. For example, ReduceSumSquare acts as a vanilla Square." """
    if kind in ("l1", "l2"):  # sqrt(x * x) is |x|
        return torch.abs(x)
    if kind == "sumsquare":
        return x * x
    if kind == "logsum":
        return torch.log(x) if x.dtype.is_floating_point else torch.log(x.double()).to(x.dtype)
    return x  # max, min, sum, mean, prod and log(exp(x))


def _reduction(kind):
    def reduce(x, dims, keepdims):
        if kind in ("max", "min") and any(x.shape[d] == 0 for d in dims):
            return _empty_result(x, dims, keepdims, _lowest(x.dtype) if kind == "max" else _highest(x.dtype))
        if kind == "max":
            return torch.amax(x, dim=dims, keepdim=bool(keepdims)) if dims else x
        if kind == "min":
            return torch.amin(x, dim=dims, keepdim=bool(keepdims)) if dims else x
        if kind == "sum":
            return torch.sum(x, dim=dims, keepdim=bool(keepdims), dtype=x.dtype)
        if kind == "mean":
            if x.dtype.is_floating_point:
                return torch.mean(x, dim=dims, keepdim=bool(keepdims))
            n = math.prod(x.shape[d] for d in dims)
            return torch.div(torch.sum(x, dim=dims, keepdim=bool(keepdims)), n, rounding_mode="trunc").to(x.dtype)
        if kind == "prod":
            out = x
            for d in sorted(dims, reverse=True):
                out = torch.prod(out, dim=d, keepdim=bool(keepdims), dtype=x.dtype)
            return out
        if kind == "l1":
            return torch.sum(torch.abs(x), dim=dims, keepdim=bool(keepdims), dtype=x.dtype)
        if kind == "l2":
            wide = x.double() if not x.dtype.is_floating_point else x
            return torch.sqrt(torch.sum(wide * wide, dim=dims, keepdim=bool(keepdims))).to(x.dtype)
        if kind == "sumsquare":
            return torch.sum(x * x, dim=dims, keepdim=bool(keepdims), dtype=x.dtype)
        if kind in ("logsum", "logsumexp") and not x.dtype.is_floating_point:
            # integer types give their own type back (torch promotes to float): computed in
            # float64, truncated (the spec gives no rounding rule)
            return reduce(x.double(), dims, keepdims).to(x.dtype)
        if kind == "logsum":
            return torch.log(torch.sum(x, dim=dims, keepdim=bool(keepdims)))
        if kind == "logsumexp":
            if any(x.shape[d] == 0 for d in dims):
                return _empty_result(x, dims, keepdims, -math.inf)
            # in float64, rounded once (torch sums float16 exponentials in float16: 18 ulp off)
            return torch.logsumexp(x.double(), dim=dims, keepdim=bool(keepdims)).to(x.dtype)
        raise AssertionError(kind)

    return reduce


def _register(op, kind, attr_versions, input_versions):
    signed_reduce, unsigned_reduce = _reduction(kind), _reduction("sum" if kind == "l1" else kind)

    def reduce(node, x, dims, keepdims):
        code = node.in_type(0)
        if code == dtypes.TP.UINT64 and kind in ("max", "min"):
            return dtypes.ordered(signed_reduce(dtypes.ordered(x), dims, keepdims))
        return (unsigned_reduce if code in dtypes.UNSIGNED else signed_reduce)(x, dims, keepdims)

    if attr_versions:
        @lowers(op, *attr_versions)
        def with_attr(node, x, *, axes=None, keepdims=1):
            dims = _axes(x, axes, 0)
            return reduce(node, x, dims, keepdims)

    if input_versions:
        @lowers(op, *input_versions)
        def with_input(node, x, axes=None, *, keepdims=1, noop_with_empty_axes=0):
            dims = _axes(x, ints(axes) if axes is not None else None, noop_with_empty_axes)
            if dims is None:
                return x.clone() if kind in ("l1", "l2") and node.in_type(0) in dtypes.UNSIGNED else _no_reduction(kind, x)
            return reduce(node, x, dims, keepdims)


for _op, _kind, _attr, _input in REDUCTIONS:
    _register(_op, _kind, _attr, _input)


def _arg(fn):
    def run(node, x, *, axis=0, keepdims=1, select_last_index=0):
        a = axis + x.dim() if axis < 0 else axis
        data = x.flip(a) if select_last_index else x
        if data.dtype == torch.bool:
            data = data.to(torch.uint8)
        elif node.in_type(0) == dtypes.TP.UINT64:
            data = dtypes.ordered(data)
        idx = fn(data, dim=a, keepdim=bool(keepdims))
        if select_last_index:
            idx = x.shape[a] - 1 - idx
        return idx.to(torch.int64)

    return run


lowers("ArgMax", 1, 11, 12, 13)(_arg(torch.argmax))
lowers("ArgMin", 1, 11, 12, 13)(_arg(torch.argmin))
