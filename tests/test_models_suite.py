"""The models suite (framework models exported to ONNX, cached on disk) and a user's own models
as cases. Framework builders are tested where their framework is installed and skipped where
it is not."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from harness.case import Case, DataSet, write_case_folder
from harness.worker import execute_case
from harness.runner import BackendSpec, Runner, _build_backend
from harness.suites import SuiteContext, suite_cases
from harness.suites import models as M
from harness.suites.user_models import UnboundDimension, user_model_cases

from .util import fake_framework


def _outcomes(cases: list[Case], backends: list[str]) -> dict[tuple[str, str], str]:
    results = []
    Runner([BackendSpec(b) for b in backends], jobs=2).run([(c, b) for c in cases for b in backends], results.append)
    return {(r.case_id, r.backend): f"{r.outcome} {r.message}".strip() for r in results}


def _ctx(tmp_path: Path, frameworks: list[str], messages: list[str] | None = None) -> SuiteContext:
    say = messages.append if messages is not None else (lambda m: None)
    return SuiteContext(corpus=tmp_path / "corpus", extra={"models_cache": tmp_path / "cache", "frameworks": frameworks}, say=say)


# -- scikit-learn: built, cached, passing -----------------------------------------------------
@pytest.fixture(scope="module")
def sklearn_cases(tmp_path_factory):
    pytest.importorskip("sklearn")
    pytest.importorskip("skl2onnx")
    tmp = tmp_path_factory.mktemp("models")
    return tmp, list(M.model_cases(_ctx(tmp, ["sklearn"])))


SKLEARN_MODELS = {"linear_regression", "logistic_regression", "random_forest", "pipeline_scaler_logreg",
                  "gradient_boosting", "svc_rbf_proba", "knn", "tfidf_logreg"}


def test_sklearn_cases_cover_eight_models_at_three_opsets(sklearn_cases):
    _, cases = sklearn_cases
    models = {c.tags["model"] for c in cases}
    assert models == SKLEARN_MODELS
    assert len(cases) == 24
    for case in cases:
        assert case.id.startswith("models/sklearn/")
        for key in ("framework", "framework_version", "model", "exporter", "exporter_version", "opset", "batch"):
            assert key in case.tags, (case.id, key)
        assert case.tags["opset_exported"] == case.tags["opset"]
        assert case.tolerance.rtol == 1e-4 and case.tolerance.atol == 1e-5
        data = case.load_data()
        assert [next(iter(ds.inputs.values())).shape[0] for ds in data] == [1, 64, 7]


def test_sklearn_classifiers_give_tensors_not_zipmaps(sklearn_cases):
    _, cases = sklearn_cases
    case = next(c for c in cases if c.tags["model"] == "random_forest")
    model = case.load_model()
    assert "ZipMap" not in {n.op_type for n in model.graph.node}
    labels, probabilities = case.load_data(model)[1].expected
    assert labels.dtype == np.int64 and probabilities.dtype == np.float32
    assert probabilities.shape == (64, 3)


def test_sklearn_text_pipeline_takes_strings_and_gives_probabilities(sklearn_cases):
    _, cases = sklearn_cases
    case = next(c for c in cases if c.tags["model"] == "tfidf_logreg")
    model = case.load_model()
    assert "TfIdfVectorizer" in {n.op_type for n in model.graph.node}
    data = case.load_data(model)[1]
    text = next(iter(data.inputs.values()))
    assert text.dtype == object and text.shape == (64, 1) and isinstance(text[0, 0], str)
    labels, probabilities = data.expected
    assert set(np.unique(labels)) == {0, 1} and probabilities.shape == (64, 2)


def test_sklearn_cases_pass_on_onnxruntime_and_reference_but_its_known_gaps(sklearn_cases):
    pytest.importorskip("onnxruntime")
    _, cases = sklearn_cases
    outcomes = _outcomes(cases, ["reference", "onnxruntime"])
    assert len(outcomes) == 2 * len(cases)
    assert {k: v for k, v in outcomes.items() if k[1] == "onnxruntime" and not v.startswith("pass")} == {}
    failing = {k[0].split("/")[2]: v for k, v in outcomes.items() if k[1] == "reference" and not v.startswith("pass")}
    assert set(failing) == {"svc_rbf_proba", "tfidf_logreg"}
    # onnx.reference's SVMClassifier couples pairwise probabilities wrongly (3 classes), the labels agree
    assert failing["svc_rbf_proba"].startswith("mismatch") and "output 1:" in failing["svc_rbf_proba"]
    # skl2onnx tokenizes with ONNX Runtime's com.microsoft Tokenizer
    assert failing["tfidf_logreg"].startswith("unsupported") and "Tokenizer" in failing["tfidf_logreg"]


def test_the_cache_is_reused_not_rebuilt(sklearn_cases, monkeypatch):
    tmp, cases = sklearn_cases
    module = M.builder("sklearn")
    manifest = json.loads((tmp / "cache" / "sklearn" / M.cache_key(module) / M.MANIFEST).read_text())
    assert manifest["total"] == 24 and manifest["versions"]["scikit-learn"]
    monkeypatch.setattr(module, "build", lambda say: pytest.fail("rebuilt although the cache is complete"))
    again = list(M.model_cases(_ctx(tmp, ["sklearn"])))
    assert [c.id for c in again] == [c.id for c in cases]


def test_models_is_a_registered_suite(tmp_path, monkeypatch):
    monkeypatch.setenv("ONNX_HARNESS_MODELS", str(tmp_path / "cache"))
    ctx = SuiteContext(corpus=tmp_path / "corpus", extra={"frameworks": ["light"]})
    cases = list(suite_cases("models", ctx))
    assert len(cases) == 9 and all(c.id.startswith("models/light/") for c in cases)
    assert {c.tags["model"] for c in cases} >= {"resnet50", "squeezenet", "densenet121"}
    assert (tmp_path / "cache" / "light").is_dir()


# -- export failures and missing frameworks, with a fake builder --------------------------------
@pytest.fixture
def fake_builder(monkeypatch):
    from model_cases._common import built

    def build(say):
        x = np.arange(3, dtype=np.float32)
        graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
        yield built("relu/opset17", model, [DataSet({"x": x}, [np.maximum(x, 0)])], {"framework": "fake", "model": "relu", "opset": 17})
        yield built("broken/opset13", None, [], {"framework": "fake", "model": "broken", "opset": 13},
                    export_error="UnsupportedOperatorError: no symbolic function for aten::frobnicate")

    return fake_framework(monkeypatch, "fake_models", build, __file__)


def test_a_failed_export_is_a_case_carrying_the_error(tmp_path, fake_builder):
    cases = {c.id: c for c in M.model_cases(_ctx(tmp_path, ["fake"]))}
    assert set(cases) == {"models/fake/relu/opset17", "models/fake/broken/opset13"}
    broken = cases["models/fake/broken/opset13"]
    assert broken.tags["export_error"].startswith("UnsupportedOperatorError")
    assert broken.path is None and broken.model_bytes is None
    assert "export_error" not in cases["models/fake/relu/opset17"].tags
    backend = _build_backend(BackendSpec("reference"))
    assert execute_case(backend, cases["models/fake/relu/opset17"]).outcome == "pass"
    failed = execute_case(backend, broken)
    assert failed.outcome == "export-failed"
    assert failed.message.startswith("export failed: UnsupportedOperatorError")


def test_a_missing_framework_is_skipped_with_its_reason(tmp_path, fake_builder):
    fake_builder.reason = "fakelib is not installed (pip install fakelib)"
    messages: list[str] = []
    assert list(M.model_cases(_ctx(tmp_path, ["fake"], messages))) == []
    assert messages == ["skipping fake model cases: fakelib is not installed (pip install fakelib)"]


def test_cases_built_elsewhere_run_where_the_framework_is_missing(tmp_path, fake_builder):
    built_here = [c.id for c in M.model_cases(_ctx(tmp_path, ["fake"]))]
    fake_builder.reason = "fakelib is not installed"
    messages: list[str] = []
    assert [c.id for c in M.model_cases(_ctx(tmp_path, ["fake"], messages))] == built_here
    assert "built elsewhere" in messages[0]


def test_a_failing_builder_leaves_no_cache_and_spares_the_others(tmp_path, fake_builder):
    def explode(say):
        raise RuntimeError("the framework crashed")
        yield

    fake_builder.build = explode
    messages: list[str] = []
    cases = list(M.model_cases(_ctx(tmp_path, ["fake", "light"], messages)))
    assert any("building them failed: RuntimeError: the framework crashed" in m for m in messages)
    assert len(cases) == 9  # the light models still came
    assert not any(p.name for p in (tmp_path / "cache" / "fake").glob("*"))


# -- framework builders, where installed ------------------------------------------------------
def _pass_on_reference(case_model, data, tolerance) -> str:
    case = Case(id="t", suite="t", model_bytes=case_model.SerializeToString(), data=data, tolerance=tolerance)
    result = execute_case(_build_backend(BackendSpec("reference")), case)
    return f"{result.outcome} {result.message}".strip()


def test_torch_builder_exports_with_both_exporters(monkeypatch):
    torch = pytest.importorskip("torch")
    from model_cases import torch_models as T

    exporters = ["torchscript"] + (["dynamo"] if T.dist_version("onnxscript") else [])
    monkeypatch.setattr(T, "EXPORTERS", tuple(exporters))
    monkeypatch.setattr(T, "_opsets", lambda torch: {"torchscript": [17], "dynamo": [18]})
    specs = T._specs(torch)
    assert [s.name for s in specs] == ["mlp", "cnn_residual", "lstm", "gru", "transformer_encoder", "embedding_masked"]
    # exporting is the slow part: three models cover dense, conv + batch norm, int64 ids + masking
    monkeypatch.setattr(T, "_specs", lambda torch: [s for s in specs if s.name in ("mlp", "cnn_residual", "embedding_masked")])
    made = {m.name: m for m in T.build(lambda msg: None)}
    for exporter in exporters:
        for model in ("mlp", "cnn_residual", "embedding_masked"):
            m = made[f"{model}/{exporter}/opset{17 if exporter == 'torchscript' else 18}"]
            assert m.export_error is None, m.export_error
            assert m.tags["framework_version"] == torch.__version__ and m.tags["exporter"] == exporter
            assert _pass_on_reference(m.model, m.data, m.tolerance) == "pass", m.name
    mlp = made["mlp/torchscript/opset17"]
    assert mlp.model.graph.input[0].type.tensor_type.shape.dim[0].dim_param  # a dynamic batch axis
    assert mlp.tags["batches"] == [1, 16]


def test_keras_builder_exports_through_tf_function():
    pytest.importorskip("tensorflow")
    pytest.importorskip("tf2onnx")
    from model_cases import keras_models as K

    made = {m.name: m for m in K.build(lambda msg: None)}
    assert {name.split("/")[0] for name in made} == {"mlp", "cnn", "lstm"}
    lstm = made["lstm/opset17"]
    assert lstm.export_error is None, lstm.export_error
    assert lstm.tags["seq_lens"] == [4, 10]
    assert _pass_on_reference(lstm.model, lstm.data, lstm.tolerance) == "pass"


# -- a user's own models ----------------------------------------------------------------------
def _dynamic_model(dim: str | None = "batch", op: str = "Relu") -> onnx.ModelProto:
    shape = [dim, 3]
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_user_model_folder_with_stored_data_sets(tmp_path):
    model = _dynamic_model()
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    write_case_folder(tmp_path / "mine", model, [DataSet({"x": x}, [np.maximum(x, 0)])], {})
    (case,) = user_model_cases([tmp_path / "mine"])
    assert case.id == "user/mine" and case.tags["oracle"] == "stored" and case.tags["inputs"] == "stored"
    assert execute_case(_build_backend(BackendSpec("reference")), case).outcome == "pass"


def test_user_model_with_drawn_inputs_and_a_bound_dimension(tmp_path):
    pytest.importorskip("onnxruntime")
    onnx.save(_dynamic_model(), tmp_path / "relu.onnx")
    (case,) = user_model_cases([tmp_path / "relu.onnx"], {"batch": 5}, oracle_backend="reference")
    (ds,) = case.data
    assert ds.inputs["x"].shape == (5, 3) and ds.expected[0].shape == (5, 3)
    assert case.tags["inputs"] == "drawn" and case.tags["oracle"] == "reference"
    assert execute_case(_build_backend(BackendSpec("onnxruntime")), case).outcome == "pass"
    # drawing is deterministic: the same model draws the same inputs
    (again,) = user_model_cases([tmp_path / "relu.onnx"], {"batch": 5})
    np.testing.assert_array_equal(again.data[0].inputs["x"], ds.inputs["x"])


def test_an_unbound_dimension_is_an_error_naming_it(tmp_path):
    onnx.save(_dynamic_model("batch"), tmp_path / "relu.onnx")
    with pytest.raises(UnboundDimension, match=r"'batch' \(input 'x', axis 0\).*--dim NAME=VALUE"):
        user_model_cases([tmp_path / "relu.onnx"], {})


def test_an_unnamed_dimension_is_bound_by_input_and_axis(tmp_path):
    onnx.save(_dynamic_model(None), tmp_path / "relu.onnx")
    with pytest.raises(UnboundDimension, match=r"'x\[0\]'"):
        user_model_cases([tmp_path / "relu.onnx"])
    (case,) = user_model_cases([tmp_path / "relu.onnx"], {"x[0]": 2})
    assert case.data[0].inputs["x"].shape == (2, 3)


def test_a_folder_of_models_becomes_one_case_each(tmp_path):
    (tmp_path / "zoo" / "sub").mkdir(parents=True)
    onnx.save(_dynamic_model(op="Relu"), tmp_path / "zoo" / "a.onnx")
    onnx.save(_dynamic_model(op="Abs"), tmp_path / "zoo" / "sub" / "b.onnx")
    x = np.ones((1, 3), np.float32)
    write_case_folder(tmp_path / "zoo" / "c", _dynamic_model(op="Neg"), [DataSet({"x": x}, None)], {})  # inputs, no outputs
    cases = {c.id: c for c in user_model_cases([tmp_path / "zoo"], {"batch": 2})}
    assert set(cases) == {"user/a", "user/sub/b", "user/c"}
    c = cases["user/c"]
    assert c.tags["inputs"] == "stored" and c.tags["oracle"] == "reference"
    np.testing.assert_array_equal(c.data[0].expected[0], -x)


def test_an_oracle_that_cannot_run_is_recorded(tmp_path):
    onnx.save(_dynamic_model(), tmp_path / "relu.onnx")
    (case,) = user_model_cases([tmp_path / "relu.onnx"], {"batch": 1}, oracle_backend="no-such-backend")
    assert "oracle no-such-backend failed" in case.tags["oracle_error"]
    assert case.data[0].expected is None


def test_a_path_without_a_model_is_refused(tmp_path):
    from harness.case import ModelIntakeError

    with pytest.raises(ModelIntakeError, match="no such model file or folder"):
        user_model_cases([tmp_path / "nothing.onnx"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelIntakeError, match="no .onnx model"):
        user_model_cases([tmp_path / "empty"])
