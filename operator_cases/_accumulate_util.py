"""Accumulation width in float16 / bfloat16 / float32 (issue 32, "draw what is still avoided"): a reduction
whose result is representable in the input type while its naive running sum in that type is not
(60000 + 60000 - 60000 - 30000 in float16). Where no text fixes the width (a reduction's text
says "sum", a function body that reduces in T leaves it to ReduceSum), our references accumulate
wide (float64, rounded once); the other reading is the computation done step by step in the input
type, left to right, each partial result rounded to it, computed here. Each operator declares the
point and its dedicated example set with :func:`narrow_accumulation`.

The examples reduce powers of two of the type's top binade (``top``: 2^15 in float16, 2^127 in
bfloat16): every partial sum is exact while it stays in range, so an accumulator of any width or
order that does not overflow gives our value exactly; one that overflows gives +-inf or NaN.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from harness import schema
from harness import strategies as S
from harness.registry import REGISTRY, Example, Operator, SilentCheck

#: the types whose running sum can overflow where our float64 accumulation does not. float32 since
#: a kernel campaign (issue 35): ReduceL2 and LpNormalization over values near 1e21, whose squares
#: overflow float32, give inf / 0 on ONNX Runtime, onnx.reference and the kernel engine alike; the
#: text names no accumulation type, so that reading is accepted there as it is in float16.
NARROW = ("float16", "bfloat16", "float32")


def top(dtype: str) -> float:
    """The largest power of two of the type (2^15 in float16, 2^127 in bfloat16 and float32)."""
    return float(2.0 ** np.floor(np.log2(S.finite_range(dtype)[1])))


def in_type(x: np.ndarray, red: tuple[int, ...], step: Callable, finish: Callable, start: float = 0.0) -> np.ndarray:
    """Reduce ``x`` over ``red`` (keepdims) in its own type: ``acc = step(acc, v)`` left to right
    over the reduced elements (row-major), each partial result rounded to the type, then
    ``finish(acc, n)`` rounded to it too."""
    x = np.asarray(x)
    t = x.dtype
    keep = [a for a in range(x.ndim) if a not in red]
    moved = np.transpose(x, keep + list(red)) if x.ndim else x
    rows = moved.reshape(int(np.prod([x.shape[a] for a in keep])) if keep else 1, -1).astype(np.float64)
    n = rows.shape[1]
    acc = np.full(rows.shape[0], start, dtype=t)
    with np.errstate(all="ignore"):
        for k in range(n):
            acc = np.asarray(step(acc.astype(np.float64), rows[:, k])).astype(t)
        out = np.asarray(finish(acc.astype(np.float64), n)).astype(t)
    return out.reshape(tuple(1 if a in red else s for a, s in enumerate(x.shape)))


def reduced_axes(inputs: list, attrs: dict) -> tuple[int, ...]:
    """The axes a Reduce* node reduces (attribute or input ``axes``, ``noop_with_empty_axes``)."""
    x = np.asarray(inputs[0])
    axes = attrs.get("axes")
    if axes is None and len(inputs) > 1 and inputs[1] is not None:
        axes = list(np.asarray(inputs[1]).reshape(-1))
    if axes is None or len(axes) == 0:
        return () if attrs.get("noop_with_empty_axes") else tuple(range(x.ndim))
    return tuple(sorted(int(a) % x.ndim for a in axes))


def _within(c: SilentCheck, mask: np.ndarray, rtol: float = 2.0 ** -8) -> bool:
    got = np.asarray(c.actual[0]).astype(np.float64)[mask]
    ours = np.broadcast_to(np.asarray(c.expected[0]).astype(np.float64), mask.shape)[mask]
    return bool(np.all(~np.isfinite(got) | (np.abs(got - ours) <= rtol * np.abs(ours))))


def narrow_accumulation(op: Operator, versions: tuple[int, ...], step: Callable, finish: Callable,
                        rows: Callable[[float], list[list[float]]], what: str, start: float = 0.0) -> None:
    """Declare ``<Op>.narrow_accumulation`` for these Reduce* versions and add its example set
    ("narrow_accumulation": each row of ``rows(top(dtype))`` reduced over axis 1) to their edges.
    ``step``/``finish``/``start``: the reduction done in the input type (:func:`in_type`);
    ``what``: that computation in words."""

    def computed(inputs: list, attrs: dict, expected: list) -> np.ndarray:
        x = np.asarray(inputs[0])
        return in_type(x, reduced_axes(inputs, attrs), step, finish, start).reshape(np.shape(expected[0]))

    def underflow(inputs, attrs, expected) -> np.ndarray:
        """Where the running terms underflow to 0 in the input type (the squares of values below
        the square root of its smallest subnormal) while our wide result is not 0."""
        e = np.asarray(expected[0]).astype(np.float64)
        return (e != 0) & np.isfinite(e) & (computed(inputs, attrs, expected).astype(np.float64) == 0)

    def where(inputs, attrs, expected, since):
        x = np.asarray(inputs[0])
        label = S.label_of(x.dtype)
        if label not in NARROW + ("float64",) or x.size == 0:
            return [None]
        e = np.asarray(expected[0]).astype(np.float64)
        overflow = np.isfinite(e) & ~np.isfinite(computed(inputs, attrs, expected).astype(np.float64))
        return [(overflow if label in NARROW else False) | underflow(inputs, attrs, expected)]

    def within(c: SilentCheck) -> bool:
        zero_allowed = underflow(c.inputs, c.attrs, c.expected) & (np.asarray(c.actual[0]).astype(np.float64) == 0)
        return _within(c, c.masks[0] & ~zero_allowed)

    op.spec_silent(
        "narrow_accumulation", versions,
        spec=narrow_spec(op, versions), expected=EXPECTED, where=where,
        invariants={"a finite value there is ours (to 2^-8 relative), or 0 where the terms underflow in the input type: "
                    "no order that neither overflows nor underflows changes the result": within},
        readings={f"accumulated in the input type, left to right ({what})": lambda c: [computed(c.inputs, c.attrs, c.expected)]})

    for since in versions:
        entry = REGISTRY[(op.domain, op.name, since)]
        entry.edges = _with_examples(entry.edges, rows, len(schema.schema_at(op.name, since).inputs) > 1)


def _with_examples(edges: Callable | None, rows: Callable[[float], list[list[float]]], axes_input: bool) -> Callable:
    def example(x: np.ndarray, name: str) -> Example:
        inputs: list[Any] = [x, np.array([1], dtype=np.int64)] if axes_input else [x]
        return Example(inputs, {"keepdims": 0} if axes_input else {"axes": [1], "keepdims": 0}, name=name)

    def more(dtype: str, opset: int) -> list[Example]:
        out = list(edges(dtype, opset)) if edges else []
        if dtype in NARROW:
            out.append(example(np.array(rows(top(dtype)), dtype=np.float64).astype(S.np_dtype(dtype)), "narrow_accumulation"))
        if dtype in NARROW + ("float64",):
            # values whose squares underflow the type (a fuzz campaign: ReduceL2 of -8.5e-40 in float32 gave 0)
            v = float(np.sqrt(S.smallest_subnormal(dtype))) / 4
            out.append(example(np.array([[v, -v, v, v], [1.0, 2.0, v, 0.5]]).astype(S.np_dtype(dtype)), "narrow_underflow"))
        return out

    return more


# -- normalizations ------------------------------------------------------------------------------
def add_examples(op: Operator, versions: tuple[int, ...], make: Callable[[str, int], list[Example]]) -> None:
    """Append ``make(dtype, since)`` to the edge examples of these op-versions (an example set kept
    apart from the operator's own edges)."""
    for since in versions:
        entry = REGISTRY[(op.domain, op.name, since)]
        entry.edges = _appended(entry.edges, make, since)


def _appended(edges: Callable | None, make: Callable[[str, int], list[Example]], since: int) -> Callable:
    def more(dtype: str, opset: int) -> list[Example]:
        return (list(edges(dtype, opset)) if edges else []) + list(make(dtype, since))

    return more


def running_sum(x: np.ndarray, red: tuple[int, ...], square: bool = False, absolute: bool = False) -> np.ndarray:
    """The sum over ``red`` (keepdims) of x, x*x or |x| accumulated in x's type (:func:`in_type`)."""
    term = (lambda v: v * v) if square else np.abs if absolute else (lambda v: v)
    return in_type(x, red, lambda a, v: a + term(v), lambda a, n: a)


def standardized_in_type(x: np.ndarray, red: tuple[int, ...], epsilon: float, wide_mean: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(x - mean) / sqrt(var + epsilon) over ``red`` with every step in x's type (the sums by
    :func:`running_sum`; ``wide_mean``: the mean alone accumulated wide and rounded to the type, as
    numpy's float16 mean does), and the groups (keepdims) whose sum or sum of squares overflowed."""
    t = x.dtype
    n = int(np.prod([x.shape[a] for a in red]))
    total = np.sum(x.astype(np.float64), axis=red, keepdims=True) if wide_mean else running_sum(x, red)
    with np.errstate(all="ignore"):
        mean = (total.astype(np.float64) / n).astype(t)
        d = (x.astype(np.float64) - mean.astype(np.float64)).astype(t)
        squares = running_sum(d, red, square=True)
        var = (squares.astype(np.float64) / n).astype(t)
        std = np.sqrt((var.astype(np.float64) + np.float32(epsilon)).astype(t).astype(np.float64)).astype(t)
        y = (d.astype(np.float64) / std.astype(np.float64)).astype(t)
    return y, ~np.isfinite(total.astype(np.float64)) | ~np.isfinite(squares.astype(np.float64))


def finite_is_ours_or(c: SilentCheck, other: np.ndarray) -> bool:
    """Invariant: a finite open element is ours (to 2^-8 relative) or ``other`` (broadcast)."""
    mask = c.masks[0]
    got = np.asarray(c.actual[0]).astype(np.float64)[mask]
    ours = np.asarray(c.expected[0]).astype(np.float64)[mask]
    alt = np.broadcast_to(np.asarray(other, dtype=np.float64), mask.shape)[mask]
    return bool(np.all(~np.isfinite(got) | (np.abs(got - ours) <= 2.0 ** -8 * np.abs(ours)) | (got == alt)))


def narrow_spec(op: Operator, versions: tuple[int, ...]) -> dict[int, str]:
    return {v: " ".join(schema.schema_at(op.name, v).doc.split()) for v in versions}


EXPECTED = ("accumulated wide (float64) and rounded once to the input type: the result is representable, so it is "
            "given, whatever a running sum in the input type would do")
