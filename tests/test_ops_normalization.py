"""Hand-computed values for the trickiest normalization semantics, checked against our
references (every expected value is written from the spec's formula, not computed by the
reference)."""

import numpy as np

from operator_cases.nn import group_normalization, lp_normalization, lrn, mean_variance_normalization, rms_normalization

F = np.float32


def test_group_normalization_scale_per_group_then_per_channel():
    # channels 1, 3 | 5, 7 in two groups: means 2 and 6, variances 1: normalized -1, 1, -1, 1
    x = np.array([[[1.0], [3.0], [5.0], [7.0]]], F)
    got = group_normalization.group_normalization_18(x, np.array([2, 3], F), np.array([0, 10], F), num_groups=2, epsilon=0.0)
    assert got.reshape(-1).tolist() == [-2.0, 2.0, 7.0, 13.0]  # version 18: scale and bias per group
    got = group_normalization.group_normalization_21(x, np.array([1, 2, 3, 4], F), np.array([0, 0, 10, 10], F), num_groups=2,
                                                     epsilon=0.0)
    assert got.reshape(-1).tolist() == [-1.0, 2.0, 7.0, 14.0]  # version 21: per channel


def test_lrn_even_size_reaches_one_channel_further_up():
    # size 2: channels c - floor(1/2) = c .. c + ceil(1/2) = c + 1; alpha / size = 1, bias 1, beta 1
    x = np.array([1.0, 2.0, 3.0]).reshape(1, 3, 1, 1)
    got = lrn.lrn(x, size=2, alpha=2.0, beta=1.0, bias=1.0)
    np.testing.assert_allclose(got.reshape(-1), [1 / (1 + 5), 2 / (1 + 13), 3 / (1 + 9)], rtol=1e-15)
    # size 3 reaches both neighbours: 1 / (1 + (1 + 4) * 2 / 3), 2 / (1 + 14 * 2 / 3), 3 / (1 + 13 * 2 / 3)
    got = lrn.lrn(x, size=3, alpha=2.0, beta=1.0, bias=1.0)
    np.testing.assert_allclose(got.reshape(-1), [1 / (1 + 10 / 3), 2 / (1 + 28 / 3), 3 / (1 + 26 / 3)], rtol=1e-15)


def test_lp_normalization_takes_absolute_values_and_zero_rows_stay_zero():
    x = np.array([[3.0, -4.0], [0.0, 0.0]])
    assert lp_normalization.lp_normalization(x, p=1).tolist() == [[3 / 7, -4 / 7], [0.0, 0.0]]
    assert lp_normalization.lp_normalization(x, p=2).tolist() == [[0.6, -0.8], [0.0, 0.0]]
    assert lp_normalization.lp_normalization(x, p=1, axis=0).tolist() == [[1.0, -1.0], [0.0, 0.0]]


def test_mean_variance_normalization_axes_and_constant_group():
    x = np.array([[1.0, 3.0], [5.0, 7.0]]).reshape(2, 2, 1, 1)
    got = mean_variance_normalization.mean_variance_normalization(x, axes=[0, 2, 3])  # per channel: 1, 5 and 3, 7
    assert got.reshape(-1).tolist() == [-1.0, -1.0, 1.0, 1.0]
    flat = mean_variance_normalization.mean_variance_normalization(np.full((1, 2, 1, 1), 2.0), axes=[0, 2, 3])
    assert np.isnan(flat).all()  # the formula's 0 / 0 (spec-silent: a function body's 1e-9 gives 0)


def test_rms_normalization_axis_and_epsilon():
    x = np.array([[3.0, 4.0]])
    got = rms_normalization.rms_normalization(x, np.array([1.0, 2.0]), epsilon=0.0)
    np.testing.assert_allclose(got, [[3 / np.sqrt(12.5), 8 / np.sqrt(12.5)]], rtol=1e-15)
    got = rms_normalization.rms_normalization(x, np.array(1.0), axis=0, epsilon=0.5)  # axes 0 and 1: one group
    np.testing.assert_allclose(got, [[3 / np.sqrt(13.0), 4 / np.sqrt(13.0)]], rtol=1e-15)
    got = rms_normalization.rms_normalization(x.T, np.array(1.0), epsilon=0.5)  # rows of one element
    np.testing.assert_allclose(got, [[3 / np.sqrt(9.5)], [4 / np.sqrt(16.5)]], rtol=1e-15)
