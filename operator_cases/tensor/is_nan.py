"""IsNaN: true where x is NaN, elementwise; the output is bool (ONNX spec: IsNaN-9, 13, 20).

IsNaN-13 adds bfloat16, IsNaN-20 the float8 types (float8e4m3fn/fnuz and e5m2fnuz have no
infinity: +-inf in the edge values converts to NaN or the largest value in those types, and
the input array we feed is what is judged). Drawn inputs include NaN and +-inf.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE
from harness.registry import Example, Operator

from .._unary_util import edge_values, special_arrays, unary_template

op = Operator("IsNaN")


@op.reference(9, 13, 20)
def is_nan(x):
    return np.isnan(np.asarray(x).astype(np.float64))


@op.strategy(9, 13, 20)
def draw(d, dtype, opset):
    return Example([special_arrays(d, dtype)])


@op.edges(9, 13, 20)
def edges(dtype, opset):
    dt = S.np_dtype(dtype)
    return [Example([edge_values(dtype)], name="edge_values"),
            Example([np.zeros((2, 0, 3), dtype=dt)], name="empty"),
            Example([np.array(np.nan, dtype=dt)], name="scalar")]


# how it enters a generated graph (harness.suites.generated)
unary_template(op, nan=NAN_IEEE, type_param="T1")
