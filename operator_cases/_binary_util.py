"""Helpers shared by the elementwise binary/logical/bitwise operator modules (Add, Sub, Mul,
Div, Pow, Mod, comparisons, And/Or/Xor, Bitwise*, BitShift, Where, the variadic Max/Min/Mean/Sum).

Two broadcasting regimes exist in the spec:

* version 7 on: multidirectional (numpy-style) broadcasting (onnx/docs/Broadcasting.md);
* versions 1 and 6: "limited broadcast support" with the ``broadcast`` and ``axis`` attributes
  (Add-1 text): with ``broadcast=0`` (the default) both inputs have the same shape; with
  ``broadcast=1`` the right-hand side either has a single element (a scalar or any tensor of
  rank <= A's) or its shape is a contiguous run of A's shape starting at ``axis`` (a suffix of
  A's shape when ``axis`` is absent). "1-dim expansion doesn't work yet": B's size-1 dims do not
  stretch against A's larger dims (other than the single-element case). The output has A's shape.

Integer arithmetic is computed exactly on Python ints and wrapped to the output type
(two's complement), so overflow tests do not depend on numpy's behaviour.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from harness import strategies as S
from harness.fuzz_api import (
    NAN_IEEE,
    Ctx,
    Plan,
    Value,
    broadcast_shape,
    broadcast_variant,
    finite,
)
from harness.registry import Example, Operator

st = S.st


# -- exact integers ---------------------------------------------------------------------------
def ints(x: Any) -> np.ndarray:
    """An integer/bool array as an object array of Python ints (exact, any width)."""
    x = np.asarray(x)
    return np.vectorize(int, otypes=[object])(x) if x.size else np.zeros(x.shape, dtype=object)


def wrap(values: Any, label: str) -> np.ndarray:
    """Python ints wrapped modulo 2**bits into the integer type ``label`` (two's complement)."""
    low, high = S.finite_range(label)
    span = high - low + 1
    vals = np.asarray(values, dtype=object)
    wrapped = np.vectorize(lambda v: (int(v) - low) % span + low, otypes=[object])(vals) if vals.size else vals
    return np.asarray(wrapped, dtype=object).astype(S.np_dtype(label)).reshape(vals.shape)


def arith(fn: Callable[[Any, Any], Any], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``fn(a, b)`` elementwise (broadcast): integers exactly then wrapped, floats in float64 and
    rounded to the input type (round to nearest even)."""
    label = S.label_of(a.dtype)
    if S.is_int(label):
        return wrap(fn(ints(a), ints(b)), label)
    with np.errstate(all="ignore"):
        return np.asarray(fn(a.astype(np.float64), b.astype(np.float64))).astype(a.dtype)


# -- legacy (opset 1 and 6) broadcasting -----------------------------------------------------
def legacy_rhs(a: np.ndarray, b: np.ndarray, broadcast: int = 0, axis: int | None = None) -> np.ndarray:
    """B reshaped so that numpy broadcasting matches the Add-1/Add-6 rules (output shape = A's)."""
    a, b = np.asarray(a), np.asarray(b)
    if not broadcast:
        if a.shape != b.shape:
            raise ValueError(f"broadcast=0 needs equal shapes, got {a.shape} and {b.shape}")
        return b
    if b.size == 1 and b.ndim <= a.ndim:
        return b.reshape(())
    start = a.ndim - b.ndim if axis is None else axis
    if tuple(a.shape[start:start + b.ndim]) != b.shape:
        raise ValueError(f"B {b.shape} is not a contiguous run of A {a.shape} at axis {start}")
    return b.reshape((1,) * start + b.shape + (1,) * (a.ndim - start - b.ndim))


def legacy_shapes(d: Callable) -> tuple[tuple[int, ...], tuple[int, ...], dict[str, int]]:
    """(shape A, shape B, attrs) for one of the legacy broadcasting modes."""
    a = S.shapes(d, 0, 4, 0, 4)
    modes = ["same", "same_flagged", "single"] + (["suffix", "axis"] if a else [])
    mode = d(st.sampled_from(modes))
    if mode == "same":
        return a, a, {}
    if mode == "same_flagged":
        return a, a, {"broadcast": 1}
    if mode == "single":  # a scalar or a 1-element tensor of rank <= rank(A)
        return a, (1,) * d(st.integers(0, len(a))), {"broadcast": 1}
    if mode == "suffix":
        k = d(st.integers(0, len(a) - 1))
        return a, a[k:], {"broadcast": 1}
    start = d(st.integers(0, len(a) - 1))
    length = d(st.integers(1, len(a) - start))
    return a, a[start:start + length], {"broadcast": 1, "axis": start}


# -- multidirectional broadcasting -----------------------------------------------------------
def broadcast_shapes(d: Callable, count: int = 2) -> list[tuple[int, ...]]:
    """``count`` shapes that broadcast together (numpy rules); sometimes with an empty dim and
    often with rank-0 or lower-rank operands."""
    empty = d(st.integers(0, 7)) == 0
    full = S.shapes(d, 1 if empty else 0, 4, 0 if empty else 1, 4)
    if empty and 0 not in full:
        full = full[:-1] + (0,)
    out = []
    for _ in range(count):
        dims = list(full[d(st.integers(0, len(full))):])
        for i in range(len(dims)):
            if d(st.integers(0, 3)) == 0:
                dims[i] = 1
        out.append(tuple(dims))
    return out


def draw_inputs(d: Callable, dtype: str, shapes: list[tuple[int, ...]], **kw: Any) -> list[np.ndarray]:
    return [S.arrays(d, dtype, shape=s, **kw) for s in shapes]


def pair_example(d: Callable, dtype: str, legacy: bool = False, lhs: dict | None = None, rhs: dict | None = None,
                 attrs: dict | None = None) -> Example:
    """Two inputs of ``dtype`` (value ranges per side as ``S.arrays`` keywords) with legacy or
    multidirectional broadcasting."""
    extra: dict[str, Any] = {}
    if legacy:
        sa, sb, extra = legacy_shapes(d)
    else:
        sa, sb = broadcast_shapes(d, 2)
    a = S.arrays(d, dtype, shape=sa, **(lhs or {}))
    b = S.arrays(d, dtype, shape=sb, **(rhs or {}))
    return Example([a, b], {**extra, **(attrs or {})})


# -- edge examples ---------------------------------------------------------------------------
def outer_pairs(values: np.ndarray, keep: Callable[[Any, Any], bool] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every (x, y) pair of ``values`` as two equal-shape arrays (n, n); with ``keep``, only the
    pairs it accepts, flattened to 1-D."""
    values = np.asarray(values)
    a = np.repeat(values[:, None], len(values), axis=1)
    b = np.repeat(values[None, :], len(values), axis=0)
    if keep is None:
        return a, b
    mask = np.array([[keep(x, y) for y in values] for x in values], dtype=bool).reshape(a.shape)
    return a[mask], b[mask]


def small(dtype: str, shape: tuple[int, ...], start: int = 1) -> np.ndarray:
    """Deterministic small non-zero values (start, start+1, ... cycling below 6) of ``dtype``."""
    n = int(np.prod(shape)) if shape else 1
    vals = [(start + i) % 6 or 6 for i in range(n)]
    if dtype == "bool":
        return (np.array(vals) % 2 == 1).reshape(shape)
    if dtype == "string":
        return np.array([f"s{v}" for v in vals], dtype=object).reshape(shape)
    return np.array(vals, dtype=object).astype(S.np_dtype(dtype)).reshape(shape)


def shape_edges(dtype: str, legacy: bool, attrs: dict | None = None) -> list[Example]:
    """Broadcasting, empty and rank-0 examples with small non-zero values."""
    attrs = attrs or {}
    if legacy:
        return [
            Example([small(dtype, (2, 3, 4)), small(dtype, (3, 4), 2)], {**attrs, "broadcast": 1}, name="bcast_suffix"),
            Example([small(dtype, (2, 3, 4)), small(dtype, (3,), 2)], {**attrs, "broadcast": 1, "axis": 1}, name="bcast_axis1"),
            Example([small(dtype, (2, 3, 4)), small(dtype, (2,), 2)], {**attrs, "broadcast": 1, "axis": 0}, name="bcast_axis0"),
            Example([small(dtype, (2, 3)), small(dtype, (), 2)], {**attrs, "broadcast": 1}, name="bcast_scalar"),
            Example([small(dtype, (2, 3)), small(dtype, (1, 1), 2)], {**attrs, "broadcast": 1}, name="bcast_one_element"),
            Example([small(dtype, (0, 3)), small(dtype, (3,), 2)], {**attrs, "broadcast": 1}, name="empty"),
            Example([small(dtype, ()), small(dtype, (), 2)], dict(attrs), name="rank0"),
        ]
    return [
        Example([small(dtype, (2, 1, 4)), small(dtype, (3, 1), 2)], dict(attrs), name="bcast_both"),
        Example([small(dtype, (3,)), small(dtype, (2, 1, 3), 2)], dict(attrs), name="bcast_lhs"),
        Example([small(dtype, (2, 3)), small(dtype, (), 2)], dict(attrs), name="bcast_scalar"),
        Example([small(dtype, (0, 3)), small(dtype, (1, 3), 2)], dict(attrs), name="empty"),
        Example([small(dtype, (2, 0)), small(dtype, (1,), 2)], dict(attrs), name="empty_bcast"),
        Example([small(dtype, ()), small(dtype, (), 2)], dict(attrs), name="rank0"),
    ]


def pair_edges(dtype: str, legacy: bool, keep: Callable[[Any, Any], bool] | None = None, values: np.ndarray | None = None,
               attrs: dict | None = None) -> list[Example]:
    """Every pair of edge values (NaN, +-inf, -0.0, denormals, extremes; integer min/max), 64-bit
    integers around the 32-bit limits, and the broadcasting/empty/rank-0 shapes."""
    values = S.edge_values(dtype) if values is None else values
    a, b = outer_pairs(values, keep)
    if not legacy and keep is None:  # the same pairs through a (n, 1) x (1, n) broadcast
        a, b = values[:, None], values[None, :]
    wide = [Example(e.inputs, dict(attrs or {}), name=e.name) for e in wide_int_edges(dtype)]
    return [Example([a, b], dict(attrs or {}), name="edge_values"), *wide, *shape_edges(dtype, legacy, attrs)]


def no_nan(label: str) -> np.ndarray:
    """Edge values without NaN (for ops whose spec says nothing about NaN)."""
    values = S.edge_values(label)
    if S.is_float(label):
        values = values[~np.isnan(values.astype(np.float64))]
    return values


def close_values(d: Callable, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """Values from a tiny set (-3..3, or a few short strings) so that comparisons see ties."""
    if dtype == "string":
        n = int(np.prod(shape)) if shape else 1
        words = d(st.lists(st.sampled_from(["", "a", "b", "ab", "B"]), min_size=n, max_size=n))
        return np.array(words, dtype=object).reshape(shape)
    if dtype == "bool":
        return S.arrays(d, dtype, shape=shape)
    lo = 0 if dtype in S.UNSIGNED else -3
    return S.arrays(d, "int8", shape=shape, lo=lo, hi=3).astype(S.np_dtype(dtype))


def compare_example(d: Callable, dtype: str, legacy: bool = False) -> Example:
    """Two inputs for a comparison: full-range values, or half the time values from a tiny set
    so that equal elements are common."""
    extra: dict[str, Any] = {}
    if legacy:
        sa, sb, extra = legacy_shapes(d)
    else:
        sa, sb = broadcast_shapes(d, 2)
    if d(st.booleans()):
        return Example([close_values(d, dtype, sa), close_values(d, dtype, sb)], extra)
    return Example([S.arrays(d, dtype, shape=sa), S.arrays(d, dtype, shape=sb)], extra)


# -- variadic ops (Max, Min, Mean, Sum) -------------------------------------------------------
def variadic_example(d: Callable, dtype: str, broadcast: bool, max_inputs: int = 4, same_sign: bool = False) -> Example:
    """1..max_inputs inputs of one shape (versions before 8) or of broadcastable shapes. With
    ``same_sign``, three or more float inputs share one sign: the spec fixes no summation order
    or accumulator, and without cancellation every order stays within the tolerance."""
    k = d(st.integers(1, max_inputs))
    shapes = broadcast_shapes(d, k) if broadcast else [S.shapes(d, 0, 4, 0, 4)] * k
    kw: dict[str, Any] = {}
    if same_sign and k >= 3 and S.is_float(dtype):
        kw = {"lo": 0.0} if d(st.booleans()) else {"hi": -0.0}
    return Example(draw_inputs(d, dtype, shapes, **kw))


def variadic_edges(dtype: str, broadcast: bool, values: np.ndarray | None = None,
                   keep: Callable[[Any, Any], bool] | None = None) -> list[Example]:
    """One input of edge values; every pair of ``values`` (those ``keep`` accepts); three
    inputs; empty; rank 0."""
    pairs = outer_pairs(S.edge_values(dtype) if values is None else values, keep)
    out = [Example([S.edge_values(dtype)], name="single"), Example(list(pairs), name="edge_values")]
    if broadcast:
        out += [
            Example([small(dtype, (2, 1, 3)), small(dtype, (4, 1), 2), small(dtype, (3,), 4)], name="three_bcast"),
            Example([small(dtype, (0, 3)), small(dtype, (1, 3), 2)], name="empty_bcast"),
            Example([small(dtype, ()), small(dtype, (2, 2), 2)], name="rank0_bcast"),
        ]
    else:
        out.append(Example([small(dtype, (2, 3)), small(dtype, (2, 3), 2), small(dtype, (2, 3), 4)], name="three"))
    out += [Example([small(dtype, (0, 3)), small(dtype, (0, 3), 2)], name="empty"),
            Example([small(dtype, ()), small(dtype, (), 2)], name="rank0")]
    return out


def wide_int_edges(dtype: str) -> list[Example]:
    """For 64-bit integers: small values paired with values at and beyond the 32-bit limits (a
    kernel that compares or computes in 32-bit lanes gets them wrong), 20 long so that
    vectorized loops see them."""
    if dtype not in ("int64", "uint64"):
        return []
    pairs = [(10, 2**31), (1, 2**31 + 5), (2**32 + 5, 10), (2**31 - 1, 2**31), (2**32 - 1, 7), (3 << 31, 1),
             (2**62 + 2**31, 2), (4, 2**33 + 2**31)]
    if dtype == "int64":
        pairs += [(-(2**40), 3), (-(2**31) - 1, 6), (-1, 2**31), (5, -(2**31))]
    pairs = (pairs * 2)[:20]
    x, y = (np.array([p[k] for p in pairs], dtype=object).astype(S.np_dtype(dtype)) for k in (0, 1))
    return [Example([x, y], name="wide_ints"), Example([y, x], name="wide_ints_swapped")]


# -- fuzz templates --------------------------------------------------------------------------
def binary_template(op: Operator, guard: Callable | None = None, rhs: tuple[float, float] = (-2.0, 2.0), **kw: Any) -> None:
    """How a binary op enters a generated graph: a float value and a second operand that
    broadcasts with it (a constant drawn in ``rhs`` one time in four), in either order."""

    def plan(c: Ctx) -> Plan | None:
        a = c.take("float", 0)
        if a is None:
            return None
        b = c.operand(a, 1, lo=rhs[0], hi=rhs[1])
        if c.pick(2):
            a, b = b, a
        if a.const and b.const:
            return None
        return Plan([a, b])

    op.fuzz(guard=guard, **kw)(plan)


def divisor_ok(ins: list[np.ndarray]) -> bool:
    """A template guard: the divisor keeps |b| >= 0.05 (a quotient that stays well-conditioned)."""
    return bool(np.all(np.abs(finite(ins[1])) >= 0.05))


def variadic_template(op: Operator, **kw: Any) -> None:
    """Max, Min, Sum, Mean: one to three more operands broadcasting with the first."""

    def plan(c: Ctx) -> Plan | None:
        a = c.take("float", 0)
        if a is None:
            return None
        ins = [a]
        shape = a.shape
        for slot in range(1, 1 + c.pick(3)):
            b = c.operand(Value("", "float", np.zeros(shape), np.zeros(shape), 0), slot)
            shape = broadcast_shape(shape, b.shape)
            ins.append(b)
        if all(v.const for v in ins):
            return None
        return Plan(ins, n_acc=len(ins))

    op.fuzz(**kw)(plan)


def logical_template(op: Operator) -> None:
    """And, Or, Xor: two bool values (a random constant one time in four)."""

    def plan(c: Ctx) -> Plan | None:
        a = c.take("bool", 0)
        if a is None:
            return None
        b = c.take("bool", 1, lambda v: broadcast_shape(a.shape, v.shape) is not None)
        if b is None or c.pick(4) == 3:
            b = c.const(c.rng.uniform(size=broadcast_variant(c, a.shape)) < 0.5, "bool")
        return Plan([a, b])

    op.fuzz(nan=NAN_IEEE, ulps=0.0, type_param=None)(plan)


def variadic_nan_edges(dtype: str) -> list[Example]:
    """Max/Min's NaN edges: a NaN first, middle and last among three inputs (where the order of a
    pairwise comparison shows), and NaN with +-inf."""
    if not S.is_float(dtype):
        return []
    nan, inf = np.nan, np.inf
    rows = [[nan, 1.0, 0.0, nan, -inf], [1.0, nan, 0.0, 2.0, nan], [0.0, 2.0, nan, nan, inf]]
    a, b, c = (np.array(r).astype(S.np_dtype(dtype)) for r in rows)
    return [Example([a, b, c], name="nan_three")]
