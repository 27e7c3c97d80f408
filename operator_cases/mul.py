"""Mul: C = A * B, elementwise (ONNX spec: Mul-1, 6, 7, 13, 14).

Mul-1/6 broadcast only with the legacy ``broadcast``/``axis`` attributes (see _binary_util);
Mul-7 on broadcast multidirectionally. Mul-6 adds int32/int64/uint32/uint64, Mul-13 bfloat16,
Mul-14 the 8- and 16-bit integers. Floats are multiplied in float64 and rounded to the input type.
The spec says nothing about integer overflow: the product is computed exactly and wrapped around
(two's complement), the behaviour of every integer ALU. Float overflow gives +-inf and
0 * inf gives NaN (IEEE 754).
"""

import operator

import numpy as np

from harness.registry import Operator

from ._families import arithmetic

op = Operator("Mul")
arithmetic(op, np.multiply, operator.mul, result="product", verb="multiplication")
