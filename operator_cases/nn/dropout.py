"""Dropout (ONNX spec: Dropout-1, 6, 7, 10, 12, 13, 22).

- 1, 6: attribute ``is_test`` ("if nonzero, run dropout in test mode where the output is simply
  Y = X"; default 0: training, random) and ``ratio`` (default 0.5); the mask is of type T and "If
  is_test is nonzero, this output is not filled" (so test-mode examples ask for Y alone).
- 7, 10: no test-mode switch at all; the text keeps "Depending on whether it is in test mode or
  not", but nothing selects training, so these are the inference form: Y = X and, when asked, an
  all-true mask (type T in 7, bool from 10), as 12 states for inference ("if mask is requested as
  output it will contain all ones").
- 12, 13, 22: inputs ``ratio`` ("If this input was not set, or if it was set to 0, the output
  would be a simple copy of the input") and ``training_mode`` ("unless specified explicitly, it is
  false. If it is false, ratio is ignored ... mask ... will contain all ones"); in training
  "output = scale * data * mask, where scale = 1. / (1. - ratio)" (13 adds bfloat16, 22 float8).

Deterministic forms are compared by value (every special value fed); a training-mode example is
random (harness.worker.random_outputs decides the same from the model): the data output is 0
or x / (1 - ratio) by the mask, and the kept count is tested against 1 - ratio
(harness.compare.RandomOutput)."""

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

from .._random_util import draw_shape, rng, st

op = Operator("Dropout")
VERSIONS = (1, 6, 7, 10, 12, 13, 22)


def _identity(x, mask_dtype):
    x = np.asarray(x)
    return x.copy(), np.ones(x.shape, mask_dtype)


def _train(x, ratio, mask_dtype):
    x = np.asarray(x)
    keep = rng("Dropout", x.shape, float(ratio)).random(x.shape) >= ratio
    with np.errstate(all="ignore"):
        y = np.where(keep, x.astype(np.float64) / (1.0 - ratio), 0.0).astype(x.dtype)
    return y, keep.astype(mask_dtype)


@op.reference(1)
def dropout_1(x, *, is_test=0, ratio=0.5, consumed_inputs=None):
    return dropout_6(x, is_test=is_test, ratio=ratio)


@op.reference(6)
def dropout_6(x, *, is_test=0, ratio=0.5):
    if is_test:
        return np.asarray(x).copy()  # the mask "is not filled"
    if ratio == 0:
        return _identity(x, np.asarray(x).dtype)
    return _train(x, float(np.float32(ratio)), np.asarray(x).dtype)


@op.reference(7)
def dropout_7(x, *, ratio=0.5):
    return _identity(x, np.asarray(x).dtype)


@op.reference(10)
def dropout_10(x, *, ratio=0.5):
    return _identity(x, bool)


@op.reference(12, 13, 22)
def dropout_12(x, ratio=None, training_mode=None, *, seed=None):
    r = 0.5 if ratio is None else float(np.asarray(ratio).astype(np.float64))
    if training_mode is None or not bool(np.asarray(training_mode)) or r == 0:
        return _identity(x, bool)
    return _train(x, r, bool)


def _same_mask(c) -> bool:
    m = np.asarray(c.actual[1]).astype(bool)
    return bool(m.all() or not m.any())


op.spec_silent(
    "mask_without_training", (7, 10),
    spec="Depending on whether it is in test mode or not, the output Y will either be a random dropout, or a simple copy of the input.",
    expected="all true (every element kept), as Dropout-12 states for inference: 'if mask is requested as output it will contain all ones'",
    where=lambda inputs, attrs, expected, since: [None, np.ones(np.shape(expected[1]), bool)] if len(expected) > 1 else [None],
    invariants={"every element of the mask is the same (Y = X drops nothing)": _same_mask},
    readings={"all false (the mask of the elements dropped: none)": lambda c: [None, np.zeros_like(np.asarray(c.expected[1]))]})


def _ratio_label(dtype, opset):
    """The ratio input's type (T1): the data's when T1 allows it, else float32."""
    t1 = ("float16", "float32", "float64") + (("bfloat16",) + S.FLOAT8 if opset >= 22 else ())
    return dtype if dtype in t1 else "float32"


def _train_data(d, dtype):
    """Finite data of magnitude in [0.5, 8], whose scaled value stays finite in every type
    (float8 included): a kept element is told from a dropped one. It holds SAMPLE (200 to 800)
    values, from a drawn seed: the kept count's binomial test needs them (a one-value output
    passed on its support alone, 0 being a dropped element); every element dropped is seen from
    51 values at ratio 0.75 (2 * 0.75**n < ALPHA = 1e-6)."""
    shape = draw_shape(d)
    gen = np.random.default_rng(d(st.integers(0, 2**32 - 1)))
    size = gen.uniform(0.5, 8.0, shape)
    return np.where(gen.random(shape) < 0.5, -size, size).astype(S.np_dtype(dtype))


def _ratios(dtype):
    """Training ratios: for float8 only those whose scale 1 / (1 - ratio) is a power of two, so
    the scaled data is exact in the type."""
    return (0.5, 0.75) if dtype in S.FLOAT8 else (0.25, 0.5, 0.75)


@op.strategy(*VERSIONS)
def draw(d, dtype, opset):
    # drawn examples are the random forms (and 7, 10 with the mask); the deterministic forms of
    # every version are the named edge examples, fed every special value
    if opset >= 12:
        ratio = np.array(d(st.sampled_from(_ratios(dtype))), S.np_dtype(_ratio_label(dtype, opset)))
        attrs = {"seed": d(st.integers(0, 1000))} if d(st.integers(0, 3)) == 0 else {}
        return Example([_train_data(d, dtype), ratio, np.array(True)], attrs, outputs=d(st.integers(1, 2)), random=True)
    ratio = d(st.sampled_from([0.25, 0.5, 0.75]))
    if opset >= 7:
        return Example([S.arrays(d, dtype, max_dims=3)], {"ratio": ratio}, outputs=2)
    return Example([_train_data(d, dtype)], {"ratio": ratio}, outputs=d(st.integers(1, 2)), random=True)


@op.edges(*VERSIONS)
def edges(dtype, opset):
    ev = S.edge_values(dtype)
    f = S.np_dtype(dtype)
    large = np.resize(np.array([1.0, -2.0, 0.5, 3.0, -0.25], np.float64), (40, 25)).astype(f)
    empty = np.zeros((2, 0, 3), f)
    if opset >= 12:
        r = S.np_dtype(_ratio_label(dtype, opset))
        yes, no = np.array(True), np.array(False)
        return [
            Example([ev], name="inference_edge_values", outputs=2),
            Example([ev, np.array(0.5, r), no], name="training_false_edge_values", outputs=2),
            Example([ev, np.array(0.0, r), yes], name="training_ratio_zero_edge_values", outputs=2),
            Example([ev, np.array(0.5, r)], name="ratio_without_training_mode", outputs=1),
            Example([large, None, yes], name="training_default_ratio", outputs=2, random=True),
            Example([large, np.array(_ratios(dtype)[0], r), yes], name="training_large", outputs=2, random=True),
            Example([large, np.array(0.75, r), yes], {"seed": 3}, name="training_seeded", outputs=1, random=True),
            Example([empty, np.array(0.5, r), yes], name="training_empty", outputs=2, random=True),
            Example([empty], name="inference_empty", outputs=2),
        ]
    if opset >= 7:
        return [
            Example([ev], name="edge_values", outputs=1),
            Example([ev], {"ratio": 0.3}, name="edge_values_mask", outputs=2),
            Example([empty], name="empty", outputs=2),
        ]
    return [
        Example([ev], {"is_test": 1}, name="test_mode_edge_values", outputs=1),
        Example([np.resize(ev, (3, 4))], {"is_test": 1, "ratio": 0.25}, name="test_mode_ratio", outputs=1),
        Example([ev], {"ratio": 0.0}, name="ratio_zero_edge_values", outputs=2),
        Example([large], name="training_default", outputs=2, random=True),
        Example([large], {"ratio": 0.25}, name="training_ratio", outputs=1, random=True),
        Example([empty], {"ratio": 0.5}, name="training_empty", outputs=2, random=True),
    ]
