"""Cos: the cosine of x, elementwise (ONNX spec: Cos-7, 22; 22 adds bfloat16).

Defined for every real x; cos(+-inf) is NaN (C library / IEEE 754: no limit).
"""

import numpy as np

from harness.registry import Operator

from ._unary_util import elementwise

op = Operator("Cos")

elementwise(op, (7, 22), np.cos)
