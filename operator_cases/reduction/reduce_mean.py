"""ReduceMean: the mean of the elements over ``axes`` (ONNX spec: ReduceMean-1, 11, 13, 18).

``axes`` is an attribute up to ReduceMean-13 and an optional input from ReduceMean-18 (with
``noop_with_empty_axes``). "Reduction over an empty set of values yields undefined", so no case
reduces an empty set. For integer types the spec gives no rounding rule for a mean that is not
an integer, so the strategies adjust one element of every reduced group to make its sum a
multiple of the group size (the mean is then exact); values stay small so that no partial sum
overflows. Floats are averaged in float64 and rounded once.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, abs_bound
from harness.registry import Operator

from .._accumulate_util import narrow_accumulation
from .._reduce_util import reduce_template, register_reduce, value_drawer

op = Operator("ReduceMean")


def compute(x, axes, dtype):
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    total = np.asarray(np.sum(x, axis=axes, keepdims=True))
    if x.dtype == object:  # exact; the strategies make every group sum divisible by n
        return np.array([int(v) // n if int(v) >= 0 else -((-int(v)) // n) for v in total.reshape(-1)],
                        dtype=object).reshape(total.shape)
    return total / n


def values(d, dtype, shape, n=64):
    lo, hi = S.finite_range(dtype) if S.is_int(dtype) else (0, 0)
    bound = {"float16": 10.0, "bfloat16": 10.0}.get(dtype, 1000.0)
    return value_drawer((-bound, bound), (lo // 256, hi // 256), (0, hi // 256), grid=1)(d, dtype, shape, n)


def fix(row, dtype):
    if not S.is_int(dtype) or not row:
        return row
    r = sum(row) % len(row)
    if r:
        row[0] += len(row) - r
    return row


register_reduce(op, (1, 11, 13), (18,), compute, values, fix=fix, empty_ok=lambda dtype: False)
narrow_accumulation(op, (1, 11, 13, 18), lambda a, v: a + v, lambda a, n: a / n,
                    lambda t: [[t, t, t / 2, t / 2], [1, 2, 3, 4]],
                    'the sum, then / n')


# how it enters a generated graph (harness.suites.generated)
reduce_template(op, 18, nan=NAN_IEEE, ulps=2.0, bound=abs_bound)
