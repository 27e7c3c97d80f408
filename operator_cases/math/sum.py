"""Sum: elementwise sum of 1..N inputs (ONNX spec: Sum-1, 6, 8, 13).

Sum-1/6 need every input to have the same shape; Sum-8 on broadcast multidirectionally;
Sum-13 adds bfloat16. The sum is taken in float64 and rounded once to the input type
(IEEE 754: overflow gives +-inf, inf + -inf gives NaN, NaN propagates).
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE, abs_bound
from harness.registry import Operator

from .._binary_util import variadic_template
from .._common import back
from .._families import variadic

op = Operator("Sum")


@op.reference(1, 6, 8, 13)
def sum_(*inputs, consumed_inputs=None):
    with np.errstate(all="ignore"):
        return back(sum(x.astype(np.float64) for x in inputs), inputs[0])


variadic(op, (1, 6, 8, 13), (1, 6), same_sign=True)


# how it enters a generated graph (harness.suites.generated)
variadic_template(op, nan=NAN_IEEE, ulps=1.0, bound=abs_bound)
