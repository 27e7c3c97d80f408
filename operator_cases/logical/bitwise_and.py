"""BitwiseAnd: C = A & B on integers, elementwise with multidirectional broadcasting
(ONNX spec: BitwiseAnd-18). Signed types work on the two's complement bits."""

import numpy as np

from harness.registry import Operator

from .._families import bitwise

op = Operator("BitwiseAnd")
bitwise(op, np.bitwise_and)
