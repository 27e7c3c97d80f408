"""The pieces our own backends share (harness.backends.lowering): one attribute decoder whose
differences are parameters, and the small helpers the PyTorch and TensorFlow lowerings register."""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from harness.backends.base import Unsupported
from harness.backends.lowering import attribute_value, membership_sets, optimizer_groups, softmax_like, sparse_to_dense

BAD_UTF8 = b"caf\xe9"


def _sparse() -> onnx.SparseTensorProto:
    values = helper.make_tensor("v", TensorProto.FLOAT, [2], [1.5, -2.0])
    indices = helper.make_tensor("i", TensorProto.INT64, [2], [1, 4])
    return helper.make_sparse_tensor(values, indices, [2, 3])


def test_default_decoding_is_strict_and_numpy():
    assert attribute_value(helper.make_attribute("s", "abc")) == "abc"
    with pytest.raises(UnicodeDecodeError):
        attribute_value(helper.make_attribute("s", BAD_UTF8))
    t = attribute_value(helper.make_attribute("t", helper.make_tensor("t", TensorProto.INT32, [2], [3, 4])))
    assert t.dtype == np.int32 and t.tolist() == [3, 4]
    dense = attribute_value(helper.make_attribute("sp", _sparse()))
    assert dense.tolist() == [[0.0, 1.5, 0.0], [0.0, -2.0, 0.0]]
    assert attribute_value(helper.make_attribute("g", helper.make_graph([], "body", [], []))).name == "body"


def test_readers_are_parameters():
    def lenient(raw: bytes):
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw

    # the PyTorch lowering's reading: an invalid STRING stays bytes, each of STRINGS is replaced
    assert attribute_value(helper.make_attribute("s", BAD_UTF8), text=lenient) == BAD_UTF8
    got = attribute_value(helper.make_attribute("ss", [BAD_UTF8, b"ok"]), text=lenient,
                          texts=lambda raw: raw.decode("utf-8", "replace"))
    assert got == ["caf\ufffd", "ok"]
    tensors = attribute_value(helper.make_attribute("ts", [helper.make_tensor("a", TensorProto.FLOAT, [1], [2.0])]),
                              tensor=lambda t: ("converted", t.name))
    assert tensors == [("converted", "a")]
    assert attribute_value(helper.make_attribute("g", helper.make_graph([], "body", [], [])), graph=lambda g: g.name) == "body"


def test_a_backend_without_sparse_tensors_refuses_them():
    with pytest.raises(Unsupported, match="SPARSE_TENSOR"):
        attribute_value(helper.make_attribute("sp", _sparse()), sparse=None)


def test_sparse_to_dense_takes_coordinate_indices_too():
    values = helper.make_tensor("v", TensorProto.FLOAT, [2], [7.0, 8.0])
    indices = helper.make_tensor("i", TensorProto.INT64, [2, 2], [0, 2, 1, 0])
    assert sparse_to_dense(helper.make_sparse_tensor(values, indices, [2, 3])).tolist() == [[0, 0, 7], [8, 0, 0]]


def test_membership_sets_split_at_each_nan():
    nan = math.nan
    assert membership_sets([1.0, 2.0, nan, 3.0, nan, nan, 4.0]) == [[1.0, 2.0], [3.0], [], [4.0]]
    assert membership_sets([]) == [[]]


def test_optimizer_groups_are_equal_thirds():
    assert optimizer_groups(["x1", "x2", "g1", "g2", "h1", "h2"], 3) == [["x1", "x2"], ["g1", "g2"], ["h1", "h2"]]


def test_softmax_like_coerces_before_version_13():
    class Node:
        def __init__(self, since):
            self.since = since

    calls = []
    run = softmax_like(lambda x, axis: calls.append(("plain", axis)), lambda fn, x, axis: calls.append(("coerced", axis)))
    run(Node(11), "x")
    run(Node(13), "x")
    run(Node(1), "x", axis=2)
    assert calls == [("coerced", 1), ("plain", -1), ("coerced", 2)]
