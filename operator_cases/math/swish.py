"""Swish: y = x * sigmoid(alpha * x), elementwise (ONNX spec: Swish-24).

``alpha`` (default 1.0) is drawn from [-3, 3]. Computed in float64 with a sigmoid that does not
overflow. Where alpha * x -> -inf at an infinite x the formula read literally gives
+-inf * 0 = NaN, while the function tends to 0; we take the limit (and with alpha = 0, where
alpha * inf is NaN, the function x / 2), and test the infinities in examples of their own
("infinities").
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE, with_input
from harness.registry import Operator

from .._unary_util import (
    attr_float,
    elementwise,
    f32,
    literal_at_infinity,
    optional_attrs,
    sigmoid,
    unary_template,
)

op = Operator("Swish")


def swish(x, alpha=1.0):
    alpha = f32(alpha)
    if alpha == 0.0:  # x * sigmoid(0) for every x, the infinities included
        return 0.5 * x
    with np.errstate(all="ignore"):
        y = x * sigmoid(alpha * x)
        return np.where(np.isinf(x) & (alpha * x < 0), 0.0, y)


def draw_attrs(d, dtype):
    return optional_attrs(d, alpha=lambda: attr_float(d, dtype, -3.0, 3.0))


elementwise(op, (24,), swish, lo=-30.0, hi=30.0, attrs=draw_attrs,
            edge_attrs=[{}, {"alpha": 0.5}, {"alpha": -1.0}, {"alpha": 0.0}], isolate={"infinities": np.isinf})


def swish_open(x, attrs):
    """Infinities where alpha * x is -inf (the limit 0) or NaN (alpha = 0: x / 2)."""
    alpha = f32(attrs.get("alpha", 1.0))
    with np.errstate(invalid="ignore"):
        return np.isinf(x) & ((alpha * x < 0) | (alpha == 0))


literal_at_infinity(op, "infinities", (24,), lambda x, alpha=1.0: x * (1 / (1 + np.exp(-f32(alpha) * x))), swish_open,
                    expected="the function's limit: 0 where alpha * x -> -inf; x / 2 = +-inf with alpha = 0 (sigmoid(0) = 1/2)")


# how it enters a generated graph (harness.suites.generated)
unary_template(op, [{"alpha": 0.5}, {"alpha": 2.0}], nan=NAN_IEEE, ulps=8.0, bound=with_input)
