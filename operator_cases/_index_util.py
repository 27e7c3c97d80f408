"""Helpers shared by the index family: GatherElements, GatherND, Scatter, ScatterElements,
ScatterND (and the index checks of TopK, Unique, ReverseSequence, TensorScatter).

Indices are checked against the bounds the spec states ([-s, s-1] from the -11 versions on,
[0, s-1] before) and an index out of them raises: the spec calls it an error, so no strategy
draws one. Scatters follow the spec's loop literally (``np.ndindex`` order over the updates),
each step computed wide (float64, or Python ints for integers) and rounded back once.

Spec-silent: with ``reduction`` "none" the spec asks for distinct indices ("indices should not
have duplicate entries") and its loop order is "not specified", so two updates aimed at one
element leave the result open; we take the spec loop's order (the last update wins) and the
invariant is that the element holds one of the updates aimed at it. The max/min reductions
(ScatterElements-18, ScatterND-18) do not say what a NaN gives: we propagate it
(numpy.maximum/minimum, IEEE 754-2019 maximum/minimum).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from harness import strategies as S
from harness.fuzz_api import MAX_ELEMENTS, NAN_IEEE, Ctx, Plan
from harness.registry import Example, Operator, SilentCheck

from ._silent_util import nan_ignored, nan_in_result, nan_or_ignoring_nan

st = S.st


def ints(values: Any, label: str = "int64") -> np.ndarray:
    return np.array(values, dtype=np.int64).astype(S.np_dtype(label))


def positive_axis(axis: int, rank: int) -> int:
    axis = int(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} outside [-{rank}, {rank - 1}]")
    return axis + rank if axis < 0 else axis


def wrap(idx: Any, dim: int, negative: bool = True) -> np.ndarray:
    """Indices as int64 in [0, dim): negative ones count from the back (when allowed);
    anything outside the stated bounds raises (the spec makes it an error)."""
    idx = np.asarray(idx).astype(np.int64)
    lo = -dim if negative else 0
    if idx.size and (idx.min() < lo or idx.max() >= dim):
        raise ValueError(f"index out of bounds [{lo}, {dim - 1}]: the strategy must not draw it")
    return np.where(idx < 0, idx + dim, idx)


def element_targets(indices: np.ndarray, axis: int, dim: int, negative: bool = True) -> tuple[np.ndarray, ...]:
    """For GatherElements/ScatterElements: the full index of the data element each entry of
    ``indices`` points at (its own position, with the ``axis`` coordinate taken from its value)."""
    idx = wrap(indices, dim, negative)
    grid = list(np.indices(idx.shape, sparse=False)) if idx.ndim else []
    grid[axis] = idx
    return tuple(grid)


# -- reductions of the scatters, computed wide ----------------------------------------------------
def _wide(x: np.ndarray) -> np.ndarray:
    label = S.label_of(x.dtype)
    if S.is_float(label):
        return x.astype(np.float64)
    if S.is_int(label):
        return x.astype(object)
    return x.copy()


def _back(wide: np.ndarray, like: np.ndarray) -> np.ndarray:
    label = S.label_of(like.dtype)
    if S.is_int(label):
        lo, hi = S.finite_range(label)
        flat = [int(v) for v in wide.reshape(-1)]
        if any(v < lo or v > hi for v in flat):
            raise OverflowError(f"integer result out of range for {label}: the strategy must avoid it")
        return np.array(flat, dtype=object).astype(like.dtype).reshape(like.shape)
    with np.errstate(all="ignore"):
        return wide.astype(like.dtype)


def _max(a: Any, b: Any) -> Any:
    if isinstance(a, float) or isinstance(b, float):
        return float(np.maximum(a, b))  # NaN propagates (IEEE 754-2019 maximum)
    return max(a, b)


def _min(a: Any, b: Any) -> Any:
    if isinstance(a, float) or isinstance(b, float):
        return float(np.minimum(a, b))
    return min(a, b)


REDUCE: dict[str, Callable[[Any, Any], Any]] = {
    "none": lambda old, new: new, "add": lambda old, new: old + new, "mul": lambda old, new: old * new,
    "max": _max, "min": _min,
}


def _reduction(reduction: Any) -> str:
    r = reduction.decode() if isinstance(reduction, bytes) else str(reduction)
    if r not in REDUCE:
        raise ValueError(f"unknown reduction {r!r}")
    return r


def _scalar(v: Any) -> Any:
    return float(v) if isinstance(v, (float, np.floating)) else v


def scatter_elements(data: Any, indices: Any, updates: Any, axis: int = 0, reduction: Any = "none", negative: bool = True) -> np.ndarray:
    data, updates = np.asarray(data), np.asarray(updates)
    indices = np.asarray(indices)
    if data.ndim < 1 or indices.shape != updates.shape or indices.ndim != data.ndim:
        raise ValueError(f"scatter: data {data.shape}, indices {indices.shape}, updates {updates.shape} do not fit")
    axis = positive_axis(axis, data.ndim)
    f = REDUCE[_reduction(reduction)]
    out, upd = _wide(data), _wide(updates)
    targets = element_targets(indices, axis, data.shape[axis], negative)
    for pos in np.ndindex(indices.shape):  # the spec's loop, in its written order
        t = tuple(int(g[pos]) for g in targets)
        out[t] = f(_scalar(out[t]), _scalar(upd[pos]))
    return _back(out, data)


def nd_targets(data: np.ndarray, indices: Any) -> tuple[np.ndarray, int]:
    """ScatterND/GatherND (batch_dims 0): the indices wrapped, per dim, and k."""
    idx = np.asarray(indices).astype(np.int64)
    k = idx.shape[-1]
    if idx.ndim < 1 or not 1 <= k <= data.ndim:
        raise ValueError(f"indices.shape[-1] = {k} outside [1, {data.ndim}]")
    cols = [wrap(idx[..., j], data.shape[j]) for j in range(k)]
    return np.stack(cols, axis=-1) if cols else idx, k


def scatter_nd(data: Any, indices: Any, updates: Any, reduction: Any = "none") -> np.ndarray:
    data, updates = np.asarray(data), np.asarray(updates)
    idx, k = nd_targets(data, indices)
    want = idx.shape[:-1] + data.shape[k:]
    if updates.shape != want:
        raise ValueError(f"ScatterND: updates shape {updates.shape}, the spec says {want}")
    f = REDUCE[_reduction(reduction)]
    out, upd = _wide(data), _wide(updates)
    for pos in np.ndindex(idx.shape[:-1]):  # "for idx in np.ndindex(update_indices)"
        t = tuple(int(v) for v in idx[pos])
        if len(t) == out.ndim:
            out[t] = f(_scalar(out[t]), _scalar(upd[pos]))
        else:
            cur, new = out[t], upd[pos]
            out[t] = np.array([f(_scalar(a), _scalar(b)) for a, b in zip(cur.reshape(-1), new.reshape(-1))],
                              dtype=out.dtype).reshape(cur.shape)
    return _back(out, data)


# -- the duplicate-index and NaN points ----------------------------------------------------
def _hits(inputs: list, attrs: dict, nd: bool, negative: bool = True) -> dict[tuple, list]:
    """Data position -> the update values aimed at it (in loop order)."""
    data, indices, updates = (np.asarray(x) for x in inputs[:3])
    hits: dict[tuple, list] = {}
    if nd:
        idx, k = nd_targets(data, indices)
        for pos in np.ndindex(idx.shape[:-1]):
            head = tuple(int(v) for v in idx[pos])
            for tail in np.ndindex(data.shape[k:]):
                hits.setdefault(head + tail, []).append(updates[pos + tail])
    else:
        axis = positive_axis(attrs.get("axis", 0), data.ndim)
        targets = element_targets(indices, axis, data.shape[axis], negative)
        for pos in np.ndindex(indices.shape):
            hits.setdefault(tuple(int(g[pos]) for g in targets), []).append(updates[pos])
    return hits


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (float, np.floating)) and np.isnan(a):
        return isinstance(b, (float, np.floating)) and bool(np.isnan(b))
    return bool(a == b)


def duplicates_where(nd: bool, negative: bool = True) -> Callable[[list, dict, list, int], list]:
    """Open: with reduction "none", the elements that two or more different updates aim at."""

    def where(inputs: list, attrs: dict, expected: list, since: int) -> list:
        if _reduction(attrs.get("reduction", "none")) != "none":
            return [None]
        mask = np.zeros(np.shape(inputs[0]), dtype=bool)
        for t, vals in _hits(inputs, attrs, nd, negative).items():
            if len(vals) > 1 and not all(_same(v, vals[0]) for v in vals[1:]):
                mask[t] = True
        return [mask]

    return where


def one_of_the_updates(nd: bool, negative: bool = True) -> Callable[[SilentCheck], bool]:
    def holds(c: SilentCheck) -> bool:
        got = np.asarray(c.actual[0])
        hits = _hits(c.inputs, c.attrs, nd, negative)
        return all(any(_same(got[t], v) for v in hits[t]) for t in zip(*np.nonzero(c.masks[0])))

    return holds


def declare_scatter_points(op: Operator, versions: tuple[int, ...], spec: str | dict[int, str], nd: bool,
                           negative: bool = True) -> None:
    op.spec_silent(
        "duplicate_indices", versions, spec=spec,
        expected="the spec's own loop order (np.ndindex over the updates): the last update aimed at an element wins",
        where=duplicates_where(nd, negative),
        invariants={"an element aimed at by several updates holds one of them": one_of_the_updates(nd, negative)},
        readings={"the first update aimed at an element wins": first_update_wins(nd, negative)})


def first_update_wins(nd: bool, negative: bool = True) -> Callable[[SilentCheck], list]:
    def reading(c: SilentCheck) -> list:
        out = np.array(c.expected[0], copy=True)
        for t, vals in _hits(c.inputs, c.attrs, nd, negative).items():
            out[t] = vals[0]
        return [out]

    return reading


def nan_reduction_where(kind: str) -> Callable[[list, dict, list, int], list]:
    def where(inputs: list, attrs: dict, expected: list, since: int) -> list:
        if _reduction(attrs.get("reduction", "none")) != kind:
            return [None]
        return nan_in_result(inputs, attrs, expected, since)

    return where


def declare_nan_reduction_points(op: Operator, versions: tuple[int, ...], spec: str) -> None:
    for kind, fill in (("max", -np.inf), ("min", np.inf)):
        op.spec_silent(
            f"nan_{kind}", versions, spec=spec,
            expected=f"NaN wherever a NaN meets the {kind} (numpy.{kind}imum, IEEE 754-2019 {kind}imum); the text names no NaN rule",
            where=nan_reduction_where(kind),
            invariants={f"a {kind} is NaN or the {kind} of the non-NaN values": nan_or_ignoring_nan(fill)},
            readings=nan_ignored(fill))


# -- drawing -----------------------------------------------------------------------------------------
def reductions(since: int) -> list[str]:
    return ["none"] + (["add", "mul"] if since >= 16 else []) + (["max", "min"] if since >= 18 else [])


def numeric(dtype: str) -> bool:
    return S.is_float(dtype) or S.is_int(dtype)


def drawn_reductions(dtype: str, reds: list[str]) -> list[str]:
    """The reductions drawn examples use: every one for numeric types but float16/bfloat16,
    whose reductions are in named edges only (ONNX Runtime lacks them, and an expectation can
    name an edge, not a drawn case); "none" for strings and bools."""
    if not numeric(dtype) or dtype in ("float16", "bfloat16"):
        return ["none"]
    return reds


#: values whose sums (halves, |sum| < 128) and products (powers of two) are exact in every float
#: type down to bfloat16, so the unspecified loop order cannot change a rounded add or mul
_ADD_FLOATS = [v / 2 for v in range(-16, 17)]
_MUL_FLOATS = [0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 0.0, -0.0]


def _sampled(d: Callable, dtype: str, shape: tuple[int, ...], pool: list) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    vals = d(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    return np.array(vals, dtype=np.float64 if S.is_float(dtype) else np.int64).astype(S.np_dtype(dtype)).reshape(shape)


def update_values(d: Callable, dtype: str, shape: tuple[int, ...], reduction: str) -> np.ndarray:
    """Updates whose add or mul stays exact and inside the type in any order (at most ~10
    updates meet at one element): the spec leaves the order open, and says nothing of overflow."""
    unsigned = dtype.startswith("u")
    if reduction == "add":
        pool = _ADD_FLOATS if S.is_float(dtype) else list(range(0 if unsigned else -2, 3))
    elif reduction == "mul":
        pool = _MUL_FLOATS if S.is_float(dtype) else list(range(0 if unsigned else -1, 2))
    else:
        return S.arrays(d, dtype, shape=shape)
    return _sampled(d, dtype, shape, pool)


def data_values(d: Callable, dtype: str, shape: tuple[int, ...], reduction: str) -> np.ndarray:
    if reduction == "add":
        pool = _ADD_FLOATS if S.is_float(dtype) else list(range(0 if dtype.startswith("u") else -20, 21))
    elif reduction == "mul":
        pool = _MUL_FLOATS + [4.0, -4.0] if S.is_float(dtype) else list(range(0 if dtype.startswith("u") else -20, 21))
    else:
        return S.arrays(d, dtype, shape=shape)
    return _sampled(d, dtype, shape, pool)


def distinct_positions(d: Callable, n: int, dim: int) -> list[int]:
    """``n`` distinct values of [0, dim) (n <= dim)."""
    return d(st.permutations(list(range(dim))))[:n]


def specials(dtype: str, n: int) -> np.ndarray:
    """``n`` of the dtype's edge values, cycled from the back (NaN, +-inf, subnormals first)."""
    return np.resize(S.edge_values(dtype)[::-1], n)


def edge_example(inputs: list, attrs: dict | None = None, name: str = "") -> Example:
    return Example(inputs, dict(attrs or {}), name=name)


# -- how gathers and scatters enter a generated graph -----------------------------------------------
def take_along_axis(c: Ctx) -> tuple[Any, int, int] | None:
    """A gather's or scatter's data in a generated graph: a float value with no empty dim, an axis
    of it and that axis' length; None when the graph has no such value."""
    x = c.take("float", 0, lambda v: v.rank >= 1 and min(v.shape) > 0)
    if x is None:
        return None
    axis = c.pick(x.rank)
    return x, axis, x.shape[axis]


def gather_elements_plan(c: Ctx) -> Plan | None:
    taken = take_along_axis(c)
    if taken is None:
        return None
    x, axis, dim = taken
    shape = tuple(1 + c.pick(s) if i != axis else 1 + c.pick(4) for i, s in enumerate(x.shape))
    if int(np.prod(shape)) > MAX_ELEMENTS:
        return None
    idx = c.rng.integers(-dim, dim, size=shape)
    return Plan([x, c.ints(idx)], {"axis": axis - x.rank if c.pick(2) else axis})


def scatter_elements_plan(c: Ctx) -> Plan | None:
    """Reduction "none" with distinct targets along the axis (as the spec asks): an exact copy,
    so no rounding and no order question; the reductions are swept by the operator cases."""
    taken = take_along_axis(c)
    if taken is None:
        return None
    x, axis, dim = taken
    shape = tuple(1 + c.pick(s) if i != axis else 1 + c.pick(dim) for i, s in enumerate(x.shape))
    rest = tuple(s for i, s in enumerate(shape) if i != axis)
    cols = [c.rng.permutation(dim)[: shape[axis]] for _ in range(int(np.prod(rest)) if rest else 1)]
    idx = np.moveaxis(np.stack(cols, axis=-1).reshape((shape[axis],) + rest), 0, axis)
    if c.since >= 11:  # negative ones too (Scatter-9 states no bounds: [0, s-1] only)
        idx = np.where(c.rng.integers(0, 2, size=idx.shape) == 1, idx - dim, idx)
    upd = c.const(c.floats(shape, -2.0, 2.0))
    attrs = {"axis": axis - x.rank if c.pick(2) else axis}
    return Plan([x, c.ints(idx), upd], attrs)


def index_template(op: Operator, plan: Callable[[Ctx], Plan | None]) -> None:
    """Gathers and distinct-target scatters move values exactly: NaN is a copied value."""
    op.fuzz(nan=NAN_IEEE, ulps=0.0, type_param="T")(plan)


# -- Scatter / ScatterElements cases ---------------------------------------------------------------
def _element_indices(d: Callable, data_shape: tuple[int, ...], axis: int, distinct: bool, negative: bool, label: str) -> np.ndarray:
    dim = data_shape[axis]
    shape = [d(st.integers(1, s)) if i != axis else d(st.integers(0 if d(st.integers(0, 9)) == 0 else 1, dim if distinct else dim + 2))
             for i, s in enumerate(data_shape)]
    rest = [s for i, s in enumerate(shape) if i != axis]
    n_cols = int(np.prod(rest)) if rest else 1
    if distinct:
        cols = [distinct_positions(d, shape[axis], dim) for _ in range(n_cols)]
    else:
        cols = [d(st.lists(st.integers(0, dim - 1), min_size=shape[axis], max_size=shape[axis])) for _ in range(n_cols)]
    idx = np.array(cols, dtype=np.int64).reshape(rest + [shape[axis]]) if n_cols else np.zeros(rest + [shape[axis]], np.int64)
    idx = np.moveaxis(idx, -1, axis)
    if negative and idx.size and d(st.booleans()):
        flip = np.array(d(st.lists(st.booleans(), min_size=idx.size, max_size=idx.size))).reshape(idx.shape)
        idx = np.where(flip, idx - dim, idx)
    return ints(idx, label)


def draw_elements(d: Callable, dtype: str, since: int, reds: list[str], negative: bool = True) -> Example:
    """Data of rank 1-3, indices and updates of its rank with the axis dim free (distinct
    targets for reduction "none"), every reduction the version has."""
    reduction = d(st.sampled_from(drawn_reductions(dtype, reds)))
    shape = S.shapes(d, min_dims=1, max_dims=3, min_side=1, max_side=4)
    axis = d(st.integers(0, len(shape) - 1))
    data = data_values(d, dtype, shape, reduction)
    idx = _element_indices(d, shape, axis, reduction == "none", negative, d(st.sampled_from(["int64", "int32"])))
    updates = update_values(d, dtype, idx.shape, reduction)
    attrs: dict[str, Any] = {}
    if axis or d(st.booleans()):
        attrs["axis"] = axis - len(shape) if negative and d(st.booleans()) else axis
    if reduction != "none" or (len(reds) > 1 and d(st.booleans())):
        attrs["reduction"] = reduction
    return Example([data, idx, updates], attrs)


def element_edges(dtype: str, since: int, reds: list[str], negative: bool = True) -> list[Example]:
    """The spec's two examples on special values, negative indices, empty tensors, duplicate
    targets with reduction "none" (spec-silent) and with every reduction."""
    dt = S.np_dtype(dtype)
    sp = specials(dtype, 6).reshape(2, 3)
    zeros = np.zeros((3, 3), dtype=dt) if dtype != "string" else np.full((3, 3), "", dtype=object)
    row = np.resize(S.edge_values(dtype), (1, 5))
    out = [
        edge_example([zeros, ints([[1, 0, 2], [0, 2, 1]]), sp], name="spec_example_1"),
        edge_example([row, ints([[1, 3]], "int32"), specials(dtype, 8)[-2:].reshape(1, 2)], {"axis": 1}, "spec_example_2"),
        edge_example([zeros, np.zeros((0, 3), np.int64), sp[:0]], name="empty_updates"),
        edge_example([np.resize(S.edge_values(dtype), (0, 3)), np.zeros((0, 3), np.int64), sp[:0]], {"axis": 1}, "empty_data"),
        edge_example([row, ints([[2, 2]]), sp[:1, :2]], {"axis": -1 if negative else 1}, "duplicate_targets"),
    ]
    if negative:
        out.append(edge_example([zeros, ints([[-1, 0, -3], [-2, 2, 1]]), sp], {"axis": 0}, "negative_indices"))
        out.append(edge_example([row, ints([[-5, 4]], "int32"), sp[:1, :2]], {"axis": -1}, "negative_axis_and_index"))
    if numeric(dtype):
        small = np.array([[1.5, -2.0, 0.5], [-0.5, 2.0, -0.0]]) if S.is_float(dtype) else np.array([[1, -2, 2], [-1, 2, 0]])
        if dtype.startswith("u"):
            small = np.abs(small)
        base = np.array([[1.0, -0.0, 3.0], [0.25, 2.0, -1.0], [4.0, 0.5, -3.0]]) if S.is_float(dtype) else np.array([[1, 0, 3], [2, 2, 1], [4, 5, 3]])
        if dtype.startswith("u"):
            base = np.abs(base)
        dup = ints([[1, 1, 2], [1, 0, 2]])
        for r in reds[1:]:
            out.append(edge_example([base.astype(dt), dup, small.astype(dt)], {"reduction": r}, f"reduction_{r}_duplicates"))
            if S.is_float(dtype) and r in ("max", "min"):
                out.append(edge_example([np.resize(S.edge_values(dtype), (3, 3)), dup, sp], {"reduction": r}, f"reduction_{r}_specials"))
            if S.is_float(dtype) and r in ("add", "mul"):
                inf = np.array([[np.inf, -np.inf, 1.0], [-np.inf, 0.0, np.nan]]).astype(dt)
                out.append(edge_example([base.astype(dt), ints([[0, 0, 1], [0, 2, 1]]), inf], {"reduction": r}, f"reduction_{r}_inf_nan"))
            if S.is_int(dtype) and r in ("max", "min"):
                out.append(edge_example([np.resize(S.edge_values(dtype), (3, 3)), dup, np.resize(S.edge_values(dtype)[::-1], (2, 3))],
                                        {"reduction": r}, f"reduction_{r}_extremes"))
        if len(reds) > 1:
            out.append(edge_example([base.astype(dt), ints([[1, 0, 2], [0, 2, 1]]), small.astype(dt)], {"reduction": "none", "axis": 0}, "reduction_none_named"))
    return out
