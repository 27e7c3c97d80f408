"""TopK: the k largest (or smallest) elements along ``axis`` and their indices (ONNX spec:
TopK-1, 10, 11, 24).

TopK-1 takes ``k`` as an attribute, TopK-10 as a 1-D input K "containing a single positive
value"; TopK-11 adds ``largest`` and ``sorted`` and the integer types, TopK-24 bfloat16. Ties
are fixed by the text of every version: "Given two equivalent values, this operator uses the
indices along the axis as a tiebreaker. That is, the element with the lower index will appear
first." (so -0.0 and 0.0, equal values, keep their index order).

Spec-silent (declared below): where NaN ranks (no version says); and the order of the outputs
with sorted=0 ("order of returned 'Values' and 'Indices' are undefined"), though which elements
are chosen stays fixed by the tie rule.
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_ASSUMED, Ctx, Plan, margin
from harness.registry import Example, Operator, SilentCheck

from .._index_util import ints, positive_axis

op = Operator("TopK")
st = S.st
VERSIONS = (1, 10, 11, 24)


def _is_float(x):
    return S.is_float(S.label_of(np.asarray(x).dtype))


def _rows(x, axis):
    """``x`` with ``axis`` moved last, as rows (and the moved shape)."""
    moved = np.moveaxis(np.asarray(x), axis, -1)
    return moved.reshape(int(np.prod(moved.shape[:-1])), moved.shape[-1]), moved.shape


def top_k(x, k, axis=-1, largest=1):
    """Sorted always: with sorted=0 the order is open (the point below), the sorted one our choice."""
    x = np.asarray(x)
    if x.ndim < 1:
        raise ValueError("TopK: a scalar has no axis")
    axis = positive_axis(axis, x.ndim)
    n, k = x.shape[axis], int(k)
    if not 0 <= k <= n:
        raise ValueError(f"TopK: k = {k} outside [0, {n}]")
    rows, moved = _rows(x, axis)
    floats = _is_float(x)
    wide = rows.astype(np.float64) if floats else rows.astype(object)

    def key(row, i):
        v = row[i]
        nan = floats and bool(np.isnan(v))
        # NaN ranks above +inf (numpy's sort, IEEE totalOrder of a positive NaN); then the lower index
        if largest:
            return (0 if nan else 1, 0 if nan else -v, i)
        return (1 if nan else 0, 0 if nan else v, i)

    order = np.array([sorted(range(n), key=lambda i, row=row: key(row, i))[:k] for row in wide], dtype=np.int64).reshape(-1, k)
    values = np.take_along_axis(rows, order, axis=1) if rows.size else np.zeros((rows.shape[0], k), dtype=x.dtype)
    shape = moved[:-1] + (k,)
    return (np.moveaxis(values.reshape(shape), -1, axis).astype(x.dtype),
            np.moveaxis(order.reshape(shape), -1, axis).astype(np.int64))


@op.reference(1)
def top_k_1(x, *, k, axis=-1):
    return top_k(x, k, axis)


@op.reference(10)
def top_k_10(x, k, *, axis=-1):
    return top_k(x, _k(k), axis)


@op.reference(11, 24)
def top_k_11(x, k, *, axis=-1, largest=1, sorted=1):  # noqa: A002
    return top_k(x, _k(k), axis, largest)


def _k(k):
    k = np.asarray(k)
    if k.shape != (1,):
        raise ValueError(f"TopK: K must be a 1-D tensor of one value, got shape {k.shape}")
    return int(k[0])


# -- spec-silent points ------------------------------------------------------------------------
def _axis(attrs, x):
    return positive_axis(attrs.get("axis", -1), np.asarray(x).ndim)


def _nan_rows(inputs, attrs, expected, since):
    x = np.asarray(inputs[0])
    if not _is_float(x) or not np.isnan(x.astype(np.float64)).any():
        return [None, None]
    axis = _axis(attrs, x)
    rows = np.isnan(x.astype(np.float64)).any(axis=axis, keepdims=True)
    return [np.broadcast_to(rows, np.shape(e)) for e in expected]


def _values_at_indices(c: SilentCheck) -> bool:
    x = np.asarray(c.inputs[0])
    axis = _axis(c.attrs, x)
    idx = np.asarray(c.actual[1]).astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= x.shape[axis]):
        return False
    picked = np.take_along_axis(x, idx, axis=axis).astype(np.float64)
    got = np.asarray(c.actual[0]).astype(np.float64)
    return bool(np.all((picked == got) | (np.isnan(picked) & np.isnan(got))))


def _distinct_indices(c: SilentCheck) -> bool:
    rows, _ = _rows(np.asarray(c.actual[1]), _axis(c.attrs, c.inputs[0]))
    return all(len(set(r.tolist())) == len(r) for r in rows)


def _same_pairs(c: SilentCheck) -> bool:
    """Per row, the (index, value) pairs equal ours in some order."""
    axis = _axis(c.attrs, c.inputs[0])
    (ev, _), (ei, _) = _rows(c.expected[0], axis), _rows(c.expected[1], axis)
    (av, _), (ai, _) = _rows(c.actual[0], axis), _rows(c.actual[1], axis)
    for e_v, e_i, a_v, a_i in zip(ev, ei, av, ai):
        eo, ao = np.argsort(e_i, kind="stable"), np.argsort(a_i, kind="stable")
        if not np.array_equal(e_i[eo], a_i[ao]):
            return False
        x, y = e_v[eo].astype(np.float64), a_v[ao].astype(np.float64)
        if not np.all((x == y) | (np.isnan(x) & np.isnan(y))):
            return False
    return True


op.spec_silent(
    "nan", VERSIONS,
    spec={1: "Retrieve the top-K elements along a specified axis.",
          11: "Retrieve the top-K largest or smallest elements along a specified axis."},
    expected="NaN ranks above +inf (numpy's sort order, IEEE 754 totalOrder of a positive NaN): first among the largest, "
             "last among the smallest; equal ranks keep the lower index first",
    where=_nan_rows,
    invariants={"every value is the input element at its index (NaN for NaN)": _values_at_indices,
                "the indices of a row are distinct": _distinct_indices},
    readings={"NaN ranks below -inf (last among the largest, first among the smallest)": lambda c: _nan_as(c, -np.inf)})


def _nan_as(c: SilentCheck, fill: float) -> list:
    """TopK with NaN ranked as ``fill`` (ties by index): the indices of that order, the values read back (NaN kept)."""
    x = np.asarray(c.inputs[0])
    out = c.reference(np.where(np.isnan(x), np.asarray(fill, x.dtype), x), *c.inputs[1:], **c.attrs)
    idx = np.asarray(out[1])
    values = np.take_along_axis(x, idx.astype(np.int64), axis=_axis(c.attrs, x)) if idx.size else np.asarray(out[0])
    return [values.astype(np.asarray(c.expected[0]).dtype), idx.astype(np.asarray(c.expected[1]).dtype)]
# No reading computes the order of an unsorted result: the text calls it undefined, and ONNX Runtime returns its
# selection's own order (neither by index nor by value); the invariants check the set of (index, value) pairs.
op.spec_silent(
    "unsorted", (11, 24),
    spec="If \"sorted\" is 0, order of returned 'Values' and 'Indices' are undefined.",
    expected="the sorted order, as with sorted=1",
    where=lambda inputs, attrs, expected, since: [np.full(np.shape(e), not attrs.get("sorted", 1)) for e in expected],
    invariants={"the same elements (index and value) as sorted=1 gives, in some order": _same_pairs,
                "every value is the input element at its index (NaN for NaN)": _values_at_indices})


# -- cases -----------------------------------------------------------------------------------------
def _example(x, k, attrs, opset, name=""):
    attrs = dict(attrs)
    if opset < 10:
        return Example([x], {**attrs, "k": k}, name=name)
    return Example([x, ints([k])], attrs, name=name)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    shape = S.shapes(d, min_dims=1, max_dims=3, min_side=1, max_side=5)
    if d(st.booleans()):  # ties: values from a pool of three
        pool = S.arrays(d, dtype, shape=(3,))
        x = pool[np.array(d(st.lists(st.integers(0, 2), min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))), dtype=np.int64)].reshape(shape)
    else:
        x = S.arrays(d, dtype, shape=shape)
    axis = d(st.integers(-len(shape), len(shape) - 1))
    k = d(st.integers(1, shape[axis]))
    attrs = {"axis": axis} if axis != -1 or d(st.booleans()) else {}
    if opset >= 11:
        if d(st.booleans()):
            attrs["largest"] = d(st.integers(0, 1))
        if d(st.integers(0, 3)) == 0:
            attrs["sorted"] = d(st.integers(0, 1))
    return _example(x, k, attrs, opset)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    ev = S.edge_values(dtype)
    n = len(ev)
    ties = np.resize(ev[: min(4, n)], (2, 6))  # each value twice per row: ties everywhere
    nan_free = ev[~np.isnan(ev.astype(np.float64))] if S.is_float(dtype) else ev
    out = [
        _example(nan_free, len(nan_free), {}, opset, "all_values_sorted"),
        _example(ties, 3, {}, opset, "ties_lower_index_first"),
        _example(ties.T.copy(), 2, {"axis": 0}, opset, "ties_axis0"),
        _example(np.resize(ev, (3, 2, 4)), 2, {"axis": 1}, opset, "rank3_middle_axis"),
        _example(np.resize(ev, (0, 4)), 2, {}, opset, "empty_rows"),
        _example(np.resize(nan_free, (2, 3)), 1, {"axis": -1}, opset, "k_1"),
    ]
    if S.is_float(dtype):
        out.append(_example(np.resize(ev, (2, n)), 4, {}, opset, "nan_rows"))  # spec-silent: NaN's rank
    if opset >= 11:
        out += [
            _example(ties, 3, {"largest": 0}, opset, "smallest_ties"),
            _example(np.resize(nan_free, (2, len(nan_free))), len(nan_free), {"largest": 0, "sorted": 1}, opset, "smallest_all"),
            _example(np.resize(nan_free, (3, 4)), 3, {"sorted": 0}, opset, "unsorted"),  # spec-silent: the order
            _example(ties, 4, {"largest": 0, "sorted": 0, "axis": 1}, opset, "smallest_unsorted_ties"),
        ]
        if S.is_float(dtype):
            out.append(_example(np.resize(ev, (2, n)), 5, {"largest": 0}, opset, "smallest_nan_rows"))
    return out


# -- how it enters a generated graph: values and indices, away from near-ties ------------------
def _stable(ins, attrs, u):
    """Which elements are chosen, and their order, does not change when the values move by their
    margin: every gap between neighbours in sorted order exceeds twice the largest margin."""
    x = ins[0]
    if x.wide.dtype.kind != "f" or (x.node is None and not x.err.any()):
        return True  # exact values: ties are exact, and the spec breaks them (the lower index first)
    axis = attrs.get("axis", -1)
    w = np.sort(np.moveaxis(x.wide, axis, -1), axis=-1)
    m = np.max(np.moveaxis(np.broadcast_to(margin(x, u), x.shape), axis, -1), axis=-1, keepdims=True)
    return bool(np.all(np.diff(w, axis=-1) > 2 * m))


@op.fuzz(nan=NAN_ASSUMED, ulps=0.0, jumps=True, stable=_stable)
def fuzz(c: Ctx) -> Plan | None:
    x = c.take("float", 0, lambda v: v.rank >= 1 and v.shape[-1] > 0)
    if x is None:
        return None
    axis = -1 - c.pick(x.rank)
    if x.shape[axis] == 0:
        return None
    k = 1 + c.pick(x.shape[axis])
    attrs = {"axis": axis} if axis != -1 else {}
    if c.since >= 11 and c.pick(2):
        attrs["largest"] = 0
    if c.since < 10:
        return Plan([x], {**attrs, "k": k})
    return Plan([x, c.ints([k])], attrs)
