"""MatMul: the matrix product with numpy.matmul semantics (ONNX spec: MatMul-1, 9, 13).

"Matrix product that behaves like numpy.matmul": a 1-D first operand is a row vector and a 1-D
second operand a column vector (the added dimension is removed again), operands of rank > 2 are
stacks of matrices whose leading dimensions broadcast, and an empty inner dimension gives zeros.
MatMul-9 adds int32/int64/uint32/uint64, MatMul-13 bfloat16.

Floats are multiplied and summed in float64 and rounded once; the strategies draw them on a
binary grid on which every partial sum is exact in the input type, so the result does not depend
on the accumulation order or width (which the spec leaves open). Integers are exact, with
magnitudes bounded so that no sum overflows (the spec says nothing about integer overflow).
"""

import math

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan, Value, abs_bound, matmul_shape
from harness.registry import Example, Operator

from .._reduce_util import draw_matmul_shapes, float_grid, matmul_exact, to_dtype

op = Operator("MatMul")


@op.reference(1, 9, 13)
def matmul(a, b):
    return to_dtype(matmul_exact(a, b), np.asarray(a).dtype)


def operand(d, dtype, shape, k):
    if S.is_float(dtype):
        return float_grid(d, dtype, shape, max(k, 1), 8.0, 2)
    lo, hi = S.finite_range(dtype)
    bound = math.isqrt(hi // max(k, 1))
    return S.arrays(d, dtype, shape=shape, lo=-bound, hi=bound)


@op.strategy(1, 9, 13)
def draw(d, dtype, opset):
    sa, sb = draw_matmul_shapes(d)
    k = sa[-1]
    return Example([operand(d, dtype, sa, k), operand(d, dtype, sb, k)])


@op.edges(1, 9, 13)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    a = np.array([[1, 2, 0], [3, 0, 1]], dtype=t)
    b = np.array([[2, 1], [0, 1], [1, 3]], dtype=t)
    out = [
        Example([a, b], name="matrix"),
        Example([a[0], b[:, 0].copy()], name="vector_vector"),
        Example([a[0], b], name="vector_matrix"),
        Example([a, b[:, 0].copy()], name="matrix_vector"),
        Example([a[0], np.stack([b, b + 1])], name="vector_batch"),
        Example([np.stack([a, a]).reshape(2, 1, 2, 3), np.stack([b, b, b])], name="batch_broadcast"),
        Example([np.zeros((2, 0), dtype=t), np.zeros((0, 3), dtype=t)], name="empty_inner"),
        Example([np.zeros((4, 0), dtype=t), np.zeros((2, 0, 4), dtype=t)], name="empty_inner_batch"),
        Example([np.zeros((0, 3), dtype=t), b], name="empty_rows"),
        Example([np.zeros((3,), dtype=t), np.zeros((0, 3, 2), dtype=t)], name="empty_batch"),
    ]
    if S.is_float(dtype):
        inf, nan = np.inf, np.nan
        special = np.array([[inf, 0.0], [nan, 1.0], [-inf, 1.0], [-0.0, -0.0]], dtype=t)
        out.append(Example([special, np.array([[1.0, 0.0], [0.0, 1.0]], dtype=t)], name="nan_inf"))
        big = float(S.finite_range(dtype)[1]) / 2
        out.append(Example([np.array([[big, big]], dtype=t), np.array([[2.0], [2.0]], dtype=t)], name="overflow"))
        tiny = S.edge_values(dtype)[7:8]
        out.append(Example([np.array([[tiny[0], tiny[0]]], dtype=t), np.array([[1.0], [1.0]], dtype=t)], name="subnormal"))
    else:
        lo, hi = S.finite_range(dtype)
        ext = np.array([[hi, 0], [lo, 1]], dtype=object).astype(t)
        out.append(Example([ext, np.array([[1, 0], [0, 1]], dtype=t)], name="int_extremes"))
    return out


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=2.0, bound=abs_bound)
def fuzz(c: Ctx) -> Plan | None:
    a = c.take("float", 0, lambda v: v.rank >= 1 and v.size > 0)
    if a is None:
        return None
    k = a.shape[-1]

    def weight(c2: Ctx, a2: Value) -> tuple[int, ...]:
        return (k,) if c2.pick(5) == 4 else (k, 1 + c2.pick(5))

    b = c.operand(a, 1, shape_of=matmul_shape, const_shape=weight)
    if matmul_shape(a.shape, b.shape) is None:
        return None
    return Plan([a, b], n_acc=k)
