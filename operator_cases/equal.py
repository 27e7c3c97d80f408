"""Equal: C = (A == B), elementwise, output bool (ONNX spec: Equal-1, 7, 11, 13, 19).

Equal-1 broadcasts with the legacy ``broadcast``/``axis`` attributes (see _binary_util) over
bool/int32/int64; Equal-7 on broadcast multidirectionally; Equal-11 adds the other integers and
floats, Equal-13 bfloat16, Equal-19 string. Floats compare as IEEE 754 values: NaN equals
nothing (itself included) and -0.0 == +0.0.
"""

import numpy as np

from harness.fuzz_api import NAN_IEEE, Value, margin
from harness.registry import Operator

from ._binary_util import binary_template, compare_example, legacy_rhs, pair_edges

op = Operator("Equal")


def equal(a, b):
    return np.asarray(np.equal(a, b), dtype=bool)


@op.reference(1)
def equal_1(a, b, *, broadcast=0, axis=None):
    return equal(a, legacy_rhs(a, b, broadcast, axis))


@op.reference(7, 11, 13, 19)
def equal_7(a, b):
    return equal(a, b)


@op.strategy(1)
def draw_1(d, dtype, opset):
    return compare_example(d, dtype, legacy=True)


@op.strategy(7, 11, 13, 19)
def draw_7(d, dtype, opset):
    return compare_example(d, dtype)


@op.edges(1)
def edges_1(dtype, opset):
    return pair_edges(dtype, legacy=True)


@op.edges(7, 11, 13, 19)
def edges_7(dtype, opset):
    return pair_edges(dtype, legacy=False)


# -- how it enters a generated graph -------------------------------------------------------
def equal_stable(ins: list[Value], attrs: dict, u: float) -> bool:
    """Equal is exact only where both sides are exact and equal, or clearly apart."""
    a, b = ins[0], ins[1]
    if a.wide.dtype.kind != "f" and b.wide.dtype.kind != "f":
        return True  # an integer or bool graph: exact values, equal or not
    d = np.abs(a.wide - b.wide)
    exact = (d == 0) & (np.broadcast_to(a.err, d.shape) == 0) & (np.broadcast_to(b.err, d.shape) == 0)
    apart = d > margin(a, u) + margin(b, u)
    return bool(np.all(exact | apart | np.isnan(d)))


binary_template(op, nan=NAN_IEEE, jumps=True, ulps=0.0, stable=equal_stable)
