"""Tanh: the hyperbolic tangent of x, elementwise (ONNX spec: Tanh-1, 6, 13).

Tanh-13 adds bfloat16; Tanh-1's ``consumed_inputs`` is a legacy attribute with no effect on
values. tanh(+-inf) = +-1. Inputs are drawn from [-20, 20], where tanh is not yet saturated.
"""

import numpy as np

from harness.registry import Operator

from ._unary_util import elementwise

op = Operator("Tanh")

elementwise(op, (1, 6, 13), np.tanh, lo=-20.0, hi=20.0)
