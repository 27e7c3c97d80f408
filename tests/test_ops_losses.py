"""Losses: the spec's own examples and hand-computed ignore_index / log_prob values against our references."""

import math

import numpy as np
import pytest

from operator_cases.math.negative_log_likelihood_loss import negative_log_likelihood_loss as nll
from operator_cases.math.softmax_cross_entropy_loss import softmax_cross_entropy_loss as sce

X = np.array([[[1.0, 2.0], [2.0, 2.0], [3.0, 2.0]], [[0.0, 1.0], [2.0, 2.0], [1.0, 2]]], np.float32)
T = np.array([[2, 1], [0, 2]], np.int64)
W = np.array([0.2, 0.3, 0.1], np.float32)


def test_nll_spec_examples():
    np.testing.assert_array_equal(nll(X, T, reduction="none"), [[-3.0, -2.0], [-0.0, -2.0]])
    assert nll(X, T, W, reduction="sum") == pytest.approx(-1.1, rel=1e-6)
    assert nll(X, T, W) == pytest.approx(-1.57, rel=1e-3)  # "mean" is the default


def test_nll_negative_ignore_index():
    x = np.array([[-1.0, -2.0, -3.0], [-4.0, -5.0, -6.0]])
    t = np.array([0, -1], np.int32)
    np.testing.assert_array_equal(nll(x, t, ignore_index=-1, reduction="none"), [1.0, 0.0])
    assert nll(x, t, ignore_index=-1, reduction="sum") == 1.0
    assert nll(x, t, ignore_index=-1) == 1.0  # divided by the one sample not ignored
    assert nll(x, t, np.array([2.0, 1.0, 1.0]), ignore_index=-1) == 1.0  # 2 / 2
    assert math.isnan(float(nll(x, np.array([-1, -1]), ignore_index=-1)))  # every sample ignored: 0 / 0


def test_nll_target_out_of_range_is_an_error():
    with pytest.raises(ValueError):
        nll(np.zeros((1, 3)), np.array([3]))


def test_sce_log_prob_and_loss():
    loss, logp = sce(np.array([[0.0, 0.0], [0.0, math.log(3.0)]]), np.array([0, 1]), reduction="none")
    np.testing.assert_allclose(logp, [[-math.log(2), -math.log(2)], [-math.log(4), math.log(3) - math.log(4)]], rtol=1e-12)
    np.testing.assert_allclose(loss, [math.log(2), math.log(4) - math.log(3)], rtol=1e-12)


def test_sce_log_softmax_is_finite_where_softmax_underflows():
    big = np.finfo(np.float64).max
    loss, logp = sce(np.array([[big, 0.0]]), np.array([1]), reduction="sum")
    assert logp[0, 1] == -big and loss == big
