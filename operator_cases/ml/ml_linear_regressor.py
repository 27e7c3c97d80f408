"""LinearRegressor (ai.onnx.ml): y = X W^T + intercepts, then the post transform, in float
(ONNX spec: LinearRegressor-1).

"If targets is set to M then M sets of coefficients must be passed in as a sequence [...] The
coefficients array is of length n, and the coefficients for each target are contiguous": W is
coefficients reshaped [targets, F]. Intercepts are optional (0). A 1-D input is one row [1, F]
(the output is [1, targets]). Computed in float64 from the float32 attributes, the transform in
float64 (see _ml_util for the post transforms and their spec-silent points), rounded once.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from ._ml_util import ML, TRANSFORMS, declare_transform_points, edge_matrix, ensure_2d, float_out, post_transform

op = Operator("LinearRegressor", domain=ML)


@op.reference(1)
def linear_regressor(x, *, coefficients=(), intercepts=None, targets=1, post_transform="NONE"):
    x = ensure_2d(np.asarray(x).astype(np.float64))
    w = np.asarray(coefficients, dtype=np.float32).astype(np.float64).reshape(targets, -1)
    b = np.asarray(intercepts if intercepts is not None else [0.0] * targets, dtype=np.float32).astype(np.float64)
    with np.errstate(all="ignore"):
        y = x @ w.T + b if x.shape[0] else np.zeros((0, targets))
        return float_out(_post(y, post_transform))


_post = post_transform
declare_transform_points(op, (1,), 0)


@op.strategy(1)
def draw(d, dtype, opset):
    n, f, t = d(S.st.integers(0, 4)), d(S.st.integers(1, 4)), d(S.st.integers(1, 3))
    x = S.arrays(d, dtype, shape=(n, f), lo=-5, hi=5)
    how = d(S.st.sampled_from(TRANSFORMS))
    scale = 0.1 if how == "PROBIT" else 1.0
    attrs = {"coefficients": [d(S.st.floats(-2, 2, width=32)) * scale for _ in range(t * f)], "targets": t, "post_transform": how}
    if d(S.st.booleans()):
        attrs["intercepts"] = [(0.5 if how == "PROBIT" else 1.0) * d(S.st.floats(-1, 1, width=32)) for _ in range(t)]
    if how == "PROBIT":  # scores in (0, 1), where the probit is finite
        x = S.arrays(d, dtype, shape=(n, f), lo=-1, hi=1)
        attrs["intercepts"] = [0.5] * t
    return Example([x], attrs)


@op.edges(1)
def edges(dtype, opset):
    x = edge_matrix(dtype, 2)
    dt = S.np_dtype(dtype)
    plain = np.array([[1, 2], [-3, 0]], dtype=dt)
    out = [Example([x], {"coefficients": [1.0, -2.0, 0.5, 0.25], "intercepts": [0.5, -1.0], "targets": 2}, name="edge_values"),
           Example([np.array([1, 2], dtype=dt)], {"coefficients": [1.0, 1.0]}, name="one_dim"),
           Example([np.zeros((0, 2), dtype=dt)], {"coefficients": [1.0, 1.0]}, name="empty")]
    for how in TRANSFORMS:
        coef = [0.1, -0.2, 0.05, 0.3, 0.0, 0.0] if how == "PROBIT" else [1.0, -2.0, 0.5, 3.0, 0.0, 0.0]
        out.append(Example([plain], {"coefficients": coef, "intercepts": [0.5, 0.25, 0.0], "targets": 3, "post_transform": how},
                           name=f"post_{how.lower()}"))
    return out
