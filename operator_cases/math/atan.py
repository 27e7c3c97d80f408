"""Atan: the arctangent of x, elementwise (ONNX spec: Atan-7, 22; 22 adds bfloat16).

Defined for every real x; atan(+-inf) = +-pi/2.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE, with_input
from harness.registry import Operator

from .._unary_util import elementwise, unary_template

op = Operator("Atan")

elementwise(op, (7, 22), np.arctan)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, ulps=8.0, bound=with_input)
