"""GlobalMaxPool: the maximum over all spatial cells of each (batch, channel)
(ONNX spec: GlobalMaxPool-1, 22).

"applies max pooling across the values in the same channel. This is equivalent to MaxPool with
kernel size equal to the spatial dimension of input tensor"; the output is (N x C x 1 x ... x 1),
of the input's rank. GlobalMaxPool-22 only adds bfloat16.

The spec says nothing about NaN, so no example has one (the reference propagates it, as numpy's
max does); infinities and -0.0 are in.
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from ._window_util import draw_input_shape, global_pool_template

op = Operator("GlobalMaxPool")
VERSIONS = (1, 22)


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
    inf = np.inf
    special = np.array([[[-inf, -inf], [-inf, -inf]], [[inf, 1.0], [0.0, 2.0]], [[-inf, -3.0], [-2.0, -inf]], [[-1.0, -2.0], [-3.0, -4.0]]])
    ramp = (np.arange(24) % 7 - 3).astype(np.float64)
    big = float(S.finite_range(dtype)[1])
    return [
        Example([special.astype(t)[None]], name="inf"),
        Example([np.array([[[[2.5]]]], dtype=t)], name="single_cell"),
        Example([ramp.reshape(2, 3, 4).astype(t)], name="pool1d"),
        Example([ramp.reshape(1, 2, 3, 2, 2).astype(t)], name="pool3d"),
        Example([np.array([[[-big, big], [0.0, -1.0]]]).astype(t)], name="extremes"),
    ]


# how it enters a generated graph (harness.suites.generated)
global_pool_template(op, average=False)
