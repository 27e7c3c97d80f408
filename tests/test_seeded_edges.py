"""Issue 17: for every edge class, a backend that goes wrong only on that class (a fast path, a
fused kernel, an assumed default: ``tests/seeded_faults.py`` OPERATOR_FAULTS) is found by the
default operators run (default examples and seed; ``-k`` narrows it to the op-version and dtype
under fault, a filter over the default selection), every finding's inputs reach that class,
``onnx-harness repro`` re-fails it, and the same wrapping without the fault (the control) gives
no finding."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from harness.cli import main
from harness.coverage import edge_classes_reached
from harness.registry import Example, load_all
from harness.suites.operators import DEFAULT_EXAMPLES, case_ids
from tests.seeded_faults import OPERATOR_FAULTS

CONTROL = "tests.seeded_faults:Unfaulty"
#: edge class -> the dtype its run is narrowed to (one dtype keeps the test fast)
DTYPE = {"integer": "int32", "overflow": "float16", "subnormal": "float32"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return tmp_path_factory.mktemp("corpus")


def _inputs(bundle: Path) -> tuple[list[np.ndarray], dict, str]:
    model = onnx.load(bundle / "model.onnx")
    node = model.graph.node[0]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    files = {p.stem: p for p in (bundle / "test_data_set_0").glob("input_*.pb")}
    inputs = [numpy_helper.to_array(onnx.load_tensor(str(files[f"input_{i}"]))) for i in range(len(files))]
    return inputs, attrs, node.op_type


def test_the_table_covers_every_edge_class_of_issue_17():
    assert set(OPERATOR_FAULTS) == {"nan", "inf", "neg_zero", "subnormal", "overflow", "ties", "empty", "broadcast",
                                    "index", "exponent", "non_default_attrs", "integer"}
    assert len({backend for backend, _ in OPERATOR_FAULTS.values()}) == len(OPERATOR_FAULTS)  # one fault each


@pytest.mark.parametrize("edge", sorted(OPERATOR_FAULTS))
def test_the_default_operators_run_finds_the_edge_class_fault(edge, corpus, tmp_path, capsys):
    backend, op_version = OPERATOR_FAULTS[edge]
    op, since = op_version.rsplit("-", 1)
    dtype = DTYPE.get(edge, "float32")
    store = tmp_path / "r.sqlite"
    where = ["--corpus", str(corpus), "--store", str(store)]
    rc = main(["run", "--suite", "operators", "-k", f"^operators/{op_version}/opset{since}/{dtype}/", "--backend", backend,
               "--backend", CONTROL, "-j", "1", *where])
    capsys.readouterr()
    assert rc == 1  # the fault's findings are unexpected results
    results = json.loads(next(tmp_path.glob("r.run-*.json")).read_text())["results"]
    control = [r for r in results if r["backend"] == CONTROL]
    faulty = [r for r in results if r["backend"] == backend]
    assert control and len(control) == len(faulty)
    assert [r["case_id"] for r in control if r["outcome"] != "pass"] == []  # 0 false alarms
    findings = [r for r in faulty if r["outcome"] not in ("pass", "unspecified")]
    assert findings, f"{backend} not found among {len(faulty)} cases"

    opv = load_all()[("", op, int(since))]
    default_ids = set(case_ids(opv, int(since), DEFAULT_EXAMPLES))
    sch = onnx.defs.get_schema(op, int(since))
    for r in findings:
        assert r["case_id"] in default_ids  # a case of the default selection
        inputs, attrs, op_type = _inputs(tmp_path / r["bundle"])  # results.json names it relative to the store's folder
        assert op_type == op
        name = r["case_id"].rsplit("/", 1)[1]  # an example named for overflow counts as one
        assert edge in edge_classes_reached(op, sch, [(dtype, Example(inputs, attrs, name=name))]), r["case_id"]

    first = findings[0]
    assert main(["repro", first["case_id"], "--backend", backend, "-o", str(tmp_path / "bundle"), *where]) == 0
    assert f"{first['case_id']} on {backend}: {first['outcome']}" in capsys.readouterr().out
    assert main(["repro", first["case_id"], "--backend", CONTROL, "-o", str(tmp_path / "control"), *where]) == 0
    assert f"{first['case_id']} on {CONTROL}: pass" in capsys.readouterr().out
