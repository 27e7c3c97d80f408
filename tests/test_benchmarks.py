"""The benchmarks measure like for like: the pieces that decide what is timed and compared."""

import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from harness.case import Case, DataSet, Tolerance

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- official_suite.py ------------------------------------------------------------------------


def test_bare_loop_restamps_the_model_as_our_runner_does(tmp_path):
    graph = helper.make_graph([helper.make_node("Add", ["a", "b"], ["c"])], "g",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in "ab"],
                              [helper.make_tensor_value_info("c", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    onnx.save(model, tmp_path / "model.onnx")
    bare = _load("official_suite").bare_model(Case("t/add", "t", path=tmp_path))
    # Add's newest schema is Add-14: our runner hands ONNX Runtime opset 14 at IR 7
    assert [(i.domain, i.version) for i in bare.opset_import] == [("", 14)]
    assert bare.ir_version == 7


# -- kernels.py --------------------------------------------------------------------------------


def test_kernel_timing_always_warms_up_first_even_when_slow():
    kernels = _load("kernels")
    calls = []

    def run(feeds):
        calls.append(time.perf_counter())
        return [np.zeros(1)]

    times, note, outputs = kernels._time_runs(run, {}, reps=3, budget=0.0, slow=0.0)
    assert all(wall >= 0 and cpu >= 0 for wall, cpu in times)
    # slow=0: every run counts as slow; still one untimed warm-up before the one timed run
    assert len(calls) == 2 and len(times) == 1
    assert "warm" in note


def test_suite_timing_keeps_only_passing_cases_and_times_warm_runs():
    kernels = _load("kernels")
    prepared = []

    def prepare(model):
        prepared.append(model)
        return lambda feeds: [feeds["x"] + (0 if model == "good" else 1)]

    x = np.ones(3, np.float32)
    cases = [("good", "good", [DataSet({"x": x}, [x])], Tolerance()),
             ("bad", "bad", [DataSet({"x": x}, [x])], Tolerance()),
             ("no-oracle", "good", [DataSet({"x": x}, None)], Tolerance())]
    times, failed, raised = kernels.suite_case_times(prepare, cases, reps=2)
    assert set(times) == {"good"} and (failed, raised) == (2, 0)
    # the passing case: one untimed pass, then two timed ones; the failing cases are never timed
    assert prepared.count("good") == 1 + 2 + 1 and prepared.count("bad") == 1


def test_ratios_compare_only_what_passes_on_both_sides(tmp_path):
    kernels = _load("kernels")
    a = {"median_ms": 9.0, "case_ms": {"x": 1.0, "y": 100.0}}
    b = {"median_ms": 3.0, "case_ms": {"x": 2.0, "z": 5.0}}
    assert kernels.pair_ratio("suite/onnx-node", a, b, tmp_path, tmp_path) == 0.5
    assert kernels.pair_ratio("suite/onnx-node", a, {"case_ms": {"z": 1.0}}, tmp_path, tmp_path) is None
    da, db = tmp_path / "a", tmp_path / "b"
    da.mkdir(), db.mkdir()
    np.savez(da / "op_Conv.npz", np.array([1.0, 2.0]))
    np.savez(db / "op_Conv.npz", np.array([1.0, 2.0]))
    assert kernels.pair_ratio("op/Conv", {"median_ms": 6.0}, {"median_ms": 3.0}, da, db) == 2.0
    np.savez(db / "op_Conv.npz", np.array([1.0, 3.0]))  # the sides disagree: no ratio
    assert kernels.pair_ratio("op/Conv", {"median_ms": 6.0}, {"median_ms": 3.0}, da, db) is None
    np.savez(db / "op_Conv.npz", np.array([1.0, 2.0]))
    assert kernels.pair_ratio("light/x/b1", {"median_ms": 6.0, "passed": False}, {"median_ms": 3.0, "passed": True}, da, db) is None


def test_kernels_summary_is_the_geometric_mean_over_light_models_with_a_ratio():
    kernels = _load("kernels")
    key = "kernels/onnxruntime@1"

    def row(wl, ratio, mem_a=10.0, mem_b=10.0):
        return {"workload": wl, "ratios": {key: ratio},
                "results": {"kernels@1": {"peak_mb": mem_a}, "onnxruntime@1": {"peak_mb": mem_b}}}

    rows = [row("light/a/b1", 2.0), row("light/a/b8", 0.5, mem_a=30.0), row("light/b/b1", None),
            row("op/Conv", 8.0), *(row(f"op/X{k}", 1.0 + k / 10) for k in range(4))]
    figures = kernels.summary(rows, key)
    # (2.0 * 0.5) ** (1/2): the op workloads and the uncounted light one stay out
    assert figures["light_geomean"] == pytest.approx(1.0)
    assert figures["light_counted"] == 2 and figures["light_uncounted"] == ["light/b/b1"]
    assert [w["workload"] for w in figures["worst"]] == ["op/Conv", "light/a/b1", "op/X3", "op/X2", "op/X1"]
    assert figures["light_memory_max"] == {"workload": "light/a/b8", "ratio": 3.0}


# -- fuzz.py -----------------------------------------------------------------------------------


def test_without_nnsmith_environment_the_side_by_side_run_is_skipped_and_says_how_to_make_one(tmp_path, capsys):
    fuzz = _load("fuzz")
    for venv in (None, tmp_path / "absent"):
        with pytest.raises(fuzz.NNSmithUnavailable, match="NNSMITH_VENV") as info:
            fuzz.nnsmith_python(venv)
        assert 'pip install "nnsmith[onnx]" onnxruntime torch==2.13.0' in str(info.value)
    fuzz.side_by_side(1, 10, tmp_path / "absent")  # returns before fuzzing anything
    out = capsys.readouterr().out
    assert out.startswith("side by side with NNSmith: skipped: no virtual environment at") and "tests/s" not in out


def _one_node_model(op: str, elem: int, opset: int, name: str = ""):
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], name=name)], "g", [helper.make_tensor_value_info("x", elem, [2, 3])],
                              [helper.make_tensor_value_info("y", elem, [2, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9)


def test_a_numeric_difference_is_judged_by_the_composed_reference():
    fuzz = _load("fuzz")
    x = np.array([[-1.5, 0.25, 2.0], [3.0, -0.0, 7.5]], np.float32)
    model = _one_node_model("Abs", TensorProto.FLOAT, 13)
    # torch's value off ours, ONNX Runtime's right: torch is wrong, at Abs-13 float32
    wrong = fuzz.judge_difference(model, {"x": x}, {"y": np.abs(x) + np.float32(0.5)})
    assert wrong.verdict == fuzz.TORCH_WRONG and wrong.root == ("torch", "Abs-13 float32", "mismatch", "wrong-values")
    assert fuzz.judge_difference(model, {"x": x}, {"y": np.abs(x)}).verdict == fuzz.AGREE


def test_onnx_runtime_wrong_alone_is_named_by_its_node():
    """ONNX Runtime 1.32's HardSwish-14 in float64 (a checked-in regression case of the fuzzer):
    torch's right answer beside it, the report says ONNX Runtime is wrong at that node."""
    from onnx import numpy_helper

    from harness.generated.regressions import REGRESSIONS

    fuzz = _load("fuzz")
    folder = REGRESSIONS / "HardSwish.ops.float64.wrong-values"
    model = onnx.load(folder / "model.onnx")
    x = numpy_helper.to_array(onnx.load_tensor(folder / "test_data_set_0" / "input_0.pb"))
    right = x * np.clip(x / 6 + 0.5, 0, 1)  # HardSwish-14: x * max(0, min(1, alpha * x + beta)), alpha = 1/6, beta = 0.5
    judged = fuzz.judge_difference(model, {model.graph.input[0].name: x}, {model.graph.output[0].name: right})
    assert judged.verdict == fuzz.ORT_WRONG and judged.root[:2] == ("onnxruntime", "HardSwish-14 float64")


def test_a_missing_kernel_report_is_one_root_cause_per_op_version_and_type(tmp_path):
    fuzz = _load("fuzz")
    for k in range(2):
        folder = tmp_path / f"bug-Symptom.EXCEPTION-Stage.COMPILATION-{k}"
        folder.mkdir()
        (folder / "meta.json").write_text('{"symptom": "exception", "stage": "compilation"}')
        (folder / "err.log").write_text("onnxruntime.capi.onnxruntime_pybind11_state.NotImplemented: [ONNXRuntimeError] : 9 : "
                                        "NOT_IMPLEMENTED : Could not find an implementation for Erf(13) node with name '/Erf'\n")
        onnx.save(_one_node_model("Erf", TensorProto.DOUBLE, 14, name="/Erf"), folder / "model.onnx")
    judged = [fuzz.judge_nnsmith_report(f) for f in sorted(tmp_path.iterdir())]
    assert {j.root for j in judged} == {("onnxruntime", "Erf-13 float64", "unsupported", "NOT_IMPLEMENTED")}
    assert [len(v) for v in fuzz.by_root(judged)[fuzz.MISSING].values()] == [2]


def test_nnsmith_numbers_come_from_its_own_log():
    fuzz = _load("fuzz")
    log = ("[2026-01-01 00:00:00,000][fuzz][INFO] - Test success info supressed -- only showing logs for failed tests\n"
           "[2026-01-01 00:00:30,500][fuzz][INFO] - Total 61 testcases generated.\n"
           "[2026-01-01 00:00:30,500][fuzz][INFO] - Total 4 bugs found.\n"
           "[2026-01-01 00:00:30,500][fuzz][INFO] - Total 2 failed to make testcases.\n")
    assert fuzz.nnsmith_log_counts(log) == (61, 2, 30.5)
    with pytest.raises(RuntimeError, match="did not finish"):
        fuzz.nnsmith_log_counts(log.splitlines()[0])


def test_fuzz_benchmark_prints_no_unmeasured_peer_rate():
    source = (BENCH / "fuzz.py").read_text()
    assert "NNSMITH_RATE" not in source and "0.7, 3.8" not in source


# -- soak.py -----------------------------------------------------------------------------------


def test_soak_waits_have_a_time_limit():
    soak = _load("soak")
    with pytest.raises(soak.Timeout, match="never"):
        soak.wait_until(lambda: False, 0.2, "never", poll=0.05)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    assert soak.kill_and_wait(proc, 10) == -9


def test_soak_runs_every_round_in_one_controller(tmp_path):
    from harness.suites import onnx_official as official

    soak = _load("soak")
    corpus = tmp_path / "corpus"
    official.build_corpus(corpus, ["onnx-simple"])
    lines, samples, ends = soak.soak_rounds(corpus, tmp_path / "s.sqlite", 2, 0, 300, suite="onnx-simple")
    assert [x["round"] for x in lines] == [1, 2]
    assert lines[0]["pid"] == lines[1]["pid"]  # one controller process for both rounds
    assert lines[0]["run_id"] != lines[1]["run_id"] and lines[0]["executions"] == lines[1]["executions"] > 0
    assert len(ends) == 2 and samples


def test_parallel_bare_loops_take_each_case_once_in_order(tmp_path):
    counter = tmp_path / "counter"
    counter.write_bytes((0).to_bytes(8, "little"))
    suite = _load("official_suite")
    cases = list(range(7))
    first, second = suite._taken_in_turn(cases, str(counter)), suite._taken_in_turn(cases, str(counter))
    taken = [next(first), next(second), next(second), next(first)] + list(first) + list(second)
    assert taken == cases  # each case once, the next one not yet taken, whoever asks


def test_a_difference_at_a_spec_silent_point_is_judged_by_the_point():
    """NNSmith's reports meet the judge our campaign uses: ONNX Runtime's ReduceMax-13 leaves a
    NaN after the first element out (max of [1, NaN, 2] is 2), one reading of the spec-silent ReduceMax.nan, so the report
    is a spec-silent reading, not ONNX Runtime wrong (a seed-5 side-by-side report was)."""
    fuzz = _load("fuzz")
    graph = helper.make_graph([helper.make_node("ReduceMax", ["x"], ["y"], axes=[1], keepdims=0)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=9)
    x = np.array([[1.0, np.nan, 2.0], [3.0, 4.0, 5.0]])
    judged = fuzz.judge_difference(model, {"x": x}, {"y": np.array([np.nan, 5.0])})
    assert judged.verdict == fuzz.SILENT and judged.root[:2] == ("onnxruntime", "ReduceMax-13 (spec-silent) float64"), judged
