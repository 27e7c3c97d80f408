"""ReduceMin: the smallest element over ``axes`` (ONNX spec: ReduceMin-1, 11, 12, 13, 18, 20).

The mirror of ReduceMax (reduce_max.py): the same versions, types and spec-silent NaN point, with
its own empty-set rule: "Reduction over an empty set of values yields plus infinity (if supported
by the datatype) or the maximum value of the data type otherwise" (True for bool).
"""

from harness.registry import Operator

from .._families import extreme_reduction

op = Operator("ReduceMin")
extreme_reduction(op, largest=False)
