"""Hand-computed values for the trickiest pooling semantics, checked against our references
(every expected value is written from the spec's formula or its own example, not computed by
the reference)."""

import numpy as np
import pytest

from operator_cases.nn import lp_pool, max_roi_pool, max_unpool
from operator_cases.object_detection import roi_align

F = np.float32
#: X[y, x] = 3 y + x: bilinear interpolation is exact on it, so a sample at (y, x) is 3 y + x
PLANE = np.arange(9, dtype=F).reshape(1, 1, 3, 3)
ROI = np.array([[0.5, 0.5, 2.5, 2.5]], dtype=F)
B0 = np.array([0], dtype=np.int64)


def test_roi_align_half_pixel_shifts_the_roi_by_half_a_cell():
    # half_pixel: [0, 0, 2, 2], 2 x 2 samples at 0.5 and 1.5: mean of 3 y + x is 3 * 1 + 1
    got = roi_align.roi_align_16(PLANE, ROI, B0, sampling_ratio=2)
    assert got.reshape(-1).tolist() == [4.0]
    # output_half_pixel: [0.5, 0.5, 2.5, 2.5], samples at 1.0 and 2.0: mean 3 * 1.5 + 1.5
    got = roi_align.roi_align_16(PLANE, ROI, B0, sampling_ratio=2, coordinate_transformation_mode="output_half_pixel")
    assert got.reshape(-1).tolist() == [6.0]
    # RoiAlign-10 has no shift
    assert roi_align.roi_align_10(PLANE, ROI, B0, sampling_ratio=2).reshape(-1).tolist() == [6.0]


def test_roi_align_max_pools_the_interpolated_samples():
    # samples at (0.5, 0.5) .. (1.5, 1.5): values 2, 3.5, 5, 6 (3 y + x); the max is 6. The
    # largest weighted corner (0.25 * 8 = 2, onnx issue 4764) is not what the text says.
    got = roi_align.roi_align_16(PLANE, ROI, B0, sampling_ratio=2, mode="max")
    assert got.reshape(-1).tolist() == [6.0]


def test_roi_align_adaptive_grid_is_ceil_of_roi_over_output():
    # roi [0, 0, 2, 2] (half_pixel), output 1 x 2: bins 2 high, 1 wide; grid ceil(2/1) x ceil(1/2) = 2 x 1
    # bin 0 samples (0.5, 0.5), (1.5, 0.5): mean 3 + 0.5; bin 1 at x = 1.5: 3 + 1.5
    got = roi_align.roi_align_16(PLANE, ROI, B0, output_width=2)
    assert got.reshape(-1).tolist() == [3.5, 4.5]


def test_max_unpool_with_output_shape_follows_the_official_example():
    x = np.array([[[[5, 6], [7, 8]]]], dtype=F)
    i = np.array([[[[5, 7], [13, 15]]]], dtype=np.int64)
    got = max_unpool.max_unpool(x, i, np.array([1, 1, 5, 5], dtype=np.int64), kernel_shape=[2, 2], strides=[2, 2])
    want = np.zeros((1, 1, 5, 5), F)
    want[0, 0, 1, 1], want[0, 0, 1, 3], want[0, 0, 3, 1], want[0, 0, 3, 3] = 5, 6, 7, 8
    np.testing.assert_array_equal(got, want)
    # without output_shape: (2 - 1) * 2 + 2 = 4 per axis, the same flat indices into 4 x 4
    got = max_unpool.max_unpool(x, i, kernel_shape=[2, 2], strides=[2, 2])
    assert got.shape == (1, 1, 4, 4) and got.reshape(-1)[[5, 7, 13, 15]].tolist() == [5, 6, 7, 8] and got.sum() == 26


def test_max_unpool_pads_shrink_the_output():
    # (2 - 1) * 2 + 3 - 1 - 1 = 3 per axis
    got = max_unpool.max_unpool(np.array([[[[1, 2], [3, 4]]]], F), np.array([[[[0, 2], [6, 8]]]], np.int64),
                                kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    np.testing.assert_array_equal(got, np.array([[[[1, 0, 2], [0, 0, 0], [3, 0, 4]]]], F))


def test_max_roi_pool_bins_cover_floor_to_ceil():
    x = np.arange(16, dtype=F).reshape(1, 1, 4, 4)
    # roi x 1..2, y 0..2: 2 wide, 3 high; bin rows [floor(0), ceil(1.5)) = 0..1 and [floor(1.5), ceil(3)) = 1..2
    got = max_roi_pool.max_roi_pool(x, np.array([[0, 1, 0, 2, 2]], F), pooled_shape=[2, 2])
    np.testing.assert_array_equal(got, np.array([[[[5, 6], [9, 10]]]], F))
    # spatial_scale 0.5: corners (2, 0, 6, 6) scale to (1, 0, 3, 3)
    got = max_roi_pool.max_roi_pool(x, np.array([[0, 2, 0, 6, 6]], F), pooled_shape=[1, 1], spatial_scale=0.5)
    assert got.reshape(-1).tolist() == [15.0]


@pytest.mark.parametrize("p, want", [(1, [1.0, 3.0, 5.0, 3.0]), (2, [1.0, np.sqrt(5), np.sqrt(13), 3.0]), (3, [1.0, 9**(1 / 3), 35**(1 / 3), 3.0])])
def test_lp_pool_padding_adds_zero(p, want):
    x = np.array([[[1.0, -2.0, 3.0]]], dtype=np.float64)
    got = lp_pool.lp_pool_18(x, kernel_shape=[2], pads=[1, 1], p=p)
    np.testing.assert_allclose(got.reshape(-1), want, rtol=1e-15)
