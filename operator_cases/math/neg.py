"""Neg: y = -x, elementwise (ONNX spec: Neg-1, 6, 13).

Neg-6 adds the signed integer types, Neg-13 bfloat16; Neg-1's ``consumed_inputs`` is a legacy
attribute with no effect on values. -lowest of a signed integer type does not fit in the type
and the spec gives no result for it, so that value is neither drawn nor in the edges.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE
from harness.registry import Operator

from .._unary_util import above_signed_min, elementwise, signed_min, unary_template

op = Operator("Neg")

elementwise(op, (1, 6, 13), np.negative, lo=above_signed_min, drop=signed_min)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, ulps=0.0)
