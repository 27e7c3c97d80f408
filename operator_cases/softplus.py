"""Softplus: y = ln(exp(x) + 1), elementwise (ONNX spec: Softplus-1, 22; 22 adds bfloat16).

Computed in float64 as logaddexp(0, x), which does not overflow: for large x the result is x
(a kernel evaluating exp(x) in the input type would give inf there). softplus(-inf) = 0,
softplus(+inf) = +inf. Inputs are drawn from [-100, 100].
"""

from harness.registry import Operator

from ._unary_util import elementwise, softplus

op = Operator("Softplus")

elementwise(op, (1, 22), softplus, lo=-100.0, hi=100.0)
