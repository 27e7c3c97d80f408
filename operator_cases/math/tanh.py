"""Tanh: the hyperbolic tangent of x, elementwise (ONNX spec: Tanh-1, 6, 13).

Tanh-13 adds bfloat16; Tanh-1's ``consumed_inputs`` is a legacy attribute with no effect on
values. tanh(+-inf) = +-1. Inputs are drawn from [-20, 20], where tanh is not yet saturated.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE, with_input
from harness.registry import Operator

from .._unary_util import elementwise, unary_template

op = Operator("Tanh")

elementwise(op, (1, 6, 13), np.tanh, lo=-20.0, hi=20.0)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, ulps=8.0, bound=with_input)
