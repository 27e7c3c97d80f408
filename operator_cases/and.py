"""And: C = A and B on booleans, elementwise (ONNX spec: And-1, 7).

And-1 broadcasts with the legacy ``broadcast``/``axis`` attributes (see _binary_util);
And-7 broadcasts multidirectionally.
"""

import numpy as np

from harness.registry import Operator

from ._binary_util import legacy_rhs, logical_template, pair_edges, pair_example

op = Operator("And")


@op.reference(1)
def and_1(a, b, *, broadcast=0, axis=None):
    return np.logical_and(a, legacy_rhs(a, b, broadcast, axis))


@op.reference(7)
def and_7(a, b):
    return np.logical_and(a, b)


@op.strategy(1)
def draw_1(d, dtype, opset):
    return pair_example(d, dtype, legacy=True)


@op.strategy(7)
def draw_7(d, dtype, opset):
    return pair_example(d, dtype)


@op.edges(1)
def edges_1(dtype, opset):
    return pair_edges(dtype, legacy=True)


@op.edges(7)
def edges_7(dtype, opset):
    return pair_edges(dtype, legacy=False)


# how it enters a generated graph (harness.suites.generated)
logical_template(op)
