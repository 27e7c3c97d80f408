"""Asinh: the hyperbolic arcsine of x, elementwise (ONNX spec: Asinh-9, 22; 22 adds bfloat16).

Defined for every real x; asinh(+-inf) = +-inf.
"""

import numpy as np

from harness.registry import Operator

from ._unary_util import elementwise

op = Operator("Asinh")

elementwise(op, (9, 22), np.arcsinh)
