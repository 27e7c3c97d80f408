"""ReduceMax: the largest element over ``axes`` (ONNX spec: ReduceMax-1, 11, 12, 13, 18, 20).

``axes`` is an attribute up to ReduceMax-13 and an optional input from ReduceMax-18 (with
``noop_with_empty_axes``); ReduceMax-12 adds int8/uint8, 13 bfloat16, 20 bool ("the comparison
should consider False < True"). "Reduction over an empty set of values yields minus infinity (if
supported by the datatype) or the minimum value of the data type otherwise" (every version but
12, whose text says nothing, so its cases avoid empty reductions); for bool that minimum is False.
Infinities, -0.0 and denormals are covered.

Spec-silent: the text says nothing about NaN. We propagate it (IEEE 754-2019 maximum, numpy.max);
a backend may ignore it (maximumNumber): a NaN group is ``unspecified`` when its result is NaN or
the max of the group's other values, a ``mismatch`` otherwise.
"""

from harness.registry import Operator

from .._families import extreme_reduction

op = Operator("ReduceMax")
extreme_reduction(op, largest=True)
