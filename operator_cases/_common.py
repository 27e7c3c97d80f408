"""Helpers shared by operator modules: wider-type evaluation and the common strategy shapes."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator


def wide(x: np.ndarray) -> np.ndarray:
    """Floats in float64 (a better oracle than the input type); other dtypes unchanged."""
    x = np.asarray(x)
    if S.is_float(S.label_of(x.dtype)) and x.dtype != np.float64:
        return x.astype(np.float64)
    return x


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
