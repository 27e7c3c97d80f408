"""The pytest plugin: item ids, failure messages, strict xfail from expectations, xdist merging."""

import json
import sqlite3
from pathlib import Path

import pytest

from harness.suites import onnx_official as official

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("plugin") / "corpus"
    official.build_corpus(root, ["onnx-simple"])
    return root


@pytest.fixture
def run(pytester, corpus, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))

    def go(*args):
        return pytester.runpytest_subprocess("-p", "no:cacheprovider", "--harness-suite", "onnx-simple", "--harness-corpus", str(corpus),
                                             "--harness-store", str(pytester.path / "r.sqlite"), *args)

    return go


def test_one_item_per_case_and_backend_with_readable_ids(run):
    result = run("--harness-backend", "reference", "--harness-k", "expand_shape", "--collect-only", "-q")
    lines = [l for l in result.outlines if "[reference]" in l]
    assert lines and all("onnx-simple/test_expand_shape_model" in l for l in lines)
    assert len(lines) == 4


def test_a_failure_carries_the_verdict_and_the_rerun_command(run, pytester):
    result = run("--harness-backend", "tests.fault_backends:AlwaysWrong", "--harness-k", "expand_shape_model1")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "mismatch" in text and "max abs 1" in text
    assert "re-run: onnx-harness run --suite onnx-simple --backend tests.fault_backends:AlwaysWrong -k" in text
    assert "repro.py" in text


def test_expectations_become_strict_xfails(run, pytester):
    pytester.makefile(".toml", known='''
[[expect]]
backend = "tests.fault_backends:AlwaysWrong"
case = "onnx-simple/test_expand_shape_model1"
outcome = "mismatch"
reason = "adds one on purpose"

[[expect]]
backend = "reference"
case = "onnx-simple/test_expand_shape_model1"
outcome = "mismatch"
reason = "wrong on purpose: reference passes this"
''')
    result = run("--harness-backend", "tests.fault_backends:AlwaysWrong", "--harness-backend", "reference",
                 "--harness-k", "expand_shape_model1", "--harness-expectations", str(pytester.path / "known.toml"))
    result.assert_outcomes(xfailed=1, failed=1)
    assert "XPASS(strict)" in result.stdout.str()


def test_xdist_workers_share_one_run_and_json_is_written_once(run, pytester):
    result = run("--harness-backend", "reference", "-n", "2")
    counts = result.parseoutcomes()
    assert counts.get("passed", 0) + counts.get("failed", 0) + counts.get("xfailed", 0) == 23
    db = sqlite3.connect(pytester.path / "r.sqlite")
    assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
    assert db.execute("SELECT COUNT(*), COUNT(DISTINCT case_id) FROM results WHERE run_id = 1").fetchone() == (23, 23)
    doc = json.loads((pytester.path / "r.run-1.json").read_text())
    assert len(doc["results"]) == 23 and doc["run"]["status"] == "complete"


def test_the_plugin_is_inert_without_a_backend(pytester):
    pytester.makepyfile("def test_plain():\n    assert True\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_an_unavailable_backend_is_one_failing_item_with_its_reason(run):
    args = ("--harness-backend", "reference", "--harness-backend", "tests.fault_backends:NotInstalled", "--harness-k", "expand_shape")
    result = run(*args)
    result.assert_outcomes(passed=4, failed=1)
    assert "backend tests.fault_backends:NotInstalled unavailable: vendor-sdk is not installed" in result.stdout.str()
    result = run(*args, "--harness-allow-unavailable")
    result.assert_outcomes(passed=4, skipped=4)


def test_unspecified_is_not_a_failure_but_a_warning_with_the_point(pytester, monkeypatch, tmp_path):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--harness-suite", "operators", "--harness-examples", "0",
                                           "--harness-corpus", str(tmp_path / "corpus"), "--harness-store", str(pytester.path / "r.sqlite"),
                                           "--harness-backend", "tests.seeded_faults:NanDroppingMax",
                                           "--harness-k", "^operators/Max-8/opset8/float32/nan_three$")
    result.assert_outcomes(passed=1, warnings=1)
    assert "UnspecifiedBehaviour" in result.stdout.str() and "Max.nan" in result.stdout.str()


def test_run_and_the_plugin_record_the_same_result_and_bundle(run, pytester, corpus):
    """One record step: the same wrong case through `onnx-harness run` and through the plugin,
    restamped at opset 11 (the model says 9), gives the same stored row and a bundle stamped the same way."""
    import subprocess
    import sys

    args = ("--harness-backend", "tests.fault_backends:AlwaysWrong", "--harness-k", "expand_shape_model1", "--harness-opset", "11")
    run(*args).assert_outcomes(failed=1)
    cli_store = pytester.path / "cli.sqlite"
    subprocess.run([sys.executable, "-m", "harness.cli", "run", "--suite", "onnx-simple", "--corpus", str(corpus), "--store", str(cli_store),
                    "--backend", "tests.fault_backends:AlwaysWrong", "-k", "expand_shape_model1", "--opset", "11", "-j", "1"],
                   cwd=ROOT, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)}, capture_output=True, check=False)
    columns = "case_id, backend, outcome, raw_outcome, message, max_abs, bad_count, first_bad, verdict, restamp"
    rows = [sqlite3.connect(path).execute(f"SELECT {columns}, bundle FROM results").fetchall()
            for path in (pytester.path / "r.sqlite", cli_store)]
    assert len(rows[0]) == len(rows[1]) == 1
    assert rows[0][0][:-1] == rows[1][0][:-1]
    metas = [json.loads((Path(r[0][-1]) / "meta.json").read_text()) for r in rows]
    assert metas[0]["opset"] == metas[1]["opset"] == 11
    assert {k: v for k, v in metas[0].items() if k != "run_id"} == {k: v for k, v in metas[1].items() if k != "run_id"}
