"""GatherND: slices of ``data`` picked by index tuples, the last dim of ``indices`` (ONNX spec:
GatherND-11, 12, 13).

``indices`` (int64, rank q >= 1) holds tuples of k = indices.shape[-1] coordinates, 1 <= k <= r - b;
each picks ``data[batch..., tuple]``, a scalar when k = r - b and a slice otherwise; the output has
shape ``indices.shape[:-1] + data.shape[b + k:]``. GatherND-12 adds ``batch_dims`` b: the first b
dims of data and indices are batches walked in step ("b < min(q, r)"); -13 adds bfloat16. Index
values lie in [-s, s-1] ("It is an error if any of the index values are out of bounds").
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import Ctx, Plan
from harness.registry import Example, Operator

from .._index_util import edge_example, index_template, ints, specials, wrap

op = Operator("GatherND", type_param="T")
st = S.st
VERSIONS = (11, 12, 13)


@op.reference(*VERSIONS)
def gather_nd(data, indices, *, batch_dims=0):
    data, idx = np.asarray(data), np.asarray(indices).astype(np.int64)
    b, r, q = int(batch_dims), data.ndim, idx.ndim
    if r < 1 or q < 1 or not 0 <= b < min(q, r) or idx.shape[:b] != data.shape[:b]:
        raise ValueError(f"GatherND: data {data.shape}, indices {idx.shape}, batch_dims {b} do not fit")
    k = idx.shape[-1]
    if not 1 <= k <= r - b:
        raise ValueError(f"GatherND: indices.shape[-1] = {k} outside [1, {r - b}]")
    cols = [wrap(idx[..., j], data.shape[b + j]) for j in range(k)]
    out = np.empty(idx.shape[:-1] + data.shape[b + k:], dtype=data.dtype)
    for pos in np.ndindex(idx.shape[:-1]):
        out[pos] = data[pos[:b] + tuple(int(c[pos]) for c in cols)]
    return out


def _indices(d, dshape, b, k):
    mid = [d(st.integers(0 if d(st.integers(0, 9)) == 0 else 1, 3)) for _ in range(d(st.integers(0, 2)))]
    shape = tuple(dshape[:b]) + tuple(mid) + (k,)
    n = int(np.prod(shape))
    flat = [d(st.integers(-dshape[b + (i % k)], dshape[b + (i % k)] - 1)) for i in range(n)]
    return np.array(flat, dtype=np.int64).reshape(shape)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    shape = S.shapes(d, min_dims=1, max_dims=3, min_side=1, max_side=4)
    r = len(shape)
    b = d(st.integers(0, r - 1)) if opset >= 12 else 0
    k = d(st.integers(1, r - b))
    idx = _indices(d, shape, b, k)  # rank q = b + (0..2) + 1 > b
    attrs = {"batch_dims": b} if b or (opset >= 12 and d(st.booleans())) else {}
    return Example([S.arrays(d, dtype, shape=shape), idx], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    sq = specials(dtype, 4).reshape(2, 2)
    cube = np.resize(S.edge_values(dtype), (2, 2, 2))
    out = [
        edge_example([sq, ints([[0, 0], [1, 1]])], name="spec_example_1"),
        edge_example([sq, ints([[1], [0]])], name="spec_example_2"),
        edge_example([cube, ints([[0, 1], [1, 0]])], name="spec_example_3"),
        edge_example([cube, ints([[[0, 1]], [[1, 0]]])], name="spec_example_4"),
        edge_example([cube, ints([[-1, -2, -1], [0, -1, 1], [-2, 0, 0]])], name="negative_full_tuples"),
        edge_example([np.resize(S.edge_values(dtype), (3, 5)), ints([[[2], [2]], [[-3], [0]]])], name="repeated_rows"),
        edge_example([cube, np.zeros((0, 2), np.int64)], name="empty_indices"),
        edge_example([np.resize(S.edge_values(dtype), (2, 0, 3)), ints([[1], [0]])], name="empty_slices"),
        edge_example([S.edge_values(dtype), ints([[len(S.edge_values(dtype)) - 1], [0], [-1]])], name="rank1_data"),
    ]
    if opset >= 12:
        out += [
            edge_example([cube, ints([[1], [0]])], {"batch_dims": 1}, "spec_example_5"),
            edge_example([cube, ints([[[1, 0]], [[-1, -1]]])], {"batch_dims": 1}, "batch_dims_1_scalars"),
            edge_example([cube, ints([[[1], [0]], [[0], [-1]]])], {"batch_dims": 2}, "batch_dims_2"),
            edge_example([cube, ints([[0, 1], [1, 0]])], {"batch_dims": 0}, "batch_dims_0_named"),
        ]
    return out


# -- how it enters a generated graph -------------------------------------------------------
def fuzz_plan(c: Ctx) -> Plan | None:
    x = c.take("float", 0, lambda v: v.rank >= 1 and min(v.shape) > 0)
    if x is None:
        return None
    b = c.pick(x.rank) if c.since >= 12 else 0
    k = 1 + c.pick(x.rank - b)
    count = 1 + c.pick(3)
    cols = [c.rng.integers(-s, s, size=x.shape[:b] + (count,)) for s in x.shape[b:b + k]]
    attrs = {"batch_dims": b} if b else {}
    return Plan([x, c.ints(np.stack(cols, axis=-1))], attrs)


index_template(op, fuzz_plan)
