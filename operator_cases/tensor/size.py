"""Size: the number of elements of the input as an int64 scalar (ONNX spec: Size-1, 13, 19, 21, 23, 24, 25).

Later versions only widen the types (bfloat16 at 13, float8 at 19, 4-bit at 21, ...). Values are
never read: an empty tensor has size 0, a scalar size 1.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._tensor_util import STRUCTURAL, edge_data, fill

op = Operator("Size")
st = S.st
VERSIONS = (1, 13, 19, 21, 23, 24, 25)
op.draws(*VERSIONS, share=0.05)  # the values are never read: a few drawn shapes per type


@op.reference(*VERSIONS)
def size(data):
    return np.array(int(np.prod(np.shape(data), dtype=np.int64)), dtype=np.int64)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    return Example([S.arrays(d, dtype, max_dims=5, max_side=4, min_side=0 if d(st.integers(0, 5)) == 0 else 1)])


@op.edges(*VERSIONS)
def edges(dtype, opset):
    out = [Example([x], name=name) for name, x in edge_data(dtype)]
    if dtype in STRUCTURAL:
        out += [Example([fill(dtype, (0,))], name="empty_1d"), Example([fill(dtype, (1, 1, 1))], name="ones")]
    return out
