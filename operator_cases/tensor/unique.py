"""Unique: the distinct values (or slices along ``axis``) of a tensor and three optional maps
(ONNX spec: Unique-11, 28).

Outputs: Y, the distinct values (flattened input) or subtensors (along ``axis``), "sorted in
ascending order or optionally in the order of the first occurrence"; ``indices``, each Y
element's first occurrence in X; ``inverse_indices``, each X element's place in Y; ``counts``.
With ``axis``, slices compare element by element and sort as their flattened values do,
lexicographically (the spec's Example 4). Values compare by ``==``, so -0.0 and 0.0 are one
value (Y holds the first occurring). Unique-28 adds bfloat16.

Spec-silent (declared below): where a NaN sorts (the text points at numpy.unique, which puts it
last; ours too). Whether two NaNs are one value or two is open as well, but the answer changes
the output's length (a wrong-shape, not a value), so no case holds more than one NaN.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator, SilentCheck

from .._index_util import positive_axis

op = Operator("Unique")
st = S.st
VERSIONS = (11, 28)


def _key(v, floats):
    """Sort key of one value: NaN after everything (numpy's order)."""
    if floats:
        f = float(v)
        return (1, 0.0) if f != f else (0, f)
    return (0, v.item() if hasattr(v, "item") else v)


@op.reference(*VERSIONS)
def unique(x, *, axis=None, sorted=1):  # noqa: A002 - the attribute's name
    x = np.asarray(x)
    floats = S.is_float(S.label_of(x.dtype))
    if axis is None:
        items = x.reshape(-1)
        keys = [(_key(v, floats),) for v in items]
    else:
        axis = positive_axis(axis, x.ndim)
        moved = np.moveaxis(x, axis, 0)
        items = moved
        keys = [tuple(_key(v, floats) for v in s.reshape(-1)) for s in moved]
    first: dict = {}
    for i, k in enumerate(keys):
        first.setdefault(k, i)
    uniq = list(first)  # in order of first occurrence
    if sorted:
        uniq.sort()
    place = {k: j for j, k in enumerate(uniq)}
    idx = np.array([first[k] for k in uniq], dtype=np.int64)
    inverse = np.array([place[k] for k in keys], dtype=np.int64)
    counts = np.bincount(inverse, minlength=len(uniq)).astype(np.int64) if len(keys) else np.zeros(0, np.int64)
    if axis is None:
        y = items[idx] if idx.size else items[:0]
    else:
        y = np.take(x, idx, axis=axis)
    return y.astype(x.dtype), idx, inverse, counts


# -- the NaN point -----------------------------------------------------------------------------
def _nan_where(inputs, attrs, expected, since):
    x = np.asarray(inputs[0])
    if not S.is_float(S.label_of(x.dtype)) or not np.isnan(x.astype(np.float64)).any() or not attrs.get("sorted", 1):
        return [None] * len(expected)
    return [np.ones(np.shape(e), dtype=bool) for e in expected]


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if S.is_float(S.label_of(a.dtype)):
        a, b = a.astype(np.float64), b.astype(np.float64)
        return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))
    return a.shape == b.shape and bool(np.all(a == b))


def _consistent(c: SilentCheck) -> bool:
    """Y, indices, inverse_indices and counts describe X (whichever of them the case asks)."""
    x = np.asarray(c.inputs[0])
    axis = c.attrs.get("axis")
    items = x.reshape(-1) if axis is None else np.moveaxis(x, positive_axis(axis, x.ndim), 0)
    y = np.asarray(c.actual[0])
    ys = y.reshape(-1) if axis is None else np.moveaxis(y, positive_axis(axis, x.ndim), 0)
    outs = [np.asarray(a) for a in c.actual]
    if len(outs) > 1:
        idx = outs[1].astype(np.int64)
        if idx.shape != (len(ys),) or (idx.size and (idx.min() < 0 or idx.max() >= len(items))) or not _same(items[idx], ys):
            return False
    if len(outs) > 2:
        inv = outs[2].astype(np.int64)
        if inv.shape != (len(items),) or (inv.size and (inv.min() < 0 or inv.max() >= len(ys))) or not _same(ys[inv], items):
            return False
        if len(outs) > 3 and not np.array_equal(outs[3], np.bincount(inv, minlength=len(ys))):
            return False
    return True


def _ascending_numbers(c: SilentCheck) -> bool:
    if c.attrs.get("axis") is not None:
        return True
    y = np.asarray(c.actual[0]).astype(np.float64).reshape(-1)
    y = y[~np.isnan(y)]
    return bool(np.all(y[1:] > y[:-1]))


op.spec_silent(
    "nan", VERSIONS,
    spec="Outputs are either sorted in ascending order or optionally in the order of the first occurrence of the values in the input.",
    expected="a NaN sorts after every number, as numpy.unique (which the spec links) puts it",
    where=_nan_where,
    invariants={"Y, indices, inverse_indices and counts describe X": _consistent,
                "the numbers of Y ascend": _ascending_numbers})


# -- cases -----------------------------------------------------------------------------------------
@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    shape = S.shapes(d, min_dims=1, max_dims=3, min_side=0 if d(st.integers(0, 9)) == 0 else 1, max_side=4)
    n = int(np.prod(shape))
    pool = S.arrays(d, dtype, shape=(d(st.integers(1, 4)),))  # few values: repeats (ties) everywhere
    x = pool[np.array(d(st.lists(st.integers(0, len(pool) - 1), min_size=n, max_size=n)), dtype=np.int64)].reshape(shape)
    # sorted=0 and string slices appear in named edges only: onnx.reference mishandles both
    # (crosscheck.toml), and a drawn case cannot be named in its expectations
    attrs = {}
    if d(st.booleans()) and shape and n and dtype != "string":  # empty slices along an axis: the named edge
        attrs["axis"] = d(st.integers(-len(shape), len(shape) - 1))
    if d(st.booleans()):
        attrs["sorted"] = 1
    outputs = d(st.sampled_from([None, None, 1, 2, 3]))
    return Example([x], attrs, outputs=outputs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    dt = S.np_dtype(dtype)
    ev = S.edge_values(dtype)
    floats = S.is_float(dtype)
    numbers = ev[~np.isnan(ev.astype(np.float64))] if floats else ev
    rep = np.concatenate([numbers, numbers[::-1]])  # every value twice (-0.0 meets 0.0)

    def a(v):
        return np.array(v).astype(dt)

    out = [
        Example([rep], name="every_value_twice"),
        Example([rep], {"sorted": 0}, name="first_occurrence_order"),
        Example([np.resize(numbers, (2, 3))], {"sorted": 0}, name="unsorted_values_only", outputs=1),
        Example([np.resize(numbers, (3, 4))], name="flattened_2d"),
        Example([np.resize(ev[:0], (0,))], name="empty"),
        Example([np.resize(numbers, (2, 0))], {"axis": 1}, name="empty_axis"),
        Example([np.resize(numbers, (2, 0))], {"axis": 0}, name="empty_slices_axis0"),  # two equal empty slices: one
        Example([np.resize(numbers, (3, 4))], {"sorted": 0}, name="unsorted_three_outputs", outputs=3),
        Example([rep], name="values_only", outputs=1),
    ]
    if dtype not in ("string", "bool"):
        out += [
            Example([a([2, 1, 1, 3, 4, 3])], {"sorted": 0}, name="spec_example_1"),
            Example([a([[1, 3], [2, 3]])], {"sorted": 1}, name="spec_example_2"),
            Example([a([[1, 0, 0], [1, 0, 0], [2, 3, 4]])], {"sorted": 1, "axis": 0}, name="spec_example_3"),
            Example([a([[[1, 1], [0, 1], [2, 1], [0, 1]], [[1, 1], [0, 1], [2, 1], [0, 1]]])], {"sorted": 1, "axis": 1}, name="spec_example_4"),
            Example([a([[[1, 1], [0, 1], [2, 1], [0, 1]], [[1, 1], [0, 1], [2, 1], [0, 1]]])], {"sorted": 0, "axis": -2}, name="unsorted_negative_axis"),
            Example([a([[1, 0, 0], [1, 0, 0], [2, 3, 4]]).T.copy()], {"sorted": 0, "axis": 1}, name="unsorted_axis1_two_outputs", outputs=2),
        ]
    else:
        out.append(Example([np.resize(rep, (4, 3))], {"axis": 0}, name="rows"))
    if floats:  # one NaN only (see the module doc)
        with_nan = np.concatenate([rep, ev[np.isnan(ev.astype(np.float64))][:1]])
        out += [Example([with_nan], name="one_nan_sorted"), Example([with_nan[::-1].copy()], {"sorted": 0}, name="one_nan_first_order"),
                Example([np.stack([with_nan, np.zeros_like(with_nan)])], {"axis": 1}, name="one_nan_column")]
    return out
