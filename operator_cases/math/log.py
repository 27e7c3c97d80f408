"""Log: the natural logarithm of x, elementwise (ONNX spec: Log-1, 6, 13).

Log-13 adds bfloat16; Log-1's ``consumed_inputs`` is a legacy attribute with no effect on
values. Drawn inputs are >= 0 (log(0) = -inf); the edges test the IEEE 754 results outside the
domain: log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, and denormal inputs.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE, with_input
from harness.registry import Operator

from .._unary_util import all_of, elementwise, unary_template

op = Operator("Log")

elementwise(op, (1, 6, 13), np.log, lo=0.0)


# how it enters a generated graph: on positive values only (the spec's domain)
unary_template(op, nan=NAN_IEEE, ulps=8.0, guard=all_of(lambda x: x > 0), bound=with_input)
