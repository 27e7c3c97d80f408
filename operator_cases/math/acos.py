"""Acos: the arccosine of x, elementwise (ONNX spec: Acos-7, 22; 22 adds bfloat16).

Drawn inputs stay in the domain [-1, 1]; outside it the result is NaN (the C library's and
IEEE 754's answer; the spec names no other), which the edges test with +-inf, the extremes and
the values one step outside +-1.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE, with_input
from harness.registry import Operator

from .._unary_util import elementwise, unary_template, unit_domain_bounds

op = Operator("Acos")
elementwise(op, (7, 22), np.arccos, lo=-1.0, hi=1.0, extra_edges=unit_domain_bounds)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, ulps=8.0, bound=with_input)
