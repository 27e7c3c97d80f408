"""Round: the nearest integer, halves to the nearest even integer, elementwise (ONNX spec:
Round-11, 22; 22 adds bfloat16).

Spec: "In case of halves, the rule is to round them to the nearest even integer. If input x is
integral, +0, -0, NaN, or infinite, x itself is returned." numpy.round rounds halves to even
and is exact in float64, which holds every value of the narrower types. The edges add the
spec's examples, halves, the value just below 0.5 (floor(x + 0.5) gets it wrong) and large odd
integers (x + 0.5 rounds up in the input type).
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE
from harness.registry import Example, Operator

from .._unary_util import elementwise, eps, unary_template, values

op = Operator("Round")


def halves(dtype, opset):
    e = eps(dtype)
    top = 2.0 / e  # 2**precision: above it every value is an integer
    return [
        Example([values(dtype, 0.9, 2.5, 2.3, 1.5, -4.5)], name="spec_examples"),
        Example([values(dtype, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -3.5, 0.5 - e / 4, -0.5 + e / 4, 1.5 - e / 2,
                        top / 2 - 0.5, -(top / 2 - 0.5), top / 4 + 0.5, top - 1, -(top - 1), top + 2)], name="halves"),
    ]


elementwise(op, (11, 22), np.round, extra_edges=halves)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, jumps=True, ulps=0.0)
