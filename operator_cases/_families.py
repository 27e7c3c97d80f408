"""Operator families as declarations: what a binary arithmetic op, a comparison, a logical op,
a bitwise op and an extreme (Max/Min) share, declared once; an operator's own file names its
numpy meaning, its versions and what is truly its own (its docstring, extra edges, a template).

Each declaration registers references, strategies and edges for the given since_versions with
the two broadcasting regimes of ``_binary_util`` (``legacy``: the ``broadcast``/``axis``
attributes of versions 1 and 6; ``modern``: multidirectional broadcasting), and the family's
spec-silent points (integer overflow, NaN in an extreme) with their readings and invariants.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from harness.fuzz_api import NAN_ASSUMED, NAN_IEEE
from harness.registry import Example, Operator

from ._binary_util import (
    arith,
    binary_template,
    compare_example,
    legacy_rhs,
    logical_template,
    pair_edges,
    pair_example,
    variadic_edges,
    variadic_example,
    variadic_nan_edges,
    variadic_template,
    wide_int_edges,
)
from ._reduce_util import (
    extreme_drawer,
    identity_high,
    identity_low,
    nan_extreme_edges,
    reduce_template,
    register_reduce,
    row_mask,
    rows_hold,
)
from ._silent_util import (
    nan_ignored,
    nan_in_result,
    nan_or_ignoring_nan,
    overflow_where,
    softmax_limit,
    wrapped_and_saturated,
    wrapped_or_saturated,
)

Draw = Callable[..., Example]


def pairwise(op: Operator, compute: Callable[[np.ndarray, np.ndarray], np.ndarray], legacy: tuple[int, ...],
             modern: tuple[int, ...], draw: Draw = pair_example) -> None:
    """References, strategies and edges of a binary elementwise op: ``compute(a, b)`` after the
    legacy right-hand side rule for ``legacy`` versions, as it is for ``modern`` ones."""
    if legacy:
        def reference_legacy(a, b, *, broadcast=0, axis=None, consumed_inputs=None):
            return compute(a, legacy_rhs(a, b, broadcast, axis))

        op.reference(*legacy)(reference_legacy)
        op.strategy(*legacy)(lambda d, dtype, opset: draw(d, dtype, legacy=True))
        op.edges(*legacy)(lambda dtype, opset: pair_edges(dtype, legacy=True))
    if modern:
        op.reference(*modern)(compute)
        op.strategy(*modern)(lambda d, dtype, opset: draw(d, dtype))
        op.edges(*modern)(lambda dtype, opset: pair_edges(dtype, legacy=False))


def arithmetic(op: Operator, ufunc: np.ufunc, exact: Callable[[Any, Any], Any], *, result: str, verb: str,
               legacy: tuple[int, ...] = (1, 6), modern: tuple[int, ...] = (7, 13, 14)) -> None:
    """Add, Sub, Mul: floats computed in float64 and rounded to the input type, integers exactly
    and wrapped (``arith``); the spec-silent integer overflow (``exact`` is the Python operator on
    unbounded ints: ``operator.add`` ...), whose text in each regime is the spec's own sentence
    "Performs element-wise binary <verb> (with ... broadcast support)"."""
    op.spec_silent(
        "int_overflow", (6,) + modern,
        spec={6: f"Performs element-wise binary {verb} (with limited broadcast support).",
              7: f"Performs element-wise binary {verb} (with Numpy-style broadcasting support)."},
        expected=f"the exact {result} wrapped modulo 2**bits (two's complement), as every integer ALU and numpy compute it",
        where=overflow_where(exact),
        invariants={f"an overflowing {result} is the exact {result} wrapped or saturated, nothing else": wrapped_or_saturated(exact)},
        readings=wrapped_and_saturated(exact))
    pairwise(op, functools.partial(arith, ufunc), legacy, modern)
    binary_template(op, nan=NAN_IEEE, ulps=1.0)


def comparison(op: Operator, ufunc: np.ufunc, legacy: tuple[int, ...], modern: tuple[int, ...], **template: Any) -> None:
    """Equal, Greater, Less and the OrEqual forms: a bool output, IEEE 754 comparison of floats
    (NaN compares false, -0.0 equals +0.0); drawn with values close together so ties occur."""

    def compare(a, b):
        return np.asarray(ufunc(a, b), dtype=bool)

    pairwise(op, compare, legacy, modern, draw=compare_example)
    binary_template(op, nan=NAN_IEEE, jumps=True, ulps=0.0, **template)


def logical(op: Operator, ufunc: np.ufunc, legacy: tuple[int, ...] = (1,), modern: tuple[int, ...] = (7,)) -> None:
    """And, Or, Xor on booleans."""
    pairwise(op, ufunc, legacy, modern)
    logical_template(op)


def bitwise(op: Operator, ufunc: np.ufunc, versions: tuple[int, ...] = (18,)) -> None:
    """BitwiseAnd, BitwiseOr, BitwiseXor: integers, the two's complement bits of signed types."""

    def compute(a, b):
        return np.asarray(ufunc(a, b)).astype(a.dtype)

    pairwise(op, compute, (), versions)


def nan_point(op: Operator, versions: tuple[int, ...], *, identity: float, spec: str, expected: str, invariant: str) -> None:
    """The spec-silent NaN of a max or min: propagated by us (IEEE 754-2019 maximum/minimum),
    ignored by the other reading (maximumNumber/minimumNumber: ``identity`` is what a NaN counts
    as then)."""
    op.spec_silent(
        "nan", versions, spec=spec, expected=f"{expected}; the text names no NaN rule", where=nan_in_result,
        invariants={invariant: nan_or_ignoring_nan(identity)},
        readings=nan_ignored(identity))


def max_pooling_nan(op: Operator, versions: tuple[int, ...], spec: str, group: str) -> None:
    """MaxPool, GlobalMaxPool, MaxRoiPool: the spec-silent NaN in a ``group`` (a window, a
    channel, a bin) that is max-pooled."""
    nan_point(op, versions, identity=-np.inf, spec=spec,
              expected=f"NaN for a {group} holding a NaN: IEEE 754-2019 maximum (numpy.max)",
              invariant=f"a {group}'s max is NaN or the max of its non-NaN cells")


def extreme(op: Operator, ufunc: np.ufunc, *, word: str, identity: float, versions: tuple[int, ...] = (1, 6, 8, 12, 13),
            same_shape: tuple[int, ...] = (1, 6)) -> None:
    """Max, Min of 1..N inputs (``same_shape`` versions need equal shapes, later ones broadcast),
    with the spec-silent NaN input."""
    name = "maximum" if identity < 0 else "minimum"
    nan_point(op, versions, identity=identity, spec=f"Element-wise {word} of each of the input tensors",
              expected=f"NaN wherever an input is NaN: IEEE 754-2019 {name} (numpy.{name})",
              invariant=f"a {word} is NaN or the {word} of the non-NaN inputs")

    def compute(*inputs, consumed_inputs=None):
        return np.asarray(functools.reduce(ufunc, inputs)).astype(inputs[0].dtype)

    op.reference(*versions)(compute)
    variadic(op, versions, same_shape, edges=_extreme_edges)
    variadic_template(op, nan=NAN_ASSUMED, ulps=0.0)


def _extreme_edges(dtype: str, broadcast: bool) -> list[Example]:
    return variadic_edges(dtype, broadcast=broadcast) + variadic_nan_edges(dtype) + wide_int_edges(dtype)


def _plain_edges(dtype: str, broadcast: bool) -> list[Example]:
    return variadic_edges(dtype, broadcast=broadcast)


def variadic(op: Operator, versions: tuple[int, ...], same_shape: tuple[int, ...], *, same_sign: bool = False,
             edges: Callable[[str, bool], list[Example]] = _plain_edges) -> None:
    """Strategies and edges of an op of 1..N inputs (Sum, Mean, Max, Min): of one shape in the
    ``same_shape`` versions, broadcast multidirectionally in the others; ``edges(dtype, broadcast)``
    the edge examples (``same_sign``: see ``variadic_example``)."""
    for group, broadcast in ((same_shape, False), (tuple(v for v in versions if v not in same_shape), True)):
        op.strategy(*group)(functools.partial(_variadic_draw, broadcast=broadcast, same_sign=same_sign))
        op.edges(*group)(functools.partial(_variadic_edges, broadcast=broadcast, edges=edges))


def _variadic_draw(d, dtype, opset, *, broadcast, same_sign):
    return variadic_example(d, dtype, broadcast=broadcast, same_sign=same_sign)


def _variadic_edges(dtype, opset, *, broadcast, edges):
    return edges(dtype, broadcast)


def extreme_reduction(op: Operator, largest: bool, attr_axes: tuple[int, ...] = (1, 11, 12, 13),
                      input_axes: tuple[int, ...] = (18, 20)) -> None:
    """ReduceMax, ReduceMin: ``axes`` an attribute in ``attr_axes`` versions, an input in
    ``input_axes`` ones; the empty set reduces to the spec's identity (-inf or the lowest value
    for a max); the spec-silent NaN of a group."""
    word, identity, initial = ("max", -np.inf, identity_low) if largest else ("min", np.inf, identity_high)
    name = "maximum" if largest else "minimum"
    nan_point(op, attr_axes + input_axes, identity=identity,
              spec=f"Computes the {word} of the input tensor's element[...]along the provided axes.",
              expected=f"NaN for a group holding a NaN: IEEE 754-2019 {name} (numpy.{word})",
              invariant=f"a {word} is NaN or the {word} of the group's non-NaN values")

    def compute(x, axes, dtype):
        return (np.max if largest else np.min)(x, axis=axes, keepdims=True, initial=initial(dtype))

    register_reduce(op, attr_axes, input_axes, compute, extreme_drawer, whole_range_ints=True, extra_edges=nan_extreme_edges)
    reduce_template(op, input_axes[0], ulps=0.0)


def open_rows(rows: np.ndarray) -> np.ndarray:
    """The rows (2-D float64) holding NaN, +inf or only -inf."""
    return np.isnan(rows).any(-1) | np.isposinf(rows).any(-1) | (rows.shape[-1] > 0) & np.isneginf(rows).all(-1)


def nan_inf_row(op: Operator, spec: dict[int, str], in_range: tuple[str, Callable[[np.ndarray], np.ndarray]],
                row_rule: tuple[str, Callable[[np.ndarray, np.ndarray], np.ndarray]]) -> None:
    """Softmax's and LogSoftmax's spec-silent row holding NaN, +inf or only -inf: NaN throughout
    by the formula in IEEE arithmetic (versions 1, 11, 13), the mathematical limit the other
    reading; the invariants: every value NaN or ``in_range`` (named, elementwise on the output's
    type), and ``row_rule(x, y)`` (named, one bool per row) on each row."""
    range_words, in_range_of = in_range
    row_words, rule = row_rule

    def values_in_range(c) -> bool:
        v = c.actual[0][c.masks[0]]
        return bool(np.all(np.isnan(v.astype(np.float64)) | in_range_of(v)))

    op.spec_silent(
        "nan_inf_row", (1, 11, 13), spec=spec,
        expected="NaN throughout a row holding NaN, +inf or only -inf: the formula in IEEE 754 arithmetic "
                 f"(NaN propagates, inf/inf and 0/0 are NaN), as {op.name}-13's function body computes it",
        where=lambda inputs, attrs, expected, since: [row_mask(inputs[0], attrs, since, open_rows)],
        invariants={range_words: values_in_range, row_words: lambda c: rows_hold(c, rule)},
        readings={"the mathematical limit (+inf entries share the mass, a row of -inf is uniform)": softmax_limit})
