"""Softplus: y = ln(exp(x) + 1), elementwise (ONNX spec: Softplus-1, 22; 22 adds bfloat16).

Computed in float64 as logaddexp(0, x), which does not overflow: for large x the result is x
(a kernel evaluating exp(x) in the input type would give inf there). softplus(-inf) = 0,
softplus(+inf) = +inf. Inputs are drawn from [-100, 100].
"""

from harness.fuzz_api import NAN_IEEE, with_input
from harness.registry import Operator

from .._unary_util import elementwise, softplus, unary_template

op = Operator("Softplus")

elementwise(op, (1, 22), softplus, lo=-100.0, hi=100.0)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, ulps=8.0, bound=with_input)
