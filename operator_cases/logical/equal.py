"""Equal: C = (A == B), elementwise, output bool (ONNX spec: Equal-1, 7, 11, 13, 19).

Equal-1 broadcasts with the legacy ``broadcast``/``axis`` attributes (see _binary_util) over
bool/int32/int64; Equal-7 on broadcast multidirectionally; Equal-11 adds the other integers and
floats, Equal-13 bfloat16, Equal-19 string. Floats compare as IEEE 754 values: NaN equals
nothing (itself included) and -0.0 == +0.0.
"""

import numpy as np

from harness.fuzz_api import Value, margin
from harness.registry import Operator

from .._families import comparison

op = Operator("Equal")


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


comparison(op, np.equal, legacy=(1,), modern=(7, 11, 13, 19), stable=equal_stable)
