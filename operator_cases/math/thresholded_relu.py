"""ThresholdedRelu: y = x for x > alpha, y = 0 otherwise, elementwise (ONNX spec:
ThresholdedRelu-10, 22; 22 adds bfloat16).

``alpha`` (default 1.0) is drawn from [-2, 5], exact in the input type so that the comparison
does not depend on the precision a kernel compares in. By the spec's "otherwise", NaN gives 0
(NaN > alpha is false); NaN is tested in an example of its own ("nan").
"""

import numpy as np

from harness.registry import Example, Operator

from .._unary_util import (
    attr_float,
    elementwise,
    f32,
    optional_attrs,
    unary_template,
    values,
)

op = Operator("ThresholdedRelu")


def thresholded_relu(x, alpha=1.0):
    return np.where(x > f32(alpha), x, 0.0)


def draw_attrs(d, dtype):
    return optional_attrs(d, alpha=lambda: attr_float(d, dtype, -2.0, 5.0))


def at_threshold(dtype, opset):
    return [Example([values(dtype, 0.5, 0.75, 1.0, 1.25, -0.5, -0.75)], {"alpha": 0.75}, name="at_threshold"),
            Example([values(dtype, -1.0, -0.5, 0.0, -0.0, 0.5)], {"alpha": 0.0}, name="alpha_zero")]


elementwise(op, (10, 22), thresholded_relu, lo=-10.0, hi=10.0, attrs=draw_attrs,
            edge_attrs=[{}, {"alpha": -1.0}], isolate={"nan": np.isnan}, extra_edges=at_threshold)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, [{"alpha": 0.5}, {"alpha": -0.5}, {"alpha": 2.0}], jumps=True, ulps=0.0)
