"""Gemm: Y = alpha * A' * B' + beta * C (ONNX spec: Gemm-1, 6, 7, 9, 11, 13).

A' is A transposed when ``transA`` is non-zero (A is then (K, M)), likewise B' (B is (N, K));
Y is (M, N). Gemm-1 and 6 require C and have a ``broadcast`` attribute: "If attribute broadcast
is non-zero, input tensor C will be broadcasted to match the dimension requirement", otherwise C
is (M, N); the cases broadcast a scalar, a (1,) or an (N,) C (the suffix-style broadcasting of
that era). From Gemm-7, C is unidirectionally broadcast to (M, N) (any of (), (1,), (N,), (1, N),
(M, 1), (M, N), (1, 1)); Gemm-9 adds the integer types, Gemm-11 makes C optional ("the
computation is done as if C is a scalar 0"), Gemm-13 adds bfloat16.

Floats are evaluated in float64 and rounded once. alpha and beta are float attributes; the
cases draw them from multiples of 1/4 in [-2, 2] and A, B, C from a binary grid on which
alpha * A'B' + beta * C is exact in the input type, so no accumulation order can differ.
For integer types the spec gives no rounding rule for a float alpha or beta, so they are drawn
integer-valued, with operands small enough that nothing overflows.
"""

from collections.abc import Callable
from typing import Any

import numpy as np

from harness import schema
from harness import strategies as S
from harness.fuzz_api import NAN_ASSUMED, Ctx, Plan, abs_bound
from harness.registry import Example, Operator

from .._reduce_util import exact, float_grid, to_dtype

op = Operator("Gemm")
st = S.st
SCALES = [-2.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0]


def gemm(a, b, c, alpha, beta, trans_a, trans_b):
    aa, bb = exact(a), exact(b)
    if trans_a:
        aa = aa.T
    if trans_b:
        bb = bb.T
    if aa.dtype == object:  # integer-valued alpha and beta (see the strategy)
        alpha, beta = int(alpha), int(beta)
    y = alpha * np.matmul(aa, bb)
    # beta = 0 leaves C out, a NaN or an infinity in it too: the text points to BLAS Level 3, whose
    # GEMM reads "when BETA is supplied as zero then C need not be set on input" (ONNX Runtime and
    # onnx.reference agree; operator_cases/crosscheck.toml, Gemm)
    if c is not None and beta != 0:
        y = y + beta * exact(c)
    return to_dtype(np.broadcast_to(y, (aa.shape[0], bb.shape[1])), np.asarray(a).dtype)


@op.reference(1, 6)
def gemm_6(a, b, c, *, alpha=1.0, beta=1.0, broadcast=0, transA=0, transB=0):
    return gemm(a, b, c, alpha, beta, transA, transB)


@op.reference(7, 9, 11, 13)
def gemm_7(a, b, c=None, *, alpha=1.0, beta=1.0, transA=0, transB=0):
    return gemm(a, b, c, alpha, beta, transA, transB)


def c_shapes(since, m, n, broadcast):
    if since < 7:
        return [(m, n)] + ([(), (1,), (n,)] if broadcast else [])
    return [(), (1,), (n,), (1, n), (m, 1), (m, n), (1, 1)]


def values(d, dtype, shape, k, bound=4.0):
    if S.is_float(dtype):
        return float_grid(d, dtype, shape, 8 * k + 32, bound, 2)
    lo = 0 if dtype.startswith("u") else -10
    return S.arrays(d, dtype, shape=shape, lo=lo, hi=10)


@op.strategy(1, 6, 7, 9, 11, 13)
def draw(d, dtype, opset):
    since = op_since(opset)
    side = st.integers(0, 4) if d(st.integers(0, 7)) == 0 else st.integers(1, 4)
    m, k, n = d(side), d(side), d(side)
    attrs = {}
    trans_a, trans_b = d(st.integers(0, 1)), d(st.integers(0, 1))
    if trans_a or d(st.booleans()):
        attrs["transA"] = trans_a
    if trans_b or d(st.booleans()):
        attrs["transB"] = trans_b
    if S.is_float(dtype):
        scales = SCALES
    else:
        scales = [0.0, 1.0, 2.0] + ([-1.0] if not dtype.startswith("u") else [])
    for name in ("alpha", "beta"):
        if d(st.booleans()):
            attrs[name] = d(st.sampled_from(scales))
    broadcast = 0
    if since < 7:
        broadcast = d(st.integers(0, 1))
        if broadcast or d(st.booleans()):
            attrs["broadcast"] = broadcast
    a = values(d, dtype, (k, m) if trans_a else (m, k), k)
    b = values(d, dtype, (n, k) if trans_b else (k, n), k)
    c = None
    if since < 11 or d(st.integers(0, 3)) > 0:
        c = values(d, dtype, d(st.sampled_from(c_shapes(since, m, n, broadcast))), k)
    return Example([a, b, c], attrs)


def op_since(opset):
    return schema.schema_at("Gemm", opset).since_version


@op.edges(1, 6, 7, 9, 11, 13)
def edges(dtype, opset):
    since = op_since(opset)
    t = S.np_dtype(dtype)
    a = np.array([[1, 2, 0], [3, 0, 1]], dtype=t)          # (2, 3)
    b = np.array([[2, 1], [0, 1], [1, 3]], dtype=t)        # (3, 2)
    c = np.array([[1, -1], [2, 0]] if not dtype.startswith("u") else [[1, 4], [2, 0]], dtype=t)
    bc = {"broadcast": 1} if since < 7 else {}
    out = [
        Example([a, b, c], name="plain"),
        Example([a.T.copy(), b, c], {"transA": 1}, name="trans_a"),
        Example([a, b.T.copy(), c], {"transB": 1}, name="trans_b"),
        Example([a.T.copy(), b.T.copy(), c], {"transA": 1, "transB": 1, "alpha": 2.0, "beta": 0.0 if dtype.startswith("u") else -1.0},
                name="trans_both_scaled"),
        Example([a, b, c[0].copy()], bc, name="c_row"),
        Example([a, b, c[:1, :1].reshape(1).copy()], bc, name="c_one"),
        Example([a, b, np.array(3, dtype=t)], bc, name="c_scalar"),
        Example([np.zeros((2, 0), dtype=t), np.zeros((0, 2), dtype=t), c], name="empty_inner"),
        Example([np.zeros((2, 0), dtype=t), np.zeros((0, 2), dtype=t), c], {"beta": 2.0}, name="empty_inner_beta"),
    ]
    if since >= 7:
        out += [Example([a, b, c[:, :1].copy()], name="c_column"), Example([a, b, c[:1].copy()], name="c_one_row")]
    if since >= 11:
        out += [Example([a, b], {"alpha": 2.0}, name="no_c"), Example([np.zeros((0, 3), dtype=t), b], name="empty_rows_no_c")]
    if S.is_float(dtype):
        inf, nan = np.inf, np.nan
        special = np.array([[inf, 0.0], [nan, 1.0], [-0.0, -0.0]], dtype=t)
        ident = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=t)
        out.append(Example([special, ident, np.array([[0.0, inf], [1.0, 1.0], [-0.0, 0.0]], dtype=t)], name="nan_inf"))
        out.append(Example([special, ident, np.zeros((3, 2), dtype=t)], {"beta": 0.0}, name="beta_zero"))
        # beta = 0 with NaN and infinities in C: C is not read (a kernel campaign's Gemm(x, x, NaN; beta=0))
        out.append(Example([ident, ident, np.array([[nan, inf], [-inf, 1.0]], dtype=t)], {"beta": 0.0}, name="beta_zero_nonfinite_c"))
        big = float(S.finite_range(dtype)[1])
        out.append(Example([np.array([[big, big]], dtype=t), np.array([[1.0], [1.0]], dtype=t), np.zeros((1, 1), dtype=t)],
                           name="overflow"))
        tiny = S.smallest_subnormal(dtype)  # subnormal products and sums (a flush-to-zero kernel gives 0)
        out.append(Example([(a * tiny).astype(t), b, np.array([[tiny, -0.0], [-tiny, 0.0]]).astype(t)], name="subnormal"))
    else:
        lo, hi = S.finite_range(dtype)
        ext = np.array([[hi, 0], [lo, 1]], dtype=object).astype(t)
        out.append(Example([ext, np.array([[1, 0], [0, 1]], dtype=t), np.zeros((2, 2), dtype=t)], name="int_extremes"))
    return out


# -- how it enters a generated graph -------------------------------------------------------
def gemm_bound(ref: Callable, ins: list, attrs: dict) -> np.ndarray:
    """|alpha| |A| |B| + |beta| |C|: the magnitude Gemm's sums round with."""
    attrs = {**attrs, "alpha": abs(attrs.get("alpha", 1.0)), "beta": abs(attrs.get("beta", 1.0))}
    return abs_bound(ref, ins, attrs)


@op.fuzz(nan=NAN_ASSUMED, ulps=2.0, bound=gemm_bound)
def fuzz(c: Ctx) -> Plan | None:
    a = c.take("float", 0, lambda v: v.rank == 2 and v.size > 0)
    if a is None:
        return None
    attrs: dict[str, Any] = {}
    trans_a = c.pick(2)
    if trans_a:
        attrs["transA"] = 1
    m, k = (a.shape[1], a.shape[0]) if trans_a else a.shape
    trans_b = c.pick(2)
    if trans_b:
        attrs["transB"] = 1
    b = c.take("float", 1, lambda v: v.rank == 2 and (v.shape[1] if trans_b else v.shape[0]) == k)
    if b is None or c.pick(3) == 0:
        n = 1 + c.pick(5)
        b = c.const(c.floats((n, k) if trans_b else (k, n)))
    n = b.shape[0] if trans_b else b.shape[1]
    # on integer graphs only integral alpha and beta: the spec gives no rounding rule for 0.5 * int
    # (a fuzz campaign on kernels flagged Gemm(uint32 2, 2; alpha=0.5): 2, our reference 0)
    # and on unsigned ones no negative factor, whose products leave the type (a kernel campaign
    # met Gemm(uint32; alpha=-1.0) on a zero product only: every other draw was lost)
    integral = S.is_int(c.dtype)
    negative = [] if c.dtype.startswith("uint") else [-1.0]
    alpha = c.choice([1.0, *negative, 2.0] if integral else [1.0, 0.5, -1.0, 2.0])
    beta = c.choice([1.0, *negative, 0.0] if integral else [1.0, 0.5, -1.0, 0.0])
    if alpha != 1.0:
        attrs["alpha"] = alpha
    if beta != 1.0:
        attrs["beta"] = beta
    mode = c.pick(4)
    ins = [a, b]
    if mode:
        shape = c.choice([(m, n), (n,), (1, n), (m, 1), ()])
        cc = c.take("float", 2, lambda v: v.shape == shape) if mode == 3 else None
        ins.append(cc if cc is not None else c.const(c.floats(shape)))
    return Plan(ins, attrs, n_acc=k + 1)
