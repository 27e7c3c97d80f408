"""BitwiseNot: Y = ~X on integers, elementwise (ONNX spec: BitwiseNot-18). Signed types work on
the two's complement bits (~x == -x - 1)."""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

op = Operator("BitwiseNot")


@op.reference(18)
def bitwise_not(x):
    return np.asarray(np.invert(x)).astype(x.dtype)


@op.strategy(18)
def draw(d, dtype, opset):
    return Example([S.arrays(d, dtype)])


@op.edges(18)
def edges(dtype, opset):
    return [
        Example([S.edge_values(dtype)], name="edge_values"),
        Example([np.zeros((2, 0), dtype=S.np_dtype(dtype))], name="empty"),
        Example([np.array(5, dtype=S.np_dtype(dtype))], name="rank0"),
    ]
