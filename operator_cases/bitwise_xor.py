"""BitwiseXor: C = A ^ B on integers, elementwise with multidirectional broadcasting
(ONNX spec: BitwiseXor-18). Signed types work on the two's complement bits."""

import numpy as np

from harness.registry import Operator

from ._binary_util import pair_edges, pair_example

op = Operator("BitwiseXor")


@op.reference(18)
def bitwise_xor(a, b):
    return np.asarray(np.bitwise_xor(a, b)).astype(a.dtype)


@op.strategy(18)
def draw(d, dtype, opset):
    return pair_example(d, dtype)


@op.edges(18)
def edges(dtype, opset):
    return pair_edges(dtype, legacy=False)
