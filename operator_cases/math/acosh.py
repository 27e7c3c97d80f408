"""Acosh: the hyperbolic arccosine of x, elementwise (ONNX spec: Acosh-9, 22; 22 adds bfloat16).

Drawn inputs stay in the domain [1, inf); below 1 the result is NaN (the C library's and IEEE
754's answer; the spec names no other), which the edges test.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE, with_input
from harness.registry import Example, Operator

from .._unary_util import elementwise, eps, unary_template, values

op = Operator("Acosh")


def domain_bounds(dtype, opset):
    e = eps(dtype)
    return [Example([values(dtype, 1.0, 1.0 + e, 1.0 - e / 2, 0.0)], name="domain_bounds")]


elementwise(op, (9, 22), np.arccosh, lo=1.0, extra_edges=domain_bounds)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, ulps=8.0, bound=with_input)
