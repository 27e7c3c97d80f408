"""LessOrEqual: C = (A <= B), elementwise, output bool (ONNX spec: LessOrEqual-12, 16).

Multidirectional broadcasting; LessOrEqual-16 adds bfloat16.
Floats compare as IEEE 754 values: any comparison with NaN is false and -0.0 equals +0.0.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE
from harness.registry import Operator

from ._binary_util import binary_template, compare_example, pair_edges

op = Operator("LessOrEqual")


def compare(a, b):
    return np.asarray(np.less_equal(a, b), dtype=bool)


@op.reference(12, 16)
def less_or_equal(a, b):
    return compare(a, b)


@op.strategy(12, 16)
def draw(d, dtype, opset):
    return compare_example(d, dtype)


@op.edges(12, 16)
def edges(dtype, opset):
    return pair_edges(dtype, legacy=False)


# how it enters a generated graph (harness.suites.generated)
binary_template(op, nan=NAN_IEEE, jumps=True, ulps=0.0)
