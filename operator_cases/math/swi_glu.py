"""SwiGLU: Y = Swish_alpha(A) * B, with Swish_alpha(a) = a * Sigmoid(alpha * a) (ONNX spec:
SwiGLU-28, new in onnx 1.23).

A (the gate) and B (the value) have identical shapes: "broadcasting is not applied and the
output Y has the same shape as the inputs". ``alpha`` defaults to 1.0. The function body is
Swish(A) then Mul(·, B), and Swish's body casts alpha to the input type (CastLike) before
Mul(alpha, A), Sigmoid and Mul(A, ·); so alpha is rounded to the input type here too, and the
rest is evaluated in float64 and rounded once. A gate of +inf gives +inf and NaN propagates
(a separate edge example); no case has a gate of -inf, where the body's IEEE arithmetic gives
-inf * Sigmoid(-inf) = -inf * 0 = NaN but the function tends to 0 (the same ambiguity as
Swish-24's, see crosscheck.toml).
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._reduce_util import back_to, draw_shape

op = Operator("SwiGLU")
st = S.st
ALPHAS = [1.0, 0.5, 1.5, 2.0, -1.0, 0.0, 1.702]


def sigmoid(z):
    with np.errstate(all="ignore"):
        return np.where(z >= 0, 1.0 / (1.0 + np.exp(-z)), np.exp(z) / (1.0 + np.exp(z)))


@op.reference(28)
def swiglu(a, b, *, alpha=1.0):
    a = np.asarray(a)
    alpha_t = float(np.array(alpha, dtype=np.float32).astype(a.dtype))  # CastLike(alpha, A)
    aw, bw = a.astype(np.float64), np.asarray(b).astype(np.float64)
    with np.errstate(all="ignore"):
        return back_to(aw * sigmoid(alpha_t * aw) * bw, a)


@op.strategy(28)
def draw(d, dtype, opset):
    shape = draw_shape(d)
    a = S.arrays(d, dtype, shape=shape, lo=-10, hi=10)
    b = S.arrays(d, dtype, shape=shape, lo=-10, hi=10)
    attrs = {"alpha": d(st.sampled_from(ALPHAS))} if d(st.booleans()) else {}
    return Example([a, b], attrs)


@op.edges(28)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    vals = S.edge_values(dtype)
    f = vals.astype(np.float64)
    finite = vals[np.isfinite(f)]
    ones = np.ones_like(finite)
    inf, nan = np.inf, np.nan
    big = 1e4
    return [
        Example([finite, ones], name="finite_gates"),
        Example([np.ones_like(vals), vals], name="edge_values_as_value"),
        Example([np.array([-big, big, -20.0, 20.0, -0.0], dtype=t), np.array([1.0, 1.0, 1.0, 1.0, 2.0], dtype=t)], name="saturated_gate"),
        Example([np.array([0.5, -2.0, 3.0], dtype=t), np.array([1.0, 2.0, -1.0], dtype=t)], {"alpha": 0.0}, name="alpha_zero"),
        Example([np.array([0.5, -2.0, 3.0], dtype=t), np.array([1.0, 2.0, -1.0], dtype=t)], {"alpha": -1.5}, name="alpha_negative"),
        Example([np.array([inf, nan, 1.0], dtype=t), np.array([1.0, 1.0, nan], dtype=t)], name="nonfinite_gates"),
        Example([np.array([0.0, 1.0], dtype=t), np.array([inf, -inf], dtype=t)], name="zero_times_inf"),
        Example([np.zeros((0, 3), dtype=t), np.zeros((0, 3), dtype=t)], name="empty"),
        Example([np.array(2.0, dtype=t), np.array(-3.0, dtype=t)], name="rank0"),
    ]
