"""ReduceLogSum: log of the sum over ``axes`` (ONNX spec: ReduceLogSum-1, 11, 13, 18, 28).

``axes`` is an attribute up to ReduceLogSum-13 and an optional input from 18 (with
``noop_with_empty_axes``: "ReduceLogSum returns the Log of input tensor"). ReduceLogSum-28 drops
the integer types. "Reduction over an empty set of values yields minus infinity (if supported by
the datatype) or undefined otherwise": -inf for floats; integers never reduce an empty set, and
the version-11 text says nothing, so its cases avoid empty reductions. A sum of zeros gives
log(0) = -inf. Floats are evaluated in float64 and rounded once, on non-negative data (log of a
negative sum has no real value). For integer types a logarithm is an integer only for a sum of 1,
and the spec gives no rounding rule, so the strategies make every integer group sum to 1.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE
from harness.registry import Operator

from .._accumulate_util import narrow_accumulation
from .._reduce_util import grows, reduce_template, register_reduce, value_drawer

op = Operator("ReduceLogSum")


def compute(x, axes, dtype):
    total = np.sum(x, axis=axes, keepdims=True)
    with np.errstate(all="ignore"):
        out = np.log(np.asarray(total, dtype=np.float64))
    return np.rint(out).astype(object) if x.dtype == object else out


def values(d, dtype, shape, n=64):
    return value_drawer((0.0, 10.0), (-1, 1), (0, 1))(d, dtype, shape)


def fix(row, dtype):
    if not S.is_int(dtype) or not row:
        return row
    if dtype.startswith("u"):  # a single 1 (the first drawn one) among zeros
        first = next((i for i, v in enumerate(row) if v), 0)
        return [1 if i == first else 0 for i in range(len(row))]
    row[0] = 1 - sum(row[1:])
    return row


def edge_values(dtype):
    vals = S.edge_values(dtype)
    if S.is_float(dtype):
        f = vals.astype(np.float64)
        vals = vals[(f >= 0) | np.isnan(f)]
    return vals


def zeros(dtype, since, ex):
    if not S.is_float(dtype):
        return []
    return [ex(np.zeros((2, 3), dtype=S.np_dtype(dtype)), [1], 1, "sum_of_zeros")]


register_reduce(op, (1, 11, 13), (18, 28), compute, values, fix=fix, empty_ok=S.is_float, edge_values=edge_values,
                extra_edges=zeros)
narrow_accumulation(op, (1, 11, 13, 18, 28), lambda a, v: a + v, lambda a, n: np.log(a),
                    lambda t: [[t, t, -t, -t / 2], [1, 2, 3, 4]],
                    'acc + x, then log')


# how it enters a generated graph (harness.suites.generated)
reduce_template(op, 18, nan=NAN_IEEE, ulps=8.0, bound=grows)
