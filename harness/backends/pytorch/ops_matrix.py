"""Matrix products: MatMul, Gemm, Einsum, Det, and the integer / quantized products."""

from __future__ import annotations

import torch

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


@lowers("Gemm", 6)
def gemm_6(node, a, b, c, *, alpha=1.0, beta=1.0, broadcast=0, transA=0, transB=0):  # noqa: N803 - spec names
    # Gemm-6's broadcast flag only allows what numpy broadcasting of C already does
    return gemm(node, a, b, c, alpha=alpha, beta=beta, transA=transA, transB=transB)


@lowers("Einsum", 12, 28)
def einsum(node, *xs, equation):
    if xs[0].dtype.is_floating_point:
        return torch.einsum(equation, *xs)
    return torch.einsum(equation, *[x.to(torch.float64) for x in xs]).round().to(xs[0].dtype)


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
    if per_row and zp.numel() > 1:
        zp = zp.reshape(-1, 1)
    return x - zp


@lowers("MatMulInteger", 10)
def matmul_integer(node, a, b, a_zero_point=None, b_zero_point=None):
    return torch.matmul(_centered(a, a_zero_point, per_row=True), _centered(b, b_zero_point)).to(torch.int32)


@lowers("QLinearMatMul", 10, 21)
def qlinear_matmul(node, a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp):
    acc = torch.matmul(_centered(a, a_zp, per_row=True), _centered(b, b_zp)).to(torch.float64)
    a_s = a_scale.to(torch.float64)
    a_s = a_s.reshape(-1, 1) if a_s.numel() > 1 else a_s
    y = acc * a_s * b_scale.to(torch.float64) / y_scale.to(torch.float64)
    y = torch.round(y) + y_zp.to(torch.float64)  # round half to even
    info = torch.iinfo(y_zp.dtype)
    return y.clamp(info.min, info.max).to(y_zp.dtype)
