"""LessOrEqual: C = (A <= B), elementwise, output bool (ONNX spec: LessOrEqual-12, 16).

The mirror of GreaterOrEqual (greater_or_equal.py): the same types and IEEE 754 rules.
"""

import numpy as np

from harness.registry import Operator

from .._families import comparison

op = Operator("LessOrEqual")
comparison(op, np.less_equal, legacy=(), modern=(12, 16))
