"""Neg: y = -x, elementwise (ONNX spec: Neg-1, 6, 13).

Neg-6 adds the signed integer types, Neg-13 bfloat16; Neg-1's ``consumed_inputs`` is a legacy
attribute with no effect on values. -lowest of a signed integer type does not fit in the type
and the spec gives no result for it, so that value is neither drawn nor in the edges.
"""

import numpy as np

from harness.registry import Operator

from ._unary_util import above_signed_min, elementwise, signed_min

op = Operator("Neg")

elementwise(op, (1, 6, 13), np.negative, lo=above_signed_min, drop=signed_min)
