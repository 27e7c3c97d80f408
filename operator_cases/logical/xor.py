"""Xor: C = A xor B on booleans, elementwise (ONNX spec: Xor-1, 7); broadcasting as for And (and.py)."""

import numpy as np

from harness.registry import Operator

from .._families import logical

op = Operator("Xor")
logical(op, np.logical_xor)
