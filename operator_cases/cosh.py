"""Cosh: the hyperbolic cosine of x, elementwise (ONNX spec: Cosh-9, 22; 22 adds bfloat16).

Drawn inputs stay within ln(largest finite value) - 1 of zero, so results are finite in the
dtype; the edges test overflow to +inf (cosh is even) just beyond that, at the extremes and at +-inf.
"""

import math

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, with_input
from harness.registry import Example, Operator

from ._unary_util import bounded, elementwise, unary_template, values

op = Operator("Cosh")


def near_overflow(dtype, opset):
    top = math.log(S.finite_range(dtype)[1])  # cosh/sinh overflow just above ln(2 * max)
    return [Example([values(dtype, top - 0.5, -(top - 0.5), top + 1.5, -(top + 1.5))], name="near_overflow")]


elementwise(op, (9, 22), np.cosh, lo=lambda dt: -bounded(dt), hi=bounded, extra_edges=near_overflow)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, ulps=8.0, bound=with_input)
