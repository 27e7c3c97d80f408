"""Shared pieces of the normalization operators (ONNX spec: InstanceNormalization,
GroupNormalization, RMSNormalization, MeanVarianceNormalization, LpNormalization, LRN):
standardizing groups in float64, drawing well-conditioned groups, the common edge inputs, and
the fuzz template of the standardizing ops.

Precision. Our oracle computes the statistics in float64 and rounds once per output; where a
version says that stage one happens in ``stash_type`` precision and that "the normalized results"
are cast back to the type of X before the scale and shift (GroupNormalization-21,
RMSNormalization-23), the normalized values are rounded to that type first (the spec's cast),
then scaled and shifted in float64 and rounded once more. Float attributes (epsilon, alpha,
beta, bias) are FLOATs in the model, so they are rounded to float32 first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan, as_list, size_of
from harness.registry import Example, Operator

from ._common import wide

st = S.st


def f32(value: Any) -> float:
    """A FLOAT attribute as the model stores it."""
    return float(np.float32(value))


def standardize(xw: np.ndarray, axes: tuple[int, ...], epsilon: float | None) -> np.ndarray:
    """(x - mean) / sqrt(var + epsilon) over ``axes`` (population variance), in float64;
    ``epsilon`` None: no epsilon at all (MeanVarianceNormalization's formula)."""
    with np.errstate(all="ignore"):
        if any(xw.shape[a] == 0 for a in axes):  # empty groups give no element to normalize
            return np.zeros(xw.shape)
        mean = xw.mean(axis=axes, keepdims=True)
        d = xw - mean
        var = (d * d).mean(axis=axes, keepdims=True)
        return d / np.sqrt(var if epsilon is None else var + f32(epsilon))


def channel_param(p: Any, rank: int) -> np.ndarray:
    """A per-channel (C) parameter shaped to broadcast over (N, C, D1..Dn)."""
    p = wide(np.asarray(p)).reshape(-1)
    return p.reshape((1, p.size) + (1,) * (rank - 2))


def spread(x: np.ndarray, axes: tuple[int, ...], dtype: str) -> np.ndarray:
    """The same array with every group (the elements sharing the coordinates outside ``axes``)
    of two or more elements given a variance >= 0.25, so drawn cases are well conditioned
    (a near-constant group makes 1 / sqrt(var + epsilon) amplify every rounding)."""
    if x.size == 0:
        return x
    rest = [a for a in range(x.ndim) if a not in axes]
    moved = np.moveaxis(x.astype(np.float64), rest + list(axes), list(range(x.ndim)))
    lead = int(np.prod([x.shape[a] for a in rest])) if rest else 1
    flat = moved.reshape(lead, -1).copy()
    n = flat.shape[1]
    if n >= 2:
        pattern = np.where(np.arange(n) % 2 == 0, 1.0, -1.0) * (1 + np.arange(n) % 3)
        for g in range(lead):
            if flat[g].var() < 0.25:
                flat[g] = np.round(flat[g] * 0.25) + pattern
    back_ = np.moveaxis(flat.reshape(moved.shape), list(range(x.ndim)), rest + list(axes))
    return back_.astype(S.np_dtype(dtype))


def draw_epsilon(d: Callable, attrs: dict[str, Any], positive_only: bool = False) -> None:
    """Sometimes a non-default epsilon (0 only where ``positive_only`` is False: every group
    has a variance >= 0.25 in drawn cases)."""
    if d(st.booleans()):
        attrs["epsilon"] = d(st.sampled_from([1e-5, 1e-3, 0.1, 1e-2] + ([] if positive_only else [0.0])))


def arr(dtype: str) -> Callable[[Any], np.ndarray]:
    t = S.np_dtype(dtype)
    return lambda v: np.array(v, dtype=np.float64).astype(t)


def specials(dtype: str, shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    """Inputs of ``shape`` (N, C, ...; C >= 2 and >= 2 elements per channel) for the edge
    examples: a constant first channel; NaN, +inf and -inf in channel 0 of batch 0 and an
    ordinary rest; -0.0 and subnormals."""
    a = arr(dtype)
    size = int(np.prod(shape))
    ramp = (np.arange(size) * 7 % 11 - 5).astype(np.float64).reshape(shape)
    const = ramp.copy()
    const[:, 0] = 1.5
    nan = ramp.copy()
    flat0 = nan[0, 0].reshape(-1)
    flat0[0], flat0[-1] = np.nan, np.inf
    nan[0, 0] = flat0.reshape(nan[0, 0].shape)
    inf = ramp.copy()
    flat1 = inf[0, 1].reshape(-1)
    flat1[0] = -np.inf
    inf[0, 1] = flat1.reshape(inf[0, 1].shape)
    tiny = S.smallest_subnormal(dtype)
    sub = np.where(ramp == 0, -0.0, np.sign(ramp) * tiny * (1 + np.abs(ramp) % 3))
    return {"plain": a(ramp), "constant_channel": a(const), "nan_inf": a(nan), "neg_inf": a(inf), "subnormal_signed_zero": a(sub)}


# -- fuzz template -------------------------------------------------------------------------------
def standardized_bound(axes_of: Callable[[np.ndarray, dict], tuple[int, ...]], scale_of: Callable[[list, np.ndarray], np.ndarray],
                       epsilon_default: float = 1e-5) -> Callable[[Callable, list, dict], np.ndarray]:
    """bound(ref, ins, attrs): max|x| * InvStdDev * |scale| + |y| (+ |bias|): an
    implementation's mean is off by about n * u * max|x|, and (x - mean) * InvStdDev * scale
    amplifies that."""

    def bound(ref: Callable, ins: list, attrs: dict) -> np.ndarray:
        x = np.nan_to_num(ins[0])
        axes = axes_of(x, attrs)
        inv = 1.0 / np.sqrt(np.var(x, axis=axes, keepdims=True) + attrs.get("epsilon", epsilon_default))
        b = np.max(np.abs(x), axis=axes, keepdims=True) * inv * scale_of(ins, x)
        return b + np.abs(np.asarray(as_list(ref(*ins, **attrs))[0], dtype=np.float64))

    return bound


def well_conditioned(axes_of: Callable[[np.ndarray, dict], tuple[int, ...]]) -> Callable[[list, dict, float], bool]:
    """stable(inputs, attrs, u): every group's spread is far above the roundoff of its values
    (a near-constant group makes the normalized value depend on rounding)."""

    def stable(ins: list, attrs: dict, u: float) -> bool:
        x = ins[0].wide
        if x.size == 0 or np.isnan(x).any():
            return True
        axes = axes_of(x, attrs)
        spread_ = np.sqrt(np.var(x, axis=axes))
        top = np.max(np.abs(x), axis=axes)
        return bool(np.all(spread_ > 1e3 * u * np.maximum(top, 1e-30) + 1e-3 * (ins[0].err.max() if ins[0].err.size else 0)))

    return stable


def channel_norm_template(op: Operator, *, axes_of: Callable[[np.ndarray, dict], tuple[int, ...]],
                          build: Callable[[Ctx, Any], tuple[list, dict] | None], min_rank: int = 3,
                          scale_index: int = 1) -> None:
    """A standardizing op over a value of rank >= ``min_rank`` (N, C, ...): ``build(c, x)``
    returns its inputs (x first) and attributes."""

    def plan(c: Ctx) -> Plan | None:
        x = c.take("float", 0, lambda v: v.rank >= min_rank and v.size > 0 and v.shape[1] >= 1)
        if x is None:
            return None
        made = build(c, x)
        if made is None:
            return None
        ins, attrs = made
        return Plan(ins, attrs, n_acc=size_of(tuple(x.shape[a] for a in axes_of(x.wide, attrs))), n_outputs=1)

    def scale_of(ins: list, x: np.ndarray) -> np.ndarray:
        s = np.abs(np.nan_to_num(np.asarray(ins[scale_index], dtype=np.float64))).max() if len(ins) > scale_index else 1.0
        return np.asarray(s)

    op.fuzz(nan=NAN_IEEE, ulps=16.0, bound=standardized_bound(axes_of, scale_of), stable=well_conditioned(axes_of))(plan)


def take_with_axis(c: Ctx) -> tuple[Any, int] | None:
    """LayerNormalization's, RMSNormalization's and LpNormalization's start in a generated graph:
    a float value holding elements and an axis of it (negative half the time); None when the
    graph has no such value."""
    x = c.take("float", 0, lambda v: v.rank >= 1 and v.size > 0)
    if x is None:
        return None
    return x, c.pick(x.rank) - (x.rank if c.pick(2) else 0)


def edge(inputs: list, attrs: dict | None = None, name: str = "") -> Example:
    return Example(list(inputs), dict(attrs or {}), name=name)
