"""Mish: y = x * tanh(softplus(x)) = x * tanh(ln(1 + e^x)), elementwise (ONNX spec: Mish-18, 22;
22 adds bfloat16).

Computed in float64 with a softplus that does not overflow. At -inf the formula read literally
gives -inf * tanh(0) = NaN, while the function tends to 0; we take the limit, and test -inf in
an example of its own ("neg_inf"). Inputs are drawn from [-30, 30].
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE, with_input
from harness.registry import Operator

from .._unary_util import at_infinity, elementwise, literal_at_infinity, softplus, unary_template

op = Operator("Mish")


def mish(x):
    return at_infinity(x, x * np.tanh(softplus(x)), neg=0.0)


elementwise(op, (18, 22), mish, lo=-30.0, hi=30.0, isolate={"neg_inf": np.isneginf})
literal_at_infinity(op, "neg_inf", (18, 22), lambda x: x * np.tanh(np.log(1 + np.exp(x))), lambda x, attrs: np.isneginf(x),
                    expected="0, the limit of the function at -inf")


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, ulps=8.0, bound=with_input)
