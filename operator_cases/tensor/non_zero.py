"""NonZero: the indices of the non-zero elements, row-major, as a (rank, count) int64 tensor
(ONNX spec: NonZero-9, 13; 13 adds bfloat16).

"NonZero behaves similar to numpy.nonzero [...] but for scalar input, NonZero produces output
shape (0, N) instead of (1, N)": a scalar gives a (0, 1) tensor when it is non-zero, (0, 0)
when zero. NaN is not zero (it compares unequal to 0); -0.0 is zero.

Strings are not swept: the spec does not say which string is "zero" (numpy takes the empty
string), and the answer changes the output's shape, which no spec-silent point can leave open.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._tensor_util import edge_data, fill

op = Operator("NonZero")
op.draws(9, 13, share=0.25)  # a wide type sweep of one behaviour: the edge examples carry the special values
st = S.st
VERSIONS = (9, 13)
op.restrict(*VERSIONS, dtypes=(*S.FLOATS, *S.INTS, "bool"))  # no string (see above)


@op.reference(*VERSIONS)
def non_zero(x):
    x = np.asarray(x)
    nz = x.astype(np.float64) != 0 if S.is_float(S.label_of(x.dtype)) else x != 0
    if x.ndim == 0:
        return np.zeros((0, int(nz)), dtype=np.int64)
    return np.array(np.nonzero(nz), dtype=np.int64).reshape(x.ndim, -1)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    # rank >= 1: the scalar rule ((0, N), not numpy's (1, N)) is the scalar* edge examples
    x = S.arrays(d, dtype, min_dims=1, max_dims=4, max_side=4, min_side=0 if d(st.integers(0, 7)) == 0 else 1)
    if x.size and d(st.booleans()):  # many zeros: a mask of them
        keep = np.array(d(st.lists(st.booleans(), min_size=x.size, max_size=x.size))).reshape(x.shape)
        x = np.where(keep, x, np.zeros((), dtype=x.dtype)).astype(x.dtype)
    return Example([x])


@op.edges(*VERSIONS)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    return [Example([x], name=name) for name, x in edge_data(dtype)] + [
        Example([np.zeros((), t)], name="scalar_zero"),
        Example([np.zeros((3, 2), t)], name="all_zero"),
        Example([np.ones((2, 3), t)], name="all_nonzero"),
        Example([fill(dtype, (3, 5))], name="grid"),
    ]
