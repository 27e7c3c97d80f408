"""GatherElements: one value of ``data`` per entry of ``indices``, picked along ``axis``
(ONNX spec: GatherElements-11, 13).

``out[i][j][k] = input[index[i][j][k]][j][k]`` for axis 0 (likewise for any axis and rank):
``indices`` has the rank of ``data``, the output its shape; away from the axis an entry's own
position is the data position, so those dims of ``indices`` are at most the data's. Index values
lie in [-s, s-1] ("It is an error if any of the index values are out of bounds"); -13 adds
bfloat16. Data movement only: every dtype keeps its exact values. Negative axes and index
dims smaller than the data's appear in named edges (onnx.reference fails on both, see
crosscheck.toml); the drawn examples keep to non-negative axes and equal dims.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._index_util import edge_example, element_targets, gather_elements_plan, index_template, ints, positive_axis, specials

op = Operator("GatherElements", type_param="T")
st = S.st
VERSIONS = (11, 13)


@op.reference(*VERSIONS)
def gather_elements(data, indices, *, axis=0):
    data, indices = np.asarray(data), np.asarray(indices)
    if data.ndim < 1 or indices.ndim != data.ndim:
        raise ValueError(f"GatherElements: data rank {data.ndim}, indices rank {indices.ndim}")
    axis = positive_axis(axis, data.ndim)
    if any(i > d for k, (i, d) in enumerate(zip(indices.shape, data.shape)) if k != axis):
        raise ValueError(f"GatherElements: indices {indices.shape} larger than data {data.shape} off the axis")
    return data[element_targets(indices, axis, data.shape[axis])].reshape(indices.shape)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    shape = S.shapes(d, min_dims=1, max_dims=3, min_side=1, max_side=4)
    data = S.arrays(d, dtype, shape=shape)
    axis = d(st.integers(0, len(shape) - 1))
    dim = shape[axis]
    # off the axis the dims equal the data's here; smaller ones (the spec allows them) are named edges
    ishape = tuple(d(st.integers(0 if d(st.integers(0, 9)) == 0 else 1, 4)) if i == axis else s for i, s in enumerate(shape))
    n = int(np.prod(ishape))
    idx = np.array(d(st.lists(st.integers(-dim, dim - 1), min_size=n, max_size=n)), dtype=np.int64).reshape(ishape)
    attrs = {"axis": axis} if axis or d(st.booleans()) else {}  # negative axes: the named edges
    return Example([data, ints(idx, d(st.sampled_from(["int64", "int32"])))], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    grid = np.resize(S.edge_values(dtype), (3, 4))
    sq = specials(dtype, 4).reshape(2, 2)
    cube = np.resize(specials(dtype, 8), (2, 2, 2))
    return [
        edge_example([sq, ints([[0, 0], [1, 0]])], {"axis": 1}, "spec_example_1"),
        edge_example([np.resize(specials(dtype, 9), (3, 3)), ints([[1, 2, 0], [2, 0, 0]], "int32")], {"axis": 0}, "spec_example_2"),
        edge_example([grid, ints([[-1, 0, -3], [-2, 1, 2], [3, -4, 0]])], {"axis": -1}, "negative_axis_and_indices"),
        edge_example([grid, ints([[-1, 0, 2, 1], [2, -3, 0, 0]])], {"axis": 0}, "smaller_off_axis"),
        edge_example([grid, ints([[2, 2, 2, 2]] * 4)], name="repeated_more_than_data"),
        edge_example([cube, ints([[[1], [0]]], "int32")], {"axis": 2}, "rank3_smaller_off_axis"),
        edge_example([grid, np.zeros((0, 4), np.int64)], name="empty_indices"),
        edge_example([np.resize(S.edge_values(dtype), (3, 0)), np.zeros((2, 0), np.int64)], name="empty_data"),
        edge_example([S.edge_values(dtype), ints(np.arange(len(S.edge_values(dtype)))[::-1])], name="all_specials_1d"),
    ]


# -- how it enters a generated graph -------------------------------------------------------
index_template(op, gather_elements_plan)
