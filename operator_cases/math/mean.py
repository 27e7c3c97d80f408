"""Mean: elementwise mean of 1..N inputs (ONNX spec: Mean-1, 6, 8, 13).

Mean-1/6 need every input to have the same shape; Mean-8 on broadcast multidirectionally;
Mean-13 adds bfloat16. The mean is taken in float64 (sum, then divide by the number of inputs)
and rounded once to the input type; NaN and inf follow IEEE 754. The spec does not say whether
the sum may overflow the input type before the division (Mean(FLT_MAX, FLT_MAX) is FLT_MAX
mathematically, inf when summed in float32), so edge pairs whose sum overflows are left out.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, abs_bound
from harness.registry import Operator

from .._binary_util import variadic_edges, variadic_template
from .._common import back
from .._families import variadic

op = Operator("Mean")


@op.reference(1, 6, 8, 13)
def mean(*inputs, consumed_inputs=None):
    with np.errstate(all="ignore"):
        return back(sum(x.astype(np.float64) for x in inputs) / len(inputs), inputs[0])


def _sum_fits(dtype):
    """Keep a pair of edge values unless both are finite and their sum overflows ``dtype``."""
    high = S.finite_range(dtype)[1]

    def keep(x, y):
        x, y = float(x), float(y)
        finite = abs(x) <= high and abs(y) <= high  # False for NaN and inf
        return not finite or abs(x + y) <= high

    return keep


def _edges(dtype, broadcast):
    return variadic_edges(dtype, broadcast=broadcast, keep=_sum_fits(dtype))


variadic(op, (1, 6, 8, 13), (1, 6), same_sign=True, edges=_edges)


# how it enters a generated graph (harness.suites.generated)
variadic_template(op, nan=NAN_IEEE, ulps=2.0, bound=abs_bound)
