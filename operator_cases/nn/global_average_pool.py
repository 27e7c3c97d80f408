"""GlobalAveragePool: the mean over all spatial cells of each (batch, channel)
(ONNX spec: GlobalAveragePool-1, 22).

"applies average pooling across the values in the same channel. This is equivalent to
AveragePool with kernel size equal to the spatial dimension of input tensor"; the output is
(N x C x 1 x ... x 1), of the input's rank. GlobalAveragePool-22 only adds bfloat16.

Evaluated in float64 (sum, then one division) and rounded once; the strategy draws values on a
binary grid on which every partial sum is exact in the input type. NaN and infinities follow IEEE
arithmetic (+inf with -inf averages to NaN).
"""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._common import back, wide
from .._reduce_util import float_grid
from ._window_util import batch_edges, draw_input_shape, global_pool_template

op = Operator("GlobalAveragePool")
VERSIONS = (1, 22)


@op.reference(*VERSIONS)
def global_average_pool(x):
    x = np.asarray(x)
    axes = tuple(range(2, x.ndim))
    return back(np.mean(wide(x), axis=axes, keepdims=True), x)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    shape = draw_input_shape(d)
    return Example([float_grid(d, dtype, shape, int(np.prod(shape[2:])), 8.0, 1)])


@op.edges(*VERSIONS)
def edges(dtype, opset):
    t = S.np_dtype(dtype)
    inf, nan = np.inf, np.nan
    special = np.array([[[1.0, nan], [2.0, 3.0]], [[inf, 1.0], [0.0, 2.0]], [[inf, -inf], [1.0, 1.0]], [[-0.0, -0.0], [-0.0, -0.0]]])
    ramp = (np.arange(24) % 7 - 3).astype(np.float64)
    return batch_edges(dtype, Example([ramp.reshape(1, 2, 3, 4).astype(t)])) + [
        Example([special.astype(t)[None]], name="nan_inf"),
        Example([np.array([[[[2.5]]]], dtype=t)], name="single_cell"),
        Example([ramp.reshape(2, 3, 4).astype(t)], name="pool1d"),
        Example([ramp.reshape(1, 2, 3, 2, 2).astype(t)], name="pool3d"),
        Example([np.full((1, 1, 6, 6), 1000.0).astype(t)], name="large_sum"),
    ]


# how it enters a generated graph (harness.suites.generated)
global_pool_template(op, average=True)
