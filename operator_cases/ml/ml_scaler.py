"""Scaler (ai.onnx.ml): y = (x - offset) * scale, in float (ONNX spec: Scaler-1).

"First, offset by this" then "Second, multiply by this"; each of offset and scale is one value per
feature of an [N, F] input (the last axis) or a single value applied to every element. An absent
offset is no offset (0) and an absent scale no scaling (1). Computed in float64 from the input
and the float32 attributes, rounded once to float32 (an int64 beyond 2^24 is converted exactly
here, so the result can differ from a float32 pipeline by one rounding).
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from ._ml_util import ML, edge_matrix, float_out

op = Operator("Scaler", domain=ML)


def _per_feature(values, default):
    v = np.asarray(default if values is None else values, dtype=np.float32).astype(np.float64)
    return v


@op.reference(1)
def scaler(x, *, offset=None, scale=None):
    x = np.asarray(x).astype(np.float64)
    with np.errstate(all="ignore"):
        return float_out((x - _per_feature(offset, [0.0])) * _per_feature(scale, [1.0]))


@op.strategy(1)
def draw(d, dtype, opset):
    n, f = d(S.st.integers(0, 4)), d(S.st.integers(1, 4))
    x = S.arrays(d, dtype, shape=(n, f), lo=-50, hi=50)
    attrs = {}
    per = f if d(S.st.booleans()) else 1
    if d(S.st.booleans()):
        attrs["offset"] = [d(S.st.floats(-10, 10, width=32)) for _ in range(per)]
    if d(S.st.booleans()):
        attrs["scale"] = [d(S.st.floats(-4, 4, width=32)) for _ in range(per)]
    return Example([x], attrs)


@op.edges(1)
def edges(dtype, opset):
    x = edge_matrix(dtype, 3)
    dt = S.np_dtype(dtype)
    return [
        Example([x], {"offset": [1.0, -2.0, 0.5], "scale": [2.0, 0.0, -1.0]}, name="edge_values"),
        Example([x], {"offset": [0.25], "scale": [3.0]}, name="single_value"),
        Example([S.edge_values(dtype)], {"offset": [1.0], "scale": [0.5]}, name="one_dim"),
        Example([x], name="no_attributes"),
        Example([np.full((2, 2), 3e38 if S.is_float(dtype) else 2**31 - 1, dtype=dt)], {"offset": [-3e38], "scale": [4.0]}, name="overflow"),
        Example([np.zeros((0, 3), dtype=dt)], {"offset": [1.0, 2.0, 3.0], "scale": [1.0, 1.0, 1.0]}, name="empty"),
    ]
