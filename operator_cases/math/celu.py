"""Celu: y = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)), elementwise (ONNX spec: Celu-12,
28).

Celu-12 allows float32 only; Celu-28 adds bfloat16, float16 and double. ``alpha`` (default 1.0)
is drawn from (0, 4]: the formula divides by alpha, so alpha = 0 has no result, and CELU is
defined for a positive alpha (Barron 2017). Computed in float64 with expm1.
celu(-inf) = -alpha, celu(+inf) = +inf.
"""

import numpy as np

from harness.fuzz_api import NAN_ASSUMED, with_input
from harness.registry import Operator

from .._unary_util import attr_float, elementwise, f32, optional_attrs, unary_template

op = Operator("Celu")


def celu(x, alpha=1.0):
    alpha = f32(alpha)
    return np.maximum(0.0, x) + np.minimum(0.0, alpha * np.expm1(x / alpha))


def draw_attrs(d, dtype):
    return optional_attrs(d, alpha=lambda: attr_float(d, dtype, 0.125, 4.0))


elementwise(op, (12, 28), celu, lo=-20.0, hi=20.0, attrs=draw_attrs, edge_attrs=[{}, {"alpha": 0.5}, {"alpha": 2.0}])


# how it enters a generated graph (harness.suites.generated)
unary_template(op, [{"alpha": 0.5}, {"alpha": 2.0}], nan=NAN_ASSUMED, ulps=8.0, bound=with_input)
