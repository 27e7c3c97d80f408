import json
import shutil

import pytest

from harness.suites import onnx_official as official


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("c") / "corpus"
    manifest = official.build_corpus(root, ["onnx-simple", "onnx-pytorch-operator"])
    return root, manifest


def test_manifest_records_versions_counts_and_hashes(corpus):
    root, manifest = corpus
    assert manifest["counts"] == {"onnx-simple": 23, "onnx-pytorch-operator": 35}
    assert manifest["total"] == 58 and len(manifest["cases"]) == 58
    assert manifest["onnx"] and manifest["numpy"] and len(manifest["corpus_sha256"]) == 64
    assert json.loads((root / "manifest.json").read_text()) == manifest
    assert official.verify_corpus(root) == {"changed": [], "missing": [], "added": []}


def test_verify_detects_changed_missing_and_added(corpus, tmp_path):
    root = tmp_path / "copy"
    shutil.copytree(corpus[0], root)
    cases = sorted(p for p in (root / "onnx-simple").iterdir())
    (cases[0] / "test_data_set_0" / "input_0.pb").write_bytes(b"tampered")
    shutil.rmtree(cases[1])
    shutil.copytree(cases[2], root / "onnx-simple" / "test_extra")
    report = official.verify_corpus(root)
    assert report["changed"] == [f"onnx-simple/{cases[0].name}"]
    assert report["missing"] == [f"onnx-simple/{cases[1].name}"]
    assert report["added"] == ["onnx-simple/test_extra"]
    shutil.rmtree(root / "onnx-simple" / "test_extra")
    with pytest.raises(official.CorpusError, match="holds 22 onnx-simple cases but its manifest records 23"):
        list(official.iter_corpus_cases(root, ["onnx-simple"]))


def test_cases_load_with_their_data_and_tags(corpus):
    root, _ = corpus
    cases = list(official.iter_corpus_cases(root, ["onnx-pytorch-operator"]))
    assert len(cases) == 35 and all(c.id.startswith("onnx-pytorch-operator/") for c in cases)
    case = cases[0]
    model = case.load_model()
    data = case.load_data(model)
    assert data and data[0].expected and set(data[0].inputs) <= {i.name for i in model.graph.input}
    assert case.tags["suite"] == "onnx-pytorch-operator" and "ops" in case.tags


def test_a_missing_corpus_is_one_clear_error(tmp_path):
    with pytest.raises(official.CorpusError, match="onnx-harness corpus build"):
        list(official.iter_corpus_cases(tmp_path / "none", ["onnx-node"]))
