"""ReduceProd: the product of the elements over ``axes`` (ONNX spec: ReduceProd-1, 11, 13, 18).

``axes`` is an attribute up to ReduceProd-13 and an optional input from ReduceProd-18 (with
``noop_with_empty_axes``). "Reduction over an empty set of values yields 1" (versions 1, 13,
18; the version-11 text says nothing, so its cases avoid empty reductions). Floats are
multiplied in float64 and rounded once (values near 1 in magnitude, so that the product rarely
leaves the type's range); integers exactly, with a group's values replaced by their signs when
the product would not fit the type (every partial product is then no larger than the result).
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE
from harness.registry import Operator

from .._accumulate_util import narrow_accumulation
from .._reduce_util import reduce_template, register_reduce, value_drawer

op = Operator("ReduceProd")


def compute(x, axes, dtype):
    return np.prod(x, axis=axes, keepdims=True)


def values(d, dtype, shape, n=64):
    bound = {"float16": 1.25, "bfloat16": 1.25}.get(dtype, 2.0)
    return value_drawer((-bound, bound), (-3, 3), (0, 3))(d, dtype, shape)


def fix(row, dtype):
    if not S.is_int(dtype):
        return row
    lo, hi = S.finite_range(dtype)
    p = 1
    for v in row:
        p *= v
    if lo <= p <= hi:
        return row
    return [(v > 0) - (v < 0) for v in row]


def edge_values(dtype):
    return S.edge_values(dtype)


def int_extremes(dtype, since, ex):
    if not S.is_int(dtype):
        return []
    lo, hi = S.finite_range(dtype)
    rows = [[hi, 1], [lo, 1], [1, 1]] + ([[-1, lo + 1], [-1, -1]] if lo < 0 else [])
    return [ex(np.array(rows, dtype=object).astype(S.np_dtype(dtype)), [1], 0, "int_extremes")]


register_reduce(op, (1, 11, 13), (18,), compute, values, fix=fix, extra_edges=int_extremes)
narrow_accumulation(op, (1, 11, 13, 18), lambda a, v: a * v, lambda a, n: a,
                    lambda t: [[t, 4, 0.125], [1, 2, 3]],
                    'acc * x', start=1.0)


# how it enters a generated graph (harness.suites.generated)
reduce_template(op, 18, nan=NAN_IEEE, ulps=2.0)
