"""``onnx-harness diff`` (a CI gate) and ``onnx-harness report``, through their argparse wiring."""

from __future__ import annotations

import argparse
import json

import pytest

from harness.report.commands import register
from harness.report.matrix import classify_change, diff_results

from .test_report_matrix import make_store

REGRESSED = "operators/Relu-14/opset14/float32/0"


def cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="onnx-harness")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


@pytest.fixture
def store(tmp_path):
    return str(make_store(tmp_path))


@pytest.mark.parametrize("before, after, kind", [
    ("pass", "mismatch", "regressed"), ("xfail", "crash", "regressed"), ("xpass", "error", "regressed"),
    ("mismatch", "pass", "improved"), ("xfail", "xpass", "improved"), ("crash", "pass", "improved"),
    ("error", "crash", "changed"), ("pass", "xfail", "changed"), ("mismatch", "xfail", "changed"),
    ("skip", "mismatch", "changed"), ("pass", "skip", "changed"),
    (None, "pass", "new"), ("pass", None, "removed"), ("pass", "pass", None), ("mismatch", "mismatch", None),
])
def test_classify_change(before, after, kind):
    assert classify_change(before, after) == kind


def test_diff_lists_each_kind(store, capsys):
    assert cli(["diff", "1", "2", "--store", store]) == 1
    out, err = capsys.readouterr()
    lines = out.splitlines()
    row = next(line for line in lines if REGRESSED in line and "regressed" in line)
    assert "onnxruntime" in row and "| pass" in row and "mismatch" in row
    assert any("improved" in line and "Relu-14/opset14/float32/1" in line for line in lines)
    assert any("changed" in line and "Clip-11/opset13/float32/0" in line and "crash" in line for line in lines)
    assert any(line.startswith("| new") and "Add-14" in line for line in lines)
    assert any(line.startswith("| removed") and "test_skip_me" in line for line in lines)
    assert "run 1 -> run 2: 1 regressed, 1 improved, 1 changed, 2 new, 2 removed" in out
    assert "1 regression(s) not allowed" in err
    # regressions come first
    assert lines[2].startswith("| regressed")


def test_allow_accepts_known_changes(store, capsys):
    assert cli(["diff", "1", "2", "--store", store, "--allow", "operators/Relu-14/*"]) == 0
    out, _ = capsys.readouterr()
    assert "regressed (allowed)" in out and "(1 regressions allowed)" in out
    # a backend-qualified pattern only accepts that backend
    assert cli(["diff", "1", "2", "--store", store, "--allow", "reference:operators/Relu-14/*"]) == 1
    assert cli(["diff", "1", "2", "--store", store, "--allow", "onnxruntime:operators/Relu-14/opset14/float32/0"]) == 0
    capsys.readouterr()
    assert cli(["diff", "1", "2", "--store", store, "--allow", "nothing/*", "--allow", "*Relu-14*"]) == 0
    assert "--allow 'nothing/*' matched no change" in capsys.readouterr().err


def test_no_regression_is_exit_zero_and_new_defaults_to_latest(store, capsys):
    assert cli(["diff", "2", "--store", store]) == 0  # latest against itself
    assert "0 regressed, 0 improved, 0 changed, 0 new, 0 removed" in capsys.readouterr().out
    assert cli(["diff", "2", "1", "--store", store]) == 1  # backwards, the improvement is a regression


def test_diff_reads_results_json_from_a_report(store, tmp_path, capsys):
    out = tmp_path / "base-report"
    assert cli(["report", "1", "--store", store, "-o", str(out), "--format", "json"]) == 0
    assert cli(["diff", str(out / "results.json"), "2", "--store", store]) == 1
    assert "results.json -> run 2: 1 regressed" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"results": [{"case": 1}]}))
    assert cli(["diff", str(bad), "2", "--store", store]) == 2
    assert "not a results file" in capsys.readouterr().err


def test_bad_runs_are_one_clear_line(store, tmp_path, capsys):
    assert cli(["diff", "7", "2", "--store", store]) == 2
    assert "no run 7" in capsys.readouterr().err
    assert cli(["report", "--store", str(tmp_path / "none.sqlite"), "-o", str(tmp_path / "o")]) == 2
    assert "no results store" in capsys.readouterr().err


def test_report_command_writes_everything_with_the_previous_run_as_baseline(store, tmp_path, capsys):
    out = tmp_path / "rep"
    assert cli(["report", "--store", store, "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "against run 1: 1 regressed, 1 improved" in printed
    assert "vendor: unavailable: vendor-sdk is not installed" in printed
    assert sorted(p.name for p in out.iterdir()) == ["index.html", "junit.xml", "results.json", "summary.md"]
    doc = json.loads((out / "results.json").read_text())
    assert doc["baseline"]["id"] == 1 and doc["diff"]["counts"]["regressed"] == 1
    assert cli(["report", "1", "2", "--store", store, "-o", str(out), "--baseline", "none", "--format", "json"]) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["diff"] is None and [r["id"] for r in doc["runs"]] == [1, 2]


def test_diff_results_keys_on_backend_name():
    base = [{"case_id": "a", "backend": "x", "outcome": "pass"}]
    new = [{"case_id": "a", "backend": "x", "outcome": "mismatch", "message": "m", "bundle_path": "/b"}]
    d = diff_results(base, new)
    assert [(c.kind, c.message, c.bundle) for c in d.changes] == [("regressed", "m", "/b")]
    assert d.allow(["x:a"]) == [] and d.regressions == []
