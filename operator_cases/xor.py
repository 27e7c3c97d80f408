"""Xor: C = A xor B on booleans, elementwise (ONNX spec: Xor-1, 7).

Xor-1 broadcasts with the legacy ``broadcast``/``axis`` attributes (see _binary_util);
Xor-7 broadcasts multidirectionally.
"""

import numpy as np

from harness.registry import Operator

from ._families import logical

op = Operator("Xor")
logical(op, np.logical_xor)
