"""The random family (issue 20): our references draw samples of the spec's shape, dtype and
support, the deterministic Dropout forms are the spec's identity, and the comparator judges a
random output by its spec (a wrong distribution fails, a right one passes)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from harness.case import Tolerance
from harness.compare import Comparator, RandomOutput
from harness.registry import REGISTRY, load_all

load_all()


def ref(op, since):
    return REGISTRY[("", op, since)].reference


def test_dropout_12_inference_is_the_identity_with_an_all_true_mask():
    x = np.array([1.5, -0.0, np.nan, np.inf], np.float32)
    for args in ([x], [x, np.array(0.5, np.float32), np.array(False)], [x, np.array(0.0, np.float32), np.array(True)]):
        y, mask = ref("Dropout", 12)(*args)
        assert np.array_equal(y, x, equal_nan=True) and y.dtype == np.float32
        assert mask.dtype == bool and mask.all()


def test_dropout_training_scales_kept_values_by_one_over_one_minus_ratio():
    x = np.full((50, 40), 3.0, np.float32)
    y, mask = ref("Dropout", 12)(x, np.array(0.75, np.float32), np.array(True))
    assert set(np.unique(y).tolist()) == {0.0, 12.0}  # 3 / (1 - 0.75) where kept, 0 where dropped
    assert np.array_equal(y == 12.0, mask)
    assert 0.15 < mask.mean() < 0.35  # keep rate 0.25 (2000 draws)


def test_dropout_6_test_mode_returns_x_alone_and_7_has_a_mask_of_type_t():
    x = np.array([1.0, 2.0], np.float16)
    assert np.array_equal(ref("Dropout", 6)(x, is_test=1), x)
    y, mask = ref("Dropout", 7)(x)
    assert mask.dtype == np.float16 and np.array_equal(mask, [1.0, 1.0])
    assert ref("Dropout", 10)(x)[1].dtype == bool


def test_bernoulli_certain_outcomes_and_output_type():
    p = np.array([0.0, 1.0, -0.0, 1.0], np.float32)
    out = ref("Bernoulli", 15)(p, dtype=onnx.TensorProto.INT8)
    assert out.dtype == np.int8 and out.tolist() == [0, 1, 0, 1]
    assert ref("Bernoulli", 15)(p).dtype == np.float32  # no dtype: the input's


def test_multinomial_never_draws_a_class_of_log_probability_minus_inf():
    x = np.array([[0.0, -np.inf, 0.0]], np.float32)
    out = ref("Multinomial", 7)(x, sample_size=200)
    assert out.shape == (1, 200) and out.dtype == np.int32 and 1 not in out
    assert ref("Multinomial", 7)(x, dtype=7).dtype == np.int64


def test_random_uniform_stays_in_bounds_in_a_narrow_type():
    out = ref("RandomUniform", 22)(shape=[30, 30], dtype=onnx.TensorProto.BFLOAT16, low=2.0, high=2.5)
    wide = out.astype(np.float64)
    assert out.shape == (30, 30) and wide.min() >= 2.0 and wide.max() <= 2.5


def judge(op, actual, expected=None, **kw):
    spec = RandomOutput(op, kw.pop("attrs", {}), kw.pop("inputs", []), **kw)
    expected = actual if expected is None else expected
    return Comparator().compare([expected], [actual], Tolerance(rtol=1e-5, atol=1e-6), [spec])


def test_an_inverted_bernoulli_fails_and_a_right_one_passes():
    p = np.resize(np.array([0.0, 0.2, 1.0], np.float32), (1200,))  # 400 of p = 0.2: enough for the power asked
    right = (np.random.default_rng(1).random(1200) < p).astype(np.float32)
    assert judge("Bernoulli", right, inputs=[p]).outcome == "pass"
    inverted = 1 - right  # 1 with probability 1 - p: what Greater(RandomUniformLike(p), p) gives
    assert judge("Bernoulli", inverted, inputs=[p]).outcome == "mismatch"


def test_a_normal_sample_with_the_wrong_scale_fails():
    gen = np.random.default_rng(2)
    assert judge("RandomNormal", gen.normal(0, 1, 12000).astype(np.float32), attrs={"scale": 1.0}).outcome == "pass"
    assert judge("RandomNormal", gen.normal(0, 2, 1000).astype(np.float32), attrs={"scale": 1.0}).outcome == "mismatch"
    assert judge("RandomNormal", gen.normal(0, 1.05, 12000).astype(np.float32), attrs={"scale": 1.0}).outcome == "mismatch"


@pytest.mark.parametrize("op", ["RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli", "Multinomial", "Dropout"])
def test_every_random_op_version_is_registered(op):
    versions = [s for (d, o, s) in REGISTRY if o == op and d == ""]
    assert versions and all(REGISTRY[("", op, s)].complete for s in versions)


@pytest.mark.parametrize("since", [6, 12, 13, 22])
def test_a_drawn_dropout_in_training_mode_fails_when_every_element_is_dropped(since):
    """Issue 31: a one-value training output of 0 passed on its support alone (0 is a dropped
    element); drawn data now holds 200 to 800 values, so the kept count's binomial test sees it."""
    from harness.worker import execute_case
    from harness.suites.operators import DEFAULT_SEED, build_op_version

    from .test_wrong_backend import WrongOutputs

    cases = [c for c in build_op_version(REGISTRY[("", "Dropout", since)], since, 4, DEFAULT_SEED)
             if c.check == "random" and c.id.rsplit("/", 1)[1].isdigit()]
    assert cases
    for case in cases:
        data = case.load_data()
        x = np.asarray(data[0].inputs["x0"])
        assert x.size >= 200, (case.id, x.shape)
        zeros = iter([[np.zeros_like(np.asarray(e)) for e in ds.expected] for ds in data])
        assert execute_case(WrongOutputs(case, lambda expected: next(zeros)), case).outcome == "mismatch", case.id
