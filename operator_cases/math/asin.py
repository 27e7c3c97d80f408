"""Asin: the arcsine of x, elementwise (ONNX spec: Asin-7, 22; 22 adds bfloat16).

Like Acos (acos.py): inputs drawn in the domain [-1, 1], NaN outside it.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE, with_input
from harness.registry import Operator

from .._unary_util import elementwise, unary_template, unit_domain_bounds

op = Operator("Asin")
elementwise(op, (7, 22), np.arcsin, lo=-1.0, hi=1.0, extra_edges=unit_domain_bounds)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, ulps=8.0, bound=with_input)
