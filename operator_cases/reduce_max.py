"""ReduceMax: the largest element over ``axes`` (ONNX spec: ReduceMax-1, 11, 12, 13, 18, 20).

``axes`` is an attribute up to ReduceMax-13 and an optional input from ReduceMax-18 (with
``noop_with_empty_axes``); ReduceMax-12 adds int8/uint8, 13 bfloat16, 20 bool ("the comparison
should consider False < True"). "Reduction over an empty set of values yields minus infinity (if
supported by the datatype) or the minimum value of the data type otherwise" (every version but
12, whose text says nothing, so its cases avoid empty reductions); for bool that minimum is False.
The spec says nothing about NaN, so no case has one; infinities, -0.0 and denormals are covered.
"""

import numpy as np

from harness.registry import Operator

from ._reduce_util import (
    extreme_drawer,
    extreme_edges,
    identity_low,
    reduce_template,
    register_reduce,
    wide_int_edges,
)

op = Operator("ReduceMax")


def compute(x, axes, dtype):
    return np.max(x, axis=axes, keepdims=True, initial=identity_low(dtype))


register_reduce(op, (1, 11, 12, 13), (18, 20), compute, extreme_drawer, edge_values=extreme_edges, whole_range_ints=True,
                extra_edges=wide_int_edges)


# how it enters a generated graph (harness.suites.generated)
reduce_template(op, 18, ulps=0.0)
