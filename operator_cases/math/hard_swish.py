"""HardSwish: y = x * max(0, min(1, alpha * x + beta)) with alpha = 1/6, beta = 0.5,
elementwise (ONNX spec: HardSwish-14, 22; 22 adds bfloat16).

At -inf the formula read literally gives -inf * 0 = NaN, while the function it defines is 0 for
every x <= -3; we take the function's value (0), and test -inf in an example of its own
("neg_inf"). NaN gives NaN (max/min propagate NaN, as ONNX Max/Min do), also tested on its own.
"""

import numpy as np

from harness.fuzz_api import NAN_ASSUMED, with_input
from harness.registry import Operator

from .._unary_util import at_infinity, elementwise, literal_at_infinity, unary_template

op = Operator("HardSwish")


def hard_swish(x):
    return at_infinity(x, x * np.maximum(0.0, np.minimum(1.0, x / 6.0 + 0.5)), neg=0.0)


elementwise(op, (14, 22), hard_swish, lo=-8.0, hi=8.0, isolate={"neg_inf": np.isneginf, "nan": np.isnan})
literal_at_infinity(op, "neg_inf", (14, 22), lambda x: x * np.maximum(0, np.minimum(1, x / 6 + 0.5)), lambda x, attrs: np.isneginf(x),
                    expected="0, the function's value for every x <= -3")


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_ASSUMED, ulps=4.0, bound=with_input)
