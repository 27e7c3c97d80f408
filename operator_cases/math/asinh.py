"""Asinh: the hyperbolic arcsine of x, elementwise (ONNX spec: Asinh-9, 22; 22 adds bfloat16).

Defined for every real x; asinh(+-inf) = +-inf.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE, with_input
from harness.registry import Operator

from .._unary_util import elementwise, unary_template

op = Operator("Asinh")

elementwise(op, (9, 22), np.arcsinh)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, ulps=8.0, bound=with_input)
