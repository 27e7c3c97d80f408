"""Helpers shared by operator modules: wider-type evaluation and the common strategy shapes."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from harness import strategies as S
from harness.fuzz_api import ROUNDOFF
from harness.registry import Example, Operator


def wide(x: np.ndarray) -> np.ndarray:
    """Floats in float64 (a better oracle than the input type); other dtypes unchanged."""
    x = np.asarray(x)
    if S.is_float(S.label_of(x.dtype)) and x.dtype != np.float64:
        return x.astype(np.float64)
    return x


# -- rounding bounds (harness/data/tolerances.toml, ``bound``) ------------------------------------
#: the smallest positive subnormal of each type: an underflowing step loses at most half of it
TINY = {"float64": 2.0**-1074, "float32": 2.0**-149, "float16": 2.0**-24, "bfloat16": 2.0**-133}


def gamma(n: int, u: float) -> float:
    """Bound on the relative error of n roundings in a row (Higham's gamma_n = n u / (1 - n u))."""
    return n * u / (1 - n * u) if n > 0 else 0.0


def unit(x: Any) -> float:
    """The unit roundoff of x's float type (half a unit in the last place at 1)."""
    return ROUNDOFF[S.label_of(np.asarray(x).dtype)]


def rounds(v: np.ndarray, like: np.ndarray, upstream: Any = 0.0) -> np.ndarray:
    """The relative error one correctly rounded (or faithful) step that should give the exact value
    ``v`` (float64) commits in like's type: u, or 0 where v is representable there and the step's
    operands carry no error yet (``upstream`` 0): such a step returns v itself."""
    dtype = np.asarray(like).dtype
    with np.errstate(all="ignore"):
        exact = (np.asarray(v, np.float64).astype(dtype).astype(np.float64) == v) & (np.asarray(upstream) == 0)
    return np.where(exact, 0.0, unit(like))


def rounded_reach(y: np.ndarray, err: np.ndarray, like: np.ndarray) -> np.ndarray:
    """The allowance, per element, for a backend whose value before its last rounding to the
    output type lies within ``err`` of the exact result ``y`` (float64), against our expected
    output, ``y`` rounded once: rounding is monotone, so the backend's output lies between the
    roundings of y - err and y + err, and differs from ours by at most the larger of their
    distances to it (0 where err is 0: both round the same value; one unit in the last place, not
    two half units, where err is below half of one). Non-finite: 0 (NaN placement and the
    spec-silent points judge those elements)."""
    dtype = np.asarray(like).dtype
    with np.errstate(all="ignore"):
        y, err = np.asarray(y, np.float64), np.asarray(err, np.float64) * (1 + 1e-9)  # float64's own roundings of y +- err
        ours = y.astype(dtype).astype(np.float64)
        out = np.maximum(np.abs((y + err).astype(dtype).astype(np.float64) - ours), np.abs((y - err).astype(dtype).astype(np.float64) - ours))
    return np.where(np.isfinite(out), out, 0.0)


def back(result: Any, like: np.ndarray) -> np.ndarray:
    """Round a wide result to the dtype of ``like`` (round to nearest even, as casts do)."""
    with np.errstate(all="ignore"):
        return np.asarray(result).astype(np.asarray(like).dtype)


def unary_float(op: Operator, versions: tuple[int, ...], fn: Callable[..., np.ndarray], lo: float | None = None,
                hi: float | None = None, attrs: Callable[[Callable, str], dict[str, Any]] | None = None) -> None:
    """Register an elementwise op y = fn(x, **attrs) computed in float64 and rounded back,
    with a strategy over [lo, hi] and the standard edge values."""

    @op.reference(*versions)
    def reference(x, **kw):
        return back(fn(wide(x), **kw), x)

    @op.strategy(*versions)
    def draw(d, dtype, opset):
        return Example([S.arrays(d, dtype, lo=lo, hi=hi)], attrs(d, dtype) if attrs else {})

    @op.edges(*versions)
    def edges(dtype, opset):
        return [Example([S.edge_values(dtype)], name="edge_values")]
