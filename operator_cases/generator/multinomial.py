"""Multinomial: ``sample_size`` class indices per row, drawn from the softmax of the row's
"unnormalized log-probability" values (ONNX spec: Multinomial-7, 22; 22 adds bfloat16). Input
[batch_size, class_size], output [batch_size, sample_size] of ``dtype`` int32 (default) or
int64. Judged by shape, dtype, the support [0, class_size) less the classes of probability 0,
and exact binomial tests of the class counts per row (harness.compare.RandomOutput). Drawn
examples take 400 or 600 samples a row (the comparator asks for the power to see a class frequency
off by 1/4, about 320 samples for 15 classes) and logits within 2.5 of each other, so that no
class is nearly certain (always the argmax is then off by 7 % or more: seen). A -inf log-probability is a class of probability
0; NaN is no log-probability (harness.coverage NO_NAN)."""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._random_util import rng, st

op = Operator("Multinomial")
VERSIONS = (7, 22)


@op.reference(*VERSIONS)
def multinomial(x, *, dtype=6, seed=None, sample_size=1):
    logits = np.asarray(x).astype(np.float64)
    batch, classes = logits.shape
    gen = rng("Multinomial", logits.shape, logits.tobytes(), sample_size)
    out = np.zeros((batch, int(sample_size)), np.int64)
    for b in range(batch):
        z = np.exp(logits[b] - logits[b].max())
        out[b] = gen.choice(classes, size=int(sample_size), p=z / z.sum())
    return out.astype(np.int32 if int(dtype) == 6 else np.int64)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    batch, classes = d(st.integers(1, 3)), d(st.integers(1, 5))
    shift = d(st.integers(-12, 12)) / 4  # a softmax does not see it: exact in every type
    x = (S.arrays(d, dtype, shape=(batch, classes), lo=-1.25, hi=1.25).astype(np.float64) + shift).astype(S.np_dtype(dtype))
    attrs = {"sample_size": d(st.sampled_from([400, 600]))}
    if d(st.booleans()):
        attrs["dtype"] = d(st.sampled_from([6, 7]))
    if d(st.integers(0, 3)) == 0:
        attrs["seed"] = float(d(st.integers(0, 1000)))
    return Example([x], attrs, random=True)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    f = S.np_dtype(dtype)
    tiny = S.smallest_subnormal(dtype)
    return [
        Example([np.array([[0.0, 0.0, 0.0, 0.0]], f)], {"sample_size": 400}, name="uniform_classes", random=True),
        Example([np.array([[1.0, 0.0, -1.0], [2.0, 2.0, -2.0]], f)], {"sample_size": 400, "dtype": 7}, name="skewed_int64", random=True),
        Example([np.array([[0.0, -np.inf, 1.0], [-np.inf, 0.5, -np.inf]], f)], {"sample_size": 400}, name="neg_inf_never_drawn", random=True),
        Example([np.array([[-0.0, 0.0, tiny]], f)], {"sample_size": 400}, name="neg_zero_subnormal", random=True),
        Example([np.array([[3.0]], f)], {"sample_size": 5}, name="one_class", random=True),
        Example([np.zeros((0, 3), f)], {"sample_size": 4}, name="empty_batch", random=True),
        Example([np.array([[0.5, -0.5]], f)], {}, name="default_one_sample", random=True),
        Example([np.array([[0.0, 1.0], [1.0, 0.0]], f)], {"sample_size": 400, "seed": 2.0}, name="seeded", random=True),
    ]
