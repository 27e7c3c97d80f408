"""RandomUniformLike: uniform samples in [low, high] of the input's shape (ONNX spec:
RandomUniformLike-1, 22). "The data type is specified by the 'dtype' argument, or copied from
the input tensor if not provided" (T2: the float types; 22 adds bfloat16 to both). The input's
values are never read: the sweep is over the output type (T2), and every input type of T1 is fed
by an edge example (complex64/complex128 excepted: the harness stores no complex tensors)."""

import numpy as np

from harness.registry import Operator

from .._random_util import declare_like, draw_uniform, out_dtype, rng
from .random_uniform import uniform

op = Operator("RandomUniformLike", type_param="T2")
VERSIONS = (1, 22)


@op.reference(*VERSIONS)
def random_uniform_like(x, *, dtype=None, seed=None, high=1.0, low=0.0):
    shape = np.shape(x)
    return uniform(rng("RandomUniformLike", shape, low, high), low, high, shape, out_dtype(dtype, x))


declare_like(op, VERSIONS, draw_uniform, {"low": -2.0, "high": 0.5})
