"""HardSigmoid: y = max(0, min(1, alpha * x + beta)), elementwise (ONNX spec: HardSigmoid-1, 6,
22).

HardSigmoid-22 adds bfloat16; HardSigmoid-1's ``consumed_inputs`` is a legacy attribute with no
effect on values. Defaults: alpha = float32 0.2, beta = 0.5; both are drawn from [-2, 2]
(nonzero alpha in the edges, where 0 * inf would be a question of reading). A NaN input gives
NaN: max and min are taken to propagate NaN, as ONNX Max/Min and Relu do; NaN is tested in an
example of its own ("nan").
"""

import numpy as np

from harness.fuzz_api import NAN_ASSUMED
from harness.registry import Operator

from .._unary_util import attr_float, elementwise, f32, optional_attrs, unary_template

op = Operator("HardSigmoid")


def hard_sigmoid(x, alpha=0.2, beta=0.5):
    return np.maximum(0.0, np.minimum(1.0, f32(alpha) * x + f32(beta)))


def draw_attrs(d, dtype):
    return optional_attrs(d, alpha=lambda: attr_float(d, dtype, -2.0, 2.0), beta=lambda: attr_float(d, dtype, -2.0, 2.0))


elementwise(op, (1, 6, 22), hard_sigmoid, lo=-10.0, hi=10.0, attrs=draw_attrs,
            edge_attrs=[{}, {"alpha": 0.5, "beta": 0.25}, {"alpha": -0.25, "beta": 0.75}], isolate={"nan": np.isnan})


# how it enters a generated graph (harness.suites.generated)
unary_template(op, [{"alpha": 0.5, "beta": 0.25}, {"alpha": 0.1, "beta": 0.6}], nan=NAN_ASSUMED, ulps=4.0)
