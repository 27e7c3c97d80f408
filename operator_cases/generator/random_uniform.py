"""RandomUniform: a tensor of the ``shape`` attribute drawn uniformly from [low, high] (ONNX
spec: RandomUniform-1, 22; 22 adds bfloat16). "The data type is specified by the 'dtype'
argument" (default TensorProto::FLOAT). Judged by shape, dtype, the support [low, high] and a
goodness-of-fit (Kolmogorov-Smirnov distance) test against the uniform distribution
(harness.compare.RandomOutput); drawn samples hold 200 to 800 values, enough for the power the
comparator asks (a sample at the midpoint is seen).

Bounds are drawn as quarters, exact in every output type, so a value rounded to the output type
at a bound is still inside it."""

import numpy as np

from harness.registry import Operator

from .._random_util import draw_shape, draw_uniform, out_dtype, rng, shaped_example

op = Operator("RandomUniform")
VERSIONS = (1, 22)


def uniform(gen, low, high, shape, dtype):
    """A sample in [low, high], rounded to ``dtype`` and clipped back into the bounds."""
    return np.clip(gen.uniform(low, high, shape), low, high).astype(dtype)


@op.reference(*VERSIONS)
def random_uniform(*, shape, dtype=1, seed=None, high=1.0, low=0.0):
    shape = tuple(int(s) for s in shape)
    return uniform(rng("RandomUniform", shape, low, high), low, high, shape, out_dtype(dtype))


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    return shaped_example(dtype, {"shape": draw_shape(d), **draw_uniform(d)})


@op.edges(*VERSIONS)
def edges(dtype, opset):
    return [
        shaped_example(dtype, {"shape": [40, 25]}, "large_unit"),
        shaped_example(dtype, {"shape": [30, 20], "low": -3.0, "high": -0.5}, "large_negative_range"),
        shaped_example(dtype, {"shape": []}, "scalar"),
        shaped_example(dtype, {"shape": [3, 0]}, "empty"),
        shaped_example(dtype, {"shape": [20, 10], "seed": 7.0}, "seeded"),
        shaped_example(dtype, {"shape": [8, 6, 5], "low": 2.0, "high": 2.5}, "narrow_range"),
    ]
