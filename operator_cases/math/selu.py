"""Selu: y = gamma * (alpha * e^x - alpha) for x <= 0, y = gamma * x for x > 0, elementwise
(ONNX spec: Selu-1, 6, 22).

Selu-1's defaults are the float32 values of 1.6732 (alpha) and 1.0507 (gamma); Selu-6 changed
them to 1.67326319217681884765625 and 1.05070102214813232421875 (the float32 approximations of
the exact constants); Selu-22 adds bfloat16. Selu-1's ``consumed_inputs`` is a legacy
attribute with no effect on values. alpha and gamma are drawn from [-1, 3]. Computed in float64
as gamma * alpha * expm1(x); selu(-inf) = -gamma * alpha.
"""

import numpy as np

from harness.fuzz_api import NAN_ASSUMED, with_input
from harness.registry import Operator

from .._unary_util import attr_float, elementwise, f32, optional_attrs, unary_template

op = Operator("Selu")


def _selu(x, alpha, gamma):
    alpha, gamma = f32(alpha), f32(gamma)
    return np.where(x <= 0, gamma * alpha * np.expm1(x), gamma * x)


def selu_1(x, alpha=1.6732, gamma=1.0507):
    return _selu(x, alpha, gamma)


def selu_6(x, alpha=1.67326319217681884765625, gamma=1.05070102214813232421875):
    return _selu(x, alpha, gamma)


def draw_attrs(d, dtype):
    return optional_attrs(d, alpha=lambda: attr_float(d, dtype, -1.0, 3.0), gamma=lambda: attr_float(d, dtype, -1.0, 3.0))


EDGE_ATTRS = [{}, {"alpha": 2.0, "gamma": 0.5}]
elementwise(op, (1,), selu_1, lo=-20.0, hi=20.0, attrs=draw_attrs, edge_attrs=EDGE_ATTRS)
elementwise(op, (6, 22), selu_6, lo=-20.0, hi=20.0, attrs=draw_attrs, edge_attrs=EDGE_ATTRS)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, [{"alpha": 1.5, "gamma": 1.25}], nan=NAN_ASSUMED, ulps=8.0, bound=with_input)
