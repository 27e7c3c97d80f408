import json
import subprocess
import sys

import pytest

from harness.cli import main
from harness.store import Store
from harness.suites import onnx_official as official


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli") / "corpus"
    official.build_corpus(root, ["onnx-simple"])
    return root


def _run(args, corpus, store, capsys):
    code = main(["run", "--corpus", str(corpus), "--store", str(store), *args])
    return code, capsys.readouterr()


def test_run_prints_a_table_and_writes_json(corpus, tmp_path, capsys):
    store = tmp_path / "r.sqlite"
    code, out = _run(["--suite", "onnx-simple", "--backend", "reference", "-j", "2"], corpus, store, capsys)
    assert code == 0, out.err
    assert "reference" in out.out and "pass rate" in out.out
    doc = json.loads((tmp_path / "run-1.json").read_text())
    assert len(doc["results"]) == 23
    assert doc["summary"]["reference"]["counts"]["pass"] >= 20
    assert doc["run"]["environment"]["onnx"] and doc["run"]["environment"]["corpus_sha256"]


def test_unavailable_backend_is_shown_with_its_reason_never_as_zero(corpus, tmp_path, capsys):
    code, out = _run(["--suite", "onnx-simple", "--backend", "reference", "--backend", "tests.fault_backends:NotInstalled", "-k", "expand"], corpus, tmp_path / "r.sqlite", capsys)
    assert code == 1, "a requested backend that cannot load fails the run"
    line = [l for l in out.out.splitlines() if "NotInstalled" in l][0]
    assert "unavailable: vendor-sdk is not installed" in line and "0" not in line.split("unavailable")[0]
    code, out = _run(["--suite", "onnx-simple", "--backend", "tests.no_such:Backend"], corpus, tmp_path / "r.sqlite", capsys)
    assert code == 2 and "cannot load backend" in out.err


@pytest.mark.parametrize("args, words", [
    (["--backend", "nosuch"], "unknown backend 'nosuch'"),
    (["-k", "["], "bad -k pattern"),
    (["-k", "matches_nothing_at_all"], "no case matches"),
    (["--suite", "nosuch"], "unknown suite"),
    (["--option", "threads=1"], "expected BACKEND.NAME=VALUE"),
])
def test_bad_input_is_one_clear_line_and_nonzero(corpus, tmp_path, capsys, args, words):
    code, out = _run(["--suite", "onnx-simple", *args], corpus, tmp_path / "r.sqlite", capsys)
    assert code == 2
    assert words in out.err and out.err.count("\n") == 1


def test_resume_finishes_an_interrupted_run_without_repeating(corpus, tmp_path, capsys):
    store_path = tmp_path / "r.sqlite"
    code, _ = _run(["--suite", "onnx-simple", "--backend", "reference", "-k", "expand"], corpus, store_path, capsys)
    store = Store(store_path)
    run = store.latest_run()
    total = len(list(store.results(run["id"])))
    # pretend the run was cut off after its first result
    first = next(iter(store.results(run["id"])))
    store.db.execute("DELETE FROM results WHERE run_id = ? AND id != ?", (run["id"], first["id"]))
    store.finish_run(run["id"], "interrupted")
    code = main(["run", "--resume", "--store", str(store_path)])
    assert code == 0
    rows = list(store.results(run["id"]))
    assert len(rows) == len({r["case_id"] for r in rows}) == total == 4
    assert rows[0]["id"] == first["id"]
    assert store.run(run["id"])["status"] == "complete"


def test_show_and_repro(corpus, tmp_path, capsys):
    case_id = "onnx-simple/test_expand_shape_model1"
    assert main(["show", case_id, "--corpus", str(corpus), "--store", str(tmp_path / "none.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "data set 0" in out and "Expand" in out
    bundle = tmp_path / "bundle"
    assert main(["repro", case_id, "--backend", "reference", "--corpus", str(corpus), "-o", str(bundle)]) == 0
    assert (bundle / "model.onnx").exists() and (bundle / "test_data_set_0" / "input_0.pb").exists()
    meta = json.loads((bundle / "meta.json").read_text())
    assert meta["case_id"] == case_id and meta["backend"] == "reference"
    done = subprocess.run([sys.executable, str(bundle / "repro.py")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"{case_id} on reference: pass" in done.stdout


def test_list_backends_and_suites(capsys):
    assert main(["list", "backends"]) == 0
    out = capsys.readouterr().out
    assert "reference" in out and "onnxruntime" in out
    assert main(["list", "suites"]) == 0
    assert "onnx-node" in capsys.readouterr().out
