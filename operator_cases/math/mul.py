"""Mul: C = A * B, elementwise (ONNX spec: Mul-1, 6, 7, 13, 14).

Versions, types, broadcasting and the integer overflow point as for Add (add.py): the product
is computed exactly (floats in float64) and rounded or wrapped; 0 * inf gives NaN (IEEE 754).
"""

import operator

import numpy as np

from harness.registry import Operator

from .._families import arithmetic

op = Operator("Mul")
arithmetic(op, np.multiply, operator.mul, result="product", verb="multiplication")
