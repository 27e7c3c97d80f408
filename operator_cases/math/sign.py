"""Sign: 1 if x > 0, -1 if x < 0, 0 if x == 0, elementwise (ONNX spec: Sign-9, 13; 13 adds
bfloat16).

Integer types are exact. The spec's three cases do not cover NaN; we expect NaN (the sign of
an unordered value, as numpy and IEEE 754-minded libraries give), tested in an example of its
own ("nan"). sign(-0.0) is zero (its sign bit is not judged).
"""

import numpy as np

from harness.registry import Operator

from .._unary_util import elementwise, unary_template

op = Operator("Sign")

elementwise(op, (9, 13), np.sign, isolate={"nan": np.isnan})


# how it enters a generated graph (harness.suites.generated)
unary_template(op, jumps=True, ulps=0.0)
