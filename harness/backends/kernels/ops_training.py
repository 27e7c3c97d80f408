"""Optimizers of the ai.onnx.preview.training domain: Adagrad, Adam, Momentum.

Each updates n tensors at once; inputs are R, T, then n of each per-tensor input in turn
(X..., G..., ...), outputs n of each per-tensor output in turn.
"""

from __future__ import annotations

import numpy as np

from ..lowering import optimizer_groups
from ._util import scalar
from .registry import register

DOMAIN = "ai.onnx.preview.training"


def _groups(tensors, k: int) -> list[tuple]:
    """One tuple a parameter: (x, its gradient, its accumulated states)."""
    return list(zip(*optimizer_groups(tensors, k)))


@register("Adagrad", since=1, domain=DOMAIN)
def adagrad(node):
    norm = node.attrs.get("norm_coefficient", 0.0)
    decay = node.attrs.get("decay_factor", 0.0)
    eps = node.attrs.get("epsilon", 1e-6)

    def run(r, t, *tensors):
        rate = float(scalar(r)) / (1 + float(scalar(t)) * decay)
        xs, hs = [], []
        for x, g, h in _groups(tensors, 3):
            g_reg = norm * x + g
            h_new = h + g_reg * g_reg
            xs.append((x - rate * g_reg / (np.sqrt(h_new) + eps)).astype(x.dtype))
            hs.append(h_new.astype(h.dtype))
        return (*xs, *hs)

    return run


@register("Adam", since=1, domain=DOMAIN)
def adam(node):
    alpha = node.attrs.get("alpha", 0.9)
    beta = node.attrs.get("beta", 0.999)
    eps = node.attrs.get("epsilon", 1e-6)
    norm = node.attrs.get("norm_coefficient", 0.0)
    norm_post = node.attrs.get("norm_coefficient_post", 0.0)

    def run(r, t, *tensors):
        step = float(scalar(t))
        rate = float(scalar(r))
        if step > 0:
            rate = rate * np.sqrt(1 - beta**step) / (1 - alpha**step)
        xs, vs, hs = [], [], []
        for x, g, v, h in _groups(tensors, 4):
            g_reg = norm * x + g
            v_new = alpha * v + (1 - alpha) * g_reg
            h_new = beta * h + (1 - beta) * g_reg * g_reg
            x_new = (1 - norm_post) * (x - rate * v_new / (np.sqrt(h_new) + eps))
            xs.append(x_new.astype(x.dtype))
            vs.append(v_new.astype(v.dtype))
            hs.append(h_new.astype(h.dtype))
        return (*xs, *vs, *hs)

    return run


@register("Momentum", since=1, domain=DOMAIN)
def momentum(node):
    alpha = node.attrs["alpha"]
    beta = node.attrs["beta"]
    norm = node.attrs["norm_coefficient"]
    nesterov = node.attrs["mode"] == "nesterov"

    def run(r, t, *tensors):
        rate = float(scalar(r))
        beta_adj = beta if float(scalar(t)) > 0 else 1.0
        xs, vs = [], []
        for x, g, v in _groups(tensors, 3):
            g_reg = norm * x + g
            v_new = alpha * v + beta_adj * g_reg
            direction = g_reg + alpha * v_new if nesterov else v_new
            xs.append((x - rate * direction).astype(x.dtype))
            vs.append(v_new.astype(v.dtype))
        return (*xs, *vs)

    return run
