"""Cosh: the hyperbolic cosine of x, elementwise (ONNX spec: Cosh-9, 22; 22 adds bfloat16).

Drawn inputs stay within ln(largest finite value) - 1 of zero, so results are finite in the
dtype; the edges test overflow to +inf (cosh is even) just beyond that, at the extremes and at +-inf.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE, with_input
from harness.registry import Operator

from .._unary_util import bounded, elementwise, near_overflow, unary_template

op = Operator("Cosh")
elementwise(op, (9, 22), np.cosh, lo=lambda dt: -bounded(dt), hi=bounded, extra_edges=near_overflow)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, ulps=8.0, bound=with_input)
