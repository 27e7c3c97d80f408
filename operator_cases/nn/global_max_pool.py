"""GlobalMaxPool: the maximum over all spatial cells of each (batch, channel)
(ONNX spec: GlobalMaxPool-1, 22).

"applies max pooling across the values in the same channel. This is equivalent to MaxPool with
kernel size equal to the spatial dimension of input tensor"; the output is (N x C x 1 x ... x 1),
of the input's rank. GlobalMaxPool-22 only adds bfloat16.

Infinities and -0.0 are in. Spec-silent: NaN (the text says nothing). The reference propagates
it (numpy's max, IEEE 754-2019 maximum); a channel holding a NaN is ``unspecified`` when its
value is NaN or the max of the channel's other cells (maximumNumber).
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._families import max_pooling_nan
from ._window_util import batch_edges, draw_input_shape, global_pool_template

op = Operator("GlobalMaxPool")
VERSIONS = (1, 22)
max_pooling_nan(op, VERSIONS, "applies max pooling across the values in the same channel", "channel")


@op.reference(*VERSIONS)
def global_max_pool(x):
    x = np.asarray(x)
    return np.max(x, axis=tuple(range(2, x.ndim)), keepdims=True)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    return Example([S.arrays(d, dtype, shape=draw_input_shape(d), lo=-100, hi=100)])


@op.edges(*VERSIONS)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    inf, nan = np.inf, np.nan
    special = np.array([[[-inf, -inf], [-inf, -inf]], [[inf, 1.0], [0.0, 2.0]], [[-inf, -3.0], [-2.0, -inf]], [[-1.0, -2.0], [-3.0, -4.0]]])
    ramp = (np.arange(24) % 7 - 3).astype(np.float64)
    big = float(S.finite_range(dtype)[1])
    return batch_edges(dtype, Example([ramp.reshape(1, 2, 3, 4).astype(t)])) + [
        Example([special.astype(t)[None]], name="inf"),
        Example([np.array([[[[2.5]]]], dtype=t)], name="single_cell"),
        Example([ramp.reshape(2, 3, 4).astype(t)], name="pool1d"),
        Example([ramp.reshape(1, 2, 3, 2, 2).astype(t)], name="pool3d"),
        Example([np.array([[[-big, big], [0.0, -1.0]]]).astype(t)], name="extremes"),
        Example([np.array([[[[nan, 1], [2, 3]], [[4, 5], [6, nan]], [[nan, nan], [nan, nan]], [[1, nan], [9, 2]]]]).astype(t)],
                name="nan_channels"),
    ]


# how it enters a generated graph (harness.suites.generated)
global_pool_template(op, average=False)
