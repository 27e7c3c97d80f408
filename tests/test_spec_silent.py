"""Spec-silent points: a backend that differs from our choice only where the spec is silent and
keeps every invariant is ``unspecified`` (apart from pass and mismatch, outside the pass rate, in
every table); one that breaks an invariant, or differs where the spec speaks, is ``mismatch``."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from harness import cli
from harness.backends.reference import ReferenceBackend
from harness.coverage import spec_silent_rows, spec_silent_toml
from harness.worker import FAILURES, OUTCOMES, Result, execute_case
from harness.expectations import Expectation, apply
from harness.registry import REGISTRY, SPEC_SILENT, Example, load_all, spec_silent_points
from harness.report import write_all
from harness.report.diff import REGRESSION_KINDS, classify_change
from harness.report.matrix import build_report
from harness.report.sources import RunRef
from harness.store import Store
from harness.suites.operators import build_case

from .seeded_faults import NanDroppingMax, NanOrderMax, _kernel, _Kernels
from .test_report_matrix import add_run

NAN = np.nan


def max_case(inputs, name="nan_three", since=8):
    load_all()
    return build_case(REGISTRY[("", "Max", since)], Example([np.array(x, np.float32) for x in inputs], name=name), "float32", since, name)


#: per column (element) a NaN first, in the middle and last among three inputs; the last column has no NaN
NAN_THREE = [[NAN, 1.0, 0.0, 5.0], [1.0, NAN, 0.0, 6.0], [0.0, 0.0, NAN, 7.0]]


def test_a_case_reaching_a_point_is_tagged_with_it_and_a_nan_free_one_is_not():
    assert max_case(NAN_THREE).tags["spec_silent"] == ["Max.nan"]
    assert "spec_silent" not in max_case([[1.0, 2.0], [3.0, -1.0]], name="plain").tags


def test_our_choice_passes():
    assert execute_case(ReferenceBackend(), max_case(NAN_THREE)).outcome == "pass"


def test_a_different_choice_keeping_the_invariants_is_unspecified_with_spec_text_and_both_values():
    result = execute_case(NanDroppingMax(), max_case(NAN_THREE))
    assert result.outcome == "unspecified", result.message
    info = result.verdict["spec_silent"]
    assert info["point"] == "Max.nan" and info["op_version"] == "Max-8"
    assert info["spec"] == "Element-wise max of each of the input tensors"
    # column 0 is (NaN, 1, 0): our NaN against fmax's 1
    assert (info["index"], info["expected"], info["actual"]) == ("[0]", "nan", "1.0")
    assert "Max.nan" in result.message and "got 1.0, our choice nan" in result.message


def test_a_choice_matching_no_reading_is_a_mismatch_naming_the_point():
    # column 1 is (1, NaN, 0): the order-dependent max gives 0, neither NaN (ours) nor 1 (NaN ignored)
    result = execute_case(NanOrderMax(), max_case(NAN_THREE))
    assert result.outcome == "mismatch"
    assert "spec-silent point Max.nan: output 0 [1]: got 0.0, matched none of its readings" in result.message
    assert result.verdict["spec_silent"]["unmatched"] == {"output": 0, "index": "[1]"}


def test_a_difference_where_the_spec_speaks_stays_a_mismatch():
    def fmax_and_off_by_one(self, *xs):
        out = xs[0]
        for x in xs[1:]:
            out = np.fmax(out, x)
        return (np.asarray(out) + np.where(np.isnan(xs[0]) | np.isnan(xs[1]) | np.isnan(xs[2]), 0, 1)).astype(xs[0].dtype),

    class FmaxOffByOne(_Kernels):
        name = "fmax-off-by-one"
        kernels = (_kernel("Max", fmax_and_off_by_one),)

    result = execute_case(FmaxOffByOne(), max_case(NAN_THREE))
    assert result.outcome == "mismatch"
    assert "got 8.0, expected 7.0" in result.message and "outside the elements left open by Max.nan" in result.message


def test_ort_like_hardmax_with_no_one_in_a_nan_row_breaks_its_invariant():
    load_all()
    x = np.array([[1.0, NAN, 3.0], [0.0, 2.0, 1.0]], np.float32)
    case = build_case(REGISTRY[("", "Hardmax", 13)], Example([x], {"axis": 1}, name="nan_row"), "float32", 13, "nan_row")
    assert case.tags["spec_silent"] == ["Hardmax.nan_row"]

    def no_one(self, x, axis=-1):
        y = np.zeros_like(x)
        rows = ~np.isnan(x).any(axis=-1)
        y[rows, np.argmax(x[rows], axis=-1)] = 1
        return (y,)

    def skip_nan(self, x, axis=-1):
        y = np.zeros_like(x)
        y[np.arange(len(x)), np.argmax(np.where(np.isnan(x), -np.inf, x), axis=-1)] = 1
        return (y,)

    broken = type("NoOne", (_Kernels,), {"name": "no-one", "kernels": (_kernel("Hardmax", no_one),)})
    skipping = type("SkipNan", (_Kernels,), {"name": "skip-nan", "kernels": (_kernel("Hardmax", skip_nan),)})
    assert execute_case(broken(), case).outcome == "mismatch"
    assert "a row has exactly one 1, zeros elsewhere" in execute_case(broken(), case).message
    assert execute_case(skipping(), case).outcome == "unspecified"


@pytest.mark.parametrize("got, outcome", [([-56, 0, -1], "pass"), ([127, 0, -1], "unspecified"), ([-128, 0, -1], "mismatch"),
                                          ([5, 0, -1], "mismatch")])
def test_integer_overflow_is_wrapped_or_saturated_nothing_else(got, outcome):
    load_all()
    a, b = np.array([100, 0, -1], np.int8), np.array([100, 0, 0], np.int8)  # 100 + 100 wraps to -56
    case = build_case(REGISTRY[("", "Add", 14)], Example([a, b], name="overflow"), "int8", 14, "overflow")
    assert case.tags["spec_silent"] == ["Add.int_overflow"]
    kernel = type("FixedAdd", (_Kernels,), {"name": "fixed-add", "kernels": (_kernel("Add", lambda self, a, b: (np.array(got, np.int8),)),)})
    assert execute_case(kernel(), case).outcome == outcome


def test_every_point_quotes_its_op_versions_spec_text_and_the_data_file_is_current():
    from pathlib import Path

    rows = spec_silent_rows()
    assert len(rows) == len(SPEC_SILENT) >= 15
    assert [r.id for r in rows if r.unquoted] == []
    assert all(r.invariants for r in rows if r.id not in ("Cast.float_to_int_out_of_range", "CastLike.float_to_int_out_of_range"))
    checked_in = Path(__file__).resolve().parent.parent / "operator_cases" / "spec_silent.toml"
    assert checked_in.read_text() == spec_silent_toml(rows), "regenerate: onnx-harness spec-silent --toml operator_cases/spec_silent.toml"


def test_unspecified_is_an_outcome_but_not_a_failure_and_an_expectation_does_not_hide_it():
    assert "unspecified" in OUTCOMES and "unspecified" not in FAILURES
    entry = Expectation("b", "operators/*", "mismatch", "known")
    assert apply(Result("operators/Max-8/x", "b", "unspecified"), [entry]).outcome == "unspecified"
    assert apply(Result("operators/Max-8/x", "b", "mismatch"), [entry]).outcome == "xfail"


def test_diff_lists_pass_to_unspecified_apart_from_the_regressions():
    assert classify_change("pass", "unspecified") == classify_change("unspecified", "pass") == "unspecified-changed"
    assert "unspecified-changed" not in REGRESSION_KINDS
    assert classify_change("unspecified", "mismatch") == "regressed"
    assert classify_change(None, "unspecified") == "new"


def test_counts_and_reports_show_unspecified_apart_from_pass_and_mismatch(tmp_path):
    cases = [max_case(NAN_THREE), max_case([[1.0, 2.0], [3.0, -1.0]], name="plain")]
    backends = {"reference": ReferenceBackend(), "nan-dropping-max": NanDroppingMax(), "nan-order-max": NanOrderMax()}
    results = [execute_case(b, c) for b in backends.values() for c in cases]
    for r, name in zip(results, [n for n in backends for _ in cases]):
        r.backend = name
    assert [r.outcome for r in results] == ["pass", "pass", "unspecified", "pass", "mismatch", "pass"]
    store = Store(tmp_path / "r.sqlite")
    run = add_run(store, results, backends={n: (True, "", "1") for n in backends})
    counts = cli.backend_counts(store, run)
    # the conformance rate counts neither: 1 pass of 1 for the unspecified backend
    assert counts["nan-dropping-max"]["counts"]["unspecified"] == 1 and counts["nan-dropping-max"]["pass_rate"] == 1.0
    assert counts["nan-dropping-max"]["loadable"] == 1
    assert counts["nan-order-max"]["pass_rate"] == 0.5
    store.close()

    report = build_report([RunRef(tmp_path / "r.sqlite", run)], history=False)
    assert report.backend("nan-dropping-max").pass_rate == 1.0
    out = tmp_path / "out"
    write_all(report, out)
    doc = json.loads((out / "results.json").read_text())
    by_label = {b["label"]: b for b in doc["backends"]}
    assert by_label["nan-dropping-max"]["counts"] == {"pass": 1, "unspecified": 1}
    assert by_label["nan-order-max"]["counts"] == {"pass": 1, "mismatch": 1}
    assert [(g["backend"], [p["point"] for p in g["points"]]) for g in doc["unspecified"]] == [("nan-dropping-max", ["Max.nan"])]
    md = (out / "summary.md").read_text()
    header = next(line for line in md.splitlines() if line.startswith("| backend"))
    assert [h.strip() for h in header.strip("|").split("|")][6:8] == ["pass", "unspecified"]  # after the headline columns
    assert "Where runtimes differ on unspecified behaviour" in md and "`Max.nan`" in md
    html = (out / "index.html").read_text()
    assert '<section id="unspecified">' in html and "Element-wise max of each of the input tensors" in html
    junit = ET.parse(out / "junit.xml").getroot()
    suite = next(s for s in junit if s.get("name") == "nan-dropping-max")
    assert suite.get("failures") == "0" and suite.get("errors") == "0"


def test_crosscheck_keeps_onnx_reference_choices_at_spec_silent_points_apart_from_its_disagreements():
    from harness.crosscheck import disagreements, silent_choices

    info = {"point": "MaxPool.nan", "op_version": "MaxPool-22", "expected": "nan", "actual": "5.0", "spec": "max pooling"}
    rows = [{"case_id": "operators/MaxPool-22/opset22/float32/nan_windows", "outcome": "unspecified", "raw_outcome": "unspecified",
             "message": "spec-silent point MaxPool.nan", "verdict": {"spec_silent": info}},
            {"case_id": "operators/MaxPool-22/opset22/float16/nan_windows", "outcome": "unspecified", "raw_outcome": "unspecified",
             "message": "spec-silent point MaxPool.nan", "verdict": {"spec_silent": info}}]
    assert disagreements(rows, []) == []
    assert silent_choices(rows) == {"MaxPool.nan": {"op_versions": ["MaxPool-22"], "cases": 2, "example": rows[0]["case_id"],
                                                    "ours": "nan", "theirs": "5.0", "spec": "max pooling"}}


def test_run_exits_0_on_an_unspecified_result_and_1_with_strict(tmp_path, capsys):
    from harness.cli import main

    args = ["run", "--suite", "operators", "--examples", "0", "-k", "^operators/Max-8/opset8/float32/nan_three$",
            "--backend", "tests.seeded_faults:NanDroppingMax", "--corpus", str(tmp_path / "corpus"), "--store", str(tmp_path / "r.sqlite")]
    assert main(args) == 0
    assert "unspecified" in capsys.readouterr().out
    assert main([*args, "--strict"]) == 1
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("exit 1") and "unspecified" in last, last


@pytest.mark.parametrize("fill, outcome", [(2.0**-127, "pass"), (float("nan"), "unspecified"), (1.0, "mismatch")])
def test_pad_default_value_in_float8e8m0_is_the_zero_pattern_or_nan_nothing_else(fill, outcome):
    import ml_dtypes

    load_all()
    e8m0 = ml_dtypes.float8_e8m0fnu
    x, pads = np.array([1.0, 2.0], e8m0), np.array([1, 0], np.int64)
    case = build_case(REGISTRY[("", "Pad", 24)], Example([x, pads], name="default_e8m0"), "float8e8m0", 24, "default_e8m0")
    assert case.tags["spec_silent"] == ["Pad.default_value_float8e8m0"]
    got = np.array([fill, 1.0, 2.0]).astype(e8m0)
    kernel = type("FixedPad", (_Kernels,), {"name": "fixed-pad", "kernels": (_kernel("Pad", lambda self, x, pads, *rest, mode=None: (got,)),)})
    assert execute_case(kernel(), case).outcome == outcome


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
def test_reduce_l2_of_values_whose_squares_underflow_reaches_the_accumulation_point(dtype):
    """ONNX Runtime-style in-type squaring gives 0 for values below the square root of the smallest
    subnormal (then 0 / 0 = NaN in a graph's Div); ours is exact. The point opens that row, and
    only that row: a plain input reaches nothing."""
    load_all()
    (point,) = [p for p in spec_silent_points("ReduceL2", 18) if p.id == "ReduceL2.narrow_accumulation"]
    (ex,) = [e for e in REGISTRY[("", "ReduceL2", 18)].edges(dtype, 18) if e.name == "narrow_underflow"]
    v = float(np.asarray(ex.inputs[0], dtype=np.float64)[0, 0])
    ours = np.array([2 * v, np.sqrt(5.25 + v * v)]).astype(ex.inputs[0].dtype)  # exact, rounded once
    assert point.reached(ex.inputs, ex.attrs, [ours], 18)
    assert point.where(ex.inputs, ex.attrs, [ours], 18)[0].tolist() == [True, False]
    plain = [np.array([[3, 4, 0], [5, 0, 12]]).astype(ex.inputs[0].dtype), *ex.inputs[1:]]
    assert not point.reached(plain, ex.attrs, [np.array([5, 13]).astype(plain[0].dtype)], 18)
