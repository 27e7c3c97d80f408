"""CumSum: cumulative sum along an axis (ONNX spec: CumSum-11, 14).

``axis`` is a 0-D int32/int64 input in [-r, r-1]; ``exclusive`` makes the j-th output the sum
of the first j-1 elements (so the first is 0); ``reverse`` sums from the end. CumSum-14 adds
float16 and bfloat16. Floats are summed in float64 and each prefix rounded once; the strategies
draw them on a binary grid on which every prefix sum is exact in the input type. Integers are
exact, with magnitudes bounded so that no prefix sum overflows (the spec says nothing about
integer overflow). A running sum that meets inf and -inf is NaN from there on, as IEEE
addition gives.
"""

from harness.registry import Operator

from ._reduce_util import register_cumulative

op = Operator("CumSum")
register_cumulative(op, (11, 14), product=False)
