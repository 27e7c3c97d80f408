"""Det: the determinant of each square matrix in the innermost two dimensions (ONNX spec:
Det-11, 22).

The input is [*, M, M] with zero or more batch dimensions; the output is [*] ("When the input
is 2-D, the output is a scalar"). Det-22 adds bfloat16. Evaluated in float64 and rounded once;
an empty batch gives an empty output, a 0x0 matrix the empty product 1, and a matrix holding
a NaN gives NaN.

The spec fixes no algorithm, and every algorithm's rounding error grows with the matrix's
condition number, so the strategies draw either permuted triangular matrices with values on a
binary grid (their determinant is a product of the diagonal that elimination with pivoting,
cofactor expansion and the like all compute exactly) or general matrices made diagonally
dominant when their condition number exceeds 8.
"""

from collections.abc import Callable

import numpy as np

from harness import strategies as S
from harness.fuzz_api import Ctx, Plan
from harness.registry import Example, Operator

from .._reduce_util import back_to, value_drawer

op = Operator("Det")
st = S.st


@op.reference(11, 22)
def det(x):
    x = np.asarray(x)
    w = x.astype(np.float64)
    if w.shape[-1] == 0:
        out = np.ones(w.shape[:-2])
    elif w.size == 0:
        out = np.zeros(w.shape[:-2])
    else:
        with np.errstate(all="ignore"):
            out = np.linalg.det(w)
        # a NaN entry makes the determinant NaN (every expansion of it involves that entry;
        # LAPACK's pivot search can skip over a NaN and return a number)
        out = np.where(np.isnan(w).any(axis=(-2, -1)), np.nan, out)
    return back_to(out, x)


def triangular(d, dtype, m):
    t = S.np_dtype(dtype)
    vals = value_drawer((-2.0, 2.0), grid=1)(d, dtype, (m, m), 4)
    upper = np.triu(vals.astype(np.float64))
    diag = [d(st.sampled_from([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0])) for _ in range(m)]
    upper[np.arange(m), np.arange(m)] = diag
    if d(st.booleans()):
        upper = upper.T
    perm = d(st.permutations(list(range(m))))
    return upper[perm].astype(t)


def general(d, dtype, m):
    x = S.arrays(d, dtype, shape=(m, m), lo=-2, hi=2).astype(np.float64)
    if m and np.linalg.cond(x) > 8:
        x = x + np.diag(np.where(np.diag(x) >= 0, 1.0, -1.0) * 2.0 * m)
    return x.astype(S.np_dtype(dtype))


@op.strategy(11, 22)
def draw(d, dtype, opset):
    batch = S.shapes(d, 0, 2, 1 if d(st.integers(0, 7)) else 0, 3)
    m = d(st.integers(1, 4))
    count = int(np.prod(batch)) if batch else 1
    kind = d(st.sampled_from([triangular, general]))
    mats = [kind(d, dtype, m) for _ in range(count)]
    x = np.array(mats, dtype=S.np_dtype(dtype)).reshape(*batch, m, m) if count else np.zeros((*batch, m, m), dtype=S.np_dtype(dtype))
    return Example([x])


@op.edges(11, 22)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    inf, nan = np.inf, np.nan
    return [
        Example([np.eye(3, dtype=t)], name="identity"),
        Example([np.array([[1.0, 2.0], [2.0, 4.0]], dtype=t)], name="singular"),
        Example([np.array([[0.0, 1.0], [1.0, 0.0]], dtype=t)], name="permutation"),
        Example([np.array([[-3.5]], dtype=t)], name="one_by_one"),
        Example([np.array([[[2.0, 0.0], [1.0, 0.5]], [[0.0, 1.0], [-2.0, 0.0]]], dtype=t)], name="batch"),
        Example([np.array([[nan, 1.0], [1.0, 1.0]], dtype=t)], name="nan"),
        Example([np.array([[inf, 0.0], [0.0, 1.0]], dtype=t)], name="inf"),
        Example([np.zeros((0, 3, 3), dtype=t)], name="empty_batch"),
        Example([np.zeros((2, 0, 0), dtype=t)], name="empty_matrix"),
        # subnormal entries and -0.0 (a flush-to-zero kernel gives 0); the largest value squared is past the range: inf
        Example([np.array([[2.0 * S.smallest_subnormal(dtype), -0.0], [1.0, 0.5]]).astype(t)], name="subnormal_signed_zero"),
        Example([np.array([[S.finite_range(dtype)[1], 0.0], [0.0, S.finite_range(dtype)[1]]]).astype(t)], name="overflow"),
    ]


# -- how it enters a generated graph -------------------------------------------------------
def det_bound(ref: Callable, ins: list, attrs: dict) -> np.ndarray:
    # permanent-like magnitude: the product of row norms (Hadamard's bound)
    x = np.abs(ins[0])
    return np.prod(np.sqrt(np.sum(x * x, axis=-1)), axis=-1)


@op.fuzz(ulps=8.0, bound=det_bound)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0, lambda v: v.rank >= 2 and v.shape[-1] == v.shape[-2] and v.shape[-1] <= 4 and v.size > 0)
    if x is None:
        return None
    return Plan([x], n_acc=x.shape[-1] ** 2)
