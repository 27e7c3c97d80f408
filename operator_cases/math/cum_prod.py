"""CumProd: cumulative product along an axis (ONNX spec: CumProd-26).

``axis`` is a 0-D int32/int64 input in [-r, r-1]; ``exclusive`` makes the j-th output the
product of the first j-1 elements (so the first is 1); ``reverse`` multiplies from the end.
Floats are multiplied in float64 and each prefix rounded once; integers exactly, with |x| <= 3
along axes of at most 4 elements, so no prefix product overflows (the spec says nothing about
integer overflow). inf * 0 is NaN, as IEEE multiplication gives.
"""

from harness.registry import Operator

from .._reduce_util import register_cumulative

op = Operator("CumProd")
register_cumulative(op, (26,), product=True)
