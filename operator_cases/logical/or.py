"""Or: C = A or B on booleans, elementwise (ONNX spec: Or-1, 7); broadcasting as for And (and.py)."""

import numpy as np

from harness.registry import Operator

from .._families import logical

op = Operator("Or")
logical(op, np.logical_or)
