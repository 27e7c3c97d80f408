"""GreaterOrEqual: C = (A >= B), elementwise, output bool (ONNX spec: GreaterOrEqual-12, 16).

Multidirectional broadcasting; GreaterOrEqual-16 adds bfloat16.
Floats compare as IEEE 754 values: any comparison with NaN is false and -0.0 equals +0.0.
"""

import numpy as np

from harness.registry import Operator

from .._families import comparison

op = Operator("GreaterOrEqual")
comparison(op, np.greater_equal, legacy=(), modern=(12, 16))
