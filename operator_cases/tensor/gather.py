"""Gather: pick slices of ``data`` along ``axis`` by ``indices`` (ONNX spec: Gather-1, 11, 13).

The output has rank q + (r - 1): the q dimensions of ``indices`` take the place of ``axis``
("output[j_0, i_0, ..., i_{q-1}, j_1, ...] = input[j_0, k, j_1, ...]" with k = indices[i_0, ...]).
``data`` has rank r >= 1, ``indices`` (int32 or int64) any rank q, a scalar included; ``axis``
may be negative in every version (range [-r, r-1]). Gather-1 only says index values "are
expected to be within bounds", so its cases use [0, s-1]; Gather-11 states the bounds as
[-s, s-1] (a negative index counts from the back); Gather-13 adds bfloat16. An index out of
bounds is an error, so no case draws one. Data movement only: the output has the input's dtype
and its exact values (complex types are not swept: the harness has no complex dtype label).
"""

import numpy as np

from harness import strategies as S
from harness.fuzz_api import NAN_IEEE, Ctx, Plan, size_of
from harness.registry import Example, Operator

from .._index_util import take_along_axis

op = Operator("Gather")
st = S.st
VERSIONS = (1, 11, 13)
MAX_OUT = 256


@op.reference(*VERSIONS)
def gather(data, indices, *, axis=0):
    data = np.asarray(data)
    axis = int(axis)
    axis = axis + data.ndim if axis < 0 else axis
    idx = np.asarray(indices).astype(np.int64)
    dim = data.shape[axis]
    if idx.size and (idx.min() < -dim or idx.max() >= dim):
        raise ValueError(f"Gather: index out of bounds [-{dim}, {dim - 1}]: the strategy must not draw it")
    idx = np.where(idx < 0, idx + dim, idx)
    # np.take along an axis puts the index dimensions in place of that axis, as the spec does
    return np.take(data, idx, axis=axis)


def _ints(values, label):
    return np.array(values, dtype=np.int64).astype(S.np_dtype(label))


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    data = S.arrays(d, dtype, min_dims=1, max_dims=3, min_side=1, max_side=5)
    r = data.ndim
    axis = d(st.integers(0, r - 1))
    dim = data.shape[axis]
    rest = data.size // dim
    q = d(st.sampled_from([1, 0, 2, 1, 3]))
    ishape = []
    for _ in range(q):
        room = max(1, MAX_OUT // max(1, rest * int(np.prod(ishape or [1]))))
        ishape.append(d(st.integers(0 if d(st.integers(0, 9)) == 5 else 1, max(1, min(4, room)))))
    lo = 0 if opset < 11 else -dim
    n = int(np.prod(ishape)) if ishape else 1
    values = d(st.lists(st.integers(lo, dim - 1), min_size=n, max_size=n))
    indices = _ints(values, d(st.sampled_from(["int64", "int32"]))).reshape(ishape)
    attrs = {}
    if axis or d(st.booleans()):
        attrs["axis"] = axis - r if d(st.booleans()) else axis
    return Example([data, indices], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    x = S.edge_values(dtype)                   # 1-D, every special value of the type
    n = len(x)
    grid = np.resize(x, (3, 4))
    neg = opset >= 11
    rep = [-1, 0, -1, 1, 1, -n] if neg else [n - 1, 0, n - 1, 1, 1, 0]
    out = [
        Example([x, _ints(rep, "int64")], name="negative_and_repeated" if neg else "repeated"),
        Example([grid, _ints(-2 if neg else 1, "int64")], name="scalar_index"),
        Example([grid, _ints(3 if not neg else -1, "int32")], {"axis": 1}, name="scalar_index_axis1_int32"),
        Example([grid, _ints([[0, 2], [3, 3]] if not neg else [[0, -2], [-1, 3]], "int64")], {"axis": -1}, name="matrix_indices_last_axis"),
        Example([grid, _ints([[[1]], [[0]]], "int32")], name="rank3_indices"),
        Example([grid, np.zeros((0,), dtype=np.int64)], name="empty_indices"),
        Example([grid, np.zeros((2, 0), dtype=np.int64)], {"axis": 1}, name="empty_indices_2d"),
        Example([np.resize(x, (0, 3)), _ints([1, 0], "int64")], {"axis": 1}, name="empty_data"),
    ]
    return out


# -- how it enters a generated graph -------------------------------------------------------
@op.fuzz(nan=NAN_IEEE, ulps=0.0, type_param="T")
def fuzz(c: Ctx) -> Plan | None:
    taken = take_along_axis(c)
    if taken is None:
        return None
    x, axis, dim = taken
    count = 1 + c.pick(4)
    idx = [c.pick(2 * dim) - dim for _ in range(count)]
    shape = c.choice([(count,), (), (count, 1)]) if count == 1 else c.choice([(count,), (1, count)])
    indices = np.array(idx[: size_of(shape)], dtype=np.int64).reshape(shape)
    return Plan([x, c.ints(indices)], {"axis": axis - x.rank if c.pick(2) else axis})
