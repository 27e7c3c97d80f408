"""Like for like (harness.report.selection): the runs a report shows, its baseline, what ``diff``
compares; benchmark results apart from conformance."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET


from harness.report.matrix import build_report
from harness.report.selection import Selection, baseline_runs, default_runs, like_for_like
from harness.report.sources import RunRef
from harness.store import Store

from .test_report_diff import cli
from .test_report_matrix import MISMATCH, add_run, res

KERNELS = {"kernels": (True, "", "0.1")}
ORT = {"onnxruntime": (True, "", "1.32.0")}
BOTH = {"reference": (True, "", "1.23.2"), "onnxruntime": (True, "", "1.32.0")}
NODE = [f"onnx-node/test_{name}" for name in ("abs", "add", "sub", "mul", "relu")]


def args(pattern=None, suites=("onnx-node",), **more):
    return {"suites": list(suites), "pattern": pattern, "shard": None, "opset": None, "seed": None, "examples": None, **more}


def test_selection_says_what_was_compared():
    assert Selection("operators").describe() == "operators" and Selection("operators").full
    narrowed = Selection.from_args(args("abs|add", opset=13), "onnx-node")
    assert narrowed.describe() == "onnx-node at opset 13 -k 'abs|add' (subset)" and not narrowed.full
    assert narrowed.draw == ("onnx-node", 13, None, None) != Selection("onnx-node").draw


def _subset_card_store(tmp_path):
    """kernels: a full node run with a wrong answer, then a -k timing run of one case, then bench."""
    s = Store(tmp_path / "r.sqlite")
    full = [res(c, "kernels", "mismatch" if c.endswith("sub") else "pass", verdict=MISMATCH if c.endswith("sub") else None) for c in NODE]
    add_run(s, full, KERNELS, args=args())
    add_run(s, [res("onnx-node/test_abs", "kernels", "pass", run_median_s=1e-4)], KERNELS, args=args("test_abs", repeat=20))
    tags = lambda k: {"suite": "bench", "op": "MatMul", "dtype": "float32", "size": f"{k}", "rung": k, "flops": 2e6 * (k + 1),  # noqa: E731
                      "bytes": 1e5 * (k + 1), "bound": "flops"}
    bench = [res(f"bench/MatMul/float32/{k}", "kernels", "pass", run_median_s=1e-4, tags=tags(k)) for k in range(3)]
    add_run(s, bench, KERNELS, args={"suites": ["bench"]})
    return s.path


def test_a_subset_never_hides_the_full_run_and_bench_is_not_conformance(tmp_path, capsys):
    path = _subset_card_store(tmp_path)
    refs = default_runs(path)
    assert refs == [RunRef(path, 1), RunRef(path, 3)]
    report = build_report(refs)
    kernels = report.backend("kernels")
    # the full run's five cases, its wrong answer included; neither the timing subset nor bench
    assert kernels.total == 5 and kernels.headline["wrong_answers"] == 1 and kernels.over == ["onnx-node, run 1: 5 cases"]
    assert [r["case_id"] for r in report.bench] == [f"bench/MatMul/float32/{k}" for k in range(3)]
    assert not any(r["case_id"].startswith("bench/") for r in report.results)
    out = tmp_path / "out"
    assert cli(["report", "--store", str(path), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "kernels 0.1: conformance 80.0% of 5 attempted; wrong answers 1" in printed
    assert "over onnx-node, run 1: 5 cases" in printed
    assert "not shown: run 2 (onnx-node -k 'test_abs' (subset) on kernels) is a subset" in printed
    junit = ET.parse(out / "junit.xml").getroot()
    assert sum(int(s.get("tests")) for s in junit.iter("testsuite")) == 5
    doc = json.loads((out / "results.json").read_text())
    assert doc["backends"][0]["over"] == ["onnx-node, run 1: 5 cases"]
    assert "onnx-node, run 1: 5 cases" in (out / "index.html").read_text() and "onnx-node, run 1: 5 cases" in (out / "summary.md").read_text()


def _known_failures_store(tmp_path, with_full_before: bool):
    """onnxruntime on the node suite: (an earlier full run,) a -k subset, then the full run with
    its two known failures."""
    s = Store(tmp_path / "r.sqlite")
    full = [res(c, "onnxruntime", "xfail", raw="mismatch", reason="known") if c.endswith(("sub", "mul")) else res(c, "onnxruntime", "pass") for c in NODE]
    if with_full_before:
        add_run(s, full, ORT, args=args())
    add_run(s, [res("onnx-node/test_abs", "onnxruntime", "pass")], ORT, args=args("abs"))
    add_run(s, full, ORT, args=args())
    return s.path


def test_a_subset_baseline_lists_no_false_new_failing(tmp_path, capsys):
    path = _known_failures_store(tmp_path, with_full_before=False)
    assert cli(["report", "--store", str(path), "-o", str(tmp_path / "out"), "--format", "json"]) == 0
    printed = capsys.readouterr().out
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert doc["diff"]["counts"] == {} and doc["diff"]["compared"] == [["onnx-node", "onnxruntime", "the 1 cases both ran"]]
    assert "onnx-node on onnxruntime: 4 results of run 2 not compared (outside the other side's selection, onnx-node -k 'abs' (subset))" in printed


def test_the_baseline_prefers_a_run_with_the_same_selection(tmp_path):
    path = _known_failures_store(tmp_path, with_full_before=True)
    refs = default_runs(path)
    assert refs == [RunRef(path, 3)]
    assert baseline_runs(refs) == [RunRef(path, 1, "", frozenset({("onnx-node", "onnxruntime")}))]
    report = build_report(refs, baseline_runs(refs))
    assert report.diff.changes == [] and report.diff.over == {("onnx-node", "onnxruntime"): "onnx-node"} and report.diff.not_compared == []


def test_a_backend_not_re_run_is_not_compared_never_removed(tmp_path, capsys):
    s = Store(tmp_path / "r.sqlite")
    add_run(s, [res(c, b, "pass") for c in NODE for b in BOTH], BOTH, args=args())
    add_run(s, [res(c, "onnxruntime", "pass") for c in NODE], ORT, args=args())
    assert cli(["diff", "1", "2", "--store", str(s.path)]) == 0
    out = capsys.readouterr().out
    assert "## removed" not in out and "run 1 -> run 2: no change" in out
    assert "not compared: onnx-node on reference: 5 results of run 1 not compared (not run in run 2)" in out
    # a case gone from a backend that was re-run on the same selection is removed indeed
    add_run(s, [res(c, "onnxruntime", "pass") for c in NODE[1:]], ORT, args=args())
    assert cli(["diff", "2", "3", "--store", str(s.path)]) == 1
    assert "## removed (case x backend no longer in the run): 1 (regression)" in capsys.readouterr().out


def test_another_draw_is_not_compared():
    rows = lambda outcome: [{"case_id": "operators/Abs-13/opset13/float32/ex0", "backend": "x", "outcome": outcome}]  # noqa: E731
    pair = ("operators", "x")
    base, new, scope = like_for_like(rows("pass"), rows("mismatch"), "a", "b", {pair: Selection("operators", seed=1)},
                                     {pair: Selection("operators", seed=2)})
    assert base == new == [] and scope.compared == {}
    assert [n.why for n in scope.not_compared] == ["another draw: operators seed 1 against operators seed 2",
                                                   "another draw: operators seed 2 against operators seed 1"]
    base, new, scope = like_for_like(rows("pass"), rows("mismatch"), "a", "b", {pair: Selection("operators", seed=1)},
                                     {pair: Selection("operators", seed=1)})
    assert len(base) == len(new) == 1 and scope.compared == {pair: "operators seed 1"}


def test_no_artifact_holds_a_path_of_the_machine(tmp_path, monkeypatch, capsys):
    """A store written with absolute paths (store, bundles, the command, a bench run's command),
    reported from another folder: no file the report writes, nor diff's output, names the machine's
    folders; the bundles are still named (relative to the folder the run started in)."""
    ci = tmp_path / "machine" / "ci"
    path = ci / "results.sqlite"
    s = Store(path)
    bundle = lambda run, case: str(ci / "bundles" / "results" / f"run-{run}" / "onnxruntime" / case.replace("/", "__"))  # noqa: E731
    silent = {"spec_silent": {"point": "nan in max", "spec": "silent", "expected": "nan", "actual": "0"}}
    command = f"{tmp_path}/venv/bin/onnx-harness run --suite onnx-node --backend onnxruntime --store {path} --corpus={tmp_path}/corpus"
    run_args = {**args(), "store": str(path), "corpus": str(tmp_path / "corpus")}
    for run in (1, 2):
        traceback = f'Traceback (most recent call last):\n  File "{tmp_path}/venv/lib/harness/runner.py", line 3, in run'
        rows = [res("onnx-node/test_abs", "onnxruntime", "pass" if run == 1 else "mismatch", verdict=MISMATCH if run == 2 else None,
                    message=traceback if run == 2 else "",
                    bundle=bundle(run, "onnx-node/test_abs") if run == 2 else None),
                res("onnx-node/test_max", "onnxruntime", "unspecified", verdict=silent, bundle=bundle(run, "onnx-node/test_max"))]
        run_id = s.start_run(command, run_args, {"command": command, "cwd": str(ci)})
        s.record_backend(run_id, "onnxruntime", True, "", "1.32.0", {"library": str(tmp_path / "venv" / "lib" / "ort.so")})
        for r in rows:
            s.add_result(run_id, r)
        s.finish_run(run_id)
    bench_command = f"{tmp_path}/venv/bin/onnx-harness bench --op MatMul --store {path}"
    run_id = s.start_run(bench_command, {"suites": ["bench"], "store": str(path)}, {"command": bench_command})
    s.record_backend(run_id, "onnxruntime", True, "", "1.32.0", {})
    tags = {"suite": "bench", "op": "MatMul", "dtype": "float32", "size": "s", "rung": 0, "flops": 2e6, "bytes": 1e5, "bound": "flops"}
    s.add_result(run_id, res("bench/MatMul/float32/0", "onnxruntime", "pass", run_median_s=1e-4, tags=tags))
    s.finish_run(run_id)
    s.close()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    out = tmp_path / "out"
    assert cli(["report", "--store", str(path), "-o", str(out)]) == 0
    capsys.readouterr()  # "wrote <the -o given>": the user's own words
    assert cli(["diff", "1", "2", "--store", str(path)]) == 1
    diff_output = capsys.readouterr().out
    from harness.cli import write_run_json

    write_run_json(Store(path), 2, out / "results.run-2.json")  # the run's own JSON, written by run
    texts = {p.name: p.read_text() for p in out.iterdir()} | {"diff output": diff_output}
    assert sorted(texts) == ["diff output", "index.html", "junit.xml", "results.json", "results.run-2.json", "summary.md"]
    for name, text in texts.items():
        assert str(tmp_path) not in text and "/pytest-of-" not in text, name
    doc = json.loads(texts["results.json"])
    assert [r["bundle"] for r in doc["results"]] == ["bundles/results/run-2/onnxruntime/onnx-node__test_abs",
                                                      "bundles/results/run-2/onnxruntime/onnx-node__test_max"]
    assert [r["bundle"] for r in json.loads(texts["results.run-2.json"])["results"]] == [r["bundle"] for r in doc["results"]]
    assert doc["runs"][0]["command"] == "onnx-harness run --suite onnx-node --backend onnxruntime --store results.sqlite --corpus=corpus"
    assert "onnx-harness bench --op MatMul --store results.sqlite" in texts["index.html"]
    assert doc["results"][0]["message"].endswith('File "…/harness/runner.py", line 3, in run')
    # a link that would climb to the file system's root is not written (the bundle is named instead)
    from harness.report.sources import relative_link

    assert relative_link("/usr/share/bundle", tmp_path) == "" and relative_link(str(ci / "b"), out) == "../machine/ci/b"
    # the page links the bundle relative to itself
    assert 'href="../machine/ci/bundles/results/run-2/onnxruntime/onnx-node__test_max"' in texts["index.html"]


def test_an_unfinished_run_is_a_subset_never_a_source_of_removed_cases(tmp_path, capsys):
    s = Store(tmp_path / "r.sqlite")
    add_run(s, [res(c, "reference", "pass") for c in NODE], {"reference": (True, "", "1.23.2")}, args=args())
    add_run(s, [res(c, "reference", "pass") for c in NODE[:2]], {"reference": (True, "", "1.23.2")}, status="interrupted", args=args())
    assert default_runs(s.path) == [RunRef(s.path, 1)]  # the complete run is shown
    assert cli(["diff", "1", "2", "--store", str(s.path)]) == 0
    out = capsys.readouterr().out
    assert "## removed" not in out
    assert "onnx-node on reference: 3 results of run 1 not compared (outside the other side's selection, onnx-node (interrupted: part of it))" in out
