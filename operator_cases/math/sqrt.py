"""Sqrt: y = x^0.5, elementwise (ONNX spec: Sqrt-1, 6, 13).

Sqrt-13 adds bfloat16; Sqrt-1's ``consumed_inputs`` is a legacy attribute with no effect on
values. Spec: "If x is negative, then it will return NaN." Drawn inputs are >= 0; the edges
test negative values, -0.0 (sqrt(-0) = -0 in IEEE 754), +inf and denormals.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE
from harness.registry import Operator

from .._unary_util import all_of, elementwise, unary_template

op = Operator("Sqrt")

elementwise(op, (1, 6, 13), np.sqrt, lo=0.0)


# how it enters a generated graph: on non-negative values only (the spec's domain)
unary_template(op, nan=NAN_IEEE, ulps=2.0, guard=all_of(lambda x: x >= 0))
