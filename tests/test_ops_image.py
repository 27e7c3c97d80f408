"""GridSample, NonMaxSuppression, ImageDecoder: values worked by hand from the spec's formulas and
the ONNX backend tests' own data, against our references (operator_cases/)."""

import math

import numpy as np
import pytest

from operator_cases.tensor.grid_sample import grid_sample_16, grid_sample_20
from operator_cases.image.image_decoder import encode, image_decoder
from operator_cases.object_detection.non_max_suppression import SPEC_BOXES, SPEC_SCORES, non_max_suppression as nms

X = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)  # rows 0..3, 4..7, 8..11
ROW = np.array([[[0.0, 10.0, 20.0, 30.0, 40.0]]], dtype=np.float32)  # a 1-D signal (GridSample-20)


def grid(*points):
    return np.array(points, dtype=np.float32).reshape(1, 1, len(points), -1)


def test_grid_sample_linear_coordinates():
    # align_corners=1: c = (g + 1) / 2 (L - 1); (0, 0) -> x 1.5, y 1: (X[1,1] + X[1,2]) / 2 = 5.5
    y = grid_sample_16(X, grid([0, 0], [-1, -1], [1, 1]), align_corners=1)
    np.testing.assert_array_equal(y.ravel(), [5.5, 0.0, 11.0])
    # align_corners=0: c = ((g + 1) L - 1) / 2; (0, 0) -> x 1.5, y 1 again; (0.5, 0) -> x 2.5: 6.5
    np.testing.assert_array_equal(grid_sample_20(X, grid([0, 0], [0.5, 0])).ravel(), [5.5, 6.5])


def test_grid_sample_padding_at_the_corner():
    x1 = X + 1  # 1 .. 12
    # align_corners=0, g = (-1, -1): c = (-0.5, -0.5), four taps of weight 1/4, only (0, 0) inside
    assert grid_sample_20(x1, grid([-1, -1]), padding_mode="zeros").item() == 0.25
    assert grid_sample_20(x1, grid([-1, -1]), padding_mode="border").item() == 1.0
    # far outside: zeros gives 0, border the corner pixel (x 11.5 -> 3, y -7 -> 0): X[0, 3] = 4
    assert grid_sample_20(x1, grid([5, -5])).item() == 0.0
    assert grid_sample_20(x1, grid([5, -5]), padding_mode="border").item() == 4.0


def test_grid_sample_reflection_spec_example():
    # "If pixel location x = -3.5 reflects by border -1 and becomes x' = 1.5, then reflects by
    # border 1 and becomes x'' = 0.5": with align_corners=1, g = -3.5 samples where g = 0.5 does
    # (c = 3 on five pixels: 30)
    y = grid_sample_20(ROW, grid([-3.5], [0.5]), align_corners=1, padding_mode="reflection")
    np.testing.assert_array_equal(y.ravel(), [30.0, 30.0])
    # align_corners=0 reflects by the outer edges -0.5 and L - 0.5: c = -1 (g = -1.2) -> 0
    assert grid_sample_20(ROW, grid([-1.2]), padding_mode="reflection", mode="nearest").item() == 0.0


def test_grid_sample_nearest_rounds_half_to_even():
    # GridSample-20: "rounds to the nearest even index when the sampling point falls halfway";
    # four pixels, align_corners=0: g = -0.5, 0, 0.5 put c at 0.5, 1.5, 2.5 -> 0, 2, 2
    row = ROW[..., :4]
    y = grid_sample_20(row, grid([-0.5], [0.0], [0.5]), mode="nearest")
    np.testing.assert_array_equal(y.ravel(), [0.0, 20.0, 20.0])


def test_grid_sample_nearest_reflects_the_point_before_rounding():
    # four pixels 0, 10, 20, 30, align_corners=0: g = 1.5 puts c at 4.5, reflected by the edge 3.5
    # to 2.5, halfway between 2 and 3: the even index 2 (rounding first would give 4 -> 3: 30)
    row = ROW[..., :4]
    assert grid_sample_20(row, grid([1.5]), mode="nearest", padding_mode="reflection").item() == 20.0
    # border: the point moves to the last pixel, 3
    assert grid_sample_20(row, grid([1.5]), mode="nearest", padding_mode="border").item() == 30.0


def test_grid_sample_cubic_weights():
    # A = -0.75 at t = 0.5: weights -0.09375, 0.59375, 0.59375, -0.09375
    spike = np.array([[[0.0, 0.0, 10.0, 0.0, 0.0]]], dtype=np.float64)
    # align_corners=1, g = 0.25: c = 2.5, taps 1..4 hold 0, 10, 0, 0
    assert grid_sample_20(spike, grid([0.25]).astype(np.float64), mode="cubic", align_corners=1).item() == 5.9375
    # at a pixel centre the kernel is 1 there and 0 at the others
    assert grid_sample_20(spike, grid([0.0]), mode="cubic", align_corners=1).item() == 10.0


def test_grid_sample_integer_result_is_cast_at_the_end():
    # "intermediate values are computed as floating point and cast to integer at the end":
    # 2.5 and -2.5 truncate to 2 and -2 (our choice of cast: spec-silent point int_cast)
    x = np.array([[[0, 5]], [[-5, 0]]], dtype=np.int16)
    y = grid_sample_20(x, np.zeros((2, 1, 1), np.float32), align_corners=1)
    assert y.dtype == np.int16
    np.testing.assert_array_equal(y.ravel(), [2, -2])


def test_grid_sample_empty_batch_and_nan_position():
    assert grid_sample_20(np.zeros((0, 2, 3, 4), np.float32), np.zeros((0, 5, 1, 2), np.float32)).shape == (0, 2, 5, 1)
    y = grid_sample_20(X, grid([np.nan, 0.0], [0.0, 0.0]))
    assert math.isnan(y.ravel()[0]) and y.ravel()[1] == 5.5


def test_grid_sample_16_takes_4d_only():
    with pytest.raises(ValueError):
        grid_sample_16(ROW, grid([0.0]))


def test_nms_backend_test_data():
    # onnx/backend/test/case/node/nonmaxsuppression.py: suppress_by_IOU, limit_output_size, score_threshold
    args = (np.array([3], np.int64), np.array([0.5], np.float32))
    np.testing.assert_array_equal(nms(SPEC_BOXES, SPEC_SCORES, *args, np.array([0.0], np.float32)), [[0, 0, 3], [0, 0, 0], [0, 0, 5]])
    np.testing.assert_array_equal(nms(SPEC_BOXES, SPEC_SCORES, *args, np.array([0.4], np.float32)), [[0, 0, 3], [0, 0, 0]])
    np.testing.assert_array_equal(nms(SPEC_BOXES, SPEC_SCORES, np.array([2], np.int64), args[1]), [[0, 0, 3], [0, 0, 0]])
    # "any diagonal pair of box corners": the other pair selects the same boxes
    flipped = SPEC_BOXES[..., [2, 3, 0, 1]]
    np.testing.assert_array_equal(nms(flipped, SPEC_SCORES, *args), [[0, 0, 3], [0, 0, 0], [0, 0, 5]])
    # center_point_box=1: [x_center, y_center, width, height] of the same boxes
    b = SPEC_BOXES
    centre = np.stack([(b[..., 1] + b[..., 3]) / 2, (b[..., 0] + b[..., 2]) / 2, b[..., 3] - b[..., 1], b[..., 2] - b[..., 0]], -1)
    np.testing.assert_array_equal(nms(centre, SPEC_SCORES, *args, center_point_box=1), [[0, 0, 3], [0, 0, 0], [0, 0, 5]])


def test_nms_equalities_are_kept():
    # [0,0,1,2] (area 2) and [0,0,1,1] (area 1) meet in area 1, union 2: IoU 0.5 exactly
    boxes = np.array([[[0, 0, 1, 2], [0, 0, 1, 1]]], np.float32)
    scores = np.array([[[0.9, 0.8]]], np.float32)
    five = np.array([5], np.int64)
    # "boxes with IOU exactly equal to the threshold are kept"
    np.testing.assert_array_equal(nms(boxes, scores, five, np.array([0.5], np.float32)), [[0, 0, 0], [0, 0, 1]])
    np.testing.assert_array_equal(nms(boxes, scores, five, np.array([0.49], np.float32)), [[0, 0, 0]])
    # "score less than score_threshold are removed": equal stays
    np.testing.assert_array_equal(nms(boxes, scores, five, np.array([0.5], np.float32), np.array([0.8], np.float32)),
                                  [[0, 0, 0], [0, 0, 1]])


def test_nms_defaults_and_empty():
    # max_output_boxes_per_class: "Default to 0, which means no output"
    assert nms(SPEC_BOXES, SPEC_SCORES).shape == (0, 3)
    # iou_threshold defaults to 0: any overlap suppresses; the three boxes at y 0 overlap, as do the two at 10
    np.testing.assert_array_equal(nms(SPEC_BOXES, SPEC_SCORES, np.array([9], np.int64)), [[0, 0, 3], [0, 0, 0], [0, 0, 5]])
    assert nms(np.zeros((1, 0, 4), np.float32), np.zeros((1, 2, 0), np.float32), np.array([3], np.int64)).shape == (0, 3)


def test_image_decoder_lossless_round_trip_and_pixel_formats():
    pixels = np.array([[[255, 0, 0], [0, 255, 0]], [[0, 0, 255], [10, 20, 30]]], np.uint8)
    for fmt in ("png", "bmp", "tiff", "ppm", "webp_lossless"):
        stream = encode(pixels, fmt)
        np.testing.assert_array_equal(image_decoder(stream), pixels)
        np.testing.assert_array_equal(image_decoder(stream, pixel_format="BGR"), pixels[..., ::-1])
    # BT.601 luma (our choice for a colour file): 255 x 0.299 = 76.2, 255 x 0.587 = 149.7, 255 x 0.114 = 29.1,
    # 10 x 0.299 + 20 x 0.587 + 30 x 0.114 = 18.1
    gray = image_decoder(encode(pixels, "png"), pixel_format="Grayscale")
    assert gray.shape == (2, 2, 1)
    np.testing.assert_array_equal(gray[..., 0], [[76, 150], [29, 18]])


def test_image_decoder_gray_and_bilevel_files():
    g = np.array([[0, 100], [200, 255]], np.uint8)
    np.testing.assert_array_equal(image_decoder(encode(g, "pgm"), pixel_format="Grayscale")[..., 0], g)
    np.testing.assert_array_equal(image_decoder(encode(g, "png_gray")), np.repeat(g[..., None], 3, axis=-1))
    # a 1-bit PBM: black 0, white 255 (pixels >= 128 were written white)
    np.testing.assert_array_equal(image_decoder(encode(g, "pbm"))[..., 0], [[0, 0], [255, 255]])


def test_image_decoder_jpeg_point_admits_three_units():
    from harness.registry import SilentCheck
    from operator_cases.image.image_decoder import JPEG_POINT

    stream = encode(np.full((8, 8, 3), 128, np.uint8), "jpeg")
    want = image_decoder(stream)
    assert JPEG_POINT.reached([stream], {}, [want], 20)
    assert not JPEG_POINT.reached([encode(np.zeros((2, 2, 3), np.uint8), "png")], {}, [np.zeros((2, 2, 3), np.uint8)], 20)
    masks = JPEG_POINT.masks([stream], {}, [want], 20)
    (check,) = JPEG_POINT.invariants.values()
    near = np.clip(want.astype(int) + 3, 0, 255).astype(np.uint8)
    far = np.clip(want.astype(int) + 4, 0, 255).astype(np.uint8)
    assert check(SilentCheck([stream], {}, [want], [near], masks, 20))
    assert not check(SilentCheck([stream], {}, [want], [far], masks, 20))


def test_image_decoder_invalid_stream_is_an_empty_matrix():
    # "If it can't decode for any reason ... it will return an empty matrix"
    png = encode(np.zeros((4, 4, 3), np.uint8), "png")
    assert image_decoder(png[:20]).shape == (0, 0, 3)
    assert image_decoder(np.zeros(0, np.uint8), pixel_format="Grayscale").shape == (0, 0, 1)

