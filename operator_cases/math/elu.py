"""Elu: f(x) = alpha * (exp(x) - 1) for x < 0, f(x) = x for x >= 0, elementwise (ONNX spec:
Elu-1, 6, 22).

Elu-22 adds bfloat16; Elu-1's ``consumed_inputs`` is a legacy attribute with no effect on
values. ``alpha`` (default 1.0) is drawn from [-1, 3]. Computed in float64 with expm1;
elu(-inf) = -alpha, NaN stays NaN (both branches give NaN).
"""

import numpy as np

from harness.fuzz_api import NAN_ASSUMED, with_input
from harness.registry import Operator

from .._unary_util import attr_float, elementwise, f32, optional_attrs, unary_template

op = Operator("Elu")


def elu(x, alpha=1.0):
    alpha = f32(alpha)
    return np.where(x < 0, alpha * np.expm1(x), x)


def draw_attrs(d, dtype):
    return optional_attrs(d, alpha=lambda: attr_float(d, dtype, -1.0, 3.0))


elementwise(op, (1, 6, 22), elu, lo=-20.0, hi=20.0, attrs=draw_attrs, edge_attrs=[{}, {"alpha": 0.5}, {"alpha": 2.0}])


# how it enters a generated graph (harness.suites.generated)
unary_template(op, [{"alpha": 0.5}, {"alpha": 2.0}], nan=NAN_ASSUMED, ulps=8.0, bound=with_input)
