"""The index family's trickiest semantics, against values written from the spec's own examples
and formulas (not computed by the reference under test)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.case import Tolerance
from harness.compare import Comparator
from harness.registry import REGISTRY, SPEC_SILENT, load_all


def ref(op, since):
    load_all()
    return REGISTRY[("", op, since)].reference


def i64(v):
    return np.array(v, dtype=np.int64)


def f32(v):
    return np.array(v, dtype=np.float32)


def test_scatter_nd_reductions_fold_every_duplicate_update():
    data, idx, upd = f32([1, 2, 3, 4]), i64([[1], [1], [-1]]), f32([10, 20, 30])
    np.testing.assert_array_equal(ref("ScatterND", 16)(data, idx, upd, reduction="add"), f32([1, 32, 3, 34]))
    np.testing.assert_array_equal(ref("ScatterND", 16)(data, idx, upd, reduction="mul"), f32([1, 400, 3, 120]))
    np.testing.assert_array_equal(ref("ScatterND", 18)(data, idx, upd, reduction="max"), f32([1, 20, 3, 30]))
    np.testing.assert_array_equal(ref("ScatterND", 18)(data, idx, upd, reduction="min"), f32([1, 2, 3, 4]))


def test_scatter_nd_spec_example_2_replaces_slices():
    data = np.array([[[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]]] * 2
                    + [[[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]]] * 2, dtype=np.int32)
    upd = np.array([[[5] * 4, [6] * 4, [7] * 4, [8] * 4], [[1] * 4, [2] * 4, [3] * 4, [4] * 4]], dtype=np.int32)
    out = ref("ScatterND", 11)(data, i64([[0], [2]]), upd)
    np.testing.assert_array_equal(out[0], upd[0])
    np.testing.assert_array_equal(out[2], upd[1])
    np.testing.assert_array_equal(out[1], data[1])
    np.testing.assert_array_equal(out[3], data[3])


def test_scatter_elements_spec_example_1_and_reductions():
    data = np.zeros((3, 3), np.float32)
    idx = i64([[1, 0, 2], [0, 2, 1]])
    upd = f32([[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]])
    want = f32([[2.0, 1.1, 0.0], [1.0, 0.0, 2.2], [0.0, 2.1, 1.2]])
    np.testing.assert_array_equal(ref("ScatterElements", 11)(data, idx, upd), want)
    # axis 1, two updates on [0][1]: output[i][indices[i][j]] = f(output[...], updates[i][j])
    row, dup, two = f32([[1, 2, 3]]), i64([[1, 1]]), f32([[5, 7]])
    np.testing.assert_array_equal(ref("ScatterElements", 16)(row, dup, two, axis=1, reduction="add"), f32([[1, 14, 3]]))
    np.testing.assert_array_equal(ref("ScatterElements", 16)(row, dup, two, axis=1, reduction="mul"), f32([[1, 70, 3]]))
    np.testing.assert_array_equal(ref("ScatterElements", 18)(row, dup, two, axis=-1, reduction="min"), f32([[1, 2, 3]]))


def test_scatter_elements_duplicates_with_reduction_none_are_unspecified_not_mismatch():
    load_all()
    point = SPEC_SILENT["ScatterElements.duplicate_indices"]
    data, idx, upd = f32([[0, 0, 0]]), i64([[2, 2]]), f32([[5, 7]])
    inputs, attrs = [data, idx, upd], {"axis": 1}
    expected = [ref("ScatterElements", 16)(*inputs, **attrs)]
    np.testing.assert_array_equal(expected[0], f32([[0, 0, 7]]))  # the spec's loop order: the last update wins
    cmp, tol = Comparator(), Tolerance()

    def judge(actual):
        v = cmp.compare(expected, [actual], tol)
        return cmp.spec_silent(v, [point], inputs, attrs, expected, [actual], tol, 16, ref("ScatterElements", 16)).outcome

    assert judge(f32([[0, 0, 5]])) == "unspecified"  # the first update: still one of the two
    assert judge(f32([[0, 0, 6]])) == "mismatch"     # neither update
    assert judge(f32([[1, 0, 7]])) == "mismatch"     # an element no update aims at


def test_gather_nd_batch_dims_spec_example_5_and_gather_elements_examples():
    data = np.arange(8, dtype=np.int32).reshape(2, 2, 2)
    np.testing.assert_array_equal(ref("GatherND", 12)(data, i64([[1], [0]]), batch_dims=1), [[2, 3], [4, 5]])
    np.testing.assert_array_equal(ref("GatherND", 11)(data, i64([[[0, 1]], [[1, 0]]])), [[[2, 3]], [[4, 5]]])
    ge = ref("GatherElements", 13)
    np.testing.assert_array_equal(ge(np.array([[1, 2], [3, 4]]), i64([[0, 0], [1, 0]]), axis=1), [[1, 1], [4, 3]])
    np.testing.assert_array_equal(ge(np.arange(1, 10).reshape(3, 3), i64([[1, 2, 0], [2, 0, 0]]), axis=0), [[4, 8, 3], [7, 2, 3]])
    np.testing.assert_array_equal(ge(np.arange(1, 10).reshape(3, 3), i64([[-1], [0]]), axis=-1), [[3], [4]])  # fewer rows than data


def test_top_k_ties_take_the_lower_index_first():
    # "Given two equivalent values, this operator uses the indices along the axis as a tiebreaker.
    # That is, the element with the lower index will appear first."
    x = f32([3, 1, 3, -0.0, 3, 0.0])
    values, indices = ref("TopK", 11)(x, i64([2]))
    np.testing.assert_array_equal(values, f32([3, 3]))
    np.testing.assert_array_equal(indices, i64([0, 2]))
    values, indices = ref("TopK", 11)(x, i64([3]), largest=0)
    np.testing.assert_array_equal(indices, i64([3, 5, 1]))  # -0.0 == 0.0: their order is the index order
    values, indices = ref("TopK", 1)(f32([[1, 5], [5, 1], [5, 5]]), k=2, axis=0)
    np.testing.assert_array_equal(indices, i64([[1, 0], [2, 2]]))


def test_top_k_unsorted_order_is_unspecified_but_the_chosen_elements_are_not():
    load_all()
    point = SPEC_SILENT["TopK.unsorted"]
    x = f32([[4, 9, 1, 7]])
    inputs, attrs = [x, i64([3])], {"sorted": 0}
    expected = list(ref("TopK", 11)(*inputs, **attrs))
    cmp, tol = Comparator(), Tolerance()

    def judge(values, indices):
        actual = [f32(values), i64(indices)]
        v = cmp.compare(expected, actual, tol)
        return cmp.spec_silent(v, [point], inputs, attrs, expected, actual, tol, 11, ref("TopK", 11)).outcome

    assert judge([[9, 7, 4]], [[1, 3, 0]]) == "pass"
    assert judge([[4, 9, 7]], [[0, 1, 3]]) == "unspecified"
    assert judge([[4, 9, 1]], [[0, 1, 2]]) == "mismatch"  # 1 is not among the top 3


@pytest.mark.parametrize("upper,k,kept", [
    (1, 0, [[1, 1, 1], [0, 1, 1], [0, 0, 1]]),
    (1, 2, [[0, 0, 1], [0, 0, 0], [0, 0, 0]]),
    (1, -1, [[1, 1, 1], [1, 1, 1], [0, 1, 1]]),
    (0, -1, [[0, 0, 0], [1, 0, 0], [1, 1, 0]]),
    (0, 1, [[1, 1, 0], [1, 1, 1], [1, 1, 1]]),
    (1, 5, [[0] * 3] * 3),
    (0, -5, [[0] * 3] * 3),
    (1, -5, [[1] * 3] * 3),
])
def test_trilu_keeps_the_spec_diagonals(upper, k, kept):
    x = f32(np.arange(1, 10).reshape(3, 3))
    np.testing.assert_array_equal(ref("Trilu", 14)(x, i64(k), upper=upper), x * f32(kept))


def test_trilu_zeroes_nan_outside_the_triangle():
    out = ref("Trilu", 14)(f32([[1, np.nan], [np.inf, 2]]))
    np.testing.assert_array_equal(out, f32([[1, np.nan], [0, 2]]))


def test_unique_spec_examples():
    y, idx, inv, counts = ref("Unique", 11)(f32([2, 1, 1, 3, 4, 3]), sorted=0)
    for got, want in zip((y, idx, inv, counts), ([2, 1, 3, 4], [0, 1, 3, 4], [0, 1, 1, 2, 3, 2], [1, 2, 2, 1])):
        np.testing.assert_array_equal(got, want)
    x = f32([[[1, 1], [0, 1], [2, 1], [0, 1]], [[1, 1], [0, 1], [2, 1], [0, 1]]])
    y, idx, inv, counts = ref("Unique", 11)(x, axis=1, sorted=1)
    np.testing.assert_array_equal(y, f32([[[0, 1], [1, 1], [2, 1]], [[0, 1], [1, 1], [2, 1]]]))
    np.testing.assert_array_equal(idx, [1, 0, 2])
    np.testing.assert_array_equal(inv, [1, 0, 2, 0])
    np.testing.assert_array_equal(counts, [2, 1, 1])


def test_split_18_num_outputs_makes_the_last_chunk_smaller_and_older_versions_split_equally():
    parts = ref("Split", 18)(np.arange(7), num_outputs=3)
    assert [p.tolist() for p in parts] == [[0, 1, 2], [3, 4, 5], [6]]
    parts = ref("Split", 13)(np.arange(6).reshape(2, 3), axis=-1, n_outputs=3)
    assert [p.tolist() for p in parts] == [[[0], [3]], [[1], [4]], [[2], [5]]]
    parts = ref("Split", 13)(np.arange(4), i64([0, 3, 1]))
    assert [p.tolist() for p in parts] == [[], [0, 1, 2], [3]]


def test_tensor_scatter_circular_wraps_and_linear_writes_after_the_index():
    cache = np.zeros((1, 4, 1), np.float32)
    upd = f32([[[1], [2], [3]]])
    out = ref("TensorScatter", 24)(cache, upd, i64([3]), mode="circular", axis=1)
    np.testing.assert_array_equal(out[0, :, 0], f32([2, 3, 0, 1]))  # positions 3, 4 % 4 = 0, 5 % 4 = 1
    out = ref("TensorScatter", 24)(cache, upd[:, :2], i64([2]), axis=-2)
    np.testing.assert_array_equal(out[0, :, 0], f32([0, 0, 1, 2]))


def test_reverse_sequence_spec_example_1():
    x = f32([[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]])
    want = f32([[3, 6, 9, 12], [2, 5, 8, 13], [1, 4, 10, 14], [0, 7, 11, 15]])
    np.testing.assert_array_equal(ref("ReverseSequence", 10)(x, i64([4, 3, 2, 1]), time_axis=0, batch_axis=1), want)
