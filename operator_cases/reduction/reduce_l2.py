"""ReduceL2: sqrt of the sum of squares over ``axes`` (ONNX spec: ReduceL2-1, 11, 13, 18).

``axes`` is an attribute up to ReduceL2-13 and an optional input from ReduceL2-18 (with
``noop_with_empty_axes``: the op is then |x|). "Reduction over an empty set of values yields 0"
(versions 1, 13, 18; the version-11 text says nothing, so its cases avoid empty reductions).
Floats are evaluated in float64 with scaling by the largest magnitude and rounded once, on a
binary grid of values whose squares sum exactly in the input type. No case has a finite value
whose square overflows the input type: the mathematical norm of such a value is finite, but
ReduceL2-18's function body (Mul, ReduceSum, Cast, Sqrt) gives +inf.
For integer types the spec gives no rounding rule for a root that is not an integer, so the
strategies zero elements of a reduced group until its sum of squares is a perfect square.
"""

import math

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE
from harness.registry import Operator

from .._accumulate_util import narrow_accumulation
from .._reduce_util import is_square, reduce_template, register_reduce, value_drawer

op = Operator("ReduceL2")


def compute(x, axes, dtype):
    if x.dtype == object:
        sums = np.sum(x * x, axis=axes, keepdims=True)
        return np.array([math.isqrt(int(v)) for v in np.asarray(sums).reshape(-1)], dtype=object).reshape(np.shape(sums))
    with np.errstate(all="ignore"):
        scale = np.max(np.abs(x), axis=axes, keepdims=True, initial=0.0)
        safe = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
        return safe * np.sqrt(np.sum((x / safe) ** 2, axis=axes, keepdims=True))


def values(d, dtype, shape, n=64):
    bound = {"float16": 10.0, "bfloat16": 10.0}.get(dtype, 1000.0)
    return value_drawer((-bound, bound), (-12, 12), (0, 12), grid=2)(d, dtype, shape, n)


def fix(row, dtype):
    if not S.is_int(dtype):
        return row
    k = 0
    while not is_square(sum(v * v for v in row)):
        row[k] = 0
        k += 1
    return row


def edge_values(dtype):
    if S.is_int(dtype):
        vals = [0, 1, 12, 3000] + ([-1, -3000] if S.finite_range(dtype)[0] < 0 else [])
        return np.array(vals, dtype=object).astype(S.np_dtype(dtype))
    # no finite value whose square overflows: the norm of one such value is the value itself, but
    # ReduceL2-18's function body squares in the input type (Mul, then Sqrt), giving +inf
    vals = S.edge_values(dtype)
    f = vals.astype(np.float64)
    return vals[~np.isfinite(f) | (np.abs(f) <= np.sqrt(S.finite_range(dtype)[1]))]


def pythagoras(dtype, since, ex):
    x = np.array([[3, 4, 0], [5, 0, 12], [0, 0, 0]], dtype=S.np_dtype(dtype))
    return [ex(x, [1], 0, "pythagorean")]


register_reduce(op, (1, 11, 13), (18,), compute, values, fix=fix, edge_values=edge_values, extra_edges=pythagoras)
narrow_accumulation(op, (1, 11, 13, 18), lambda a, v: a + v * v, lambda a, n: np.sqrt(a),
                    lambda t: [[3 * t / 8, t / 2, 0], [3, 4, 0]],
                    "acc + x * x, then sqrt: ReduceL2-18's function body Mul, ReduceSum, Sqrt in T")


# how it enters a generated graph (harness.suites.generated)
reduce_template(op, 18, nan=NAN_IEEE, ulps=2.0)
