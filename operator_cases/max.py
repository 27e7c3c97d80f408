"""Max: elementwise maximum of 1..N inputs (ONNX spec: Max-1, 6, 8, 12, 13).

Max-1/6 need every input to have the same shape; Max-8 on broadcast multidirectionally;
Max-12 adds the integer types, Max-13 bfloat16. The spec does not say what a NaN input gives,
so NaN is left out of the examples (other than a single input, which is returned as is);
+-inf and -0.0 are in.
"""

import functools

import numpy as np

from harness.fuzz_api import NAN_ASSUMED
from harness.registry import Operator

from ._binary_util import (
    no_nan,
    variadic_edges,
    variadic_example,
    variadic_template,
    wide_int_edges,
)

op = Operator("Max")


@op.reference(1, 6, 8, 12, 13)
def max_(*inputs, consumed_inputs=None):
    return np.asarray(functools.reduce(np.maximum, inputs)).astype(inputs[0].dtype)


@op.strategy(1, 6)
def draw_1(d, dtype, opset):
    return variadic_example(d, dtype, broadcast=False)


@op.strategy(8, 12, 13)
def draw_8(d, dtype, opset):
    return variadic_example(d, dtype, broadcast=True)


@op.edges(1, 6)
def edges_1(dtype, opset):
    return variadic_edges(dtype, broadcast=False, values=no_nan(dtype)) + wide_int_edges(dtype)


@op.edges(8, 12, 13)
def edges_8(dtype, opset):
    return variadic_edges(dtype, broadcast=True, values=no_nan(dtype)) + wide_int_edges(dtype)


# how it enters a generated graph (harness.suites.generated)
variadic_template(op, nan=NAN_ASSUMED, ulps=0.0)
