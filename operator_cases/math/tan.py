"""Tan: the tangent of x, elementwise (ONNX spec: Tan-7, 22; 22 adds bfloat16).

Drawn inputs are kept away from the poles at odd multiples of pi/2 (|cos x| >= 0.05), where the
result is so ill-conditioned that any kernel's argument-reduction error dominates; tan(+-inf)
is NaN (C library / IEEE 754), tested in the edges.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, with_input
from harness.registry import Operator

from .._unary_util import elementwise, unary_template

op = Operator("Tan")


def draw_off_poles(d, dtype):
    x = S.arrays(d, dtype, lo=-20.0, hi=20.0)
    for _ in range(3):  # step off a pole; a step can land near the next one only in theory
        w = x.astype(np.float64)
        near = np.abs(np.cos(w)) < 0.05
        if not near.any():
            break
        x = np.where(near, w + 0.25, w).astype(x.dtype)
    return np.where(np.abs(np.cos(x.astype(np.float64))) < 0.05, np.zeros_like(x), x)


elementwise(op, (7, 22), np.tan, draw_x=draw_off_poles)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, ulps=8.0, bound=with_input)
