"""Softsign: y = x / (1 + |x|), elementwise (ONNX spec: Softsign-1, 22; 22 adds bfloat16).

At +-inf the formula read literally gives inf/inf = NaN, while the function it defines tends to
+-1; we take the function's limit, and test the infinities in an example of their own
("infinities") so that a backend evaluating the formula literally is reported there only.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE, with_input
from harness.registry import Operator

from .._unary_util import at_infinity, elementwise, literal_at_infinity, unary_template

op = Operator("Softsign")


def softsign(x):
    return at_infinity(x, x / (1.0 + np.abs(x)), neg=-1.0, pos=1.0)


elementwise(op, (1, 22), softsign, isolate={"infinities": np.isinf})
literal_at_infinity(op, "infinity", (1, 22), lambda x: x / (1 + np.abs(x)), lambda x, attrs: np.isinf(x),
                    expected="+-1 at x = +-inf, the limit of x/(1+|x|); inf/inf read literally is NaN", limit=np.sign,
                    literally="inf / inf = NaN")


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, ulps=8.0, bound=with_input)
