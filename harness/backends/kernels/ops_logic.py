"""Comparisons, boolean logic, bitwise operators and Where."""

from __future__ import annotations

import numpy as np

from ._util import broadcasting, float32_if_ml
from .registry import register


def _comparison(ufunc):
    def run(a, b):
        a, b = float32_if_ml(a), float32_if_ml(b)
        if a.dtype == object or b.dtype == object:
            return (np.asarray(ufunc(a, b), dtype=bool),)
        return (ufunc(a, b),)

    return lambda node: broadcasting(node, run)


for _name, _ufunc, _since in (
    ("Equal", np.equal, 1),
    ("Greater", np.greater, 1),
    ("Less", np.less, 1),
    ("GreaterOrEqual", np.greater_equal, 12),
    ("LessOrEqual", np.less_equal, 12),
):
    register(_name, since=_since)(_comparison(_ufunc))


def _logical(ufunc):
    def run(a, b):
        return (ufunc(a, b),)

    return lambda node: broadcasting(node, run)


register("And", since=1)(_logical(np.logical_and))
register("Or", since=1)(_logical(np.logical_or))
register("Xor", since=1)(_logical(np.logical_xor))
register("BitwiseAnd", since=18)(_logical(np.bitwise_and))
register("BitwiseOr", since=18)(_logical(np.bitwise_or))
register("BitwiseXor", since=18)(_logical(np.bitwise_xor))


@register("Not", since=1)
def not_(node):
    def run(x):
        return (np.logical_not(x),)

    return run


@register("BitwiseNot", since=18)
def bitwise_not(node):
    def run(x):
        return (np.invert(x),)

    return run


@register("BitShift", since=11)
def bit_shift(node):
    left = node.attrs["direction"] == "LEFT"

    def run(x, y):
        bits = x.dtype.itemsize * 8
        y = y.astype(x.dtype, copy=False)
        # BitShift-28: shifting by a negative amount or by >= the bit width gives 0, or -1
        # for a right shift of a negative signed value
        out_of_range = (y < 0) | (y >= bits) if x.dtype.kind == "i" else y >= bits
        safe = np.where(out_of_range, 0, y).astype(x.dtype)
        z = np.left_shift(x, safe) if left else np.right_shift(x, safe)
        if out_of_range.any():
            fill = np.where(x < 0, -1, 0) if (x.dtype.kind == "i" and not left) else 0
            z = np.where(out_of_range, fill, z).astype(x.dtype)
        return (z,)

    return run


@register("Where", since=9)
def where(node):
    def run(cond, x, y):
        if x.dtype != y.dtype:
            y = y.astype(x.dtype)
        return (np.where(cond, x, y),)

    return run
