import json
import re
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


def test_build_keeps_the_frozen_operators_and_generated_corpora(corpus, tmp_path):
    root = tmp_path / "corpus"
    shutil.copytree(corpus[0], root)
    for kept in ("operators/seed1-examples2/Clip-13-opset13.pickle", "generated/seed1-examples2-opsetall.pickle"):
        (root / kept).parent.mkdir(parents=True, exist_ok=True)
        (root / kept).write_bytes(b"frozen")
    manifest = official.build_corpus(root, ["onnx-simple"])
    assert (root / "operators/seed1-examples2/Clip-13-opset13.pickle").read_bytes() == b"frozen"
    assert (root / "generated/seed1-examples2-opsetall.pickle").read_bytes() == b"frozen"
    # the official part is replaced as a whole: the suite the new manifest does not record is gone
    assert manifest["counts"] == {"onnx-simple": 23} and not (root / "onnx-pytorch-operator").exists()
    assert not list(tmp_path.glob("corpus.*"))  # no building or old folder left behind
    # the frozen corpora beside the official suites are not "added" cases
    assert official.verify_corpus(root) == {"changed": [], "missing": [], "added": []}


def _tamper(root, how):
    case = sorted((root / "onnx-simple").iterdir())[0]
    if how == "changed":
        (case / "test_data_set_0" / "input_0.pb").write_bytes(b"tampered")
    elif how == "half-written":
        (case / "test_data_set_0" / "output_0.pb").unlink()
    else:  # a folder the manifest does not record, in place of a recorded one (same count)
        shutil.move(case, root / "onnx-simple" / "test_unrecorded")
        return root / "onnx-simple" / "test_unrecorded"
    return case


@pytest.mark.parametrize("how", ["changed", "half-written", "unrecorded"])
def test_a_run_refuses_a_case_that_does_not_match_the_manifest(corpus, tmp_path, capsys, how):
    from harness.cli import main

    root = tmp_path / "corpus"
    shutil.copytree(corpus[0], root)
    bad = _tamper(root, how)
    with pytest.raises(official.CorpusError, match=str(bad)):
        list(official.iter_corpus_cases(root, ["onnx-simple"]))
    assert len(list(official.iter_corpus_cases(root, ["onnx-pytorch-operator"]))) == 35  # the intact suite loads
    # -k leaves the bad case out: it is not read, so it is not refused
    others = list(official.iter_corpus_cases(root, ["onnx-simple"], re.compile(f"^(?!onnx-simple/{bad.name}$)")))
    assert len(others) == 22
    # a run checks each case's digest in its workers, as they load it: the first bad one stops the
    # run, whose last line names it; the run is kept as interrupted, with no result for that case
    store = tmp_path / "r.sqlite"
    code = main(["run", "--suite", "onnx-simple", "--backend", "reference", "--corpus", str(root), "--store", str(store)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and str(bad) in err[-1] and err[-1].startswith("onnx-harness: error: corpus case")
    assert "corpus build" in err[-1] and "corpus verify" in err[-1]
    from harness.store import Store

    run = Store(store).latest_run()
    assert run["status"] == "interrupted" and f"--resume {run['id']}" in err[-1]
    assert f"onnx-simple/{bad.name}" not in {r["case_id"] for r in Store(store).results(run["id"])}


def test_frozen_cases_carry_a_digest_and_a_changed_file_is_refused(tmp_path):
    import pickle

    from harness.suites.frozen import load_or_build

    file = tmp_path / "frozen.pickle"
    assert load_or_build(file, "k", lambda: [1, 2, 3]) == [1, 2, 3]
    assert load_or_build(file, "k", lambda: pytest.fail("drawn again")) == [1, 2, 3]
    key, sha256, payload = pickle.loads(file.read_bytes())
    file.write_bytes(pickle.dumps((key, sha256, pickle.dumps([1, 2, 4]))))  # changed after it was written
    with pytest.raises(official.CorpusError, match=f"frozen cases {file} do not match"):
        load_or_build(file, "k", lambda: [1, 2, 3])
    file.write_bytes(pickle.dumps((key, sha256, payload))[:-9])  # cut short
    with pytest.raises(official.CorpusError, match=f"frozen cases {file} are unreadable"):
        load_or_build(file, "k", lambda: [1, 2, 3])
    # another key (sources changed) or the layout of an older harness: drawn again
    file.write_bytes(pickle.dumps((key, sha256, payload)))
    assert load_or_build(file, "k2", lambda: [5]) == [5]
    file.write_bytes(pickle.dumps(("k", [7])))
    assert load_or_build(file, "k", lambda: [8]) == [8]


def test_a_folder_digest_is_sha256_of_paths_and_bytes_in_component_order(tmp_path):
    import hashlib

    from harness.case import folder_sha256

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b").write_bytes(b"inner")
    (tmp_path / "a.b").write_bytes(b"outer")  # '.' sorts before '/' as text, after "a" as a component
    (tmp_path / "model.onnx").write_bytes(b"m")
    expected = hashlib.sha256(b"a/b\0inner" b"a.b\0outer" b"model.onnx\0m").hexdigest()
    assert folder_sha256(tmp_path) == expected
