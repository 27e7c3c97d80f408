"""Reciprocal: y = 1/x, elementwise (ONNX spec: Reciprocal-1, 6, 13).

Reciprocal-13 adds bfloat16; Reciprocal-1's ``consumed_inputs`` is a legacy attribute with no
effect on values. Drawn inputs are nonzero; the edges test the IEEE 754 results 1/+-0 = +-inf,
1/+-inf = +-0, and overflow to inf for denormal inputs.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE
from harness.registry import Operator

from .._unary_util import all_of, elementwise, unary_template


def reciprocal(x):
    return 1.0 / x


op = Operator("Reciprocal")


def draw_nonzero(d, dtype):
    return S.arrays(d, dtype, nonzero=True)


elementwise(op, (1, 6, 13), reciprocal, draw_x=draw_nonzero)


# how it enters a generated graph: away from 0 (|x| >= 0.05)
unary_template(op, nan=NAN_IEEE, ulps=2.0, guard=all_of(lambda x: np.abs(x) >= 0.05))
