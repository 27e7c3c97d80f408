"""Min: elementwise minimum of 1..N inputs (ONNX spec: Min-1, 6, 8, 12, 13).

Min-1/6 need every input to have the same shape; Min-8 on broadcast multidirectionally;
Min-12 adds the integer types, Min-13 bfloat16. +-inf and -0.0 are in the examples.

Spec-silent: the text does not say what a NaN input gives. We propagate it (IEEE 754-2019
minimum, numpy.minimum); a backend may instead ignore it (minimumNumber), so a NaN input is
``unspecified`` when the result is NaN or the min of the other inputs, and a ``mismatch``
otherwise (e.g. a result that depends on where the NaN stood among three inputs).
"""

import functools

import numpy as np

from harness.fuzz_api import NAN_ASSUMED
from harness.registry import Operator

from ._binary_util import variadic_edges, variadic_example, variadic_nan_edges, variadic_template, wide_int_edges
from ._silent_util import nan_ignored, nan_in_result, nan_or_ignoring_nan

op = Operator("Min")
op.spec_silent(
    "nan", (1, 6, 8, 12, 13),
    spec="Element-wise min of each of the input tensors",
    expected="NaN wherever an input is NaN: IEEE 754-2019 minimum (numpy.minimum); the text names no NaN rule",
    where=nan_in_result,
    invariants={"a min is NaN or the min of the non-NaN inputs": nan_or_ignoring_nan(np.inf)},
    readings=nan_ignored(np.inf))


@op.reference(1, 6, 8, 12, 13)
def min_(*inputs, consumed_inputs=None):
    return np.asarray(functools.reduce(np.minimum, inputs)).astype(inputs[0].dtype)


@op.strategy(1, 6)
def draw_1(d, dtype, opset):
    return variadic_example(d, dtype, broadcast=False)


@op.strategy(8, 12, 13)
def draw_8(d, dtype, opset):
    return variadic_example(d, dtype, broadcast=True)


@op.edges(1, 6)
def edges_1(dtype, opset):
    return variadic_edges(dtype, broadcast=False) + variadic_nan_edges(dtype) + wide_int_edges(dtype)


@op.edges(8, 12, 13)
def edges_8(dtype, opset):
    return variadic_edges(dtype, broadcast=True) + variadic_nan_edges(dtype) + wide_int_edges(dtype)



# how it enters a generated graph (harness.suites.generated)
variadic_template(op, nan=NAN_ASSUMED, ulps=0.0)
