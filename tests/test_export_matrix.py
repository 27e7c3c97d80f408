"""The export matrix of the models suite: model x exporter x opset x backend, with an export
failure kept as its own result (the exporter's message stored and shown), a rejected model, a
wrong answer and a pass told apart, in the report's data, its HTML and summary.md."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from harness.case import DataSet
from harness.report.export_matrix import ExportMatrix, cell_of
from harness.report.html import render
from harness.report.markdown import render as render_md
from harness.report.matrix import build_report
from harness.report.sources import RunRef
from harness.runner import BackendSpec, Runner
from harness.store import Store
from harness.suites import SuiteContext
from harness.suites import models as M

from .test_report_matrix import add_run
from .util import fake_framework

EXPORT_ERROR = "UnsupportedOperatorError: no symbolic function for aten::frobnicate"


def _model(op: str, domain: str = ""):
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], domain=domain)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    imports = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    return helper.make_model(graph, opset_imports=imports, ir_version=8)


@pytest.fixture
def exports_builder(monkeypatch):
    from model_cases._common import built

    def build(say):
        x = np.array([-1.0, 0.5, 2.0], dtype=np.float32)
        tags = lambda exporter, opset: {"suite": "models", "framework": "fake", "model": "net", "exporter": exporter, "opset": opset}  # noqa: E731
        yield built("net/good/opset17", _model("Relu"), [DataSet({"x": x}, [np.maximum(x, 0)])], tags("good", 17))
        # the "exporter" got the activation wrong: the framework's output is relu, the graph computes abs
        yield built("net/sloppy/opset17", _model("Abs"), [DataSet({"x": x}, [np.maximum(x, 0)])], tags("sloppy", 17))
        # an op of a custom domain nobody implements: the backend cannot load it
        yield built("net/custom/opset17", _model("Frob", "com.example"), [DataSet({"x": x}, [x])], tags("custom", 17))
        yield built("net/good/opset13", None, [], tags("good", 13), export_error=EXPORT_ERROR)

    return fake_framework(monkeypatch, "fake_export_models", build, __file__)


def test_cells_name_what_happened():
    assert cell_of("pass") == ("pass", False)
    assert cell_of("mismatch") == ("wrong", False)
    assert cell_of("wrong-shape") == ("wrong", False)
    assert cell_of("unsupported") == ("rejected", False)
    assert cell_of("crash") == ("error", False)
    assert cell_of("xfail", "mismatch") == ("wrong", True)
    assert cell_of("export-failed") == ("export-failed", False)


def test_export_matrix_from_a_stored_run(tmp_path, exports_builder):
    ctx = SuiteContext(corpus=tmp_path / "corpus", extra={"models_cache": tmp_path / "cache", "frameworks": ["fake"]}, say=lambda m: None)
    cases = list(M.model_cases(ctx))
    results = []
    Runner([BackendSpec("reference")], jobs=1).run([(c, "reference") for c in cases], results.append)
    store = Store(tmp_path / "results.db")
    run_id = add_run(store, results, backends={"reference": (True, "", "1.23.2")})
    report = build_report([RunRef(tmp_path / "results.db", run_id)], history=False)

    matrix = ExportMatrix.of_report(report)
    assert isinstance(matrix, ExportMatrix)
    got = {(r.exporter, r.opset): r.cells["reference"]["cell"] for r in matrix.rows}
    assert got == {("good", "13"): "export-failed", ("good", "17"): "pass", ("sloppy", "17"): "wrong", ("custom", "17"): "rejected"}
    failed = next(r for r in matrix.rows if r.opset == "13")
    # the failed export is a stored result of its own, its message the exporter's
    assert failed.export_error == EXPORT_ERROR
    assert EXPORT_ERROR in failed.cells["reference"]["message"]
    assert [r.opset for r in matrix.rows if r.exporter == "good"] == ["13", "17"]
    assert matrix.counts("reference") == {"pass": 1, "wrong": 1, "rejected": 1, "error": 0, "export-failed": 1, "unspecified": 0, "skip": 0}

    md = render_md(report, tmp_path)
    section = md.split("### Export matrix", 1)[1]
    table = [line for line in section.splitlines() if line.startswith("| fake")]
    assert sorted(line.split("|")[3].strip() + "/" + line.split("|")[4].strip() + "=" + line.split("|")[5].strip() for line in table) == [
        "custom/17=rejected", "good/13=export-failed", "good/17=pass", "sloppy/17=wrong"]
    assert "aten::frobnicate" in section

    html = render(report)
    exports_html = html.split('<section id="exports">', 1)[1].split("</section>", 1)[0]
    assert exports_html.count("<tr><td>fake</td>") == 4
    assert "export-failed" in exports_html and "aten::frobnicate" in exports_html


def test_no_models_no_export_section(tmp_path):
    from .test_report_matrix import make_store

    store_path = make_store(tmp_path)
    report = build_report([RunRef(store_path, 1)], history=False)
    assert ExportMatrix.of_report(report).rows == []
    assert "Export matrix" not in render_md(report, tmp_path)
    assert '<section id="exports">' not in render(report)
