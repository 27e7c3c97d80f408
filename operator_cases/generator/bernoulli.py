"""Bernoulli: 0 or 1 per element, 1 with the probability the input holds there (ONNX spec:
Bernoulli-15, 22; 22 adds bfloat16 input). "The input tensor should be a tensor containing
probabilities p (a value in the range [0,1])"; the output type is the ``dtype`` attribute, "if not
specified, we will use the data type of the input tensor" (T2: every numeric type and bool).
"This operator is non-deterministic and may not produce the same values in different
implementations (even if a seed is specified)": judged by shape, dtype, the support {0, 1} (the
certain outcome where p is 0 or 1) and exact tests of the number of ones given p, where p <= 1/2
and where p > 1/2 (harness.compare.RandomOutput). A drawn example holds 1 to 3 probabilities,
each in 400 elements (the comparator asks a group of elements for the power to see a rate of ones
off by 1/4, about 310 elements), and the certain 0 and 1. The sweep is over the output type; NaN and infinities are no
probabilities, so no example holds one (harness.coverage NO_NAN/NO_INF)."""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._random_util import draw_seed, out_dtype, rng, st

op = Operator("Bernoulli", type_param="T2")
VERSIONS = (15, 22)
#: elements per drawn probability
GROUP = 400


def _inputs(opset):
    return ("float32", "float64", "float16") + (("bfloat16",) if opset >= 22 else ())


@op.reference(*VERSIONS)
def bernoulli(x, *, dtype=None, seed=None):
    p = np.asarray(x).astype(np.float64)
    ones = rng("Bernoulli", p.shape, p.tobytes()).random(p.shape) < p
    return ones.astype(np.float64).astype(out_dtype(dtype, x))


def _ex(p, dtype, name="", **attrs):
    label = S.label_of(np.asarray(p).dtype)
    extra = {} if label == dtype else {"dtype": S.onnx_code(dtype)}
    return Example([p], {**attrs, **extra}, name=name, random=True)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    in_label = dtype if dtype in _inputs(opset) and d(st.booleans()) else d(st.sampled_from(_inputs(opset)))
    pool = S.arrays(d, in_label, shape=(d(st.integers(1, 3)),), lo=1 / 16, hi=15 / 16)
    # the certain outcomes, the only values a sample fixes, in every drawn example
    p = np.concatenate([[0.0], np.repeat(pool.astype(np.float64), GROUP), [1.0]]).astype(pool.dtype)
    p = p.reshape((2, -1) if d(st.booleans()) else (-1,))  # 400 k + 2 elements: even
    return _ex(p, dtype, **draw_seed(d))


@op.edges(*VERSIONS)
def edges(dtype, opset):
    f = S.np_dtype("float32")
    tiny = S.smallest_subnormal("float32")
    out = [
        _ex(np.array([0.0, -0.0, 1.0, 0.0, 1.0, -0.0], f), dtype, "certain"),
        _ex(np.resize(np.array([0.0, 0.25, 0.5, 0.75, 1.0], f), (80, 25)), dtype, "large_mixed"),
        _ex(np.full((30, 30), 0.3, f), dtype, "large_uniform_p"),
        _ex(np.array([tiny, -0.0, tiny, 1.0], f), dtype, "subnormal_p"),
        _ex(np.array(0.5, f), dtype, "scalar"),
        _ex(np.zeros((2, 0, 3), f), dtype, "empty"),
        _ex(np.full((20, 20), 0.5, f), dtype, "seeded", seed=5.0),
    ]
    for label in _inputs(opset):  # every input type of T1
        out.append(_ex(np.resize(np.array([0.0, 0.5, 1.0, -0.0]), (40, 40)).astype(S.np_dtype(label)), dtype, f"from_{label}"))
    return out
