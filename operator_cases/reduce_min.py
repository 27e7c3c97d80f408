"""ReduceMin: the smallest element over ``axes`` (ONNX spec: ReduceMin-1, 11, 12, 13, 18, 20).

``axes`` is an attribute up to ReduceMin-13 and an optional input from ReduceMin-18 (with
``noop_with_empty_axes``); ReduceMin-12 adds int8/uint8, 13 bfloat16, 20 bool ("the comparison
should consider False < True"). "Reduction over an empty set of values yields plus infinity (if
supported by the datatype) or the maximum value of the data type otherwise" (every version but
12, whose text says nothing, so its cases avoid empty reductions); for bool that maximum is True.
Infinities, -0.0 and denormals are covered.

Spec-silent: the text says nothing about NaN. We propagate it (IEEE 754-2019 minimum, numpy.min);
a backend may ignore it (minimumNumber): a NaN group is ``unspecified`` when its result is NaN or
the min of the group's other values, a ``mismatch`` otherwise.
"""

import numpy as np

from harness.registry import Operator

from ._reduce_util import extreme_drawer, identity_high, nan_extreme_edges, reduce_template, register_reduce
from ._silent_util import nan_ignored, nan_in_result, nan_or_ignoring_nan

op = Operator("ReduceMin")
op.spec_silent(
    "nan", (1, 11, 12, 13, 18, 20),
    spec="Computes the min of the input tensor's element[...]along the provided axes.",
    expected="NaN for a group holding a NaN: IEEE 754-2019 minimum (numpy.min); the text names no NaN rule",
    where=nan_in_result,
    invariants={"a min is NaN or the min of the group's non-NaN values": nan_or_ignoring_nan(np.inf)},
    readings=nan_ignored(np.inf))


def compute(x, axes, dtype):
    return np.min(x, axis=axes, keepdims=True, initial=identity_high(dtype))



register_reduce(op, (1, 11, 12, 13), (18, 20), compute, extreme_drawer, whole_range_ints=True, extra_edges=nan_extreme_edges)


# how it enters a generated graph (harness.suites.generated)
reduce_template(op, 18, ulps=0.0)
