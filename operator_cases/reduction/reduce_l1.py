"""ReduceL1: the sum of absolute values over ``axes`` (ONNX spec: ReduceL1-1, 11, 13, 18).

``axes`` is an attribute up to ReduceL1-13 and an optional input from ReduceL1-18 (with
``noop_with_empty_axes``: the op is then |x|). "Reduction over an empty set of values yields 0"
(versions 1, 13, 18; the ReduceL1-11 text says nothing, so its cases avoid empty reductions).
Floats are evaluated in float64 and rounded once; integers exactly, with values small enough
that no partial sum overflows, and without the signed minimum (whose absolute value does not
fit the type).
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE
from harness.registry import Operator

from .._reduce_util import reduce_template, register_reduce, value_drawer

op = Operator("ReduceL1")


def compute(x, axes, dtype):
    return np.sum(np.abs(x), axis=axes, keepdims=True)


def values(d, dtype, shape, n=64):
    lo, hi = S.finite_range(dtype) if S.is_int(dtype) else (0, 0)
    bound = {"float16": 10.0, "bfloat16": 10.0}.get(dtype, 1000.0)
    return value_drawer((-bound, bound), (-(hi // 128), hi // 128), (0, hi // 128), grid=1)(d, dtype, shape, n)


def edge_values(dtype):
    vals = S.edge_values(dtype)
    if S.is_int(dtype):
        vals = vals[vals != S.finite_range(dtype)[0]] if S.finite_range(dtype)[0] < 0 else vals
    return vals


register_reduce(op, (1, 11, 13), (18,), compute, values, edge_values=edge_values)


# how it enters a generated graph (harness.suites.generated)
reduce_template(op, 18, nan=NAN_IEEE, ulps=1.0)
