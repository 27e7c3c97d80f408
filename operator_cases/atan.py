"""Atan: the arctangent of x, elementwise (ONNX spec: Atan-7, 22; 22 adds bfloat16).

Defined for every real x; atan(+-inf) = +-pi/2.
"""

import numpy as np

from harness.registry import Operator

from ._unary_util import elementwise

op = Operator("Atan")

elementwise(op, (7, 22), np.arctan)
