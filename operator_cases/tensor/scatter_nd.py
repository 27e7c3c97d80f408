"""ScatterND: a copy of ``data`` with slices replaced (or reduced into) at index tuples (ONNX
spec: ScatterND-11, 13, 16, 18).

``indices`` (int64, rank q >= 1) holds tuples of k = indices.shape[-1] <= r coordinates;
``updates`` has shape ``indices.shape[:-1] + data.shape[k:]``; the spec's loop ``for idx in
np.ndindex(update_indices): output[tuple(indices[idx])] = updates[idx]`` defines the result.
Negative indices count from the back ("Index values are allowed to be negative"). -13 adds
bfloat16; -16 adds ``reduction`` "none" | "add" | "mul", -18 "max" and "min" (``f(output[...],
updates[idx])``), folded in the loop's order, wide, rounded once (see _index_util).

Spec-silent (declared below): duplicate tuples with reduction "none" ("indices should not have
duplicate entries"; "The order of iteration in the above loop is not specified"); NaN meeting a
max/min reduction. Reductions are drawn for numeric types only.
"""

import itertools

import numpy as np

from harness import strategies as S
from harness.fuzz_api import Ctx, Plan
from harness.registry import Example, Operator

from .._index_util import (data_values, declare_nan_reduction_points, declare_scatter_points, drawn_reductions, edge_example,
                          index_template, ints, numeric, reductions, scatter_nd, specials, update_values)

op = Operator("ScatterND", type_param="T")
st = S.st
VERSIONS = (11, 13, 16, 18)
declare_scatter_points(op, VERSIONS, "indices should not have duplicate entries: that is, if idx1 != idx2, then "
                                     "indices[idx1] != indices[idx2]", nd=True)
declare_nan_reduction_points(op, (18,), "where the `f` is `+`, `*`, `max` or `min` as specified.")


@op.reference(11, 13)
def scatter_nd_11(data, indices, updates):
    return scatter_nd(data, indices, updates)


@op.reference(16, 18)
def scatter_nd_16(data, indices, updates, *, reduction="none"):
    return scatter_nd(data, indices, updates, reduction)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    reds = reductions(opset)
    reduction = d(st.sampled_from(drawn_reductions(dtype, reds)))
    shape = S.shapes(d, min_dims=1, max_dims=3, min_side=1, max_side=4)
    k = d(st.integers(1, len(shape)))
    tuples = list(itertools.product(*[range(s) for s in shape[:k]]))
    mid = [d(st.integers(0 if d(st.integers(0, 9)) == 0 else 1, 3)) for _ in range(d(st.integers(0, 2)))]
    n = int(np.prod(mid)) if mid else 1
    if reduction == "none":  # distinct tuples, as the spec asks
        n = min(n, len(tuples))
        mid = [n] if mid or n != 1 else []
        chosen = [tuples[i] for i in d(st.permutations(range(len(tuples))))[:n]]
    else:
        chosen = [tuples[i] for i in d(st.lists(st.integers(0, len(tuples) - 1), min_size=n, max_size=n))]
    idx = np.array(chosen, dtype=np.int64).reshape(tuple(mid) + (k,))
    if idx.size and d(st.booleans()):
        flip = np.array(d(st.lists(st.booleans(), min_size=idx.size, max_size=idx.size))).reshape(idx.shape)
        idx = np.where(flip, idx - np.array(shape[:k]), idx)
    data = data_values(d, dtype, shape, reduction)
    updates = update_values(d, dtype, idx.shape[:-1] + tuple(shape[k:]), reduction)
    attrs = {"reduction": reduction} if reduction != "none" or (len(reds) > 1 and d(st.booleans())) else {}
    return Example([data, idx, updates], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    dt = S.np_dtype(dtype)
    ev = S.edge_values(dtype)
    row = np.resize(ev, (8,))
    cube = np.resize(ev, (4, 2, 2))
    out = [
        edge_example([row, ints([[4], [3], [1], [7]]), specials(dtype, 4)], name="spec_example_1"),
        edge_example([cube, ints([[0], [2]]), np.resize(specials(dtype, 8), (2, 2, 2))], name="spec_example_2_slices"),
        edge_example([cube, ints([[-1, -2, 0], [0, 1, -1]]), specials(dtype, 2)], name="negative_full_tuples"),
        edge_example([cube, np.zeros((0, 1), np.int64), np.resize(ev, (0, 2, 2))], name="empty_indices"),
        edge_example([np.resize(ev, (2, 0)), ints([[1]]), np.resize(ev, (1, 0))], name="empty_slices"),
        edge_example([row, ints([[2], [2], [-6]]), specials(dtype, 3)], name="duplicate_tuples"),
    ]
    reds = reductions(opset)
    if numeric(dtype):
        base = np.array([1.0, -0.0, 3.0, 0.25]) if S.is_float(dtype) else np.array([1, 0, 3, 2])
        small = np.array([1.5, -2.0, 0.5, 2.0]) if S.is_float(dtype) else np.array([1, -2, 2, -1])
        if dtype.startswith("u"):
            small = np.abs(small)
        dup = ints([[1], [1], [-3], [0]])
        for r in reds[1:]:
            out.append(edge_example([base.astype(dt), dup, small.astype(dt)], {"reduction": r}, f"reduction_{r}_duplicates"))
            if S.is_float(dtype) and r in ("add", "mul"):
                inf = np.array([np.inf, -np.inf, np.nan, 1.0]).astype(dt)
                out.append(edge_example([base.astype(dt), ints([[0], [0], [2], [3]]), inf], {"reduction": r}, f"reduction_{r}_inf_nan"))
            if r in ("max", "min"):
                out.append(edge_example([np.resize(ev, (4, 2)), ints([[0], [0], [3], [-1]]), np.resize(ev[::-1], (4, 2))],
                                        {"reduction": r}, f"reduction_{r}_specials"))
        if len(reds) > 1:
            out.append(edge_example([base.astype(dt), ints([[2], [0]]), small[:2].astype(dt)], {"reduction": "none"}, "reduction_none_named"))
    return out


# -- how it enters a generated graph: distinct tuples, reduction "none" (an exact copy) -----
def fuzz_plan(c: Ctx) -> Plan | None:
    x = c.take("float", 0, lambda v: v.rank >= 1 and min(v.shape) > 0)
    if x is None:
        return None
    k = 1 + c.pick(x.rank)
    tuples = list(itertools.product(*[range(s) for s in x.shape[:k]]))
    n = 1 + c.pick(min(4, len(tuples)))
    idx = np.array([tuples[i] for i in c.rng.permutation(len(tuples))[:n]], dtype=np.int64).reshape(n, k)
    idx = np.where(c.rng.integers(0, 2, size=idx.shape) == 1, idx - np.array(x.shape[:k]), idx)
    upd = c.const(c.floats((n,) + x.shape[k:]))
    return Plan([x, c.ints(idx), upd])


index_template(op, fuzz_plan)
