"""Xor: C = A xor B on booleans, elementwise (ONNX spec: Xor-1, 7).

Xor-1 broadcasts with the legacy ``broadcast``/``axis`` attributes (see _binary_util);
Xor-7 broadcasts multidirectionally.
"""

import numpy as np

from harness.registry import Operator

from ._binary_util import legacy_rhs, logical_template, pair_edges, pair_example

op = Operator("Xor")


@op.reference(1)
def xor_1(a, b, *, broadcast=0, axis=None):
    return np.logical_xor(a, legacy_rhs(a, b, broadcast, axis))


@op.reference(7)
def xor_7(a, b):
    return np.logical_xor(a, b)


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
