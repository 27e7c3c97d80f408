"""The convolution family's trickiest semantics, against values worked out by hand from the
spec's formulas (never computed by the reference under test)."""

import numpy as np
import pytest

from harness.registry import SilentCheck, load_all, spec_silent_point


def ref(op, since):
    return load_all()[("", op, since)].reference


# -- ConvTranspose: x = [1, 2, 3], w = [1, 1], stride 2: the full result is [1, 1, 2, 2, 3, 3] --
X1 = np.array([[[1.0, 2.0, 3.0]]], dtype=np.float32)
W2 = np.array([[[1.0, 1.0]]], dtype=np.float32)
W3 = np.array([[[1.0, 1.0, 1.0]]], dtype=np.float32)


def test_conv_transpose_full_result_and_output_padding():
    assert ref("ConvTranspose", 11)(X1, W2, strides=[2]).tolist() == [[[1, 1, 2, 2, 3, 3]]]
    # output_padding adds cells no tap reaches: 0, then the bias
    got = ref("ConvTranspose", 11)(X1, W2, np.array([0.5], dtype=np.float32), strides=[2], output_padding=[1])
    assert got.tolist() == [[[1.5, 1.5, 2.5, 2.5, 3.5, 3.5, 0.5]]]


@pytest.mark.parametrize("since, auto_pad, want", [
    # version 1: "If (auto_pads != SAME_UPPER): pads[start_i] = total_padding[i]/2": the odd cell is cut at the end
    (1, "NOTSET", [1, 1, 2, 2, 3]),
    (1, "SAME_UPPER", [1, 2, 2, 3, 3]),
    # version 11: "If (auto_pads == SAME_UPPER): pads[start_i] = total_padding[i]/2 ... Else: pads[start_i] =
    # total_padding[i] - (total_padding[i]/2)": NOTSET and SAME_LOWER cut it at the beginning
    (11, "NOTSET", [1, 2, 2, 3, 3]),
    (11, "SAME_LOWER", [1, 2, 2, 3, 3]),
    (11, "SAME_UPPER", [1, 1, 2, 2, 3]),
    (22, "NOTSET", [1, 2, 2, 3, 3]),
])
def test_conv_transpose_output_shape_splits_an_odd_total_by_the_versions_rule(since, auto_pad, want):
    assert ref("ConvTranspose", since)(X1, W2, strides=[2], output_shape=[5], auto_pad=auto_pad).tolist() == [[want]]


def test_conv_transpose_same_gives_input_times_stride():
    # k = 3: full result [1, 1, 3, 2, 5, 3, 3] (7 cells); SAME_*: 3 * 2 = 6 cells, total padding 1
    f = ref("ConvTranspose", 11)
    assert f(X1, W3, strides=[2], auto_pad="SAME_UPPER").tolist() == [[[1, 1, 3, 2, 5, 3]]]
    assert f(X1, W3, strides=[2], auto_pad="SAME_LOWER").tolist() == [[[1, 3, 2, 5, 3, 3]]]
    assert f(X1, W3, strides=[2], pads=[1, 2]).tolist() == [[[1, 3, 2, 5]]]


def test_conv_transpose_groups_map_input_channels_to_their_outputs():
    # C = 2, group 2, M/group = 1: output channel g sees only input channel g
    x = np.array([[[1.0, 2.0], [10.0, 20.0]]])
    w = np.array([[[1.0]], [[-1.0]]])
    assert ref("ConvTranspose", 11)(x, w, group=2).tolist() == [[[1, 2], [-10, -20]]]


# -- ConvInteger: (x - x_zero_point) * (w - w_zero_point), per-channel w zero point ----------------
def test_conv_integer_zero_points_per_channel():
    x = np.array([[[[10, 12], [14, 16]]]], dtype=np.uint8)  # - 10 -> [[0, 2], [4, 6]]
    w = np.array([[[[3]]], [[[5]]]], dtype=np.uint8)  # - [1, 5] -> [2, 0]
    got = ref("ConvInteger", 10)(x, w, np.array(10, dtype=np.uint8), np.array([1, 5], dtype=np.uint8))
    assert got.dtype == np.int32
    assert got.tolist() == [[[[0, 4], [8, 12]], [[0, 0], [0, 0]]]]


def test_conv_integer_extremes_accumulate_exactly_in_int32():
    x = np.full((1, 1, 2, 2), -128, dtype=np.int8)
    w = np.full((1, 1, 2, 2), 255, dtype=np.uint8)
    # (-128 - 127) * (255 - 0) * 4 = -260100: past int16, exact in int32
    got = ref("ConvInteger", 10)(x, w, np.array(127, dtype=np.int8))
    assert got.tolist() == [[[[-260100]]]]


def test_conv_integer_padding_value_is_spec_silent():
    x = np.array([[[[10, 12], [14, 16]]]], dtype=np.uint8)
    w = np.array([[[[3]]]], dtype=np.uint8)
    xz, wz = np.array(10, dtype=np.uint8), np.array(1, dtype=np.uint8)
    attrs = {"pads": [1, 0, 0, 0]}
    want = ref("ConvInteger", 10)(x, w, xz, wz, **attrs)
    assert want.tolist() == [[[[0, 0], [0, 4], [8, 12]]]]  # the padded row holds x_zero_point: adds 0
    point = spec_silent_point("ConvInteger.padding_value")
    masks = point.masks([x, w, xz, wz], attrs, [want], 10)
    assert masks[0][0, 0].tolist() == [[True, True], [False, False], [False, False]]
    zero_padded = want.copy()
    zero_padded[0, 0, 0] = -20  # padding the integer 0: (0 - 10) * (3 - 1)
    (holds,) = point.invariants.values()
    for actual, ok in ((want, True), (zero_padded, True), (want + 1, False)):
        assert holds(SilentCheck([x, w, xz, wz], attrs, [want], [actual], masks, 10, ref("ConvInteger", 10))) is ok
    assert not point.reached([x, w, np.array(0, dtype=np.uint8), wz], attrs, [want], 10)


# -- DeformConv: bilinear sampling, mask, the border band -------------------------------------------
def test_deform_conv_bilinear_mask_and_border():
    x = np.array([[[[1.0, 2.0], [3.0, 4.0]]]])
    w = np.ones((1, 1, 1, 1))
    offset = np.full((1, 2, 2, 2), 0.5)  # every tap sampled half a cell down and right
    f = ref("DeformConv", 19)
    # (0.5, 0.5): the mean of the four cells; the other locations lie in (D - 1, D) past an unpadded end:
    # "outside of the padded input tensor gives zero"
    assert f(x, w, offset).tolist() == [[[[2.5, 0], [0, 0]]]]
    assert f(x, w, offset, None, np.full((1, 1, 2, 2), 0.5)).tolist() == [[[[1.25, 0], [0, 0]]]]
    # with one cell of padding at the end the same locations are inside the padded tensor: interpolated with 0
    got = f(x, w, np.full((1, 2, 3, 3), 0.5), pads=[0, 0, 1, 1])
    assert got[0, 0, :2, :2].tolist() == [[2.5, 1.5], [1.75, 1.0]]
    point = spec_silent_point("DeformConv.border_sampling")
    want = f(x, w, offset)
    masks = point.masks([x, w, offset], {}, [want], 19)
    assert masks[0][0, 0].tolist() == [[False, True], [True, True]]
    (holds,) = point.invariants.values()
    interpolated = np.array([[[[2.5, 1.5], [1.75, 1.0]]]])
    for actual, ok in ((want, True), (interpolated, True), (interpolated + 1, False)):
        assert holds(SilentCheck([x, w, offset], {}, [want], [actual], masks, 19, f)) is ok


def test_deform_conv_offset_groups_use_their_own_offsets():
    x = np.array([[[[1.0, 2.0]], [[10.0, 20.0]]]])  # C = 2, 1 x 2 image
    w = np.ones((1, 2, 1, 1))
    offset = np.array([[[[0.0]], [[0.0]], [[0.0]], [[1.0]]]])  # group 0 stays, group 1 moves right by 1
    got = ref("DeformConv", 19)(x, w, offset, kernel_shape=[1, 1], offset_group=2, strides=[1, 2])
    assert got.tolist() == [[[[1 + 20]]]]


# -- Col2Im: overlapping blocks are summed -----------------------------------------------------------
def test_col2im_sums_overlaps_and_orders_blocks_lexicographically():
    f = ref("Col2Im", 18)
    ones = np.ones((1, 4, 4))  # 3 x 3 image, 2 x 2 blocks, stride 1: 4 blocks
    got = f(ones, np.array([3, 3]), np.array([2, 2]))
    assert got.tolist() == [[[[1, 2, 1], [2, 4, 2], [1, 2, 1]]]]
    # block l's offset k is input[0, k, l]; blocks (0, 0), (0, 1), (1, 0), (1, 1) tile a 4 x 4 image
    x = np.arange(16.0).reshape(1, 4, 4)
    got = f(x, np.array([4, 4]), np.array([2, 2]), strides=[2, 2])
    assert got[0, 0].tolist() == [[0, 4, 1, 5], [8, 12, 9, 13], [2, 6, 3, 7], [10, 14, 11, 15]]


def test_col2im_strings_are_rearranged():
    x = np.array([["a", "b"], ["c", "d"]], dtype=object).reshape(1, 2, 2)  # 1 x 2 blocks tiling a 2 x 2 image
    got = ref("Col2Im", 18)(x, np.array([2, 2]), np.array([1, 2]), strides=[1, 2])
    assert got.tolist() == [[[["a", "c"], ["b", "d"]]]]


# -- CausalConvWithState: state in, state out ----------------------------------------------------------
def test_causal_conv_with_state_reads_past_and_returns_the_last_k_minus_1():
    x = np.array([[[1.0, 2.0]]], dtype=np.float32)
    w = np.array([[[1.0, 2.0, 3.0]]], dtype=np.float32)
    past = np.array([[[10.0, 20.0]]], dtype=np.float32)
    y, present = ref("CausalConvWithState", 27)(x, w, None, past)
    # sequence [10, 20, 1, 2]: y0 = 10 + 40 + 3, y1 = 20 + 2 + 6
    assert y.tolist() == [[[53, 28]]]
    assert present.tolist() == [[[1, 2]]]
    y, present = ref("CausalConvWithState", 27)(x[:, :, :1], w, None, past)
    assert present.tolist() == [[[20, 1]]]  # input shorter than k - 1: part of the past stays
    y, _ = ref("CausalConvWithState", 27)(x, w, np.array([-51.0], dtype=np.float32), past, activation="silu")
    assert y[0, 0, 0] == pytest.approx(2 / (1 + np.exp(-2.0)), rel=1e-6)  # silu(53 - 51)
