"""ReduceSumSquare: the sum of squares over ``axes`` (ONNX spec: ReduceSumSquare-1, 11, 13, 18).

``axes`` is an attribute up to ReduceSumSquare-13 and an optional input from 18 (with
``noop_with_empty_axes``: "ReduceSumSquare returns the Square of the input tensor").
"Reduction over an empty set of values yields 0" (versions 1, 13, 18; the version-11 text says
nothing, so its cases avoid empty reductions). Floats are evaluated in float64 and rounded once
(a square beyond the type's range is +inf); integers exactly, with |x| <= sqrt(max/64) so that
no partial sum overflows.
"""

import math

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE
from harness.registry import Operator

from .._reduce_util import reduce_template, register_reduce, value_drawer

op = Operator("ReduceSumSquare")


def compute(x, axes, dtype):
    return np.sum(x * x, axis=axes, keepdims=True)


def _int_bound(dtype):
    return math.isqrt(S.finite_range(dtype)[1] // 64)


def values(d, dtype, shape, n=64):
    bound = {"float16": 10.0, "bfloat16": 10.0}.get(dtype, 1000.0)
    b = _int_bound(dtype) if S.is_int(dtype) else 0
    return value_drawer((-bound, bound), (-b, b), (0, b), grid=2)(d, dtype, shape, n)


def edge_values(dtype):
    if S.is_int(dtype):
        b = _int_bound(dtype)
        vals = [0, 1, b] + ([-1, -b] if S.finite_range(dtype)[0] < 0 else [])
        return np.array(vals, dtype=object).astype(S.np_dtype(dtype))
    return S.edge_values(dtype)


register_reduce(op, (1, 11, 13), (18,), compute, values, edge_values=edge_values)


# how it enters a generated graph (harness.suites.generated)
reduce_template(op, 18, nan=NAN_IEEE, ulps=2.0)
