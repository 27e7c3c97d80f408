"""BitwiseXor: C = A ^ B on integers, elementwise (ONNX spec: BitwiseXor-18), as BitwiseAnd (bitwise_and.py)."""

import numpy as np

from harness.registry import Operator

from .._families import bitwise

op = Operator("BitwiseXor")
bitwise(op, np.bitwise_xor)
