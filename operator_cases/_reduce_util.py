"""Helpers shared by the reduce family: the Reduce* operators (axes as an attribute in old
versions, as an optional input later), ArgMax/ArgMin, the Softmax-like ops, and exact
integer / float64 evaluation used by the matrix ops.

Floats are evaluated in float64 and rounded back to the input type; integers are evaluated
with Python ints (object arrays), so an oracle never overflows silently: a result outside the
output type raises (the strategies keep integer results in range, because the spec says
nothing about integer overflow in these ops).
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np

from harness import schema
from harness import strategies as S
from harness.fuzz_api import Ctx, Plan, Value, axes_subset, margin, size_of
from harness.registry import Example, Operator

from ._silent_util import has_nan, nan_ignored

st = S.st


# -- evaluation ------------------------------------------------------------------------------
def exact(x: np.ndarray) -> np.ndarray:
    """float64 for floats, Python ints (object) for integers, bool unchanged."""
    x = np.asarray(x)
    label = S.label_of(x.dtype)
    if S.is_float(label):
        return x.astype(np.float64)
    if S.is_int(label):
        return x.astype(object)
    return x


def to_dtype(result: Any, dtype: np.dtype) -> np.ndarray:
    """Round a float64 result to a float dtype, or convert an exact integer result (raising if
    it does not fit: the strategies must keep integer results in range)."""
    result = np.asarray(result)
    label = S.label_of(dtype)
    if S.is_int(label):
        lo, hi = S.finite_range(label)
        flat = [int(v) for v in result.reshape(-1)]
        if any(v < lo or v > hi for v in flat):
            raise OverflowError(f"integer result out of range for {label}: the strategy must avoid it")
        return np.array(flat, dtype=object).astype(dtype).reshape(result.shape)
    with np.errstate(all="ignore"):
        return result.astype(dtype)


def norm_axes(axes: Any, rank: int) -> tuple[int, ...]:
    return tuple(sorted(int(a) + rank if int(a) < 0 else int(a) for a in np.asarray(axes, dtype=np.int64).reshape(-1)))


def drop_axes(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def per_group(x: np.ndarray, axes: tuple[int, ...], fix: Callable[[list], list]) -> np.ndarray:
    """Apply ``fix`` (a list of Python values -> list) to every group of elements reduced
    together over ``axes``; used to keep integer results inside the spec's defined domain."""
    if x.size == 0:
        return x
    keep = [a for a in range(x.ndim) if a not in axes]
    perm = keep + list(axes)
    moved = np.transpose(x, perm)
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    rows = moved.reshape(-1, n).astype(object)
    new = np.array([fix([int(v) if S.is_int(S.label_of(x.dtype)) else v for v in row]) for row in rows], dtype=object)
    return to_dtype(new.reshape(moved.shape).transpose(np.argsort(perm)), x.dtype)


# -- drawing axes --------------------------------------------------------------------------------
def draw_axes(d: Callable, rank: int, min_size: int = 1, negative: bool = True) -> list[int]:
    """A subset of the axes (each in positive or, if allowed, negative form), in a drawn order."""
    chosen = d(st.lists(st.integers(0, rank - 1), min_size=min_size, max_size=rank, unique=True))
    return [a - rank if negative and d(st.booleans()) else a for a in chosen]


def draw_shape(d: Callable, min_rank: int = 0, max_rank: int = 4, max_side: int = 4) -> tuple[int, ...]:
    """A shape whose rank is spread over [min_rank, max_rank] (rank 0 is one choice among
    several) and which has an empty dimension in about one draw in eight: the edge examples
    cover the degenerate shapes, the drawn ones should mostly hold values."""
    # Hypothesis favours the first choice and 0, so the rare outcomes are mapped to other values
    ranks = [r for r in (2, 1, 3, 4, 2, 3) if min_rank <= r <= max_rank] or [min_rank]
    rank = min_rank if min_rank == 0 and d(st.integers(0, 9)) == 5 else d(st.sampled_from(ranks))
    rank = min(max(rank, min_rank), max_rank)
    min_side = 0 if d(st.integers(0, 7)) == 5 else 1
    return S.shapes(d, rank, rank, min_side, max_side)


def draw_keepdims(d: Callable, attrs: dict) -> int:
    k = d(st.sampled_from([None, 0, 1]))
    if k is not None:
        attrs["keepdims"] = k
    return 1 if k is None else k


# -- the Reduce* operators --------------------------------------------------------------------------
def empty_set_defined(op: str, since: int) -> bool:
    """Whether this op-version's text says what a reduction over an empty set yields."""
    doc = schema.schema_at(op, since).doc or ""
    return "empty set of values yields" in doc and "yields undefined" not in doc


def register_reduce(op: Operator, attr_versions: tuple[int, ...], input_versions: tuple[int, ...],
                    compute: Callable[[np.ndarray, tuple[int, ...], str], np.ndarray],
                    values: Callable[[Callable, str, tuple[int, ...]], np.ndarray],
                    fix: Callable[[list, str], list] | None = None,
                    empty_ok: Callable[[str], bool] = lambda dtype: True,
                    edge_values: Callable[[str], np.ndarray] | None = None,
                    whole_range_ints: bool = False,
                    extra_edges: Callable[[str, int, Callable], list[Example]] | None = None) -> None:
    """Register a Reduce* operator.

    ``compute(xw, axes, dtype)`` reduces the exact/wide array ``xw`` (of input type ``dtype``)
    over ``axes`` with keepdims=True;
    ``values(d, dtype, shape, n)`` draws the data (``n``: the number of elements reduced
    together, which bounds a float grid); ``fix(row, dtype)`` adjusts each reduced group
    (Python values) so that an integer result is defined; ``empty_ok(dtype)`` says whether the
    spec's empty-set value exists for that dtype (and the op-version's text must give one);
    ``edge_values(dtype)`` is a 1-D array of single values the op is defined on (each reduced
    alone; reduced all together too for floats, and for integers when ``whole_range_ints``:
    ops that cannot overflow, like Max and Min).
    """

    def run(data: np.ndarray, red: tuple[int, ...], keepdims: int) -> np.ndarray:
        data = np.asarray(data)
        out = compute(exact(data), red, S.label_of(data.dtype))
        out = np.asarray(out).reshape(tuple(1 if i in red else s for i, s in enumerate(data.shape)))
        if not keepdims:
            out = out.reshape(drop_axes(data.shape, red))
        return to_dtype(out, data.dtype)

    if attr_versions:
        @op.reference(*attr_versions)
        def reference_attr(data, *, axes=None, keepdims=1):
            red = tuple(range(np.ndim(data))) if axes is None else norm_axes(axes, np.ndim(data))
            return run(data, red, keepdims)

    if input_versions:
        @op.reference(*input_versions)
        def reference_input(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
            if axes is None or np.size(axes) == 0:
                red = () if noop_with_empty_axes else tuple(range(np.ndim(data)))
            else:
                red = norm_axes(axes, np.ndim(data))
            return run(data, red, keepdims)

    def finish(d: Callable | None, dtype: str, shape: tuple[int, ...], red: tuple[int, ...], since: int,
               x: np.ndarray | None = None) -> tuple[tuple[int, ...], np.ndarray]:
        n = int(np.prod([shape[a] for a in red])) if red else 1
        groups = int(np.prod(drop_axes(shape, red))) if shape else 1
        if n == 0 and groups > 0 and not (empty_set_defined(op.name, since) and empty_ok(dtype)):
            # the spec gives no value for this reduction over an empty set: make it non-empty
            shape = tuple(1 if (i in red and s == 0) else s for i, s in enumerate(shape))
        if x is None:
            x = values(d, dtype, shape, n or 64)
        if fix is not None:
            x = per_group(x, red, lambda row: fix(row, dtype))
        return shape, x

    def strategy(input_axes: bool) -> Callable:
        def draw(d, dtype, opset):
            since = schema.schema_at(op.name, opset).since_version
            shape = draw_shape(d)
            rank = len(shape)
            attrs: dict[str, Any] = {}
            axes = None
            if input_axes:
                modes = ["absent", "empty"] + (["subset"] * 3 if rank else [])
                mode = d(st.sampled_from(modes))
                noop = d(st.integers(0, 1))
                if noop or d(st.booleans()):
                    attrs["noop_with_empty_axes"] = noop
                if mode == "subset":
                    axes = np.array(draw_axes(d, rank), dtype=np.int64)
                    red = norm_axes(axes, rank)
                else:
                    axes = np.zeros((0,), dtype=np.int64) if mode == "empty" else None
                    red = () if noop else tuple(range(rank))
            else:
                # an explicit empty `axes` attribute is left out: the attribute-era text only
                # says what an absent one means ("reduce over all the dimensions")
                if rank and d(st.booleans()):
                    # negative axes are described from version 11 on ("Accepted range is [-r, r-1]")
                    attrs["axes"] = draw_axes(d, rank, negative=since > 1)
                    red = norm_axes(attrs["axes"], rank)
                else:
                    red = tuple(range(rank))
            draw_keepdims(d, attrs)
            shape, x = finish(d, dtype, shape, red, since)
            return Example([x, axes] if input_axes else [x], attrs)
        return draw

    if attr_versions:
        op.strategy(*attr_versions)(strategy(False))
    if input_versions:
        op.strategy(*input_versions)(strategy(True))

    def edges_for(input_axes: bool) -> Callable:
        def edges(dtype, opset):
            since = schema.schema_at(op.name, opset).since_version
            np_t = S.np_dtype(dtype)

            def ex(x, axes, keepdims=None, name="", noop=None, axes_input=None) -> Example:
                x = np.asarray(x)
                attrs: dict[str, Any] = {}
                if keepdims is not None:
                    attrs["keepdims"] = keepdims
                if axes is None or len(axes) == 0:
                    red = () if (input_axes and noop) else tuple(range(x.ndim))
                else:
                    red = norm_axes(axes, x.ndim)
                if fix is not None:
                    x = per_group(x, red, lambda row: fix(row, dtype))
                if input_axes:
                    if noop is not None:
                        attrs["noop_with_empty_axes"] = noop
                    inputs = [x] if axes is None else [x, np.array(axes, dtype=np.int64)]
                else:
                    if axes is not None:
                        attrs["axes"] = list(axes)
                    inputs = [x]
                return Example(inputs, attrs, name=name)

            empty = empty_set_defined(op.name, since) and empty_ok(dtype)
            vals = edge_values(dtype) if edge_values else S.edge_values(dtype)
            out = [ex(vals.reshape(-1, 1), [1], 0, "edge_values")]
            if S.is_float(dtype) or dtype == "bool" or whole_range_ints:
                out.append(ex(vals, None, None, "edge_values_all"))
            # one value as a rank-0 tensor, reduced over all (its zero axes)
            out.append(ex(vals[-1:].reshape(()), None, 0, "rank0"))
            # empty tensors whose reduced groups are not empty: always defined
            out.append(ex(np.zeros((0, 3), dtype=np_t), [1], 1, "empty_rows"))
            out.append(ex(np.zeros((2, 0, 3), dtype=np_t), [0, 2], 0, "empty_kept_axis"))
            if empty:
                # reduction over an empty set: the spec's identity value
                out.append(ex(np.zeros((2, 0, 3), dtype=np_t), [1], 0, "empty_set_axis"))
                out.append(ex(np.zeros((0,), dtype=np_t), None, 1, "empty_set_all"))
            shape = (2, 3, 2)
            x = values(_Fixed(), dtype, shape, 12)
            if since > 1:
                out.append(ex(x, [-1, -3], 1, "negative_axes"))
            out.append(ex(x, [2, 0], 1, "two_axes"))
            out.append(ex(x, [2, 0, 1], 0, "all_axes_listed"))
            if input_axes:
                out.append(ex(x, None, 1, "noop_no_axes", noop=1))
                out.append(ex(x, [], None, "noop_empty_axes", noop=1))
                out.append(ex(x, [], 0, "empty_axes_input"))
            if extra_edges:
                out.extend(extra_edges(dtype, since, ex))
            return out
        return edges

    if attr_versions:
        op.edges(*attr_versions)(edges_for(False))
    if input_versions:
        op.edges(*input_versions)(edges_for(True))


class _Fixed:
    """A stand-in for Hypothesis' draw in edge examples: always the simplest fixed choice, but
    arrays get a deterministic spread of values (see ``fixed_array``)."""

    def __call__(self, strategy: Any) -> Any:  # pragma: no cover - only used via fixed_array
        raise TypeError("edge examples draw fixed arrays")


def fixed_array(dtype: str, shape: tuple[int, ...], lo: float, hi: float) -> np.ndarray:
    """A deterministic array spread over [lo, hi] (edge examples)."""
    n = int(np.prod(shape)) if shape else 1
    if dtype == "bool":
        return (np.arange(n) % 3 == 1).reshape(shape)
    t = (np.arange(n) * 7 % max(n, 1)) / max(n - 1, 1)
    vals = lo + (hi - lo) * t
    if S.is_int(dtype):
        vals = np.round(vals)
    return to_dtype(vals if not S.is_int(dtype) else vals.astype(np.int64).astype(object), S.np_dtype(dtype)).reshape(shape)


MANTISSA = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}


def grid_step(dtype: str, n: int, bound: float, power: int = 1) -> tuple[int, int]:
    """(K, f) such that any sum of at most ``n`` products of ``power`` values k / 2**f with
    |k| <= K is exact in ``dtype`` (whatever the order of summation), with K / 2**f <= bound."""
    bits = MANTISSA[dtype] - max(0, math.ceil(math.log2(max(n, 1))))
    per = max(0, bits // power)
    mag = max(0, min(int(math.floor(math.log2(bound))) if bound >= 1 else 0, (per + 1) // 2))
    return 2 ** per, per - mag


def value_drawer(float_range: tuple[float, float], int_range: tuple[int, int] | None = None,
                 uint_range: tuple[int, int] | None = None, grid: int = 0) -> Callable:
    """``values(d, dtype, shape, n)``: floats in ``float_range``, signed ints in ``int_range``,
    unsigned in ``uint_range`` (None: the dtype's whole range); edge examples pass a _Fixed.

    With ``grid`` = p > 0, floats are drawn on a binary grid fine enough to be varied and coarse
    enough that every partial sum of up to ``n`` products of p values is exact in the type: the
    result is then the same whatever the summation order or accumulator width (which the spec
    leaves open), and one rounding at the end is all that can differ."""

    def values(d, dtype, shape, n=64):
        if S.is_float(dtype):
            lo, hi = float_range
        elif dtype == "bool":
            lo, hi = 0, 1
        elif dtype.startswith("u"):
            lo, hi = uint_range if uint_range else S.finite_range(dtype)
        else:
            lo, hi = int_range if int_range else S.finite_range(dtype)
        if grid and dtype in MANTISSA:
            k, f = grid_step(dtype, n, max(abs(lo), abs(hi)), grid)
            klo = 0 if lo >= 0 else -k
            count = int(np.prod(shape)) if shape else 1
            if isinstance(d, _Fixed):
                ks = [klo + (i * 7919) % (k - klo + 1) for i in range(count)]
            else:
                ks = d(st.lists(st.integers(klo, k), min_size=count, max_size=count))
            return (np.array(ks, dtype=np.float64) / 2.0 ** f).astype(S.np_dtype(dtype)).reshape(shape)
        if isinstance(d, _Fixed):
            return fixed_array(dtype, shape, lo, hi)
        return S.arrays(d, dtype, shape=shape, lo=lo, hi=hi)

    return values


# -- Softmax-like: the coerced 2-D view of versions 1 and 11 ---------------------------------
def along_axis(x: np.ndarray, axis: int, coerce: bool, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Apply ``fn`` (working along the last axis of a 2-D array) either over the single axis
    ``axis`` (opset 13 on) or over the flattened trailing block [axis:] of the input coerced to
    2-D (versions 1 and 11)."""
    x = np.asarray(x)
    rank = x.ndim
    axis = axis + rank if axis < 0 else axis
    if coerce:
        n = int(np.prod(x.shape[:axis])) if axis else 1
        flat = x.reshape(n, -1) if x.size else x.reshape(n, int(np.prod(x.shape[axis:])))
        return fn(flat).reshape(x.shape)
    moved = np.moveaxis(x, axis, -1)
    flat = moved.reshape(-1, moved.shape[-1]) if moved.size else moved.reshape(int(np.prod(moved.shape[:-1])), moved.shape[-1])
    return np.moveaxis(fn(flat).reshape(moved.shape), -1, axis)


def is_square(v: int) -> bool:
    return v >= 0 and math.isqrt(v) ** 2 == v


# -- ReduceMax / ReduceMin / ArgMax / ArgMin / Hardmax: comparisons only ------------------------------
def identity_low(dtype: str) -> Any:
    """The spec's value of a max over an empty set: -inf, the type's minimum, or False."""
    if S.is_float(dtype):
        return -np.inf
    return False if dtype == "bool" else S.finite_range(dtype)[0]


def identity_high(dtype: str) -> Any:
    if S.is_float(dtype):
        return np.inf
    return True if dtype == "bool" else S.finite_range(dtype)[1]


def extreme_drawer(d: Callable, dtype: str, shape: tuple[int, ...], n: int = 64) -> np.ndarray:
    """Values for comparison-only ops: the type's whole range for integers, and for floats a
    choice between a wide range and a few values that make ties likely."""
    if isinstance(d, _Fixed):
        return value_drawer((-100.0, 100.0), (-100, 100), (0, 200))(d, dtype, shape)
    if S.is_float(dtype) and d(st.booleans()):
        n = int(np.prod(shape)) if shape else 1
        pool = [-2.0, -0.5, -0.0, 0.0, 0.5, 2.0]
        return np.array(d(st.lists(st.sampled_from(pool), min_size=n, max_size=n)), dtype=np.float64).astype(S.np_dtype(dtype)).reshape(shape)
    if S.is_int(dtype) and d(st.booleans()):
        return S.arrays(d, dtype, shape=shape, lo=-2, hi=2)
    return value_drawer((-1e4, 1e4))(d, dtype, shape)


def extreme_edges(dtype: str) -> np.ndarray:
    """The standard edge values without NaN (the comparison ops' text says nothing about NaN)."""
    vals = S.edge_values(dtype)
    if S.is_float(dtype):
        vals = vals[~np.isnan(vals.astype(np.float64))]
    return vals


# -- ArgMax / ArgMin ------------------------------------------------------------------------------
def register_arg(op: Operator, largest: bool) -> None:
    """ArgMax (largest) or ArgMin: versions 1 and 11 (no select_last_index), 12 and 13.

    Version 1 describes no negative axis; version 11 says "The input tensor must not be empty";
    no version says what the index of an extreme of an empty axis is, so no case has an empty
    reduced axis. -0.0 and 0.0 compare equal (a tie).

    Spec-silent: how NaN compares. We take numpy's argmax/argmin: a NaN is the extreme (IEEE
    754-2019 maximum/minimum propagate it), so the index of the first NaN (the last with
    select_last_index); a backend may skip NaN (maximumNumber). A row holding a NaN is
    ``unspecified`` when the index points at a NaN or at the extreme of the row's other values."""
    arg = np.argmax if largest else np.argmin
    word = "max" if largest else "min"
    nan_extreme = np.nanmax if largest else np.nanmin

    def nan_rows(inputs, attrs, expected, since):
        x = np.asarray(inputs[0])
        if not has_nan(x) or x.size == 0:
            return [None]
        a = attrs.get("axis", 0) % x.ndim
        rows = np.isnan(x.astype(np.float64)).any(axis=a, keepdims=True)
        return [rows if attrs.get("keepdims", 1) else rows.reshape(drop_axes(x.shape, (a,)))]

    def in_axis(c):
        x = np.asarray(c.inputs[0])
        return bool(np.all((c.actual[0] >= 0) & (c.actual[0] < x.shape[c.attrs.get("axis", 0) % x.ndim])))

    def at_nan_or_extreme(c):
        x = np.asarray(c.inputs[0]).astype(np.float64)
        a = c.attrs.get("axis", 0) % x.ndim
        idx = np.clip(np.asarray(c.actual[0]).reshape(tuple(1 if i == a else s for i, s in enumerate(x.shape))), 0, x.shape[a] - 1)
        picked = np.take_along_axis(x, idx.astype(np.int64), a)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN row: its index points at a NaN anyway
            best = nan_extreme(x, axis=a, keepdims=True)
        ok = (np.isnan(picked) | (picked == best)).reshape(c.masks[0].shape)
        return bool(np.all(ok[c.masks[0]]))

    def c_scan(c):
        x = np.asarray(c.inputs[0]).astype(np.float64)
        a = c.attrs.get("axis", 0) % x.ndim
        last = bool(c.attrs.get("select_last_index", 0))

        def scan(row):
            best = 0
            for i in range(1, len(row)):
                beats = row[i] > row[best] if largest else row[i] < row[best]
                if beats or (last and row[i] == row[best]):
                    best = i
            return best

        idx = np.apply_along_axis(scan, a, x) if x.size else np.zeros(drop_axes(x.shape, (a,)), np.int64)
        return [np.asarray(idx, np.int64).reshape(np.shape(c.expected[0]))]

    op.spec_silent(
        "nan", (1, 11, 12, 13),
        spec=f"Computes the indices of the {word} elements of the input tensor's element along the provided axis.",
        expected=f"the index of the first NaN (the last with select_last_index): a NaN is the {word}imum "
                 f"(IEEE 754-2019 {word}imum, numpy.arg{word}); the text names no NaN rule",
        where=nan_rows,
        invariants={"the index is inside the axis": in_axis,
                    f"the index points at a NaN or at the {word} of the row's non-NaN values": at_nan_or_extreme},
        readings={**nan_ignored(-np.inf if largest else np.inf),
                  "a scan comparing with C's > / < (false with a NaN): a NaN first in the row holds, a later one never wins":
                  c_scan})


    @op.reference(1, 11, 12, 13)
    def reference(data, *, axis=0, keepdims=1, select_last_index=0):
        x = np.asarray(data)
        a = axis + x.ndim if axis < 0 else axis
        w = x.astype(np.float64) if S.is_float(S.label_of(x.dtype)) else x
        out_shape = tuple(1 if i == a else s for i, s in enumerate(x.shape))
        if x.size == 0:
            idx = np.zeros(out_shape, dtype=np.int64)
        elif select_last_index:
            idx = x.shape[a] - 1 - arg(np.flip(w, a), axis=a, keepdims=True)
        else:
            idx = arg(w, axis=a, keepdims=True)
        idx = np.asarray(idx, dtype=np.int64).reshape(out_shape)
        return idx if keepdims else idx.reshape(drop_axes(x.shape, (a,)))

    @op.strategy(1, 11, 12, 13)
    def draw(d, dtype, opset):
        since = schema.schema_at(op.name, opset).since_version
        shape = list(draw_shape(d, 1) if since != 11 else S.shapes(d, 1, 4, 1, 4))
        rank = len(shape)
        axis = d(st.integers(0 if since == 1 else -rank, rank - 1))
        shape[axis] = max(shape[axis], 1)
        attrs: dict[str, Any] = {}
        if axis != 0 or d(st.booleans()):
            attrs["axis"] = axis
        draw_keepdims(d, attrs)
        if since >= 12 and d(st.booleans()):
            attrs["select_last_index"] = d(st.integers(0, 1))
        return Example([extreme_drawer(d, dtype, tuple(shape))], attrs)

    @op.edges(1, 11, 12, 13)
    def edges(dtype, opset):
        since = schema.schema_at(op.name, opset).since_version
        t = S.np_dtype(dtype)
        vals = extreme_edges(dtype)
        out = [Example([vals], {"keepdims": 0}, name="edge_values"),
               Example([vals[::-1].copy()], {}, name="edge_values_reversed")]
        ties = np.array([[1, 3, 3, 0], [2, 2, 1, 2], [0, 0, 0, 0]], dtype=t)
        last = [0, 1] if since >= 12 else [None]
        for sel in last:
            attrs = {} if sel is None else {"select_last_index": sel}
            suffix = "" if sel is None else f"_last{sel}"
            out.append(Example([ties], {"axis": 1, **attrs}, name="ties_axis1" + suffix))
            out.append(Example([ties], {"axis": 0, "keepdims": 0, **attrs}, name="ties_axis0" + suffix))
            if S.is_float(dtype):
                zeros = np.array([0.0, -0.0, 0.0], dtype=t)
                out.append(Example([zeros], {**attrs}, name="signed_zero_tie" + suffix))
        if since > 1:
            out.append(Example([ties.reshape(3, 2, 2)], {"axis": -2}, name="negative_axis"))
        out.append(Example([ties[:1, :1]], {"axis": 1, "keepdims": 0}, name="single_element"))
        if S.is_float(dtype):  # spec-silent: NaN first, middle, last, twice, and in a row of 20
            nan = np.nan
            rows = np.array([[nan, 1, 0, 2], [1, nan, 0, 3], [1, 2, 3, nan], [nan, 1, nan, 1], [0, 1, 2, 3]]).astype(t)
            for sel in last:
                attrs = {} if sel is None else {"select_last_index": sel}
                out.append(Example([rows], {"axis": 1, **attrs}, name="nan_rows" + ("" if sel is None else f"_last{sel}")))
            long = np.arange(40, dtype=np.float64).reshape(2, 20) % 7
            long[0, 9] = long[1, 19] = nan
            out.append(Example([long.astype(t)], {"axis": 1, "keepdims": 0}, name="nan_long_rows"))
        if since != 11:  # "The input tensor must not be empty" (ArgMax/ArgMin-11 only)
            out.append(Example([np.zeros((0, 3), dtype=t)], {"axis": 1}, name="empty_rows"))
        return out


# -- Softmax / LogSoftmax / Hardmax ---------------------------------------------------------------
def register_softmax_like(op: Operator, fn: Callable[[np.ndarray], np.ndarray]) -> None:
    """Register an op computed row-wise by ``fn`` (float64, along the last axis of a 2-D array).

    Versions 1 and 11 coerce the input to 2-D at ``axis`` (default 1): [a_0*...*a_{k-1},
    a_k*...*a_{n-1}], and work on each row of that; version 13 works along the single dimension
    ``axis`` (default -1). Version 1 describes no negative axis. The edge rows hold NaN, +inf
    and only -inf: the ops' spec-silent points (:func:`row_mask`, :func:`rows_hold`)."""

    @op.reference(1, 11)
    def reference_coerced(x, *, axis=1):
        return back_to(along_axis(exact(x), axis, True, fn), x)

    @op.reference(13)
    def reference_13(x, *, axis=-1):
        return back_to(along_axis(exact(x), axis, False, fn), x)

    @op.strategy(1, 11, 13)
    def draw(d, dtype, opset):
        since = schema.schema_at(op.name, opset).since_version
        shape = S.shapes(d, 1, 4, 1, 4)
        rank = len(shape)
        default = -1 if since >= 13 else 1
        axis = d(st.integers(0 if since == 1 else -rank, rank - 1))
        attrs: dict[str, Any] = {}
        # an omitted axis means the default (1 before version 13), valid only with rank >= 2
        if axis != default or (rank < 2 and since < 13) or d(st.booleans()):
            attrs["axis"] = axis
        if S.is_float(dtype) and d(st.integers(0, 3)) == 0:
            # ties (Hardmax picks the first) and repeated values
            n = int(np.prod(shape))
            pool = [-1.0, 0.0, 0.5, 2.0]
            x = np.array(d(st.lists(st.sampled_from(pool), min_size=n, max_size=n))).astype(S.np_dtype(dtype)).reshape(shape)
        else:
            x = S.arrays(d, dtype, shape=shape, lo=-10, hi=10)
        return Example([x], attrs)

    @op.edges(1, 11, 13)
    def edges(dtype, opset):
        since = schema.schema_at(op.name, opset).since_version
        t = S.np_dtype(dtype)
        inf, nan = np.inf, np.nan
        tiny = float(S.edge_values(dtype)[7])  # the smallest subnormal
        big = 1e4
        rows = [[0.0, -inf, 1.0], [big, big - 16, -big], [-0.0, tiny, 0.0], [3.0, 3.0, -1.0]]
        # only -inf, +inf (once, twice) and NaN in a row: spec-silent points of Softmax and
        # LogSoftmax (the formula read in IEEE arithmetic gives 0/0 or inf/inf = NaN), of Hardmax
        # for NaN (see each op's module)
        rows += [[-inf, -inf, -inf], [inf, 0.0, 1.0], [inf, 0.0, inf], [nan, 0.0, 1.0], [1.0, nan, 3.0]]
        x = np.array(rows, dtype=np.float64).astype(t)
        out = [Example([x], {"axis": 1}, name="edge_rows")]
        if since > 1:
            out.append(Example([x], {"axis": -1}, name="edge_rows_negative_axis"))
        cube = np.array([[[1.0, 2.0], [3.0, 0.5]], [[-1.0, 0.0], [2.0, 2.0]]], dtype=t)
        for axis in (0, 1, 2):
            out.append(Example([cube], {"axis": axis}, name=f"cube_axis{axis}"))
        out.append(Example([np.array([0.5, -2.0, 1.0], dtype=t)], {"axis": 0}, name="vector"))
        out.append(Example([np.zeros((0, 3), dtype=t)], {"axis": 1}, name="empty_rows"))
        out.append(Example([np.zeros((2, 0), dtype=t)], {"axis": 1}, name="empty_axis"))
        lo, hi = S.finite_range(dtype)  # exp of the largest value overflows; the result is finite (0.5, 0.5, 0)
        out.append(Example([np.array([[hi, hi, 0.0], [lo, 0.0, lo]]).astype(t)], {"axis": 1}, name="overflow_extremes"))
        return out


def row_mask(x: np.ndarray, attrs: dict, since: int, open_row: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The elements of the rows (as the op-version sees rows, see :func:`along_axis`) for which
    ``open_row(rows)`` (2-D float64 -> one bool per row) is true."""
    axis = attrs.get("axis", -1 if since >= 13 else 1)
    return along_axis(np.asarray(x).astype(np.float64), axis, since < 13,
                      lambda r: np.broadcast_to(open_row(r)[:, None], r.shape)).astype(bool)


def rows_of(x: np.ndarray, attrs: dict, since: int) -> np.ndarray:
    """The 2-D rows of ``x`` (float64) in the order :func:`along_axis` hands them to its ``fn``."""
    rows: list[np.ndarray] = []
    axis = attrs.get("axis", -1 if since >= 13 else 1)
    along_axis(np.asarray(x).astype(np.float64), axis, since < 13, lambda r: rows.append(r) or r)
    return rows[0]


def rows_hold(c: Any, row_ok: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> bool:
    """True when ``row_ok(input_rows, output_rows)`` (one bool per row) holds on every open row
    of a softmax-like op (``c``: a registry.SilentCheck)."""
    ok = row_ok(rows_of(c.inputs[0], c.attrs, c.since), rows_of(c.actual[0], c.attrs, c.since))
    bad = row_mask(c.inputs[0], c.attrs, c.since, lambda rows: ~ok)
    return not bool(bad[c.masks[0]].any())


def back_to(result: np.ndarray, like: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(result).astype(np.asarray(like).dtype)


def softmax_rows(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        m = np.max(x, axis=-1, keepdims=True, initial=-np.inf)
        e = np.exp(x - m)
        return e / np.sum(e, axis=-1, keepdims=True)


def log_softmax_rows(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        m = np.max(x, axis=-1, keepdims=True, initial=-np.inf)
        shifted = x - m
        return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))


def hardmax_rows(x: np.ndarray) -> np.ndarray:
    out = np.zeros_like(x)
    if x.size:
        out[np.arange(x.shape[0]), np.argmax(x, axis=-1)] = 1.0
    return out


# -- matrix products --------------------------------------------------------------------------------
def draw_matmul_shapes(d: Callable, allow_vectors: bool = True, empty: bool = True) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Shapes of A and B for numpy.matmul: 1-D operands, plain matrices, and batches whose
    leading dimensions broadcast (at most 4 matrices in a batch)."""
    side = st.integers(0, 4) if empty and d(st.integers(0, 5)) == 0 else st.integers(1, 4)
    m, k, n = d(side), d(side), d(side)
    kinds = ["matrix", "batch", "batch_a", "batch_b"] + (["vec_vec", "vec_mat", "mat_vec", "vec_batch", "batch_vec"] if allow_vectors else [])
    kind = d(st.sampled_from(kinds))
    batch_a: tuple[int, ...] = ()
    batch_b: tuple[int, ...] = ()
    if "batch" in kind:
        full = S.shapes(d, 1, 2, 1, 2)
        batch_a, batch_b = full, full
        for which in ("a", "b"):
            dims = list(full[d(st.integers(0, len(full))):])
            dims = [1 if d(st.integers(0, 3)) == 0 else s for s in dims]
            if which == "a":
                batch_a = tuple(dims)
            else:
                batch_b = tuple(dims)
        if kind == "batch_a":
            batch_b = ()
        if kind == "batch_b":
            batch_a = ()
    a = (k,) if kind.startswith("vec") else (*batch_a, m, k)
    b = (k,) if kind.endswith("vec") else (*batch_b, k, n)
    return a, b


def matmul_exact(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy.matmul on exact values (float64 / Python ints), with the empty-K case made explicit."""
    return np.matmul(exact(a), exact(b))


def float_grid(d: Callable, dtype: str, shape: tuple[int, ...], n: int, bound: float, power: int) -> np.ndarray:
    """Floats on the binary grid of ``grid_step`` (sums of ``n`` products of ``power`` values exact)."""
    return value_drawer((-bound, bound), grid=power)(d, dtype, shape, n)


# -- CumSum / CumProd -------------------------------------------------------------------------------
def register_cumulative(op: Operator, versions: tuple[int, ...], product: bool) -> None:
    """CumSum or CumProd: inclusive or ``exclusive`` (the j-th output combines the first j-1
    elements, so the first is the identity 0 or 1), forwards or in ``reverse``, along the axis
    given as a 0-D int32/int64 tensor in [-r, r-1]."""
    identity = 1 if product else 0
    scan = np.cumprod if product else np.cumsum

    @op.reference(*versions)
    def reference(x, axis, *, exclusive=0, reverse=0):
        x = np.asarray(x)
        a = int(axis)
        a = a + x.ndim if a < 0 else a
        w = np.moveaxis(exact(x), a, -1)
        if w.shape[-1] == 0:
            return x.copy()
        if reverse:
            w = w[..., ::-1]
        c = scan(w, axis=-1)
        if exclusive:
            first = np.full(c.shape[:-1] + (1,), identity, dtype=c.dtype)
            c = np.concatenate([first, c[..., :-1]], axis=-1)
        if reverse:
            c = c[..., ::-1]
        return to_dtype(np.moveaxis(c, -1, a), x.dtype)

    def axis_tensor(d, value):
        return np.array(value, dtype=d(st.sampled_from([np.int32, np.int64])))

    def values(d, dtype, shape, n):
        if product:
            if S.is_float(dtype):
                return S.arrays(d, dtype, shape=shape, lo=-2, hi=2)
            # |x| <= 3 over at most 4 elements: every partial product fits the type
            return S.arrays(d, dtype, shape=shape, lo=-3, hi=3)
        if S.is_float(dtype):
            return value_drawer((-1000.0, 1000.0), grid=1)(d, dtype, shape, n)
        lo, hi = S.finite_range(dtype)
        return S.arrays(d, dtype, shape=shape, lo=lo // 8, hi=hi // 8)

    @op.strategy(*versions)
    def draw(d, dtype, opset):
        shape = draw_shape(d, 1)
        rank = len(shape)
        axis = d(st.integers(-rank, rank - 1))
        attrs: dict[str, Any] = {}
        for name in ("exclusive", "reverse"):
            v = d(st.integers(0, 1))
            if v or d(st.booleans()):
                attrs[name] = v
        x = values(d, dtype, shape, max(shape[axis], 1))
        return Example([x, axis_tensor(d, axis)], attrs)

    @op.edges(*versions)
    def edges(dtype, opset):
        t = S.np_dtype(dtype)
        spec = np.array([1, 2, 3], dtype=t)  # the example in the operator's text
        out = []
        for ex in (0, 1):
            for rev in (0, 1):
                out.append(Example([spec, np.array(0, dtype=np.int64)], {"exclusive": ex, "reverse": rev},
                                   name=f"spec_example_exclusive{ex}_reverse{rev}"))
        m = np.array([[1, 2, 3], [2, 0, 1]], dtype=t)
        out.append(Example([m, np.array(-1, dtype=np.int32)], {}, name="negative_axis_int32"))
        out.append(Example([m, np.array(0, dtype=np.int32)], {"exclusive": 1}, name="axis0_exclusive"))
        out.append(Example([np.zeros((2, 0), dtype=t), np.array(1, dtype=np.int64)], {"exclusive": 1}, name="empty_axis"))
        out.append(Example([np.zeros((0, 3), dtype=t), np.array(1, dtype=np.int64)], {"reverse": 1}, name="empty_rows"))
        out.append(Example([np.array([5], dtype=t), np.array(0, dtype=np.int64)], {"exclusive": 1}, name="single_exclusive"))
        if S.is_float(dtype):
            inf, nan = np.inf, np.nan
            special = np.array([[1.0, inf, -inf, 2.0], [nan, 1.0, 0.0, 2.0], [0.0, inf, 1.0, -0.0]], dtype=t)
            out.append(Example([special, np.array(1, dtype=np.int64)], {}, name="nan_inf"))
            out.append(Example([special, np.array(1, dtype=np.int64)], {"exclusive": 1, "reverse": 1}, name="nan_inf_exclusive_reverse"))
            # a prefix beyond the type's range is +inf (later prefixes too: no case brings a
            # running value back into range, where the sequential and exact answers differ)
            big = float(S.finite_range(dtype)[1])
            out.append(Example([np.array([big, big, big], dtype=t), np.array(0, dtype=np.int64)], {}, name="overflow"))
            tiny = S.smallest_subnormal(dtype)
            out.append(Example([np.array([tiny, tiny, -tiny, 1.0]).astype(t), np.array(0, dtype=np.int64)], {}, name="subnormal"))
        else:
            lo, hi = S.finite_range(dtype)
            if product:
                vals = [hi, 1, -1] if lo < 0 else [hi, 1, 1]
            else:
                vals = [hi, 0, lo] if lo < 0 else [hi, 0, 0]
            out.append(Example([np.array(vals, dtype=object).astype(t), np.array(0, dtype=np.int64)], {}, name="int_extremes"))
            if lo < 0:
                out.append(Example([np.array([lo, 1, 0] if product else [lo, 0, 1], dtype=object).astype(t),
                                    np.array(0, dtype=np.int64)], {}, name="int_minimum"))
        return out


def wide_int_edges(dtype: str, since: int, ex: Callable) -> list[Example]:
    """64-bit values beyond the 32-bit range, reduced over all (ReduceMax / ReduceMin)."""
    if dtype not in ("int64", "uint64"):
        return []
    rows = [[3000000000, 0, 1, 2], [2, 1, 0, 3000000000]]
    if dtype == "int64":
        rows += [[-2352659406, 7724630, -99999, -1959402211], [-3000000000, 0, 1, 2]]
    return [ex(np.array(r, dtype=S.np_dtype(dtype)), None, 0, f"beyond_int32_{k}") for k, r in enumerate(rows)]


# -- fuzz templates --------------------------------------------------------------------------
def gaps_ok(x: Value, axis: int, u: float) -> bool:
    """Which element is the largest (and the smallest) along ``axis`` does not change when the
    values move by their margin: a template stability test for ArgMax, ArgMin, Hardmax."""
    if x.shape[axis] < 2:
        return True
    if x.wide.dtype.kind != "f" or (x.node is None and not x.err.any()):
        # exact values (an integer graph; a graph input or constant): ties are exact ties, and
        # the spec says which one wins (the first; the last with select_last_index)
        return True
    w = np.moveaxis(x.wide, axis, -1)
    m = np.moveaxis(np.broadcast_to(margin(x, u), x.shape), axis, -1)
    order = np.sort(w, axis=-1)
    top = np.max(m, axis=-1)
    # both the largest and the smallest element must lead by the margin (ArgMax and ArgMin)
    return bool(np.all(order[..., -1] - order[..., -2] > 2 * top) and np.all(order[..., 1] - order[..., 0] > 2 * top))


def reduce_template(op: Operator, input_axes_since: int, **kw: Any) -> None:
    """How a Reduce* op enters a generated graph: some or all axes (or none, with
    noop_with_empty_axes), as an attribute or, from ``input_axes_since``, as an input."""

    def plan(c: Ctx) -> Plan | None:
        x = c.take("float", 0, lambda v: v.size > 0)
        if x is None:
            return None
        attrs: dict[str, Any] = {}
        keep = c.pick(2)
        if keep:  # keepdims=0 (the default is 1)
            attrs["keepdims"] = 0
        mode = c.pick(4) if x.rank else 1
        axes = axes_subset(c, x.rank) if mode != 1 else None
        reduced = x.size if axes is None else size_of(tuple(x.shape[a] for a in axes))
        if c.since >= input_axes_since:
            if mode == 3 and c.pick(3) == 0:  # empty axes with noop_with_empty_axes: the input unchanged
                attrs["noop_with_empty_axes"] = 1
                return Plan([x, c.ints(np.zeros((0,), np.int64))], attrs, n_acc=1)
            return Plan([x, c.ints(axes) if axes is not None else None], attrs, n_acc=reduced)
        if axes is not None:
            attrs["axes"] = axes
        return Plan([x], attrs, n_acc=reduced)

    op.fuzz(**kw)(plan)


def grows(ref: Callable, ins: list, attrs: dict) -> np.ndarray:
    """Ops whose rounding is relative to a sum that can be larger than the result (log of a sum)."""
    return np.abs(np.asarray(ref(*ins, **attrs), dtype=np.float64)) + 1.0

def arg_template(op: Operator) -> None:
    """ArgMax, ArgMin: any axis, keepdims and select_last_index; stable only without near-ties."""

    def plan(c: Ctx) -> Plan | None:
        x = c.take("float", 0, lambda v: v.rank >= 1 and v.size > 0)
        if x is None:
            return None
        attrs: dict[str, Any] = {}
        axis = c.pick(x.rank)
        if c.pick(2):
            axis -= x.rank
        if axis:
            attrs["axis"] = axis
        if c.pick(2):
            attrs["keepdims"] = 0
        if c.pick(2):
            attrs["select_last_index"] = 1
        return Plan([x], attrs)

    op.fuzz(jumps=True, ulps=0.0, stable=lambda ins, attrs, u: gaps_ok(ins[0], attrs.get("axis", 0), u))(plan)


def softmax_template(op: Operator, **kw: Any) -> None:
    """Softmax, LogSoftmax, Hardmax: one axis (the default -1 left implicit at times)."""

    def plan(c: Ctx) -> Plan | None:
        x = c.take("float", 0, lambda v: v.rank >= 1 and v.size > 0)
        if x is None:
            return None
        axis = c.pick(x.rank) - (x.rank if c.pick(2) else 0)
        attrs = {} if axis == -1 or axis == x.rank - 1 and c.pick(2) else {"axis": axis}
        n = x.shape[axis]
        return Plan([x], attrs, n_acc=n)

    op.fuzz(**kw)(plan)


def nan_extreme_edges(dtype: str, since: int, ex: Callable) -> list[Example]:
    """ReduceMax/ReduceMin's edges: the wide-integer ones, and NaN first, in the middle and last of
    a group, and in a group of 20 (a vectorized loop)."""
    out = wide_int_edges(dtype, since, ex)
    if S.is_float(dtype):
        nan, inf = np.nan, np.inf
        rows = np.array([[nan, 1, 0, 2], [1, nan, 0, -inf], [1, 2, 3, nan], [nan, nan, 1, inf], [0, 1, 2, 3]])
        out.append(ex(rows.astype(S.np_dtype(dtype)), [1], 0, "nan_rows"))
        long = np.arange(40, dtype=np.float64).reshape(2, 20) - 10
        long[0, 9] = long[1, 19] = nan
        out.append(ex(long.astype(S.np_dtype(dtype)), [1], 1, "nan_long_rows"))
    return out
