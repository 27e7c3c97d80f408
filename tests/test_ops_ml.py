"""ai.onnx.ml: the spec's own examples and hand-worked values against our references."""

import math

import numpy as np
import pytest
from onnx import TensorProto

from harness.values import TypedMap
from operator_cases.ml._ml_util import post_transform
from operator_cases.ml._ml_util import encode_legacy, encode_v5
from operator_cases.ml.ml_array_feature_extractor import array_feature_extractor
from operator_cases.ml.ml_binarizer import binarizer
from operator_cases.ml.ml_cast_map import cast_map
from operator_cases.ml.ml_category_mapper import category_mapper
from operator_cases.ml.ml_dict_vectorizer import dict_vectorizer
from operator_cases.ml.ml_feature_vectorizer import feature_vectorizer
from operator_cases.ml.ml_imputer import imputer
from operator_cases.ml.ml_label_encoder import label_encoder_1, label_encoder_2, label_encoder_4
from operator_cases.ml.ml_linear_classifier import linear_classifier
from operator_cases.ml.ml_normalizer import normalizer
from operator_cases.ml.ml_one_hot_encoder import one_hot_encoder
from operator_cases.ml.ml_scaler import scaler
from operator_cases.ml.ml_svm_classifier import svm_classifier
from operator_cases.ml.ml_svm_regressor import svm_regressor
from operator_cases.ml.ml_tree_ensemble import tree_ensemble
from operator_cases.ml.ml_tree_ensemble_classifier import tree_ensemble_classifier
from operator_cases.ml.ml_tree_ensemble_regressor import tree_ensemble_regressor
from operator_cases.ml.ml_zip_map import zip_map


def test_label_encoder_spec_example():
    # 'keys_strings' ["Amy", "Sally"], 'values_int64s' [5, 6], 'default_int64' -1
    x = np.array(["Dori", "Amy", "Amy", "Sally", "Sally"], dtype=object)
    for fn in (label_encoder_2, label_encoder_4):
        np.testing.assert_array_equal(fn(x, keys_strings=["Amy", "Sally"], values_int64s=[5, 6], default_int64=-1), [-1, 5, 5, 6, 6])


def test_label_encoder_4_last_repeated_key_and_any_nan():
    assert label_encoder_4(np.array([1]), keys_int64s=[1, 1], values_int64s=[5, 6]).tolist() == [6]
    nan_bits = np.array([np.nan, -np.nan], dtype=np.float32)
    assert label_encoder_4(nan_bits, keys_floats=[float("nan")], values_int64s=[7]).tolist() == [7, 7]
    assert label_encoder_4(np.array([-0.0], np.float32), keys_floats=[0.0], values_int64s=[3]).tolist() == [3]
    # -2 compares bits: -0.0 is not the 0.0 key, the default float is -0.0
    assert math.copysign(1, label_encoder_2(np.array([-0.0], np.float32), keys_floats=[0.0], values_floats=[3.0])[0]) == -1


def test_label_encoder_1_first_index_and_default():
    assert label_encoder_1(np.array(["a", "z"], dtype=object), classes_strings=["b", "a", "a"]).tolist() == [1, -1]
    assert label_encoder_1(np.array([0, 5]), classes_strings=["b", "a"]).tolist() == ["b", "_Unused"]


def test_dict_vectorizer_spec_example():
    x = TypedMap({"a": 4, "c": 8}, key=TensorProto.STRING, value=TensorProto.INT64)
    np.testing.assert_array_equal(dict_vectorizer(x, string_vocabulary=["a", "c", "b", "z"]), [4, 8, 0, 0])


def test_one_hot_encoder_spec_example_and_truncation():
    # 'a tensor with a single value of 4, and a category count of 8' -> [0,0,0,0,1,0,0,0]
    np.testing.assert_array_equal(one_hot_encoder(np.array([4]), cats_int64s=list(range(8))), [[0, 0, 0, 0, 1, 0, 0, 0]])
    np.testing.assert_array_equal(one_hot_encoder(np.array([2.7, -2.7], np.float32), cats_int64s=[2, -2]), [[1, 0], [0, 1]])


def test_normalizer_modes_and_zero_row():
    np.testing.assert_allclose(normalizer(np.array([[3.0, 4.0]]), norm="L2"), [[0.6, 0.8]], rtol=1e-7)
    np.testing.assert_allclose(normalizer(np.array([[1.0, -3.0]]), norm="L1"), [[0.25, -0.75]], rtol=1e-7)
    np.testing.assert_allclose(normalizer(np.array([1.0, 2.0, 4.0]), norm="MAX"), [0.25, 0.5, 1.0], rtol=1e-7)
    np.testing.assert_array_equal(normalizer(np.zeros((1, 3)), norm="L2"), [[0, 0, 0]])  # 'if the divisor is zero, Y == X'


def test_binarizer_tie_is_zero_and_scaler_order():
    np.testing.assert_array_equal(binarizer(np.array([0.0, 1.0, 2.0], np.float32), threshold=1.0), [0, 0, 1])
    np.testing.assert_array_equal(scaler(np.array([[1.0, 2.0]]), offset=[1.0, 1.0], scale=[2.0, 3.0]), [[0.0, 3.0]])


def test_imputer_nan_and_per_feature():
    x = np.array([[np.nan, 1.0], [2.0, np.nan]], np.float32)
    np.testing.assert_array_equal(imputer(x, imputed_value_floats=[7.0, 8.0], replaced_value_float=float("nan")), [[7, 1], [2, 8]])
    np.testing.assert_array_equal(imputer(np.array([[0, -1]]), imputed_value_int64s=[9], replaced_value_int64=-1), [[0, 9]])


def test_post_transforms():
    np.testing.assert_allclose(post_transform([[0.0, math.log(3)]], "SOFTMAX"), [[0.25, 0.75]], rtol=1e-12)
    np.testing.assert_allclose(post_transform([[0.0, 1.0, 1.0]], "SOFTMAX_ZERO"), [[0.0, 0.5, 0.5]], rtol=1e-12)
    assert post_transform([[0.0]], "LOGISTIC")[0, 0] == 0.5
    np.testing.assert_allclose(post_transform([[0.5, 0.975]], "PROBIT"), [[0.0, 1.959963984540054]], rtol=1e-12, atol=1e-15)


def _one_split_tree():
    return {"f": 0, "v": 0.5, "mode": "BRANCH_LEQ", "nan_true": 1, "t": {"leaf": [(0, 1.0)]}, "e": {"leaf": [(0, 2.0)]}}


@pytest.mark.parametrize("aggregate,want", [(0, [5.5, 6.0, 5.5]), (1, [11.0, 12.0, 11.0]), (2, [1.0, 2.0, 1.0]), (3, [10.0, 10.0, 10.0])])
def test_tree_ensemble_5_aggregates_by_hand(aggregate, want):
    # tree 1: x <= 0.5 -> 1 else 2 (NaN goes true); tree 2: one leaf, 10
    attrs = encode_v5([_one_split_tree(), {"leaf": [(0, 10.0)]}], "float64")
    x = np.array([[0.0], [1.0], [np.nan]])
    np.testing.assert_array_equal(tree_ensemble(x, n_targets=1, aggregate_function=aggregate, **attrs)[:, 0], want)


def test_legacy_regressor_base_values_and_neq_nan():
    attrs = encode_legacy([_one_split_tree()], "target")
    y = tree_ensemble_regressor(np.array([[0.0], [1.0]], np.float32), n_targets=1, base_values=[0.5], **attrs)
    np.testing.assert_array_equal(y[:, 0], [1.5, 2.5])
    neq = {**_one_split_tree(), "mode": "BRANCH_NEQ", "nan_true": 0}
    # a NaN follows nodes_missing_value_tracks_true (0: false), not NaN != 0.5
    assert tree_ensemble_regressor(np.array([[np.nan]]), n_targets=1, **encode_legacy([neq], "target"))[0, 0] == 2.0


def test_classifier_binary_layout_literal():
    attrs = encode_legacy([{"leaf": [(1, 0.3)]}], "class")
    y, z = tree_ensemble_classifier(np.array([[0.0]]), classlabels_int64s=[4, 6], **attrs)
    assert y.tolist() == [6] and z.tolist() == [[0.0, np.float32(0.3)]]


def test_linear_classifier_binary_and_regressor_svm():
    y, z = linear_classifier(np.array([[2.0, 1.0]]), coefficients=[1.0, -1.0], intercepts=[0.0], classlabels_strings=["no", "yes"])
    assert y.tolist() == ["yes"] and z.tolist() == [[-1.0, 1.0]]
    y = svm_regressor(np.array([[2.0, 3.0]]), coefficients=[0.5], support_vectors=[1.0, 2.0], n_supports=1, rho=[1.0])
    assert y.tolist() == [[5.0]]  # 0.5 * (2 + 6) + 1


def test_svm_classifier_votes_and_platt_coupling():
    # one vector per class, sv0 = 1, sv1 = -1, coef [1, -1]: d = x - (-x) = 2x
    attrs = {"vectors_per_class": [1, 1], "support_vectors": [1.0, -1.0], "coefficients": [1.0, -1.0], "rho": [0.0],
             "kernel_type": "LINEAR", "classlabels_ints": [3, 7]}
    y, z = svm_classifier(np.array([[1.0], [-1.0]]), **attrs)
    assert y.tolist() == [3, 7] and z.tolist() == [[1, 0], [0, 1]]
    # Platt: r01 = 1 / (1 + exp(d * A + B)) = 1 / (1 + exp(-2)) at x = 1; two classes: p = (r01, r10)
    y, z = svm_classifier(np.array([[1.0]]), prob_a=[-1.0], prob_b=[0.0], **attrs)
    r = 1 / (1 + math.exp(-2))
    assert y.tolist() == [3]
    np.testing.assert_allclose(z[0], [r, 1 - r], atol=0.005 / 2)  # libsvm's stopping rule


def test_maps():
    (seq,) = zip_map(np.array([[0.25, 0.75]], np.float32), classlabels_strings=["a", "b"])
    assert seq == [{"a": 0.25, "b": 0.75}]
    m = TypedMap({3: "1", 1: "2"}, key=TensorProto.INT64, value=TensorProto.STRING)
    assert cast_map(m, cast_to="TO_INT64").tolist() == [[2, 1]]
    assert cast_map(m, cast_to="TO_INT64", map_form="SPARSE", max_map=4).tolist() == [[0, 2, 0, 1]]
    # a float as the shortest decimal that reads back as its float32 (not the float64 repr '660874.625', '1.0000000116860974e-07')
    f = TypedMap({k: np.float32(v) for k, v in enumerate([660874.625, 1e-7, 3.0, -0.0, np.nan])}, key=TensorProto.INT64, value=TensorProto.FLOAT)
    assert cast_map(f, cast_to="TO_STRING").tolist() == [["660874.6", "1e-07", "3", "-0", "nan"]]


def test_category_mapper_array_feature_extractor_feature_vectorizer():
    assert category_mapper(np.array(["b", "z"], dtype=object), cats_strings=["a", "b"], cats_int64s=[1, 2]).tolist() == [2, -1]
    np.testing.assert_array_equal(array_feature_extractor(np.array([[1, 2, 3], [4, 5, 6]]), np.array([2, 0])), [[3, 1], [6, 4]])
    np.testing.assert_array_equal(feature_vectorizer(np.array([[1, 2]]), np.array([[3]]), inputdimensions=[2, 1]), [[1, 2, 3]])
    np.testing.assert_array_equal(feature_vectorizer(np.array([[1, 2]]), inputdimensions=[3]), [[1, 2, 0]])
