"""Add: C = A + B, elementwise (ONNX spec: Add-1, 6, 7, 13, 14).

Add-1/6 broadcast only with the legacy ``broadcast``/``axis`` attributes (see _binary_util);
Add-7 on broadcast multidirectionally. Add-6 adds int32/int64/uint32/uint64, Add-13 bfloat16,
Add-14 the 8- and 16-bit integers. Floats are added in float64 and rounded to the input type.
The spec says nothing about integer overflow: the sum is computed exactly and wrapped around
(two's complement), the behaviour of every integer ALU. Float overflow gives +-inf and
inf + -inf gives NaN (IEEE 754).
"""

import operator

import numpy as np

from harness.registry import Operator

from .._families import arithmetic

op = Operator("Add")
arithmetic(op, np.add, operator.add, result="sum", verb="addition")
