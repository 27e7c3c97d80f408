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
from harness.fuzz_api import NAN_IEEE, ROUNDOFF, Ctx, Plan, as_list, size_of
from harness.registry import Example, Operator

from .._common import TINY, gamma, rounded_reach, unit, wide

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
                          scale_index: int = 1, compute_u: float = 0.0) -> None:
    """A standardizing op over a value of rank >= ``min_rank`` (N, C, ...): ``build(c, x)``
    returns its inputs (x first) and attributes; ``compute_u``: the roundoff of the precision the
    spec computes in whatever the input type (a ``stash_type``)."""

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

    op.fuzz(nan=NAN_IEEE, ulps=16.0, bound=standardized_bound(axes_of, scale_of), stable=well_conditioned(axes_of),
            compute_u=compute_u)(plan)


def take_with_axis(c: Ctx) -> tuple[Any, int] | None:
    """LayerNormalization's, RMSNormalization's and LpNormalization's start in a generated graph:
    a float value holding elements and an axis of it (negative half the time); None when the
    graph has no such value."""
    x = c.take("float", 0, lambda v: v.rank >= 1 and v.size > 0)
    if x is None:
        return None
    return x, c.pick(x.rank) - (x.rank if c.pick(2) else 0)


def scaled_plan(c: Ctx, bias: bool) -> Plan | None:
    """LayerNormalization's (``bias``) and RMSNormalization's plan in a generated graph: X and an
    axis (:func:`take_with_axis`), a scale over the normalized axes (LayerNormalization: half the
    time a bias too), epsilon 1e-5 or 1e-2."""
    taken = take_with_axis(c)
    if taken is None:
        return None
    x, axis = taken
    norm_shape = x.shape[axis:]
    ins = [x, c.const(c.floats(norm_shape, 0.5, 1.5))]
    if bias and c.pick(2):
        ins.append(c.const(c.floats(norm_shape)))
    return Plan(ins, {"axis": axis, "epsilon": c.choice([1e-5, 1e-2])}, n_acc=size_of(norm_shape), n_outputs=1)


def edge(inputs: list, attrs: dict | None = None, name: str = "") -> Example:
    return Example(list(inputs), dict(attrs or {}), name=name)


def stage_one_bound(xw: np.ndarray, axes: tuple[int, ...], epsilon: float, label_s: str) -> tuple[np.ndarray, ...]:
    """How far a standardization of each group over ``axes`` evaluated with every step rounded in
    the type ``label_s`` (the stash or accumulation type; unit roundoff u_s) lands from the exact
    one, to first order in u_s (Higham, Accuracy and Stability, 3.1 and 4.2), for a group of n
    elements:

    * Mean = sum(x) / n: n - 1 additions and a division (exact when n is a power of two),
      |dMean| <= gamma_n mean|x| (gamma_(n-1) for such n: 0 for one element);
    * D = X - Mean: dMean plus one rounding, u_s |D|;
    * Var = sum(D * D) / n: the first-order effect of dMean cancels (sum D = 0), the squares,
      the sum and the division round: relative gamma_(n+2), plus 2 u_s from D's roundings;
      Var + epsilon one more: gamma_(n+5) (Var + epsilon) in all;
    * InvStdDev = 1 / sqrt(Var + epsilon): half the relative error of its argument, plus the
      square root's and the division's roundings: rho = gamma_(n+5) / 2 + 2 u_s;
    * Normalized = D * InvStdDev: |dN| <= |dMean| InvStdDev + |N| (rho + 2 u_s) (D's rounding
      and the product's);
    * underflow: a step whose result is subnormal loses up to t = half the type's smallest
      subnormal, absolutely: n + 1 such losses in Mean, one in D, 2n + 2 in Var + epsilon (the
      squares of subnormal deviations vanish), which moves InvStdDev by InvStdDev^3 / 2 times that:
      |dN| grows by ((n + 2) InvStdDev + |D| InvStdDev^3 (n + 1)) t.

    The condition of the normalization is mean|x| / sqrt(Var + epsilon): a group whose mean is
    large against its spread amplifies the mean's error. Returns Normalized, its bound, Mean, its
    bound, InvStdDev and its bound (float64; the statistics keep the reduced axes)."""
    n = int(np.prod([xw.shape[a] for a in axes])) if axes else 1
    u_s, t = ROUNDOFF[label_s], TINY[label_s] / 2
    with np.errstate(all="ignore"):
        mean = xw.mean(axis=axes, keepdims=True)
        d = xw - mean
        inv = 1.0 / np.sqrt((d * d).mean(axis=axes, keepdims=True) + f32(epsilon))
        norm = d * inv
        # n - 1 additions, and a division by n that is exact when n is a power of two (a group of
        # one element: its mean is itself, D = 0 exactly)
        mean_err = gamma(n - 1 + (n & (n - 1) != 0), u_s) * np.abs(xw).mean(axis=axes, keepdims=True)
        rho = gamma(n + 5, u_s) / 2 + 2 * u_s
        norm_err = mean_err * inv + np.abs(norm) * (rho + 2 * u_s) + ((n + 2) * inv + np.abs(d) * inv**3 * (n + 1)) * t
        mean_err = mean_err + (n + 1) * t
    return norm, norm_err, mean, mean_err, inv, rho * inv


def scaled_bound(norm: np.ndarray, norm_err: np.ndarray, s: Any, b: Any, like: np.ndarray, k: int, cast_ours: bool) -> np.ndarray:
    """Y = Normalized * Scale + B in the output type T (unit roundoff u) from a Normalized off by
    ``norm_err``: before the sum's last rounding, |dY| <= |Scale| dN + k u |N Scale|, k counting the
    roundings on the way (the product's; a cast of Normalized to T where the stage-one type differs;
    one more where our oracle casts it too, ``cast_ours``, as the spec's GroupNormalization-21
    does), plus half T's smallest subnormal for each of the k + 1 roundings that may underflow;
    then the backend's last rounding against our oracle's one rounding of Y = N' * Scale + B (N'
    our Normalized, rounded to T when ``cast_ours``): ``_common.rounded_reach``."""
    u, dtype = unit(like), np.asarray(like).dtype
    with np.errstate(all="ignore"):
        n_ours = norm.astype(dtype).astype(np.float64) if cast_ours else norm
        y = n_ours * s + (0.0 if b is None else b)
        err = np.abs(s) * norm_err + k * u * np.abs(norm * s) + (k + 1) * TINY[S.label_of(dtype)] / 2
    return rounded_reach(y, np.where(np.isfinite(err), err, 0.0), like)


# -- a float64 X beyond float32's range with stash_type 1 (LayerNormalization-17, RMSNormalization-23) ------------
STASH_TEXT = ("Depending on `stash_type` attribute, the actual computation must happen in different floating-point "
              "precision. For example, if `stash_type` is 1, this operator casts all input variables to 32-bit float, "
              "perform the computation, and finally cast `Normalized` back to the original type of `X`.")


def stash_cast_point(op: Operator, version: int, reference: Callable, ours: str, taken_by: str) -> None:
    """Declare ``<Op>.stash_cast``: the groups (in every output) of a float64 X holding a finite
    value that the default float32 stash cannot hold. Kept wide (``ours``: what X / inf gives), or
    X cast to float32 first as the text's example reads (Cast: "+/- infinity if OOR"), so that
    value's Normalized is inf / inf = NaN (``taken_by``: the runtimes that read it so)."""

    def where(inputs, attrs, expected, since):
        x = np.asarray(inputs[0])
        if x.dtype != np.float64 or int(attrs.get("stash_type", 1)) != 1 or x.size == 0:
            return [None]
        axis = int(attrs.get("axis", -1)) % x.ndim
        beyond = (np.isfinite(x) & (np.abs(x) > np.finfo(np.float32).max)).any(axis=tuple(range(axis, x.ndim)), keepdims=True)
        return [np.broadcast_to(beyond, np.shape(e)) for e in expected]

    def in_float32(c) -> list:
        x32 = np.asarray(c.inputs[0]).astype(np.float32).astype(np.float64)
        return as_list(reference(x32, *c.inputs[1:], **c.attrs))[:len(c.expected)]

    def y_nan_or_ours(c) -> bool:
        got = np.asarray(c.actual[0]).astype(np.float64)[c.masks[0]]
        mine = np.asarray(c.expected[0]).astype(np.float64)[c.masks[0]]
        return bool(np.all(np.isnan(got) | np.isclose(got, mine, rtol=1e-7, atol=0)))

    op.spec_silent(
        "stash_cast", (version,), spec=STASH_TEXT,
        expected=f"stage one in at least the stash type's precision: a float64 X is not narrowed, {ours} (ONNX Runtime "
                 "and onnx.reference agree); the text's example is a cast up from float16, it names no narrowing of a wider X",
        where=where,
        invariants={"each Y element of such a group is NaN or ours": y_nan_or_ours},
        readings={f"X cast to float32 first (Cast: +-inf out of range), as {taken_by}": in_float32})
