"""Shape: the shape of the input as a 1-D int64 tensor (ONNX spec: Shape-1, 13, 15, 19, 21, 23, 24, 25).

Shape-15 adds ``start`` and ``end``, a slice of the shape: negative axes count from the back and
"axes will be clamped to the range [0, r] ... if they are out-of-range (after adding r in the
case of negative axis)"; "If start > end, the result will be an empty shape". Later versions
only widen the types (float8 at 19, 4-bit at 21, ...). Values are never read, so every dtype
(string and bool included) and every special value gives the same result.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._tensor_util import STRUCTURAL, edge_data, fill

op = Operator("Shape")
st = S.st
VERSIONS = (1, 13)
SLICED = (15, 19, 21, 23, 24, 25)
# the values are never read: a few drawn shapes per type, the attribute edges in a few types
op.draws(*VERSIONS, *SLICED, share=0.05)


@op.reference(*VERSIONS)
def shape_1(data):
    return np.array(np.shape(data), dtype=np.int64)


def _clamp(axis: int, r: int) -> int:
    return min(max(axis + r if axis < 0 else axis, 0), r)


@op.reference(*SLICED)
def shape_15(data, *, start=0, end=None):
    dims = np.shape(data)
    r = len(dims)
    lo, hi = _clamp(int(start), r), r if end is None else _clamp(int(end), r)
    return np.array(dims[lo:hi] if lo < hi else (), dtype=np.int64)


def _data(d, dtype):
    return S.arrays(d, dtype, max_dims=5, max_side=4, min_side=0 if d(st.integers(0, 5)) == 0 else 1)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    return Example([_data(d, dtype)])


@op.strategy(*SLICED)
def draw_15(d, dtype, opset):
    x = _data(d, dtype)
    r = x.ndim
    attrs = {}
    if d(st.booleans()):
        attrs["start"] = d(st.integers(-r - 2, r + 2))
    if d(st.booleans()):
        attrs["end"] = d(st.integers(-r - 2, r + 2))
    return Example([x], attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    return [Example([x], name=name) for name, x in edge_data(dtype)]


@op.edges(*SLICED)
def edges_15(dtype, opset):
    x = fill(dtype, (2, 3, 4))  # the spec's examples
    if dtype not in STRUCTURAL:
        return edges(dtype, opset) + [Example([x], {"start": 1, "end": -1}, name="start_end")]
    return edges(dtype, opset) + [
        Example([x], {"start": -1}, name="spec_start_neg"),              # [4]
        Example([x], {"end": -1}, name="spec_end_neg"),                  # [2, 3]
        Example([x], {"start": 1, "end": 2}, name="spec_start_end"),     # [3]
        Example([x], {"start": -10, "end": 10}, name="clamped"),         # [2, 3, 4]
        Example([x], {"start": 2, "end": 1}, name="start_after_end"),    # []
        Example([x], {"start": 5}, name="start_past_rank"),              # []
        Example([x], {"end": -7}, name="end_before_zero"),               # []
        Example([fill(dtype, (2, 0, 3))], {"start": 1}, name="empty_dim_sliced"),  # [0, 3]
        Example([fill(dtype, ())], {"start": -1, "end": 1}, name="scalar_sliced"),  # []
    ]
