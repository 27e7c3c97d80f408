"""Optimizer steps of the ai.onnx.preview.training domain: Adagrad, Momentum, Adam, from the
pseudo code in their specs. Inputs are R, T, then the tensors, their gradients and their
accumulators, each group in the same order; outputs follow the same grouping."""

from __future__ import annotations

import torch

from ..lowering import optimizer_groups
from ._util import scalar
from .registry import lowers

_DOMAIN = "ai.onnx.preview.training"


@lowers("Adagrad", 1, domain=_DOMAIN)
def adagrad(node, r, t, *tensors, decay_factor=0.0, epsilon=1e-6, norm_coefficient=0.0):
    xs, gs, hs = optimizer_groups(tensors, 3)
    rate = float(scalar(r)) / (1 + float(scalar(t)) * decay_factor)
    new_x, new_h = [], []
    for x, g, h in zip(xs, gs, hs):
        g_reg = norm_coefficient * x + g
        h_new = h + g_reg * g_reg
        new_x.append((x - rate * g_reg / (torch.sqrt(h_new) + epsilon)).to(x.dtype))
        new_h.append(h_new.to(h.dtype))
    return tuple(new_x + new_h)


@lowers("Momentum", 1, domain=_DOMAIN)
def momentum(node, r, t, *tensors, alpha, beta, mode, norm_coefficient):
    xs, gs, vs = optimizer_groups(tensors, 3)
    rate = float(scalar(r))
    beta_adj = beta if float(scalar(t)) > 0 else 1.0  # the first iteration uses beta = 1
    new_x, new_v = [], []
    for x, g, v in zip(xs, gs, vs):
        g_reg = norm_coefficient * x + g
        v_new = alpha * v + beta_adj * g_reg
        step = g_reg + alpha * v_new if mode == "nesterov" else v_new
        new_x.append((x - rate * step).to(x.dtype))
        new_v.append(v_new.to(v.dtype))
    return tuple(new_x + new_v)


@lowers("Adam", 1, domain=_DOMAIN)
def adam(node, r, t, *tensors, alpha=0.9, beta=0.999, epsilon=1e-6, norm_coefficient=0.0, norm_coefficient_post=0.0):
    xs, gs, vs, hs = optimizer_groups(tensors, 4)
    rate, step = float(scalar(r)), float(scalar(t))
    if step > 0:
        rate = rate * (1 - beta**step) ** 0.5 / (1 - alpha**step)
    new_x, new_v, new_h = [], [], []
    for x, g, v, h in zip(xs, gs, vs, hs):
        g_reg = norm_coefficient * x + g
        v_new = alpha * v + (1 - alpha) * g_reg
        h_new = beta * h + (1 - beta) * g_reg * g_reg
        x_new = x - rate * v_new / (torch.sqrt(h_new) + epsilon)
        new_x.append(((1 - norm_coefficient_post) * x_new).to(x.dtype))
        new_v.append(v_new.to(v.dtype))
        new_h.append(h_new.to(h.dtype))
    return tuple(new_x + new_v + new_h)
