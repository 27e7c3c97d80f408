"""Less: C = (A < B), elementwise, output bool (ONNX spec: Less-1, 7, 9, 13).

Less-1 broadcasts with the legacy ``broadcast``/``axis`` attributes (see _binary_util);
Less-7 on broadcast multidirectionally. Less-1/7 take floats, Less-9 adds the integers,
Less-13 bfloat16.
Floats compare as IEEE 754 values: any comparison with NaN is false and -0.0 equals +0.0.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE
from harness.registry import Operator

from ._binary_util import binary_template, compare_example, legacy_rhs, pair_edges

op = Operator("Less")


def compare(a, b):
    return np.asarray(np.less(a, b), dtype=bool)


@op.reference(1)
def less_1(a, b, *, broadcast=0, axis=None):
    return compare(a, legacy_rhs(a, b, broadcast, axis))


@op.reference(7, 9, 13)
def less(a, b):
    return compare(a, b)


@op.strategy(1)
def draw_1(d, dtype, opset):
    return compare_example(d, dtype, legacy=True)


@op.strategy(7, 9, 13)
def draw(d, dtype, opset):
    return compare_example(d, dtype)


@op.edges(1)
def edges_1(dtype, opset):
    return pair_edges(dtype, legacy=True)


@op.edges(7, 9, 13)
def edges(dtype, opset):
    return pair_edges(dtype, legacy=False)


# how it enters a generated graph (harness.suites.generated)
binary_template(op, nan=NAN_IEEE, jumps=True, ulps=0.0)
