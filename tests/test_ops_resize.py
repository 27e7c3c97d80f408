"""Resize and Upsample: the spec's own examples and values worked by hand from its formulas,
against our references (operator_cases/tensor/resize.py, upsample.py)."""

import math

import numpy as np
import pytest

from operator_cases.tensor.resize import resize_10, resize_11, resize_13, resize_18, resize_19
from operator_cases.tensor.upsample import upsample_1, upsample_7, upsample_9

F = np.float32
X22 = np.array([[[[1, 2], [3, 4]]]], F)
X24 = np.array([[[[1, 2, 3, 4], [5, 6, 7, 8]]]], F)
X44 = np.arange(1, 17, dtype=F).reshape(1, 1, 4, 4)
NO_ROI = np.zeros(0, F)


def s(*v):
    return np.array(v, F)


def test_upsample_1_spec_example():
    want = [[[[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]]]]
    np.testing.assert_array_equal(upsample_1(X22, height_scale=2.0, width_scale=2.0), want)
    np.testing.assert_array_equal(upsample_7(X22, scales=[1.0, 1.0, 2.0, 2.0]), want)
    np.testing.assert_array_equal(upsample_9(X22, s(1, 1, 2, 2)), want)
    np.testing.assert_array_equal(resize_10(X22, s(1, 1, 2, 2)), want)


def test_legacy_linear_is_asymmetric():
    # x_original = j / 2: 0, 0.5, 1, 1.5 -> 0, 2, 4, and 4 (the border: location 2 is outside)
    np.testing.assert_allclose(upsample_9(np.array([0.0, 4.0], F), s(2), mode="linear"), [0, 2, 4, 4])
    np.testing.assert_allclose(resize_10(np.array([0.0, 4.0], F), s(2), mode="linear"), [0, 2, 4, 4])


def test_resize_nearest_spec_examples():
    want = [[[[1, 1, 1, 2, 2, 2], [1, 1, 1, 2, 2, 2], [3, 3, 3, 4, 4, 4], [3, 3, 3, 4, 4, 4]]]]
    np.testing.assert_array_equal(resize_11(X22, NO_ROI, s(1, 1, 2, 3)), want)
    # downsample 0.6, half_pixel: x = 0.5 / 0.6 - 0.5 = 1/3 -> 0; 1.5 / 0.6 - 0.5 = 2 -> 2
    np.testing.assert_array_equal(resize_13(X24, None, s(1, 1, 0.6, 0.6)), [[[[1, 3]]]])


def test_resize_linear_half_pixel_spec_example():
    want = [[1, 1.25, 1.75, 2], [1.5, 1.75, 2.25, 2.5], [2.5, 2.75, 3.25, 3.5], [3, 3.25, 3.75, 4]]
    np.testing.assert_allclose(resize_13(X22, None, s(1, 1, 2, 2), mode="linear")[0, 0], want, rtol=1e-6)


def test_resize_linear_downsample_spec_example():
    # H: x = 0.5/0.6 - 0.5 = 1/3; W: 1/3 and 2: rows 1 + 4/3 = 7/3 ... (1, 2.6666665), (1, 4.3333331)
    np.testing.assert_allclose(resize_13(X24, None, s(1, 1, 0.6, 0.6), mode="linear"), [[[[2.6666667, 4.3333333]]]], rtol=1e-6)


def test_align_corners_uses_the_fractional_length():
    # spec example resize_downsample_scales_linear_align_corners: x = 1 * 3 / (2.4 - 1) = 2.142857
    y = resize_13(X24, None, s(1, 1, 0.6, 0.6), mode="linear", coordinate_transformation_mode="align_corners")
    np.testing.assert_allclose(y, [[[[1.0, 3.142857]]]], rtol=1e-6)


def test_tf_crop_and_resize_spec_examples():
    roi = s(0, 0, 0.4, 0.6, 1, 1, 0.6, 0.8)
    y = resize_13(X44, roi, None, np.array([1, 1, 3, 3]), mode="linear", coordinate_transformation_mode="tf_crop_and_resize")
    # x_h = 1.2, 1.5, 1.8; x_w = 1.8, 2.1, 2.4; data = 4 h + w + 1 is linear, so y = 4 x_h + x_w + 1
    np.testing.assert_allclose(y[0, 0], [[7.6, 7.9, 8.2], [8.8, 9.1, 9.4], [10.0, 10.3, 10.6]], rtol=1e-6)
    roi = s(0, 0, 0.4, 0.6, 1, 1, 1.2, 1.7)
    y = resize_13(X44, roi, None, np.array([1, 1, 3, 3]), mode="linear", coordinate_transformation_mode="tf_crop_and_resize",
                  extrapolation_value=10.0)
    # x_h = 1.2, 2.4, 3.6 (> 3: outside); x_w = 1.8, 3.45, 5.1 (the last two outside)
    np.testing.assert_allclose(y[0, 0], [[7.6, 10, 10], [12.4, 10, 10], [10, 10, 10]], rtol=1e-6)


@pytest.mark.parametrize("mode, want", [
    ("round_prefer_floor", [0, 0, 1, 1, 2, 2, 3, 3]),
    ("round_prefer_ceil", [0, 1, 1, 2, 2, 3, 3, 3]),  # 3.5 -> 4, clamped to the border 3
    ("floor", [0, 0, 1, 1, 2, 2, 3, 3]),
    ("ceil", [0, 1, 1, 2, 2, 3, 3, 3]),
])
def test_nearest_modes_at_exact_ties(mode, want):
    # asymmetric x 2: x_original = j / 2 = 0, 0.5, 1, ..., 3.5
    y = resize_13(np.arange(4, dtype=F), None, s(2), coordinate_transformation_mode="asymmetric", nearest_mode=mode)
    np.testing.assert_array_equal(y, want)


def test_nearest_half_pixel_downsample_ties():
    # x 0.5, half_pixel: x_original = 2j + 0.5, every one a tie
    x = np.arange(8, dtype=F)
    np.testing.assert_array_equal(resize_13(x, None, s(0.5)), [0, 2, 4, 6])
    np.testing.assert_array_equal(resize_13(x, None, s(0.5), nearest_mode="round_prefer_ceil"), [1, 3, 5, 7])


def test_cubic_by_hand():
    # x_original = 1.5 (asymmetric x 2, j = 3): Keys with a = -0.75: w(0.5) = 1.25/8 - 2.25/4 + 1 = 0.59375,
    # w(1.5) = -0.75 * 3.375 + 3.75 * 2.25 - 6 * 1.5 + 3 = -0.09375
    y = resize_13(np.array([0, 1, 0, 0], F), None, s(2), mode="cubic", coordinate_transformation_mode="asymmetric")
    assert y[3] == pytest.approx(0.59375)
    assert y[2] == pytest.approx(1.0)  # x_original = 1: the sample itself
    y = resize_13(np.array([0, 0, 0, 1], F), None, s(2), mode="cubic", coordinate_transformation_mode="asymmetric")
    assert y[3] == pytest.approx(-0.09375)
    # a = -0.5: w(1.5) = -0.5 * 3.375 + 2.5 * 2.25 - 4 * 1.5 + 2 = -0.0625
    y = resize_13(np.array([0, 0, 0, 1], F), None, s(2), mode="cubic", coordinate_transformation_mode="asymmetric", cubic_coeff_a=-0.5)
    assert y[3] == pytest.approx(-0.0625)


def test_cubic_exclude_outside_renormalises():
    # x_original = 0.5 at j = 1 (asymmetric x 2): locations -1 (outside) .. 2; weights -0.09375, 0.59375, 0.59375, -0.09375
    x = np.array([4, 8, 0, 0], F)
    want = (0.59375 * 4 + 0.59375 * 8) / (1 - (-0.09375))
    y = resize_13(x, None, s(2), mode="cubic", coordinate_transformation_mode="asymmetric", exclude_outside=1)
    assert y[1] == pytest.approx(want)
    # exclude_outside = 0: the outside location takes the border value 4
    y = resize_13(x, None, s(2), mode="cubic", coordinate_transformation_mode="asymmetric")
    assert y[1] == pytest.approx(-0.09375 * 4 + 0.59375 * 4 + 0.59375 * 8)


def test_antialias_linear_by_hand():
    # scale 0.5, half_pixel: x_original = 0.5, 2.5; the triangle stretched by 2: weight 1 - |d| / 2 on |d| < 2
    x = np.array([1, 2, 3, 4], F)
    y = resize_18(x, None, s(0.5), mode="linear", antialias=1)
    # j = 1: locations 1..4 (4 outside -> border), weights .25 .75 .75 .25 / 2
    assert y[1] == pytest.approx(2 * 0.125 + 3 * 0.375 + 4 * 0.375 + 4 * 0.125)
    y = resize_18(x, None, s(0.5), mode="linear", antialias=1, exclude_outside=1)
    assert y[1] == pytest.approx((2 * 0.25 + 3 * 0.75 + 4 * 0.75) / 1.75)
    # without antialias: x_original 2.5 -> halfway between 3 and 4
    assert resize_18(x, None, s(0.5), mode="linear")[1] == pytest.approx(3.5)


def test_keep_aspect_ratio_policies():
    # not_larger: scale = min(1/2, 3/4) = 1/2 -> (1, 2); half_pixel x = 0.5, 2.5 -> 0, 2 (round_prefer_floor)
    y = resize_18(X24, None, None, np.array([1, 3]), axes=[2, 3], keep_aspect_ratio_policy="not_larger")
    np.testing.assert_array_equal(y, [[[[1, 3]]]])
    # not_smaller: scale = 3/4 -> round_int(1.5) = 2, round_int(3) = 3
    y = resize_18(X24, None, None, np.array([1, 3]), axes=[2, 3], keep_aspect_ratio_policy="not_smaller")
    assert y.shape == (1, 1, 2, 3)
    # stretch: sizes as given
    assert resize_18(X24, None, None, np.array([1, 3]), axes=[-2, -1]).shape == (1, 1, 1, 3)


def test_negative_axes_and_roi_ignored():
    y = resize_18(X22[0, 0], None, s(2), axes=[-1])
    np.testing.assert_array_equal(y, [[1, 1, 2, 2], [3, 3, 4, 4]])
    # roi takes effect only with tf_crop_and_resize: the output size and values ignore it
    np.testing.assert_array_equal(resize_13(X22, s(0, 0, 0.5, 0.5, 1, 1, 0.75, 0.75), s(1, 1, 2, 2)), resize_13(X22, None, s(1, 1, 2, 2)))


def test_half_pixel_symmetric_spec_example():
    # target 2.4, output 2: adjustment 2 / 2.4, offset 2 * (1 - 5/6) = 1/3; x = 1/3 + (j + 0.5) / 0.6 - 0.5 = 2/3, 7/3
    y = resize_19(np.array([[[[1, 2, 3, 4]]]], F), None, s(1, 1, 1, 0.6), mode="linear", coordinate_transformation_mode="half_pixel_symmetric")
    np.testing.assert_allclose(y, [[[[1 + 2 / 3, 3 + 1 / 3]]]], rtol=1e-6)


def test_other_coordinate_modes_by_hand():
    x = np.array([0, 10, 20, 30], F)
    # pytorch_half_pixel with one output: x_original = 0
    assert resize_13(x, None, s(0.25), mode="linear", coordinate_transformation_mode="pytorch_half_pixel")[0] == 0
    # half_pixel, same input: x_original = 0.5 / 0.25 - 0.5 = 1.5
    assert resize_13(x, None, s(0.25), mode="linear")[0] == pytest.approx(15)
    # tf_half_pixel_for_nn (Resize-11 only): x_original = (j + 0.5) / 2 = 0.25, 0.75, ... -> 0, 1 (round_prefer_floor)
    np.testing.assert_array_equal(resize_11(x, NO_ROI, s(2), coordinate_transformation_mode="tf_half_pixel_for_nn")[:4], [0, 10, 10, 20])
    with pytest.raises(ValueError):
        resize_13(x, None, s(2), coordinate_transformation_mode="tf_half_pixel_for_nn")


def test_integer_linear_rounds_half_to_even_and_saturates():
    # asymmetric x 2 on [0, 1, 2, 5]: 0, 0.5, 1, 1.5, 2, 3.5, 5, 5 -> half to even
    y = resize_13(np.array([0, 1, 2, 5], np.uint8), None, s(2), mode="linear", coordinate_transformation_mode="asymmetric")
    np.testing.assert_array_equal(y, [0, 0, 1, 2, 2, 4, 5, 5])
    # cubic overshoot above 255 saturates: j = 3 of [0, 255, 255, 0]... x = 1.5: 0.59375 * 510 - 0.09375 * 0 = 302.8 -> 255
    y = resize_13(np.array([0, 255, 255, 0], np.uint8), None, s(2), mode="cubic", coordinate_transformation_mode="asymmetric")
    assert y[3] == 255 and y.dtype == np.uint8


def test_nan_at_weight_zero_does_not_spread():
    # asymmetric x 2: j = 0 is x_original = 0 exactly, the NaN at location 1 has weight 0
    y = resize_13(np.array([1, np.nan, 3], F), None, s(2), mode="linear", coordinate_transformation_mode="asymmetric")
    assert y[0] == 1 and math.isnan(y[1]) and math.isnan(y[2])
    y = resize_13(np.array([np.inf, -np.inf], F), None, s(2), mode="linear", coordinate_transformation_mode="asymmetric")
    assert y[0] == np.inf and math.isnan(y[1])  # inf * 0.5 + -inf * 0.5


def test_empty_and_strings():
    assert resize_13(np.zeros((0, 3), F), None, s(1, 2)).shape == (0, 6)
    y = resize_13(np.array(["a", "b"], dtype=object), None, s(2))
    assert y.tolist() == ["a", "a", "b", "b"]
    with pytest.raises(ValueError):
        resize_13(np.array(["a", "b"], dtype=object), None, s(2), mode="linear")
    with pytest.raises(ValueError):  # both scales and sizes
        resize_13(X22, None, s(1, 1, 2, 2), np.array([1, 1, 4, 4]))


# -- our backends (kernel engine, torch lowering) on inputs worked by hand -----------------------
def _run_backends(op, inputs, expected, opset, **attrs):
    """Run one node on the kernel engine and the torch lowering; every result must pass."""
    from onnx import helper

    from harness import strategies as S
    from harness.backends.kernels import KernelsBackend
    from harness.case import Case, DataSet, Tolerance
    from harness.worker import execute_case

    names = [f"x{i}" if v is not None else "" for i, v in enumerate(inputs)]
    feeds = {n: v for n, v in zip(names, inputs) if n}
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, S.onnx_code(S.label_of(v.dtype)), list(v.shape))
                                            for n, v in feeds.items()],
                              [helper.make_tensor_value_info("y", S.onnx_code(S.label_of(expected.dtype)), list(expected.shape))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    case = Case(id="test/resize", suite="test", model_bytes=model.SerializeToString(), data=[DataSet(feeds, [expected])],
                tolerance=Tolerance(1e-6, 1e-6), tags={})
    from harness.backends.pytorch import PyTorchBackend

    backends = [KernelsBackend()]
    if PyTorchBackend.available()[0]:  # torch absent (the default install): the kernel engine alone
        backends.append(PyTorchBackend())
    for b in backends:
        b.load()
        result = execute_case(b, case)
        assert result.outcome == "pass", f"{type(b).__name__}: {result.message}"



def test_backends_tf_half_pixel_for_nn_shifts_at_scale_1():
    # x_original = (j + 0.5) / 1: 0.5 and 1.5 (the border) on each axis
    _run_backends("Resize", [np.array([[0, 1], [2, 3]], F), np.zeros(0, F), s(1, 1)], np.array([[1.5, 2], [2.5, 3]], F), 11,
                  mode="linear", coordinate_transformation_mode="tf_half_pixel_for_nn")


def test_backends_integer_linear_is_exact():
    # j / 3 on [-38, 19]: -38, -38 + 57 / 3 = -19, 0, 19 and the border twice
    _run_backends("Upsample", [np.array([-38, 19], np.int32), s(3)], np.array([-38, -19, 0, 19, 19, 19], np.int32), 9, mode="linear")
    # 2147483647 / 2 = 1073741823.5 -> half to even 1073741824 (float32 would hold neither)
    _run_backends("Resize", [np.array([0, 2147483647], np.int32), s(2)], np.array([0, 1073741824, 2147483647, 2147483647], np.int32), 10,
                  mode="linear")


def test_backends_nearest_copies():
    _run_backends("Resize", [np.array([1, np.nan, 3], F), None, s(2)], np.array([1, 1, np.nan, np.nan, 3, 3], F), 13)
    _run_backends("Resize", [np.array([True, False]), None, s(2)], np.array([True, True, False, False]), 13)


def test_backends_tf_crop_and_resize_output_size_holds_the_roi():
    # floor(4 * (0.75 - 0.25) * 2) = 4 rows, floor(4 * (1.25 + 0.25) * 1) = 6 columns; x_h = 0.75 + j * 1.5 / 3 -> rows 1, 1, 2, 2
    # (round_prefer_floor of 0.75, 1.25, 1.75, 2.25); x_w = -0.75 + j * 4.5 / 5 = -0.75, 0.15, ..., 3.75: the first and last outside
    y = resize_13(X44[0, 0], s(0.25, -0.25, 0.75, 1.25), s(2, 1), coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-1.0)
    assert y.shape == (4, 6)
    np.testing.assert_array_equal(y[0], [-1, 5, 6, 7, 8, -1])
    _run_backends("Resize", [X44[0, 0], s(0.25, -0.25, 0.75, 1.25), s(2, 1)], y, 13, coordinate_transformation_mode="tf_crop_and_resize",
                  extrapolation_value=-1.0)


def test_linear_on_64_bit_integers_is_exact():
    """The weighted average of int64 extremes, integral here, is computed exactly (float64 gave
    -3074457345618258944 for (2 * -2^63 + 2^63 - 1) / 3 = -3074457345618258603)."""
    x = np.array([[[[-2**63, 2**63 - 1]]]], np.int64)
    y = upsample_7(x, scales=[1.0, 1.0, 1.0, 3.0], mode="linear")
    assert y.reshape(-1).tolist() == [-2**63, -3074457345618258603, 3074457345618258602] + [2**63 - 1] * 3


def test_nonfinite_point_covers_the_neighbour_a_clamped_outside_coordinate_reaches():
    """Linear half_pixel x 2 over [a, -inf]: output row 0 samples -0.25, outside; we take the border
    a. ONNX Runtime clamps the coordinate to 0 and interpolates a and -inf with weights 1 and 0:
    0 * -inf = NaN, the weight-0 reading the nonfinite point accepts inside the input too."""
    from harness.registry import SilentCheck, spec_silent_point

    x = np.array([-8.694374, -np.inf], np.float32).reshape(1, 1, 2, 1)
    scales = np.array([1, 1, 2, 2], np.float32)
    attrs = {"mode": "linear", "coordinate_transformation_mode": "half_pixel"}
    want = resize_19(x, None, scales, **attrs)
    assert want[0, 0, :, 0].tolist() == [np.float32(-8.694374), -np.inf, -np.inf, -np.inf]
    point = spec_silent_point("Resize.nonfinite")
    masks = point.masks([x, None, scales], attrs, [want], 19)
    assert masks[0][0, 0, 0].tolist() == [True, True]  # row 0 (outside) is open: its clamped coordinate reaches -inf
    (holds,) = point.invariants.values()
    ort = want.copy()
    ort[0, 0, 0] = np.nan
    # a kept value may be off by the weighted sum's rounding (a campaign: 1 ulp next to a NaN of weight 0)
    ulp_off, far_off = want.copy(), want.copy()
    ulp_off[0, 0, 0] = np.nextafter(want[0, 0, 0], np.float32(-np.inf))
    far_off[0, 0, 0] *= np.float32(1.001)
    for actual, ok in ((want, True), (ort, True), (ulp_off, True), (far_off, False),
                       (np.where(np.isfinite(want), 0, want).astype(np.float32), False)):
        assert holds(SilentCheck([x, None, scales], attrs, [want], [actual], masks, 19, resize_19)) is ok
