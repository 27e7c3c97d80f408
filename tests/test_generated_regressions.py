"""Findings that last (issue 35): a campaign writes each distinct finding as a named regression
case (a frozen few-node model with its inputs), deduplicated by root cause across campaigns, and
the ``generated`` suite replays it: the faulty backend still fails it, a correct one passes."""

from __future__ import annotations

import json

import harness.suites.generated as generated_suite
from harness.backends.reference import ReferenceBackend
from harness.worker import ExecOptions, execute_case
from harness.generated.campaign import Campaign, FuzzConfig
from harness.generated.regressions import SUITE_PREFIX, regression_cases
from harness.generated.spec import GenConfig
from harness.runner import BackendSpec
from harness.suites import SuiteContext
from tests.seeded_faults import FAULTS, SliceEnd

OPSETS = tuple(range(13, 27))


def _campaign(folder, seed):
    backend, _, _ = FAULTS["slice-end"]
    config = FuzzConfig(backends=[BackendSpec(backend)], gen=GenConfig(opsets=OPSETS, ops=("Slice", "Neg", "Relu"), max_nodes=6,
                                                                       dtypes=("float32",), nan_rate=0.0, edge_rate=0.0),
                        budget_s=60, seed=seed, max_findings=1, isolate=False, shrink_s=30, regressions=folder)
    return Campaign(config).run()


def test_a_finding_becomes_a_regression_case_replayed_by_the_generated_suite(tmp_path, monkeypatch):
    folder = tmp_path / "regressions"
    report = _campaign(folder, seed=1)
    assert len(report.findings) == 1
    names = [p.name for p in folder.iterdir()]
    assert names == [report.findings[0].regression] == ["Slice.ops.float32.wrong-values"]
    # a second campaign meets the same root cause: counted, not written again
    again = _campaign(folder, seed=2)
    assert again.findings and again.findings[0].regression == names[0]
    assert [p.name for p in folder.iterdir()] == names
    assert json.loads((folder / names[0] / "case.json").read_text())["seen"] == 2

    # the generated suite replays it after its drawn graphs
    monkeypatch.setattr(generated_suite, "REGRESSION_FOLDER", folder)
    cases = list(generated_suite.generated_cases(SuiteContext(corpus=tmp_path / "corpus", examples=2, seed=3)))
    replayed = [c for c in cases if c.id.startswith(SUITE_PREFIX)]
    assert [c.id for c in replayed] == [SUITE_PREFIX + names[0]] and len(cases) == 3
    case = replayed[0]
    assert case.tags["ops"] == ["Slice"] and case.tags["found_on"] == FAULTS["slice-end"][0]
    # the faulty backend still fails it; a correct implementation passes it
    assert execute_case(SliceEnd(), case, ExecOptions(restamp=False)).outcome == "wrong-shape"  # the last element dropped
    assert execute_case(ReferenceBackend(), case, ExecOptions(restamp=False)).outcome == "pass"


def test_missing_kernels_are_no_regression_cases(tmp_path):
    config = FuzzConfig(backends=[BackendSpec("tests.seeded_faults:NoFloat16Neg")],
                        gen=GenConfig(opsets=OPSETS, ops=("Neg", "Abs"), dtypes=("float16",), max_nodes=4),
                        budget_s=60, seed=1, max_graphs=40, isolate=False, shrink_s=20, regressions=tmp_path / "r")
    report = Campaign(config).run()
    assert [f.outcome for f in report.findings] == ["unsupported"]
    assert regression_cases(tmp_path / "r") == []


def test_the_checked_in_regression_cases_load_and_name_their_root_cause():
    """The findings of the ONNX Runtime and PyTorch compiled campaigns that last
    (harness/generated/regressions): each loads as a case of the generated suite whose id is its
    folder's root-cause name, and our references composed again give its expected outputs."""
    from harness.generated.regressions import REGRESSIONS

    cases = regression_cases(REGRESSIONS)
    assert {c.id for c in cases} >= {SUITE_PREFIX + "Shrink.ops.float64.wrong-values", SUITE_PREFIX + "HardSwish.ops.float64.wrong-values",
                                     # ONNX Runtime's DoubleQDQPairsRemover merges two Q -> DQ pairs of different scales
                                     SUITE_PREFIX + "DequantizeLinear+DequantizeLinear+QuantizeLinear+QuantizeLinear.QDQPair.float32.optimized-wrong-values",
                                     # ONNX Runtime fuses a per-channel Conv activation into a QLinearConv that fails
                                     SUITE_PREFIX + "Conv+DequantizeLinear+DequantizeLinear+DequantizeLinear+QuantizeLinear.QDQConv.float32"
                                                    ".optimized-error-FAIL",
                                     # the compile warm-up divided int64 by zero (fixed in harness.backends.pytorch)
                                     SUITE_PREFIX + "Div.ops.int64.crash"}
    assert generated_suite.REGRESSION_FOLDER == REGRESSIONS
    from tests.seeded_faults import OurReferences

    for case in cases:
        assert case.tags["found_on"] in ("onnxruntime", "pytorch-compile") and case.id.endswith(
            f".{case.tags['dtype']}.{case.tags['kind'].replace(':', '-')}"), case.id
        assert execute_case(OurReferences(), case, ExecOptions(restamp=False)).outcome == "pass", case.id


def test_a_campaign_writes_its_regression_cases_beside_its_store_not_into_the_package(tmp_path):
    from harness.generated.cli import regressions_folder
    from harness.generated.regressions import REGRESSIONS

    store = tmp_path / "runs" / "fuzz.sqlite"
    assert regressions_folder(None, str(store)) == tmp_path / "runs" / "regressions" / "fuzz"
    assert regressions_folder(str(tmp_path / "mine"), str(store)) == tmp_path / "mine"
    assert regressions_folder("none", str(store)) is None
    assert REGRESSIONS not in {regressions_folder(None, str(store)), regressions_folder(None, "reports/results.sqlite")}
