"""The whole official suite on reference and onnxruntime: the foundation's acceptance numbers
(reference >= 2,000 of 2,033; onnxruntime >= 1,600 with opset negotiation and binding), and
every ORT non-pass carries an outcome class and its message."""

import json

import pytest

from harness.cli import main

pytest.importorskip("onnxruntime")


@pytest.fixture(scope="module")
def official_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("official")
    # a generous timeout: on a loaded machine a slow case must not read as a timeout
    code = main(["run", "--suite", "onnx", "--backend", "reference", "--backend", "onnxruntime", "-j", "2", "--timeout", "600",
                 "--corpus", str(tmp / "corpus"), "--store", str(tmp / "results.sqlite")])
    assert code == 0
    return {**json.loads((tmp / "results.run-1.json").read_text()), "_store": tmp / "results.sqlite"}


def test_corpus_has_every_official_case(official_run):
    # every case has a result; a random op's sample too small to test is "skip" (not checked), not in the total
    summary = official_run["summary"]["reference"]
    assert summary["total"] + summary["counts"].get("skip", 0) == 2033


def test_reference_passes_at_least_2000(official_run):
    assert official_run["summary"]["reference"]["counts"]["pass"] >= 2000


def test_onnxruntime_passes_at_least_1600_and_explains_the_rest(official_run):
    assert official_run["summary"]["onnxruntime"]["counts"]["pass"] >= 1600
    for row in official_run["results"]:
        if row["backend"] == "onnxruntime" and row["outcome"] != "pass":
            assert row["outcome"] in {"mismatch", "wrong-shape", "wrong-dtype", "rejected", "unsupported", "error", "xfail"}
            assert row["message"], row["case_id"]
            # an unexpected non-pass has its bundle; a known failure's is made on demand (repro)
            assert bool(row["bundle"]) == (row["outcome"] != "xfail"), row["case_id"]


def test_repro_makes_the_bundle_a_known_failure_was_not_given(official_run, tmp_path, capsys):
    row = next(r for r in official_run["results"] if r["backend"] == "onnxruntime" and r["outcome"] == "xfail")
    store = official_run["_store"]
    assert main(["repro", row["case_id"], "--backend", "onnxruntime", "--store", str(store), "--corpus", str(store.parent / "corpus"),
                 "-o", str(tmp_path / "b")]) == 0
    meta = json.loads((tmp_path / "b" / "meta.json").read_text())
    assert meta["case_id"] == row["case_id"] and meta["outcome"] == row["raw_outcome"]


def test_models_were_restamped_where_schemas_allow(official_run):
    restamped = [r for r in official_run["results"] if r["backend"] == "onnxruntime" and r["restamp"]]
    assert len(restamped) > 200
