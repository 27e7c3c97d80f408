"""Sub: C = A - B, elementwise (ONNX spec: Sub-1, 6, 7, 13, 14).

Versions, types, broadcasting and the integer overflow point as for Add (add.py): the difference
is computed exactly (floats in float64) and rounded or wrapped; inf - inf gives NaN (IEEE 754).
"""

import operator

import numpy as np

from harness.registry import Operator

from .._families import arithmetic

op = Operator("Sub")
arithmetic(op, np.subtract, operator.sub, result="difference", verb="subtraction")
