"""Tensor and shape operators, part A: hand-computed values from the spec's formulas and
examples, checked against our references (the expected values are written here, never computed
by the reference), plus the framework pieces these operators added (draw share, tensor
attributes in the edge coverage, empty list attributes)."""

import numpy as np
import onnx
import pytest

from harness.coverage import edge_classes_reached
from harness.registry import Example, load_all
from harness.suites.operators import _attr_value, draw_count

REG = load_all()


def ref(op, since):
    return REG[("", op, since)].reference


def test_depth_to_space_dcr_and_crd_orders():
    x = np.arange(8, dtype=np.float32).reshape(1, 8, 1, 1)
    # DCR: channel (bh * 2 + bw) * 2 + c goes to y[c, bh, bw]
    dcr = [[[0, 2], [4, 6]], [[1, 3], [5, 7]]]
    # CRD: channel c * 4 + bh * 2 + bw
    crd = [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]
    np.testing.assert_array_equal(ref("DepthToSpace", 13)(x, blocksize=2), np.array([dcr], np.float32))
    np.testing.assert_array_equal(ref("DepthToSpace", 13)(x, blocksize=2, mode="CRD"), np.array([crd], np.float32))
    np.testing.assert_array_equal(ref("DepthToSpace", 1)(x, blocksize=2), np.array([dcr], np.float32))


def test_space_to_depth_is_the_inverse_in_both_modes():
    x = np.array([[[[0, 1], [2, 3]]]], np.int64)               # (1, 1, 2, 2)
    np.testing.assert_array_equal(ref("SpaceToDepth", 13)(x, blocksize=2).reshape(-1), [0, 1, 2, 3])
    y = np.arange(16, dtype=np.int32).reshape(1, 4, 2, 2)
    for mode in ("DCR", "CRD"):
        back = ref("SpaceToDepth", 28)(ref("DepthToSpace", 28)(y, blocksize=2, mode=mode), blocksize=2, mode=mode)
        np.testing.assert_array_equal(back, y)
    # the two modes order the channels differently: (1, 2, 2, 2) -> CRD keeps channel 0's block first
    z = np.arange(8, dtype=np.int32).reshape(1, 2, 2, 2)
    assert ref("SpaceToDepth", 28)(z, blocksize=2, mode="CRD").reshape(-1).tolist() == [0, 1, 2, 3, 4, 5, 6, 7]
    assert ref("SpaceToDepth", 28)(z, blocksize=2, mode="DCR").reshape(-1).tolist() == [0, 4, 1, 5, 2, 6, 3, 7]


def test_one_hot_negative_indices_count_from_the_back_from_version_11():
    idx, depth, values = np.array([-1, 0, 3], np.int64), np.array(3, np.int64), np.array([0, 5], np.int32)
    np.testing.assert_array_equal(ref("OneHot", 11)(idx, depth, values), [[0, 0, 5], [5, 0, 0], [0, 0, 0]])
    # OneHot-9: outside [0, depth) is all off_value
    np.testing.assert_array_equal(ref("OneHot", 9)(idx, depth, values), [[0, 0, 0], [5, 0, 0], [0, 0, 0]])
    # axis = 0: output[input[i], i] = on_value
    np.testing.assert_array_equal(ref("OneHot", 11)(np.array([2, 0], np.int64), np.array([3.0], np.float32), values, axis=0),
                                  [[0, 5], [0, 0], [5, 0]])


def test_one_hot_places_special_values_without_arithmetic():
    values = np.array([np.inf, -np.inf], np.float32)
    out = ref("OneHot", 11)(np.array([1], np.int64), np.array(2, np.int64), values)
    np.testing.assert_array_equal(out, [[np.inf, -np.inf]])  # off + (on - off) * hot would give NaN


def test_range_spec_examples_and_degenerate_counts():
    r11 = ref("Range", 11)
    f = np.float32
    np.testing.assert_array_equal(r11(f(3), f(9), f(3)), [3, 6])
    np.testing.assert_array_equal(r11(np.int32(10), np.int32(4), np.int32(-2)), [10, 8, 6])
    assert r11(f(0), f(5), f(np.inf)).shape == (0,)         # ceil(5 / inf) = 0
    assert r11(f(np.inf), f(0), f(1)).shape == (0,)         # max(ceil(-inf), 0) = 0
    assert r11(np.int16(2), np.int16(2), np.int16(1)).shape == (0,)
    with pytest.raises(ValueError):
        r11(f(0), f(np.nan), f(1))
    out = ref("Range", 27)(np.float16(0.5), np.float16(30), np.float16(0.1))
    assert out.dtype == np.float16 and out.shape == (296,)  # ceil(29.5 / 0.0999755859375) = 296


def test_shape_start_end_follow_the_spec_examples():
    x = np.zeros((2, 3, 4), np.float32)
    s15 = ref("Shape", 15)
    assert s15(x).tolist() == [2, 3, 4]
    assert s15(x, start=-1).tolist() == [4]
    assert s15(x, end=-1).tolist() == [2, 3]
    assert s15(x, start=1, end=2).tolist() == [3]
    assert s15(x, start=-10, end=10).tolist() == [2, 3, 4]  # clamped to [0, r]
    assert s15(x, start=2, end=1).tolist() == []
    assert ref("Size", 13)(np.zeros((2, 0, 3), np.int8)).tolist() == 0


def test_non_zero_scalar_shape_is_zero_by_count():
    nz = ref("NonZero", 13)
    assert nz(np.array(3.0, np.float32)).shape == (0, 1)     # "(0, N) instead of (1, N)"
    assert nz(np.array(0, np.int32)).shape == (0, 0)
    np.testing.assert_array_equal(nz(np.array([[1, 0], [1, 1]], np.int64)), [[0, 1, 1], [0, 0, 1]])
    np.testing.assert_array_equal(nz(np.array([np.nan, -0.0, 0.0], np.float32)), [[0]])  # NaN is non-zero, -0.0 is zero


def test_center_crop_pad_rounds_the_crop_start_down_and_pads_the_extra_on_the_right():
    ccp = ref("CenterCropPad", 18)
    x = np.array([1, 2, 3, 4, 5], np.int32)
    np.testing.assert_array_equal(ccp(x, np.array([2], np.int64)), [2, 3])             # start (5 - 2) // 2 = 1
    np.testing.assert_array_equal(ccp(x, np.array([8], np.int64)), [0, 1, 2, 3, 4, 5, 0, 0])
    g = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(ccp(g, np.array([1], np.int32), axes=[-1]), [[1], [5], [9]])
    assert ccp(np.array(["a"], dtype=object), np.array([3], np.int64)).tolist() == ["", "a", ""]


def test_compress_follows_numpy_compress():
    a = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    c = ref("Compress", 11)
    np.testing.assert_array_equal(c(a, np.array([False, True, True]), axis=0), [[3, 4], [5, 6]])
    np.testing.assert_array_equal(c(a, np.array([False, True]), axis=-1), [[2], [4], [6]])
    np.testing.assert_array_equal(c(a, np.array([False, True, False, False, True])), [2, 5])   # flattened, short condition


def test_eye_like_diagonals_past_the_matrix_are_all_zero():
    x = np.zeros((2, 3), np.float32)
    e = ref("EyeLike", 22)
    np.testing.assert_array_equal(e(x, k=-1), [[0, 0, 0], [1, 0, 0]])
    np.testing.assert_array_equal(e(x, k=3), np.zeros((2, 3)))
    out = e(x, k=2, dtype=onnx.TensorProto.INT8)
    assert out.dtype == np.int8 and out.tolist() == [[0, 0, 1], [0, 0, 0]]


def test_constant_forms_and_sparse_values():
    c = ref("Constant", 13)
    sparse = onnx.helper.make_sparse_tensor(onnx.numpy_helper.from_array(np.array([7, 8, 9], np.int64)),
                                            onnx.numpy_helper.from_array(np.array([1, 4, 6], np.int64)), [2, 4])
    np.testing.assert_array_equal(c(sparse_value=sparse), [[0, 7, 0, 0], [8, 0, 9, 0]])
    coords = onnx.helper.make_sparse_tensor(onnx.numpy_helper.from_array(np.array([7, 8], np.int64)),
                                            onnx.numpy_helper.from_array(np.array([[1, 3], [0, 0]], np.int64)), [2, 4])
    np.testing.assert_array_equal(c(sparse_value=coords), [[8, 0, 0, 0], [0, 0, 0, 7]])
    assert c(value_ints=[]).dtype == np.int64 and c(value_ints=[]).shape == (0,)
    assert c(value_float=0.5).dtype == np.float32 and c(value_float=0.5).shape == ()
    assert c(value_strings=["a", ""]).tolist() == ["a", ""]
    with pytest.raises(ValueError):
        c(value_int=1, value_float=1.0)
    assert ref("ConstantOfShape", 9)(np.zeros((0,), np.int64)).shape == ()   # empty shape: a scalar 0.0 float32


def test_an_empty_list_attribute_keeps_its_schema_type():
    attr = _attr_value(onnx.defs.get_schema("Constant", 13), "value_ints", [])
    assert isinstance(attr, onnx.AttributeProto) and attr.type == onnx.AttributeProto.INTS and list(attr.ints) == []


def test_draw_share_scales_the_drawn_examples():
    assert draw_count(REG[("", "Shape", 25)], 20) == 1      # share 0.05, at least one
    assert draw_count(REG[("", "Shape", 25)], 100) == 5
    assert draw_count(REG[("", "Abs", 13)], 20) == 20
    assert draw_count(REG[("", "Shape", 25)], 0) == 0


def test_a_tensor_attribute_reaches_the_edge_classes():
    sch = onnx.defs.get_schema("Constant", 13)
    got = edge_classes_reached("Constant", sch, [("float32", Example([], {"value": np.array([np.nan, -0.0], np.float32)}))])
    assert {"nan", "neg_zero"} <= got
    assert "nan" not in edge_classes_reached("Constant", sch, [("float32", Example([], {"value": np.array([1.0], np.float32)}))])
