"""RandomNormalLike: N(mean, scale^2) samples of the input's shape (ONNX spec: RandomNormalLike-1,
22). "The data type is specified by the 'dtype' argument, or copied from the input tensor if not
provided" (T2: the float types; 22 adds bfloat16 to both). The input's values are never read: the
sweep is over the output type (T2), and every input type of T1 is fed by an edge example
(complex64/complex128 excepted: the harness stores no complex tensors)."""

import numpy as np

from harness.registry import Operator

from .._random_util import NORMAL_SAMPLE, NORMAL_SHAPE, declare_like, draw_normal, out_dtype, rng

op = Operator("RandomNormalLike", type_param="T2")
VERSIONS = (1, 22)


@op.reference(*VERSIONS)
def random_normal_like(x, *, dtype=None, seed=None, scale=1.0, mean=0.0):
    shape = np.shape(x)
    return rng("RandomNormalLike", shape, mean, scale).normal(mean, scale, shape).astype(out_dtype(dtype, x))


declare_like(op, VERSIONS, draw_normal, {"mean": -1.5, "scale": 0.5}, NORMAL_SAMPLE, NORMAL_SHAPE)
