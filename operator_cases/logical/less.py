"""Less: C = (A < B), elementwise, output bool (ONNX spec: Less-1, 7, 9, 13).

The mirror of Greater: the same versions, types, broadcasting and IEEE 754 rules (greater.py).
"""

import numpy as np

from harness.registry import Operator

from .._families import comparison

op = Operator("Less")
comparison(op, np.less, legacy=(1,), modern=(7, 9, 13))
