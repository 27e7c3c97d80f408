"""Exp: e^x, elementwise (ONNX spec: Exp-1, 6, 13).

Exp-13 adds bfloat16; Exp-1's ``consumed_inputs`` is a legacy attribute with no effect on
values. Drawn inputs stay within ln(largest finite value) - 0.5 of zero, so results are finite
in the dtype (results that round to denormals or to zero at the low end are kept: they are
defined); the edges test overflow to +inf (just above ln(max), the extremes, +inf), exp(-inf) =
0 and results in the denormal range.
"""

import math

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, with_input
from harness.registry import Example, Operator

from .._unary_util import (
    bounded,
    elementwise,
    smallest_subnormal,
    unary_template,
    values,
)

op = Operator("Exp")


def near_overflow(dtype, opset):
    top = math.log(S.finite_range(dtype)[1])
    tiny = smallest_subnormal(dtype)
    return [Example([values(dtype, top - 0.5, top + 0.5, -(top - 0.5), math.log(tiny) + 1, math.log(tiny) - 1)],
                    name="near_overflow")]


elementwise(op, (1, 6, 13), np.exp, lo=lambda dt: -bounded(dt, 0.5), hi=lambda dt: bounded(dt, 0.5),
            extra_edges=near_overflow)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, ulps=8.0, bound=with_input)
