"""LeakyRelu: f(x) = alpha * x for x < 0, f(x) = x for x >= 0, elementwise (ONNX spec:
LeakyRelu-1, 6, 16).

LeakyRelu-16 adds bfloat16; LeakyRelu-1's ``consumed_inputs`` is a legacy attribute with no
effect on values. ``alpha`` (default float32 0.01) is drawn from [-1, 2]; it is nonzero in the
edges, where 0 * -inf would be a question of reading rather than of the spec. NaN stays NaN
(both branches give NaN).
"""

import numpy as np

from harness.fuzz_api import NAN_ASSUMED
from harness.registry import Operator

from .._unary_util import attr_float, elementwise, f32, optional_attrs, unary_template

op = Operator("LeakyRelu")


def leaky_relu(x, alpha=0.01):
    return np.where(x < 0, f32(alpha) * x, x)


def draw_attrs(d, dtype):
    return optional_attrs(d, alpha=lambda: attr_float(d, dtype, -1.0, 2.0))


elementwise(op, (1, 6, 16), leaky_relu, attrs=draw_attrs, edge_attrs=[{}, {"alpha": 0.5}, {"alpha": -2.0}])


# how it enters a generated graph (harness.suites.generated)
unary_template(op, [{"alpha": 0.1}, {"alpha": 0.5}, {"alpha": 2.0}], nan=NAN_ASSUMED, ulps=2.0)
