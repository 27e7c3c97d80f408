"""RandomNormal: a tensor of the ``shape`` attribute drawn from N(mean, scale^2) (ONNX spec:
RandomNormal-1, 22; 22 adds bfloat16). "The data type is specified by the 'dtype' argument"
(default TensorProto::FLOAT). Judged by shape, dtype, finiteness (every value the mean where
scale is 0), a goodness-of-fit test against the normal distribution and a chi-square test of the
spread (harness.compare.RandomOutput); never by value. Drawn samples hold 12,000 to 16,000 values
(``NORMAL_SAMPLE``), enough for the power the comparator asks (the mean alone, half the scale and
1.05 times the scale are seen)."""

from harness.registry import Operator

from .._random_util import NORMAL_SAMPLE, NORMAL_SHAPE, draw_normal, draw_shape, out_dtype, rng, shaped_example

op = Operator("RandomNormal")
VERSIONS = (1, 22)

@op.reference(*VERSIONS)
def random_normal(*, shape, dtype=1, seed=None, scale=1.0, mean=0.0):
    shape = tuple(int(s) for s in shape)
    return rng("RandomNormal", shape, mean, scale).normal(mean, scale, shape).astype(out_dtype(dtype))

@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    return shaped_example(dtype, {"shape": draw_shape(d, NORMAL_SAMPLE), **draw_normal(d)})

@op.edges(*VERSIONS)
def edges(dtype, opset):
    return [
        shaped_example(dtype, {"shape": list(NORMAL_SHAPE)}, "large_standard"),
        shaped_example(dtype, {"shape": list(NORMAL_SHAPE), "mean": -2.5, "scale": 0.5}, "large_shifted"),
        shaped_example(dtype, {"shape": []}, "scalar"),
        shaped_example(dtype, {"shape": [3, 0]}, "empty"),
        shaped_example(dtype, {"shape": list(NORMAL_SHAPE), "seed": 7.0}, "seeded"),
        shaped_example(dtype, {"shape": [4], "mean": 1.0, "scale": 0.0}, "zero_scale"),
    ]
