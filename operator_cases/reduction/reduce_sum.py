"""ReduceSum: the sum of the elements over ``axes`` (ONNX spec: ReduceSum-1, 11, 13).

ReduceSum-1/11 take ``axes`` as an attribute (absent: all axes); ReduceSum-13 takes it as an
optional int64 input, where an absent or empty ``axes`` reduces over all axes unless
``noop_with_empty_axes`` is set (then the op is the identity). "Reduction over an empty set of
values yields 0" (ReduceSum-1 and 13; the ReduceSum-11 text says nothing, so its cases avoid
empty reductions). Floats are summed in float64 and rounded once; integers are summed exactly,
with values small enough that no partial sum can overflow (the spec says nothing about it).
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, abs_bound
from harness.registry import Operator

from .._accumulate_util import narrow_accumulation
from .._reduce_util import reduce_template, register_reduce, value_drawer

op = Operator("ReduceSum")


def compute(x, axes, dtype):
    return np.sum(x, axis=axes, keepdims=True)


def values(d, dtype, shape, n=64):
    lo, hi = S.finite_range(dtype) if S.is_int(dtype) else (0, 0)
    # at most 64 elements: a bound of max/128 keeps every partial sum in range
    bound = {"float16": 10.0, "bfloat16": 10.0}.get(dtype, 1000.0)
    return value_drawer((-bound, bound), (lo // 128, hi // 128), (0, hi // 128), grid=1)(d, dtype, shape, n)


def int_extreme_sums(dtype, ex):
    """Sums that reach the type's extremes without overflowing."""
    if not S.is_int(dtype):
        return []
    lo, hi = S.finite_range(dtype)
    rows = [[hi - 1, 1], [hi, 0], [lo, 0]] + ([[lo + 1, -1], [lo + 1, hi]] if lo < 0 else [])
    return [ex(np.array(rows, dtype=object).astype(S.np_dtype(dtype)), [1], 0, "int_extremes")]


register_reduce(op, (1, 11), (13,), compute, values, extra_edges=lambda dtype, since, ex: int_extreme_sums(dtype, ex))
narrow_accumulation(op, (1, 11, 13), lambda a, v: a + v, lambda a, n: a,
                    lambda t: [[t, t, -t, -t / 2], [1, 2, 3, 4]],
                    'acc + x')


# how it enters a generated graph (harness.suites.generated)
reduce_template(op, 13, nan=NAN_IEEE, ulps=1.0, bound=abs_bound)
