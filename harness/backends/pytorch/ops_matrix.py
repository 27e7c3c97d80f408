"""Matrix products: MatMul, Gemm, Einsum, Det, and the integer / quantized products."""

from __future__ import annotations

import torch
from onnx import TensorProto as TP

from ._util import widen
from .registry import lowers


def _matmul(a, b):
    if a.dtype.is_floating_point or a.dtype.is_complex:
        return torch.matmul(a, b)
    # torch has integer matmul only for some widths on CPU: compute in int64 and narrow back
    return torch.matmul(widen(a), widen(b)).to(a.dtype)


@lowers("MatMul", 1, 9, 13)
def matmul(node, a, b):
    return _matmul(a, b)


@lowers("Gemm", 7, 9, 11, 13)
def gemm(node, a, b, c=None, *, alpha=1.0, beta=1.0, transA=0, transB=0):  # noqa: N803 - spec names
    if transA:
        a = a.T
    if transB:
        b = b.T
    y = _matmul(a, b)
    if alpha != 1.0:
        y = y * alpha
    if c is not None:
        y = y + (c * beta if beta != 1.0 else c)
    return y.to(a.dtype)


@lowers("Gemm", 1, 6)
def gemm_6(node, a, b, c, *, alpha=1.0, beta=1.0, broadcast=0, transA=0, transB=0):  # noqa: N803 - spec names
    # Gemm-1/6's broadcast flag only allows what numpy broadcasting of C already does (Gemm-1
    # differs from Gemm-6 by nothing the result depends on)
    return gemm(node, a, b, c, alpha=alpha, beta=beta, transA=transA, transB=transB)


@lowers("Einsum", 12, 28)
def einsum(node, *xs, equation):
    if xs[0].dtype.is_floating_point:
        return torch.einsum(equation, *xs)
    # integers in int64 (torch's einsum mixes int64 with narrower types in some contractions),
    # wrapped back to the type; through float64 an int64 sum above 2**53 was rounded
    return torch.einsum(equation, *[x.to(torch.int64) for x in xs]).to(xs[0].dtype)


@lowers("Det", 11, 22)
def det(node, x):
    if x.dtype in (torch.float16, torch.bfloat16):
        return torch.linalg.det(x.float()).to(x.dtype)
    return torch.linalg.det(x)


def _centered(x, zp, per_row=False):
    x = x.to(torch.int64)
    if zp is None:
        return x
    zp = zp.to(torch.int64)
    if per_row and zp.dim() == 1 and zp.numel() > 1:  # "an M element vector": one per row
        zp = zp.reshape(-1, 1)
    return x - zp


@lowers("MatMulInteger", 10)
def matmul_integer(node, a, b, a_zero_point=None, b_zero_point=None):
    return torch.matmul(_centered(a, a_zero_point, per_row=True), _centered(b, b_zero_point)).to(torch.int32)


@lowers("QLinearMatMul", 10, 21)
def qlinear_matmul(node, a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp):
    """y = saturate(round(((a - a_zp) @ (b - b_zp)) * a_scale * b_scale / y_scale) + y_zp), in
    float64 (exact for 8-bit products); float 8 inputs and outputs (QLinearMatMul-21) through
    their exact values and Cast's saturating conversion. Scales and zero points of the N-D per
    row ([.., M, 1]) / per column ([.., 1, N]) forms broadcast; a 1-D one of a is per row."""
    from .ops_cast import _INT_RANGE, to_float8

    f64 = torch.float64

    def centred(x, zp, per_row):
        zp = zp.to(f64)
        if per_row and zp.dim() == 1 and zp.numel() > 1:
            zp = zp.reshape(-1, 1)
        return x.to(f64) - zp

    acc = torch.matmul(centred(a, a_zp, True), centred(b, b_zp, False))
    a_s = a_scale.to(f64)
    a_s = a_s.reshape(-1, 1) if a_s.dim() == 1 and a_s.numel() > 1 else a_s
    y = acc * a_s * b_scale.to(f64) / y_scale.to(f64)
    to = node.in_type(7)
    if to in _INT_RANGE:
        y = torch.round(y) + y_zp.to(f64)  # round half to even
        lo, hi = _INT_RANGE[to]
        return y.clamp(lo, hi).to(y_zp.dtype)
    # float 8 output: Cast-21's saturating table (+-inf to NaN in the FNUZ types)
    v = y + y_zp.to(f64)
    out = to_float8(v, to, True)
    if to in (TP.FLOAT8E4M3FNUZ, TP.FLOAT8E5M2FNUZ):
        out = torch.where(torch.isinf(v), torch.full_like(out, float("nan")), out)
    return out
