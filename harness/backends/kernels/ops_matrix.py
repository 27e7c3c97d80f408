"""Matrix products and linear algebra: MatMul, Gemm, MatMulInteger, Einsum, Det, plus the
matrix-shaped helpers CumSum, CumProd, Trilu and EyeLike.

float32/float64 products go straight to BLAS (np.matmul / np.dot); float16 and the ml_dtypes
floats are multiplied in float32 and narrowed once; integer products run in float64 when that
is exact (BLAS) and in int64 otherwise.
"""

from __future__ import annotations

import numpy as np

from ._util import ML_FLOATS, normalize_axis, np_dtype, scalar
from .registry import register

_BLAS = (np.dtype(np.float32), np.dtype(np.float64))


def _mm_dtype(dt: np.dtype):
    if dt in _BLAS:
        return dt
    if dt == np.float16 or dt in ML_FLOATS:
        return np.dtype(np.float32)
    return None


def _int_matmul(a: np.ndarray, b: np.ndarray, out_dtype) -> np.ndarray:
    k = a.shape[-1] if a.ndim else 1
    bound = float(np.max(np.abs(a), initial=0)) * float(np.max(np.abs(b), initial=0)) * max(k, 1)
    if bound < 2.0**53:  # every partial sum is exact in float64
        return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(out_dtype)
    wide = np.uint64 if np.dtype(out_dtype).kind == "u" else np.int64  # wraps like the type
    return np.matmul(a.astype(wide), b.astype(wide)).astype(out_dtype)


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    dt = a.dtype
    cd = _mm_dtype(dt)
    if cd is None:
        if dt.kind in "iu":
            return _int_matmul(a, b, dt)
        return np.matmul(a, b)
    if cd == dt:
        return np.matmul(a, b)
    return np.matmul(a.astype(cd), b.astype(cd)).astype(dt)


@register("MatMul", since=1)
def matmul_kernel(node):
    def run(a, b):
        return (matmul(a, b),)

    return run


@register("Gemm", since=1)
def gemm(node):
    alpha = node.attrs.get("alpha", 1.0)
    beta = node.attrs.get("beta", 1.0)
    trans_a = node.attrs.get("transA", 0)
    trans_b = node.attrs.get("transB", 0)

    def run(a, b, c=None):
        dt = a.dtype
        if dt.kind in "iu":
            return (_int_gemm(a, b, c),)
        cd = _mm_dtype(dt) or np.dtype(np.float64)
        if a.dtype != cd:
            a, b = a.astype(cd), b.astype(cd)
        if trans_a:
            a = a.T
        if trans_b:
            b = b.T
        y = np.dot(a, b)
        if alpha != 1.0:
            y *= cd.type(alpha)
        if c is not None and beta != 0.0:
            c = c.astype(cd, copy=False)
            if beta != 1.0:
                c = c * cd.type(beta)
            if y.shape == np.broadcast_shapes(y.shape, c.shape):
                y += c
            else:
                y = y + c
        return (y.astype(dt, copy=False),)

    def _int_gemm(a, b, c):
        # integer Gemm wraps like the integer types do; alpha and beta scale exactly when
        # they are whole numbers
        a = a.T if trans_a else a
        b = b.T if trans_b else b
        y = _int_matmul(a, b, a.dtype)
        if alpha != 1.0:
            y = (y * _wrapped(alpha, a.dtype)) if float(alpha).is_integer() else (y * alpha).astype(a.dtype)
        if c is not None and beta != 0.0:
            c = c.astype(a.dtype, copy=False)
            y = y + ((c * _wrapped(beta, a.dtype)) if float(beta).is_integer() else (c * beta).astype(a.dtype))
        return y.astype(a.dtype, copy=False)

    return run


def _wrapped(factor: float, dtype: np.dtype) -> np.ndarray:
    """A whole-number alpha or beta in the integer type, wrapped like the type's arithmetic: -1
    in uint32 is 2**32 - 1, so the product is -y modulo 2**32 (a fuzz campaign on kernels:
    Gemm(uint32; alpha=-1.0) raised OverflowError)."""
    return np.array(int(factor), dtype=np.int64).astype(dtype)


def _zero_point_rows(zp, a: np.ndarray):
    """a_zero_point of MatMulInteger: a scalar, or one value per row of A."""
    zp = np.asarray(zp).astype(np.int64)
    if zp.ndim == 1 and zp.size > 1:
        return zp.reshape(-1, 1)
    return zp


@register("MatMulInteger", since=10)
def matmul_integer(node):
    def run(a, b, a_zero_point=None, b_zero_point=None):
        a = a.astype(np.int64)
        b = b.astype(np.int64)
        if a_zero_point is not None:
            a = a - _zero_point_rows(a_zero_point, a)
        if b_zero_point is not None:
            b = b - np.asarray(b_zero_point).astype(np.int64)
        return (_int_matmul(a, b, np.int32),)

    return run


@register("Einsum", since=12)
def einsum(node):
    equation = node.attrs["equation"].replace(" ", "")
    paths: dict[tuple, list] = {}

    def run(*xs):
        dt = xs[0].dtype
        if dt == np.float16 or dt in ML_FLOATS:
            xs = [x.astype(np.float32) for x in xs]
        key = tuple(x.shape for x in xs)
        path = paths.get(key)
        if path is None:
            path = paths[key] = np.einsum_path(equation, *xs, optimize="greedy")[0] if len(xs) > 1 else False
        return (np.asarray(np.einsum(equation, *xs, optimize=path)).astype(dt, copy=False),)

    return run


@register("Det", since=11)
def det(node):
    def run(x):
        dt = x.dtype
        x64 = x.astype(np.float64) if dt != np.float64 else x
        y = np.linalg.det(x64)
        # LAPACK's pivoting can lose a NaN (0 * NaN pivots): any NaN entry makes the det NaN
        y = np.where(np.isnan(x64).any(axis=(-2, -1)), np.nan, y)
        return (np.asarray(y).astype(dt),)

    return run


def _cumulative(ufunc, identity):
    def factory(node):
        exclusive = node.attrs.get("exclusive", 0)
        reverse = node.attrs.get("reverse", 0)

        def run(x, axis):
            ax = normalize_axis(int(scalar(axis)), x.ndim)
            dt = x.dtype
            y = x.astype(np.float32) if dt == np.float16 or dt in ML_FLOATS else x
            if reverse:
                y = np.flip(y, axis=ax)
            out = ufunc.accumulate(y, axis=ax, dtype=y.dtype)
            if exclusive and out.shape[ax]:
                out = np.roll(out, 1, axis=ax)
                first = [slice(None)] * x.ndim
                first[ax] = 0
                out[tuple(first)] = identity
            if reverse:
                out = np.flip(out, axis=ax)
            return (np.ascontiguousarray(out).astype(dt, copy=False),)

        return run

    return factory


register("CumSum", since=11)(_cumulative(np.add, 0))
register("CumProd", since=26)(_cumulative(np.multiply, 1))


@register("Trilu", since=14)
def trilu(node):
    upper = node.attrs.get("upper", 1)

    def run(x, k=None):
        kk = int(scalar(k)) if k is not None else 0
        return ((np.triu if upper else np.tril)(x, kk),)

    return run


@register("EyeLike", since=9)
def eye_like(node):
    dtype_attr = node.attrs.get("dtype")
    k = node.attrs.get("k", 0)

    def run(x):
        dt = np_dtype(dtype_attr) if dtype_attr is not None else x.dtype
        return (np.eye(x.shape[0], x.shape[1], k=k).astype(dt),)

    return run
