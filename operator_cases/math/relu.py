"""Relu: y = max(0, x), elementwise (ONNX spec: Relu-1, 6, 13, 14).

Relu-14 adds the signed integer types. A NaN input gives NaN: the spec's max(0, x) is taken
as an IEEE comparison-free maximum that propagates NaN, as numpy.maximum does."""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_ASSUMED
from harness.registry import Example, Operator

from .._unary_util import unary_template

op = Operator("Relu")


@op.reference(1, 6, 13, 14)
def relu(x):
    return np.maximum(x, np.zeros_like(x))


@op.strategy(1, 6, 13, 14)
def draw(d, dtype, opset):
    return Example([S.arrays(d, dtype)])


@op.edges(1, 6, 13, 14)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    return [Example([S.edge_values(dtype)], name="edge_values"), Example([np.zeros((2, 0, 3), dtype=t)], name="empty")]


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_ASSUMED, ulps=0.0)
