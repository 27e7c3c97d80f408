"""RandomNormal: a tensor of the ``shape`` attribute drawn from N(mean, scale^2) (ONNX spec:
RandomNormal-1, 22; 22 adds bfloat16). "The data type is specified by the 'dtype' argument"
(default TensorProto::FLOAT). Judged by shape, dtype, finiteness (every value the mean where
scale is 0), a goodness-of-fit test against the normal distribution and a chi-square test of the
spread (harness.compare.RandomOutput); never by value. Drawn samples hold 12,000 to 16,000 values
(``NORMAL_SAMPLE``), enough for the power the comparator asks (the mean alone, half the scale and
1.05 times the scale are seen)."""

from harness.registry import Example, Operator

from ._random_util import NORMAL_SAMPLE, NORMAL_SHAPE, QUARTERS, draw_shape, dtype_attr, out_dtype, rng, st

op = Operator("RandomNormal")
VERSIONS = (1, 22)

@op.reference(*VERSIONS)
def random_normal(*, shape, dtype=1, seed=None, scale=1.0, mean=0.0):
    shape = tuple(int(s) for s in shape)
    return rng("RandomNormal", shape, mean, scale).normal(mean, scale, shape).astype(out_dtype(dtype))

def _ex(label, attrs, name=""):
    return Example([], {**attrs, **dtype_attr(label, "float32")}, name=name, random=True)

@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    attrs = {"shape": draw_shape(d, NORMAL_SAMPLE)}
    if d(st.booleans()):
        attrs["mean"] = d(QUARTERS)
    if d(st.booleans()):
        attrs["scale"] = d(st.sampled_from([0.25, 0.5, 2.0, 3.0]))
    if d(st.integers(0, 3)) == 0:
        attrs["seed"] = float(d(st.integers(0, 1000)))
    return _ex(dtype, attrs)

@op.edges(*VERSIONS)
def edges(dtype, opset):
    return [
        _ex(dtype, {"shape": list(NORMAL_SHAPE)}, "large_standard"),
        _ex(dtype, {"shape": list(NORMAL_SHAPE), "mean": -2.5, "scale": 0.5}, "large_shifted"),
        _ex(dtype, {"shape": []}, "scalar"),
        _ex(dtype, {"shape": [3, 0]}, "empty"),
        _ex(dtype, {"shape": list(NORMAL_SHAPE), "seed": 7.0}, "seeded"),
        _ex(dtype, {"shape": [4], "mean": 1.0, "scale": 0.0}, "zero_scale"),
    ]
