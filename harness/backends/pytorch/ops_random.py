"""Random generators: RandomUniform(Like), RandomNormal(Like), Bernoulli, Multinomial.

The harness checks these by distribution, not by value. ``seed`` seeds a private
``torch.Generator``; without it each run draws fresh numbers.
"""

from __future__ import annotations

import torch

from . import dtypes
from .registry import lowers


def _generator(seed, device):
    gen = torch.Generator(device=device)
    if seed is not None:
        gen.manual_seed(int(seed) if float(seed).is_integer() else int(abs(seed) * 2**31))
    else:
        gen.seed()
    return gen


def _dtype(code, like=None):
    if code:
        return dtypes.carrier(code)
    return like.dtype if like is not None else torch.float32


@lowers("RandomUniform", 1, 22)
def random_uniform(node, *, dtype=1, high=1.0, low=0.0, seed=None, shape):
    gen = _generator(seed, node.device)
    out = torch.rand(list(shape), generator=gen, device=node.device, dtype=torch.float64)
    return (out * (high - low) + low).to(_dtype(dtype))


@lowers("RandomUniformLike", 1, 22)
def random_uniform_like(node, x, *, dtype=None, high=1.0, low=0.0, seed=None):
    gen = _generator(seed, node.device)
    out = torch.rand(list(x.shape), generator=gen, device=node.device, dtype=torch.float64)
    return (out * (high - low) + low).to(_dtype(dtype, x))


@lowers("RandomNormal", 1, 22)
def random_normal(node, *, dtype=1, mean=0.0, scale=1.0, seed=None, shape):
    gen = _generator(seed, node.device)
    out = torch.randn(list(shape), generator=gen, device=node.device, dtype=torch.float64)
    return (out * scale + mean).to(_dtype(dtype))


@lowers("RandomNormalLike", 1, 22)
def random_normal_like(node, x, *, dtype=None, mean=0.0, scale=1.0, seed=None):
    gen = _generator(seed, node.device)
    out = torch.randn(list(x.shape), generator=gen, device=node.device, dtype=torch.float64)
    return (out * scale + mean).to(_dtype(dtype, x))


@lowers("Bernoulli", 15, 22)
def bernoulli(node, x, *, dtype=None, seed=None):
    gen = _generator(seed, node.device)
    draw = torch.rand(list(x.shape), generator=gen, device=node.device, dtype=torch.float64) < x.to(torch.float64)
    return draw.to(_dtype(dtype, x))


@lowers("Multinomial", 7, 22)
def multinomial(node, x, *, dtype=6, sample_size=1, seed=None):
    gen = _generator(seed, node.device)
    probs = torch.softmax(x.to(torch.float64), dim=-1)  # the input holds unnormalized log-probabilities
    return torch.multinomial(probs, sample_size, replacement=True, generator=gen).to(_dtype(dtype))
