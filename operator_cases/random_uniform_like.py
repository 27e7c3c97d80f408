"""RandomUniformLike: uniform samples in [low, high] of the input's shape (ONNX spec:
RandomUniformLike-1, 22). "The data type is specified by the 'dtype' argument, or copied from
the input tensor if not provided" (T2: the float types; 22 adds bfloat16 to both). The input's
values are never read: the sweep is over the output type (T2), and every input type of T1 is fed
by an edge example (complex64/complex128 excepted: the harness stores no complex tensors)."""

import numpy as np

from harness.registry import Operator

from ._random_util import like_edges, like_example, out_dtype, rng, st
from .random_uniform import draw_bounds, uniform

op = Operator("RandomUniformLike", type_param="T2")
VERSIONS = (1, 22)


@op.reference(*VERSIONS)
def random_uniform_like(x, *, dtype=None, seed=None, high=1.0, low=0.0):
    shape = np.shape(x)
    return uniform(rng("RandomUniformLike", shape, low, high), low, high, shape, out_dtype(dtype, x))


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    attrs = draw_bounds(d)
    if d(st.integers(0, 3)) == 0:
        attrs["seed"] = float(d(st.integers(0, 1000)))
    return like_example(d, dtype, opset, attrs)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    return like_edges(dtype, opset, {"low": -2.0, "high": 0.5})
