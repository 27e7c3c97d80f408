"""BitwiseOr: C = A | B on integers, elementwise (ONNX spec: BitwiseOr-18), as BitwiseAnd (bitwise_and.py)."""

import numpy as np

from harness.registry import Operator

from .._families import bitwise

op = Operator("BitwiseOr")
bitwise(op, np.bitwise_or)
