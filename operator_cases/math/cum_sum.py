"""CumSum: cumulative sum along an axis (ONNX spec: CumSum-11, 14).

``axis`` is a 0-D int32/int64 input in [-r, r-1]; ``exclusive`` makes the j-th output the sum
of the first j-1 elements (so the first is 0); ``reverse`` sums from the end. CumSum-14 adds
float16 and bfloat16. Floats are summed in float64 and each prefix rounded once; the strategies
draw them on a binary grid on which every prefix sum is exact in the input type. Integers are
exact, with magnitudes bounded so that no prefix sum overflows (the spec says nothing about
integer overflow). A running sum that meets inf and -inf is NaN from there on, as IEEE
addition gives.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE, Ctx, Plan, abs_bound
from harness.registry import Operator

from .._reduce_util import register_cumulative

op = Operator("CumSum")
register_cumulative(op, (11, 14), product=False)


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=1.0, bound=abs_bound)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0, lambda v: v.rank >= 1)
    if x is None:
        return None
    axis = c.pick(x.rank) - (x.rank if c.pick(2) else 0)
    attrs = {}
    if c.pick(2):
        attrs["exclusive"] = 1
    if c.pick(2):
        attrs["reverse"] = 1
    dtype = c.choice([np.int64, np.int32])
    return Plan([x, c.const(np.array(axis, dtype=dtype), "int")], attrs, n_acc=x.shape[axis])
