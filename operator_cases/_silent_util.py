"""Shared pieces of spec-silent points (``Operator.spec_silent``, see harness/registry.py):
where in the outputs the spec leaves the result open, and invariants that hold whatever a
backend chooses there. Each operator module declares its own points with these.

The NaN choices follow IEEE 754-2019, which has two maxima: ``maximum`` propagates a NaN (our
expected choice, numpy's ``maximum``/``max``/``argmax``), ``maximumNumber`` ignores it. A backend may take
either (the ONNX text names neither), so the invariant is "NaN, or what the op gives with the
NaNs left out"; a value that is neither (a result that depends on where the NaN stood) breaks it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from harness import strategies as S
from harness.registry import SilentCheck

from ._binary_util import legacy_rhs


def is_float(x: Any) -> bool:
    return S.is_float(S.label_of(np.asarray(x).dtype))


def has_nan(x: Any) -> bool:
    return x is not None and is_float(x) and bool(np.isnan(np.asarray(x).astype(np.float64)).any())


def nan_in_result(inputs: list, attrs: dict, expected: list, since: int) -> list:
    """Open: the float output elements our reference makes NaN, when an input holds a NaN (a
    NaN made from numbers, like inf - inf, is fixed by IEEE 754 and stays closed)."""
    if not any(has_nan(x) for x in inputs):
        return [None] * len(expected)
    return [np.isnan(np.asarray(e).astype(np.float64)) if is_float(e) else None for e in expected]


def without_nan(inputs: list, fill: float) -> list:
    """The inputs with every NaN replaced by ``fill`` (-inf for a max: a NaN never wins)."""
    return [np.where(np.isnan(x), np.asarray(fill, dtype=x.dtype), x) if has_nan(x) else x for x in inputs]


def first_output(result: Any) -> np.ndarray:
    return np.asarray(result[0] if isinstance(result, (list, tuple)) else result)


def nan_or_ignoring_nan(fill: float) -> Callable[[SilentCheck], bool]:
    """Invariant: every open element of output 0 is NaN (IEEE maximum/minimum) or the reference's
    result with the NaNs left out (maximumNumber/minimumNumber: NaN replaced by ``fill``)."""

    def holds(c: SilentCheck) -> bool:
        mask = c.masks[0]
        got = np.asarray(c.actual[0]).astype(np.float64)[mask]
        other = first_output(c.reference(*without_nan(c.inputs, fill), **c.attrs)).astype(np.float64)
        other = np.broadcast_to(other, mask.shape)[mask]
        return bool(np.all(np.isnan(got) | (got == other)))

    return holds


def _clip_inputs(inputs: list, fill: float | None, free: bool) -> list:
    """A clip's inputs with the NaN of x taken as ``fill`` (None: kept), and with ``free`` a NaN
    bound (Clip-11 on: inputs min and max) taken as one that clips nothing (-inf, +inf)."""
    x = without_nan(inputs[:1], fill)[0] if fill is not None else inputs[0]
    bounds = list(inputs[1:])
    if free:
        bounds = [without_nan([b], edge)[0] if b is not None else None for b, edge in zip(bounds, (-np.inf, np.inf))]
    return [x, *bounds]


def nan_or_bound(c: SilentCheck) -> bool:
    """Invariant of a clip: every open element of output 0 is NaN or what the reference gives
    with the NaN of x taken as -inf or as +inf (the lower or the upper bound), a NaN bound
    clipping nothing or kept."""
    mask = c.masks[0]
    got = np.asarray(c.actual[0]).astype(np.float64)[mask]
    ok = np.isnan(got)
    for fill in (None, -np.inf, np.inf):
        for free in (False, True):
            want = first_output(c.reference(*_clip_inputs(c.inputs, fill, free), **c.attrs)).astype(np.float64)[mask]
            ok |= got == want
    return bool(np.all(ok))


def exact_ints(fn: Callable[[Any, Any], Any], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``fn`` on the values as Python ints (no overflow), broadcast."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    return np.asarray(np.frompyfunc(lambda x, y: fn(int(x), int(y)), 2, 1)(a, b), dtype=object)


def _operands(inputs: list, attrs: dict) -> tuple[np.ndarray, np.ndarray]:
    """A and B, B reshaped for the legacy ``broadcast``/``axis`` attributes (versions 1 and 6)."""
    a, b = (np.asarray(x) for x in inputs[:2])
    if attrs.get("broadcast"):
        b = legacy_rhs(a, b, attrs["broadcast"], attrs.get("axis"))
    return a, b


def overflow_where(fn: Callable[[Any, Any], Any]) -> Callable[[list, dict, list, int], list]:
    """Open: the integer elements whose exact result ``fn(a, b)`` is outside the type."""

    def where(inputs: list, attrs: dict, expected: list, since: int) -> list:
        a, b = _operands(inputs, attrs)
        label = S.label_of(a.dtype)
        if not S.is_int(label) or a.size == 0 or b.size == 0:
            return [None]
        lo, hi = S.finite_range(label)
        exact = exact_ints(fn, a, b)
        return [np.asarray(np.frompyfunc(lambda v: v < lo or v > hi, 1, 1)(exact), dtype=bool)]

    return where


def wrapped_or_saturated(fn: Callable[[Any, Any], Any]) -> Callable[[SilentCheck], bool]:
    """Invariant: every open element is the exact result wrapped modulo 2**bits or saturated to
    the type's range, nothing else."""

    def holds(c: SilentCheck) -> bool:
        a, b = _operands(c.inputs, c.attrs)
        label = S.label_of(a.dtype)
        lo, hi = S.finite_range(label)
        exact = exact_ints(fn, a, b)[c.masks[0]]
        got = np.asarray(c.actual[0])[c.masks[0]]
        span = hi - lo + 1
        for v, g in zip(exact, got):
            if int(g) not in ((v - lo) % span + lo, min(max(v, lo), hi)):
                return False
        return True

    return holds


# -- readings (each computed: ``Operator.spec_silent(readings=...)``) ---------------------------------
def nan_ignored(fill: float) -> dict[str, Callable[[SilentCheck], list]]:
    """The reading that leaves NaNs out (IEEE 754-2019 maximumNumber/minimumNumber): the
    reference on the inputs with every NaN replaced by ``fill``."""

    def reading(c: SilentCheck) -> list:
        e = np.asarray(c.expected[0])
        return [np.broadcast_to(first_output(c.reference(*without_nan(c.inputs, fill), **c.attrs)), e.shape).astype(e.dtype)]

    return {"NaN ignored (IEEE 754-2019 maximumNumber / minimumNumber: the NaNs left out)": reading}


def nan_as_bound(c: SilentCheck, fill: float | None, free: bool = False) -> list:
    """A clip with the NaN input taken as ``fill`` (-inf: the lower bound wins; +inf: the upper;
    None: kept), and with ``free`` a NaN bound taken as one that clips nothing."""
    e = np.asarray(c.expected[0])
    return [first_output(c.reference(*_clip_inputs(c.inputs, fill, free), **c.attrs)).astype(e.dtype)]


def wrapped_and_saturated(fn: Callable[[Any, Any], Any]) -> dict[str, Callable[[SilentCheck], list]]:
    """The two readings of integer overflow: two's complement wrap and saturation to the type's range."""

    def reading(saturate: bool) -> Callable[[SilentCheck], list]:
        def compute(c: SilentCheck) -> list:
            a, b = _operands(c.inputs, c.attrs)
            lo, hi = S.finite_range(S.label_of(a.dtype))
            span = hi - lo + 1
            exact = exact_ints(fn, a, b)
            got = np.frompyfunc(lambda v: min(max(v, lo), hi) if saturate else (v - lo) % span + lo, 1, 1)(exact)
            return [np.array(np.asarray(got, dtype=object).tolist(), dtype=a.dtype).reshape(np.shape(c.expected[0]))]
        return compute

    return {"wraps (two's complement)": reading(False), "saturates to the type's range": reading(True)}


def softmax_limit(c: SilentCheck) -> list:
    """Softmax (LogSoftmax) of a row holding +inf or only -inf as its mathematical limit: the +inf
    entries share the mass equally (the others get 0), a row of -inf is uniform; a NaN stays NaN."""
    x = np.asarray(c.inputs[0])
    e = np.asarray(c.expected[0])
    neg = np.asarray(-np.inf, dtype=x.dtype)
    with np.errstate(all="ignore"):
        shared = np.where(np.isnan(x), x, np.where(np.isposinf(x), np.zeros((), x.dtype), neg))
        uniform = np.where(np.isneginf(x), np.zeros((), x.dtype), x)
        y1 = first_output(c.reference(shared, **c.attrs)).astype(np.float64)
        y2 = first_output(c.reference(uniform, **c.attrs)).astype(np.float64)
    return [np.where(np.isnan(y1), y2, y1).astype(e.dtype)]
