"""MatMulInteger: (A - a_zero_point) x (B - b_zero_point) with numpy.matmul semantics, in int32
(ONNX spec: MatMulInteger-10).

A is int8 or uint8 (T1, the swept type) and B independently int8 or uint8 (T2, drawn per
example). The zero points are optional (default 0) and of A's / B's type: a scalar for per-tensor
quantization, or per row of A ("an M element vector" for a 2-D A, shape [D1, D2, M, 1] for an
N-D A) and per column of B ("an N element vector" for a 2-D B, shape [D1, D2, 1, N] for an N-D
B). "The production MUST never overflow. The accumulation may overflow if and only if in 32
bits": the inner dimension stays small, so no case overflows and the result is exact.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._reduce_util import draw_matmul_shapes, exact, to_dtype

op = Operator("MatMulInteger")
st = S.st


@op.reference(10)
def matmul_integer(a, b, a_zero_point=None, b_zero_point=None):
    a, b = exact(a), exact(b)
    if a_zero_point is not None:
        za = exact(a_zero_point)
        if za.ndim == 1 and a.ndim == 2:  # per row of a 2-D A: [M] -> [M, 1]
            za = za.reshape(-1, 1)
        a = a - za
    if b_zero_point is not None:
        b = b - exact(b_zero_point)
    return to_dtype(np.matmul(a, b), np.dtype(np.int32))


def zero_point(d, dtype, operand_shape, per_row):
    """None, a scalar, a 1-element vector, or a per-row (A) / per-column (B) tensor."""
    kinds = ["none", "scalar", "one"]
    if len(operand_shape) >= 2:
        kinds.append("axis")
    kind = d(st.sampled_from(kinds))
    if kind == "none":
        return None
    if kind == "scalar":
        return S.arrays(d, dtype, shape=())
    if kind == "one":
        return S.arrays(d, dtype, shape=(1,))
    if len(operand_shape) == 2:
        shape = (operand_shape[0],) if per_row else (operand_shape[1],)
    else:
        shape = (*operand_shape[:-1], 1) if per_row else (*operand_shape[:-2], 1, operand_shape[-1])
    return S.arrays(d, dtype, shape=shape)


@op.strategy(10)
def draw(d, dtype, opset):
    sa, sb = draw_matmul_shapes(d)
    dtype_b = d(st.sampled_from(["int8", "uint8"]))
    a = S.arrays(d, dtype, shape=sa)
    b = S.arrays(d, dtype_b, shape=sb)
    za = zero_point(d, dtype, sa, True)
    zb = zero_point(d, dtype_b, sb, False)
    if zb is not None and za is None and d(st.booleans()):
        return Example([a, b, None, zb])
    return Example([a, b, za, zb])


@op.edges(10)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    lo, hi = S.finite_range(dtype)
    out = []
    for name_b in ("int8", "uint8"):
        tb = S.np_dtype(name_b)
        blo, bhi = S.finite_range(name_b)
        a = np.array([[lo, hi, 0], [hi, hi, lo]], dtype=t)
        b = np.array([[blo, bhi], [bhi, bhi], [0, blo]], dtype=tb)
        out += [
            Example([a, b], name=f"extremes_{name_b}"),
            Example([a, b, np.array(hi, dtype=t), np.array(blo, dtype=tb)], name=f"extreme_zero_points_{name_b}"),
            Example([a, b, np.array([lo, hi], dtype=t), np.array([bhi, blo], dtype=tb)], name=f"per_row_per_column_{name_b}"),
            Example([a, b, None, np.array([1, 2], dtype=tb)], name=f"b_zero_point_only_{name_b}"),
        ]
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=t)
    b = np.array([[1, 0], [0, 1], [1, 1]], dtype=np.uint8)
    out += [
        Example([a[0], b, np.array(1, dtype=t)], name="vector_matrix"),
        Example([np.stack([a, a]), np.stack([b, b]), np.array([[[1], [2]], [[3], [4]]], dtype=t),
                 np.array([[[0, 1]], [[2, 3]]], dtype=np.uint8)], name="batched_zero_points"),
        Example([np.zeros((2, 0), dtype=t), np.zeros((0, 3), dtype=np.uint8), np.array(5, dtype=t)], name="empty_inner"),
        Example([np.zeros((0, 3), dtype=t), b], name="empty_rows"),
    ]
    return out
