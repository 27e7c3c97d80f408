"""Readings of spec-silent points: at every open element the backend's value must match our
expected value or one computed reading of the point (``unspecified`` naming the reading), else
``mismatch`` saying it matched none; invariants are still checked; a point whose open elements no
reading computes gives an ``unspecified`` result flagged ``unchecked``, counted in the headline."""

from __future__ import annotations

import numpy as np
import pytest

from harness import cli
from harness.case import Tolerance
from harness.compare import MISMATCH, UNSPECIFIED, Comparator, Verdict
from harness.worker import Result
from harness.registry import SpecSilentPoint
from harness.report.matrix import RunRef, build_report
from harness.store import Store

from .test_report_matrix import add_run

TOL = Tolerance(rtol=1e-6, atol=1e-6)
EXPECTED = [np.array([0.0, 1.0, 2.0, -np.inf], np.float32)]


def point(readings=None, invariants=None) -> SpecSilentPoint:
    """Open where x is -inf; ours 0, the literal reading NaN."""
    return SpecSilentPoint("Op.neg_inf", "Op", (1,), "y = f(x)", "0, the limit", lambda inputs, attrs, expected, since: [np.isneginf(inputs[0])],
                           invariants or {}, readings if readings is not None else {"the formula read literally: NaN": lambda c: [np.full(c.expected[0].shape, np.nan)]})


def judge(actual, p):
    x = EXPECTED[0]
    expected = [np.where(np.isneginf(x), 0, x).astype(np.float32)]
    c = Comparator()
    verdict = c.compare(expected, [np.asarray(actual, np.float32)], TOL)
    return c.spec_silent(verdict, [p], [x], {}, expected, [np.asarray(actual, np.float32)], TOL, 1)


def test_a_value_matching_a_reading_is_unspecified_naming_it():
    v = judge([0.0, 1.0, 2.0, np.nan], point())
    assert v.outcome == UNSPECIFIED, v.message
    assert "matches the reading 'the formula read literally: NaN'" in v.message
    assert v.spec_silent["readings"] == ["the formula read literally: NaN"] and not v.spec_silent["unchecked"]


def test_a_value_matching_no_reading_is_a_mismatch_saying_so():
    v = judge([0.0, 1.0, 2.0, -1.0], point())
    assert v.outcome == MISMATCH
    assert "spec-silent point Op.neg_inf: output 0 [3]: got -1.0, matched none of its readings" in v.message
    assert "the formula read literally: NaN nan" in v.message
    assert v.spec_silent["unmatched"] == {"output": 0, "index": "[3]"}


def test_a_reading_is_matched_within_the_tolerance():
    p = point({"minus one": lambda c: [np.full(4, -1.0)]})
    assert judge([0.0, 1.0, 2.0, -1.0000001], p).outcome == UNSPECIFIED
    assert judge([0.0, 1.0, 2.0, -1.01], p).outcome == MISMATCH


def test_invariants_are_still_checked_after_a_reading_matched():
    p = point(invariants={"the output is never NaN": lambda c: not np.isnan(c.actual[0]).any()})
    v = judge([0.0, 1.0, 2.0, np.nan], p)
    assert v.outcome == MISMATCH and "breaks an invariant of spec-silent point Op.neg_inf: the output is never NaN" in v.message


def test_a_point_without_readings_keeps_its_verdict_but_is_unchecked():
    v = judge([0.0, 1.0, 2.0, -1.0], point(readings={}))
    assert v.outcome == UNSPECIFIED and v.spec_silent["unchecked"] == 1 and v.spec_silent["readings"] == []
    assert "unchecked: 1 differing open element(s) no reading computes" in v.message


def test_a_reading_silent_on_the_output_leaves_it_unchecked():
    v = judge([0.0, 1.0, 2.0, -1.0], point({"says nothing of output 0": lambda c: [None]}))
    assert v.outcome == UNSPECIFIED and v.spec_silent["unchecked"] == 1


def test_unchecked_results_are_counted_in_the_headline_the_summary_and_the_report(tmp_path, capsys):
    checked = judge([0.0, 1.0, 2.0, np.nan], point())
    unchecked = judge([0.0, 1.0, 2.0, -1.0], point(readings={}))
    results = [Result(f"operators/Op-1/opset1/float32/{n}", "b", UNSPECIFIED, message=v.message, verdict=v.to_dict())
               for n, v in enumerate([checked, unchecked, unchecked])]
    results.append(Result("operators/Op-1/opset1/float32/3", "b", "pass", verdict=Verdict().to_dict()))
    store = Store(tmp_path / "r.sqlite")
    run = add_run(store, results, backends={"b": (True, "", "1")})
    h = cli.backend_counts(store, run)["b"]["headline"]
    assert (h["unspecified"], h["unchecked"]) == (3, 2)
    cli.print_summary(store, run)
    assert "unspecified on b: 3 results (the spec is silent there), 2 of them unchecked" in capsys.readouterr().out
    store.close()
    report = build_report([RunRef(tmp_path / "r.sqlite", run)], history=False)
    assert report.backend("b").headline["unchecked"] == 2


# -- the activations at an infinity: ours (the limit) or the formula read literally (NaN), nothing else
def _at_infinity_case(op: str, since: int, x: list[float], attrs: dict | None = None):
    from harness.registry import REGISTRY, Example, load_all
    from harness.suites.operators import build_case

    load_all()
    return build_case(REGISTRY[("", op, since)], Example([np.array(x, np.float32)], attrs or {}), "float32", since, "inf_test")


def _set_open(value):
    def change(expected):
        y = np.array(expected[0], copy=True)
        y[0] = value  # the first input is the infinity at the point
        return [y]
    return change


AT_INFINITY = [("Gelu", 20, "Gelu.neg_inf", {}), ("Gelu", 20, "Gelu.neg_inf", {"approximate": "tanh"}),
               ("Mish", 18, "Mish.neg_inf", {}), ("Mish", 22, "Mish.neg_inf", {}),
               ("HardSwish", 14, "HardSwish.neg_inf", {}), ("HardSwish", 22, "HardSwish.neg_inf", {}),
               ("Swish", 24, "Swish.infinities", {}), ("Swish", 24, "Swish.infinities", {"alpha": -1.0})]


@pytest.mark.parametrize("op, since, point_id, attrs", AT_INFINITY)
def test_at_an_infinity_the_limit_passes_nan_is_the_literal_reading_and_any_other_value_fails(op, since, point_id, attrs):
    from harness.worker import execute_case

    from .wrong_outputs import WrongOutputs

    x = [np.inf if attrs.get("alpha", 1.0) < 0 else -np.inf, 1.0, -2.0]
    case = _at_infinity_case(op, since, x, attrs)
    assert case.tags["spec_silent"] == [point_id]
    assert execute_case(WrongOutputs(case, lambda e: e), case).outcome == "pass"
    literal = execute_case(WrongOutputs(case, _set_open(np.nan)), case)
    assert literal.outcome == "unspecified", literal.message
    assert literal.verdict["spec_silent"]["readings"] == ["the formula read literally in IEEE arithmetic (inf * 0 = NaN)"]
    for other in (1.0, -np.inf, 0.5):
        wrong = execute_case(WrongOutputs(case, _set_open(other)), case)
        assert wrong.outcome == "mismatch" and "matched none of its readings" in wrong.message, (other, wrong.message)


def test_swish_with_alpha_zero_takes_x_over_2_or_the_literal_nan_at_infinity():
    from harness.worker import execute_case

    from .wrong_outputs import WrongOutputs

    case = _at_infinity_case("Swish", 24, [-np.inf, np.inf, 1.0], {"alpha": 0.0})
    assert case.load_data(case.load_model())[0].expected[0][:2].tolist() == [-np.inf, np.inf]
    assert execute_case(WrongOutputs(case, _set_open(np.nan)), case).outcome == "unspecified"
    assert execute_case(WrongOutputs(case, _set_open(0.0)), case).outcome == "mismatch"


# -- MelWeightMatrix: ours, or the official test's placement; nothing else
def test_mel_weight_matrix_official_placement_reproduces_onnxs_test_data():
    from operator_cases.math.mel_weight_matrix import mel_weight_matrix, official_placement

    # onnx's test_melweightmatrix: 8 bands, dft_length 16, 8192 Hz, 0 .. 4096 Hz; its documented expected values
    args = (np.int32(8), np.int32(16), np.int32(8192), np.float32(0), np.float32(4096))
    official = np.zeros((9, 8))  # rows are bins, columns bands: a 1 at each band's single bin
    official[[0, 0, 1, 1, 2, 3, 4, 5], range(8)] = 1.0
    got = official_placement(*args)
    assert np.array_equal(got, official)
    assert np.count_nonzero(got != mel_weight_matrix(*args)) == 13  # the difference the crosscheck note explains


def test_mel_weight_matrix_zeros_fail_and_the_official_placement_is_unspecified():
    from harness.worker import execute_case
    from harness.registry import REGISTRY, Example, load_all
    from harness.suites.operators import build_case
    from operator_cases.math.mel_weight_matrix import official_placement

    from .wrong_outputs import WrongOutputs

    load_all()
    inputs = [np.array(8, np.int64), np.array(16, np.int64), np.array(8192, np.int64), np.array(0, np.float32), np.array(4096, np.float32)]
    case = build_case(REGISTRY[("", "MelWeightMatrix", 17)], Example(inputs), "int64", 17, "official")
    official = execute_case(WrongOutputs(case, lambda e: [official_placement(*inputs).astype(np.float32)]), case)
    assert official.outcome == "unspecified" and official.verdict["spec_silent"]["readings"][0].startswith("onnx's test data")
    zeros = execute_case(WrongOutputs(case, lambda e: [np.zeros_like(e[0])]), case)
    assert zeros.outcome == "mismatch" and "matched none of its readings" in zeros.message


def _ml_case(op: str, since: int, inputs: list, attrs: dict, dtype: str = "float32"):
    from harness.registry import REGISTRY, Example, load_all
    from harness.suites.operators import build_case

    load_all()
    return build_case(REGISTRY[("ai.onnx.ml", op, since)], Example(inputs, attrs), dtype, since, "readings_test")


@pytest.mark.parametrize("norm, literal, point", [("L1", [[3.0, -2.0], [2.0, -2.0]], "Normalizer.l1_sign"),
                                                  ("L2", [[0.6, 0.8], [0.6, 0.8]], "Normalizer.l2_sign")])
def test_normalizer_with_negatives_takes_ours_or_the_literal_formula_and_fails_on_zeros(norm, literal, point):
    from harness.worker import execute_case

    from .wrong_outputs import WrongOutputs

    x = np.array([[3.0, -2.0], [2.0, -2.0]], np.float32) if norm == "L1" else np.array([[3.0, -4.0], [-3.0, 4.0]], np.float32)
    case = _ml_case("Normalizer", 1, [x], {"norm": norm})
    assert case.tags["spec_silent"] == [point]
    assert execute_case(WrongOutputs(case, lambda e: e), case).outcome == "pass"
    got = execute_case(WrongOutputs(case, lambda e: [np.array(literal, np.float32)]), case)
    assert got.outcome == "unspecified" and got.verdict["spec_silent"]["readings"][0].startswith("the formula read literally"), got.message
    zeros = execute_case(WrongOutputs(case, lambda e: [np.zeros_like(e[0])]), case)
    assert zeros.outcome == "mismatch" and "matched none of its readings" in zeros.message


@pytest.mark.parametrize("op, since", [("Resize", 10), ("Upsample", 9)])
def test_legacy_resize_takes_ours_or_a_named_mapping_and_fails_on_zeros(op, since):
    from harness.worker import execute_case
    from harness.registry import REGISTRY, Example, load_all
    from harness.suites.operators import build_case
    from operator_cases.tensor._resize_util import legacy

    from .wrong_outputs import WrongOutputs

    load_all()
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 2, 3)
    scales = np.array([1, 1, 2, 2], np.float32)
    case = build_case(REGISTRY[("", op, since)], Example([x, scales], {"mode": "linear"}), "float32", since, "legacy_test")
    assert f"{op}.legacy_mapping" in case.tags["spec_silent"]
    half_pixel = legacy(x, scales, "linear", "half_pixel")
    got = execute_case(WrongOutputs(case, lambda e: [half_pixel]), case)
    assert got.outcome == "unspecified" and got.verdict["spec_silent"]["readings"][0].startswith("linear with half_pixel"), got.message
    zeros = execute_case(WrongOutputs(case, lambda e: [np.zeros_like(e[0])]), case)
    assert zeros.outcome == "mismatch" and "matched none of its readings" in zeros.message
    # within the input's range but no mapping's value: the old invariant let it through
    middle = execute_case(WrongOutputs(case, lambda e: [np.full_like(e[0], 3.5)]), case)
    assert middle.outcome == "mismatch"


def test_an_element_also_open_by_a_point_without_readings_is_unchecked_not_failed():
    with_readings = point()
    without = SpecSilentPoint("Op.other", "Op", (1,), "y = f(x)", "ours", lambda inputs, attrs, expected, since: [np.isneginf(inputs[0])], {}, {})
    x = EXPECTED[0]
    expected = [np.where(np.isneginf(x), 0, x).astype(np.float32)]
    actual = [np.array([0.0, 1.0, 2.0, -1.0], np.float32)]
    c = Comparator()
    v = c.spec_silent(c.compare(expected, actual, TOL), [with_readings, without], [x], {}, expected, actual, TOL, 1)
    assert v.outcome == UNSPECIFIED and v.spec_silent["unchecked"] == 1


def test_tree_ensemble_classifier_with_two_labels_takes_ours_or_a_binary_layout_and_fails_on_zeros():
    from harness.worker import execute_case
    from operator_cases.ml.ml_tree_ensemble_classifier import edges

    from .wrong_outputs import WrongOutputs

    from harness.registry import REGISTRY, load_all
    from harness.suites.operators import build_case

    load_all()
    opv = REGISTRY[("ai.onnx.ml", "TreeEnsembleClassifier", 3)]
    ex = next(e for e in edges("float32", 3) if e.name == "binary_none")
    case = build_case(opv, ex, "float32", 3, ex.name)
    assert "TreeEnsembleClassifier.binary" in case.tags["spec_silent"]
    labels = np.asarray(ex.attrs["classlabels_int64s"])

    def negation(e):
        s = np.asarray(e[1], np.float64)[:, 1]
        z = np.stack([-s, s], axis=1).astype(np.float32)
        return [labels[np.argmax(z, axis=1)], z]

    got = execute_case(WrongOutputs(case, negation), case)
    assert got.outcome == "unspecified" and got.verdict["spec_silent"]["readings"][0].startswith("one decision value"), got.message
    zeros = execute_case(WrongOutputs(case, lambda e: [np.full_like(e[0], labels[0]), np.zeros_like(e[1])]), case)
    assert zeros.outcome == "mismatch" and "matched none of its readings" in zeros.message


def test_tree_ensemble_classifier_votes_for_class_0_stay_with_the_first_label():
    """Two labels, every vote for class 0: the other label scoring -s is a reading; the votes moved to the
    second label (ONNX Runtime's [-s, s], the second label where s > 0) are not ('The class_ids are
    indices into this list')."""
    from harness.worker import execute_case
    from harness.registry import REGISTRY, load_all
    from harness.suites.operators import build_case
    from operator_cases.ml.ml_tree_ensemble_classifier import edges

    from .wrong_outputs import WrongOutputs

    load_all()
    ex = next(e for e in edges("float32", 1) if e.name == "binary_class0_none")
    case = build_case(REGISTRY[("ai.onnx.ml", "TreeEnsembleClassifier", 1)], ex, "float32", 1, ex.name)
    assert "TreeEnsembleClassifier.binary" in case.tags["spec_silent"] and set(ex.attrs["class_ids"]) == {0}
    labels = np.asarray(ex.attrs["classlabels_int64s"])

    def layout(sign):
        def outputs(e):
            s = np.asarray(e[1], np.float64)[:, 0]
            z = np.stack([sign * s, -sign * s], axis=1).astype(np.float32)
            return [labels[np.argmax(z, axis=1)], z]
        return outputs

    kept = execute_case(WrongOutputs(case, layout(1)), case)
    assert kept.outcome == "unspecified" and kept.verdict["spec_silent"]["readings"][0].startswith("one decision value"), kept.message
    moved = execute_case(WrongOutputs(case, layout(-1)), case)
    assert moved.outcome == "mismatch" and "matched none of its readings" in moved.message


def test_svm_classifier_raw_scores_take_ours_or_the_decision_values_and_fail_on_zeros():
    from harness.worker import execute_case
    from harness.registry import REGISTRY, load_all
    from harness.suites.operators import build_case
    from operator_cases.ml._ml_util import plain_attrs
    from operator_cases.ml.ml_svm_classifier import decisions, edges

    from .wrong_outputs import WrongOutputs

    load_all()
    ex = next(e for e in edges("float32", 1) if e.name == "rbf")  # three classes: as many pairs as classes
    case = build_case(REGISTRY[("ai.onnx.ml", "SVMClassifier", 1)], ex, "float32", 1, ex.name)
    assert "SVMClassifier.raw_scores" in case.tags["spec_silent"]
    dec, _ = decisions(ex.inputs[0], plain_attrs(ex.attrs))
    got = execute_case(WrongOutputs(case, lambda e: [e[0], dec.astype(np.float32)]), case)
    assert got.outcome == "unspecified" and got.verdict["spec_silent"]["readings"][0].startswith("the pairwise decision values"), got.message
    zeros = execute_case(WrongOutputs(case, lambda e: [e[0], np.zeros_like(e[1])]), case)
    assert zeros.outcome == "mismatch" and "matched none of its readings" in zeros.message


def test_linear_classifier_with_one_vector_for_two_labels_takes_a_named_layout_and_fails_on_zeros():
    from harness.worker import execute_case
    from harness.registry import REGISTRY, load_all
    from harness.suites.operators import build_case
    from operator_cases.ml.ml_linear_classifier import edges, raw_scores

    from .wrong_outputs import WrongOutputs

    load_all()
    ex = next(e for e in edges("float32", 1) if e.name == "binary")
    case = build_case(REGISTRY[("ai.onnx.ml", "LinearClassifier", 1)], ex, "float32", 1, ex.name)
    assert "LinearClassifier.binary" in case.tags["spec_silent"] and ex.attrs.get("post_transform", "NONE") == "NONE"
    s = raw_scores(ex.inputs[0], ex.attrs["coefficients"], ex.attrs.get("intercepts"), 2)[:, 1:]
    complement = np.concatenate([1 - s, s], axis=1).astype(np.float32)
    got = execute_case(WrongOutputs(case, lambda e: [e[0], complement]), case)
    assert got.outcome == "unspecified" and got.verdict["spec_silent"]["readings"][0].startswith("the first class scores the complement"), got.message
    zeros = execute_case(WrongOutputs(case, lambda e: [e[0], np.zeros_like(e[1])]), case)
    assert zeros.outcome == "mismatch" and "matched none of its readings" in zeros.message


def test_a_reading_is_matched_within_the_cases_derived_bound_per_element():
    """A case whose tolerance carries a derived bound per element (harness/tolerances.py): an
    open element is judged against a reading as compare() judges it against ours, bound included."""
    x = EXPECTED[0]
    expected = [np.where(np.isneginf(x), 0, x).astype(np.float32)]
    tol = Tolerance(0.0, 0.0, 0, bound=(np.array([0.0, 0.0, 0.0, 0.01]),))
    p = point({"minus one": lambda c: [np.full(4, -1.0)]})

    def judged(last):
        actual = [np.array([0.0, 1.0, 2.0, last], np.float32)]
        c = Comparator()
        return c.spec_silent(c.compare(expected, actual, tol), [p], [x], {}, expected, actual, tol, 1)

    assert judged(-1.005).outcome == UNSPECIFIED
    assert judged(-1.02).outcome == MISMATCH
    assert judged(0.005).outcome == "pass"  # within the bound of ours: no reading consulted


def test_dynamic_quantize_with_nan_takes_ours_the_nan_left_out_or_a_saturated_zero_point_and_fails_otherwise():
    """x = [NaN, 1, -1]: ours (NaN range: y_scale NaN, zero point and y 0); ONNX Runtime's reading (the range of
    [1, -1]: y_scale 2/255, zero point 127, y [0, 254, 0]); onnx.reference's (zero point 255); any other fails."""
    from harness.worker import execute_case

    from harness.registry import REGISTRY, Example, load_all
    from harness.suites.operators import build_case

    from .wrong_outputs import WrongOutputs

    load_all()
    case = build_case(REGISTRY[("", "DynamicQuantizeLinear", 11)], Example([np.array([np.nan, 1.0, -1.0], np.float32)]),
                      "float32", 11, "nan_test")
    assert "DynamicQuantizeLinear.nonfinite" in case.tags["spec_silent"]
    u8, f = lambda v: np.array(v, np.uint8), lambda v: np.array(v, np.float32)  # noqa: E731
    left_out = [u8([0, 254, 0]), f(np.float32(2) / np.float32(255)), u8(127)]
    saturated = [u8([0, 0, 0]), f(np.nan), u8(255)]
    for outputs, reading in ((left_out, "NaN left out"), (saturated, "NaN propagated")):
        got = execute_case(WrongOutputs(case, lambda e, o=outputs: o), case)
        assert got.outcome == "unspecified" and got.verdict["spec_silent"]["readings"][0].startswith(reading), got.message
    for wrong in ([u8([0, 255, 0])] + left_out[1:], [u8([0, 0, 0]), f(np.nan), u8(100)]):
        got = execute_case(WrongOutputs(case, lambda e, o=wrong: o), case)
        assert got.outcome == "mismatch", got.message


def test_attention_with_an_infinite_masked_score_takes_ours_or_the_replaced_score_and_fails_otherwise():
    """Q = 1, K = [0, +inf], V = [4, 8], a boolean mask hiding key 1: the spec's additive pattern gives the score
    +inf + -inf = NaN, so Y is NaN (ours); a -inf that replaces the masked score leaves key 0 alone: Y = 4."""
    from harness.worker import execute_case
    from harness.registry import REGISTRY, Example, load_all
    from harness.suites.operators import build_case

    from .wrong_outputs import WrongOutputs

    load_all()
    f = lambda *v: np.array(v, np.float32).reshape(1, 1, -1, 1)  # noqa: E731
    ex = Example([f(1.0), f(0.0, np.inf), f(4.0, 8.0), np.array([[True, False]])], {}, outputs=1)
    case = build_case(REGISTRY[("", "Attention", 23)], ex, "float32", 23, "masked_inf_test")
    assert "Attention.nonfinite" in case.tags["spec_silent"] and np.isnan(case.data[0].expected[0]).all()
    replaced = execute_case(WrongOutputs(case, lambda e: [f(4.0)]), case)
    assert replaced.outcome == "unspecified" and replaced.verdict["spec_silent"]["readings"][0].startswith("a -inf bias replaces"), replaced.message
    wrong = execute_case(WrongOutputs(case, lambda e: [f(5.0)]), case)
    assert wrong.outcome == "mismatch" and "matched none of its readings" in wrong.message, wrong.message
