"""Erf: the error function of x, elementwise (ONNX spec: Erf-9, 13).

Erf-9 allows the integer types; Erf-13 has only float types (and adds bfloat16). erf of a
nonzero integer lies strictly between -1 and 1 and the spec does not say how it is brought back
to an integer type (truncation gives 0, rounding gives +-1; computed in a float type, erf of a
large integer is exactly 1.0 and truncates to 1). Only erf(0) = 0 is the same under every
reading, so integer inputs are zeros (random shapes, empty and rank 0 included): the cases check
that the type is supported, not a rounding rule the spec does not give. Float inputs are drawn
from [-6, 6], where erf is not yet saturated in any float type.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, with_input
from harness.registry import Operator

from .._unary_util import elementwise, erf, unary_template

op = Operator("Erf")


def erf_any(x):
    return erf(np.asarray(x, dtype=np.float64))


def draw_x(d, dtype):
    if S.is_int(dtype):
        return np.zeros(S.shapes(d), dtype=S.np_dtype(dtype))
    return S.arrays(d, dtype, lo=-6.0, hi=6.0)


def nonzero_integer(v):
    return (v != 0) if v.dtype.kind in "iu" else np.zeros(v.shape, dtype=bool)


elementwise(op, (9, 13), erf_any, draw_x=draw_x, drop=nonzero_integer)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, ulps=8.0, bound=with_input)
