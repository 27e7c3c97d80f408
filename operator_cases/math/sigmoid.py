"""Sigmoid: y = 1 / (1 + exp(-x)), elementwise (ONNX spec: Sigmoid-1, 6, 13).

Sigmoid-13 adds bfloat16; Sigmoid-1's ``consumed_inputs`` is a legacy attribute with no effect
on values. Computed in float64 in a form that does not overflow for large |x|;
sigmoid(-inf) = 0, sigmoid(+inf) = 1. Inputs are drawn from [-40, 40].
"""

from harness.fuzz_api import NAN_IEEE, with_input
from harness.registry import Operator

from .._unary_util import elementwise, sigmoid, unary_template

op = Operator("Sigmoid")

elementwise(op, (1, 6, 13), sigmoid, lo=-40.0, hi=40.0)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, ulps=8.0, bound=with_input)
