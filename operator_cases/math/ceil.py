"""Ceil: the smallest integer not below x, elementwise (ONNX spec: Ceil-1, 6, 13).

Ceil-13 adds bfloat16; Ceil-1's ``consumed_inputs`` is a legacy attribute with no effect on
values. Exact in every float type: NaN, +-inf and +-0 are returned as they are. The edges add
halves, the value just below 0.5 and integers at the top of the format's exact range.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE
from harness.registry import Operator

from .._unary_util import elementwise, near_integers, unary_template

op = Operator("Ceil")
elementwise(op, (1, 6, 13), np.ceil, extra_edges=near_integers)


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, jumps=True, ulps=0.0)
