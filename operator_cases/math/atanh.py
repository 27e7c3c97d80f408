"""Atanh: the hyperbolic arctangent of x, elementwise (ONNX spec: Atanh-9, 22; 22 adds bfloat16).

Drawn inputs stay in the domain [-1, 1] (atanh(+-1) = +-inf); outside it the result is NaN (the
C library's and IEEE 754's answer; the spec names no other), which the edges test.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE, with_input
from harness.registry import Operator

from .._unary_util import elementwise, unary_template, unit_domain_bounds

op = Operator("Atanh")
elementwise(op, (9, 22), np.arctanh, lo=-1.0, hi=1.0, extra_edges=unit_domain_bounds)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, ulps=8.0, bound=with_input)
