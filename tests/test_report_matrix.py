"""Report data (harness.report.matrix): merged runs, the conformance matrix, perf, history.

The store builders here are shared by the other test_report_* modules."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from harness.cli import backend_counts
from harness.worker import Result
from harness.report.matrix import ConformanceMatrix, build_report
from harness.report.records import GRAPH_ROW
from harness.report.selection import resolve_runs
from harness.report.sources import ReportError, RunRef, previous_run, resolve_run
from harness.store import Store

ENV = {"python": "3.11.7", "platform": "Linux-test", "onnx": "1.23.2", "numpy": "2.4.6"}
BACKENDS = {"reference": (True, "", "1.23.2"), "onnxruntime": (True, "", "1.31.1"),
            "vendor": (False, "vendor-sdk is not installed (pip install vendor-sdk)", "")}
MISMATCH = {"outcome": "mismatch", "output": 0, "first_bad": "[1]", "bad_count": 2, "total": 3, "max_abs": 0.5,
            "max_rel": 0.25, "max_ulp": 4194304.0, "nan_mismatch": 0}


def tags_for(case_id: str) -> dict:
    parts = case_id.split("/")
    if parts[0] == "operators":
        op, since = parts[1].rsplit("-", 1)
        return {"suite": "operators", "op": op, "domain": "ai.onnx", "since_version": int(since), "opset": int(parts[2][5:]),
                "dtypes": [parts[3]], "dtype": parts[3], "example": parts[4], "ops": [op]}
    return {"suite": parts[0], "ops": ["Conv", "Relu"], "opset": 13, "dtypes": ["float"]}


def res(case_id: str, backend: str, outcome: str, **kw) -> Result:
    kw.setdefault("run_s", 0.002)
    kw.setdefault("prepare_s", 0.001)
    return Result(case_id, backend, outcome, message=kw.pop("message", ""), verdict=kw.pop("verdict", None),
                  raw_outcome=kw.pop("raw", outcome), tags=kw.pop("tags", None) or tags_for(case_id), **kw)


def add_run(store: Store, results: list[Result], backends: dict = BACKENDS, status: str = "complete", args: dict | None = None) -> int:
    """A run of ``results``; its arguments default to the suites of the results (as ``run`` stores them)."""
    if args is None:
        args = {"store": str(store.path), "suites": sorted({r.case_id.split("/", 1)[0] for r in results})}
    run_id = store.start_run("onnx-harness run (test)", args, ENV)
    for name, (ok, reason, version) in backends.items():
        store.record_backend(run_id, name, ok, reason, version, {name: version} if ok else {})
    store.db.execute("BEGIN")
    for r in results:
        store.add_result(run_id, r)
    store.db.execute("COMMIT")
    store.finish_run(run_id, status)
    return run_id


def run1_results(bundles: Path) -> list[Result]:
    b = lambda backend, case: str(bundles / "run-1" / backend / case.replace("/", "__"))  # noqa: E731
    relu1 = "operators/Relu-14/opset14/float32/1"
    return [
        res("operators/Relu-14/opset14/float32/0", "reference", "pass"),
        res("operators/Relu-14/opset14/float32/0", "onnxruntime", "pass", run_s=0.001, run_median_s=0.0008, run_p90_s=0.0009),
        res(relu1, "reference", "pass"),
        res(relu1, "onnxruntime", "mismatch", verdict=MISMATCH, bundle=b("onnxruntime", relu1),
            message="output 0: values differ: 2/3 bad, first at [1]: got 1.5, expected 1; max abs 0.5 <b>x</b> | pipe"),
        res("operators/Relu-6/opset13/float16/0", "reference", "pass"),
        res("operators/Relu-6/opset13/float16/0", "onnxruntime", "rejected", message="model IR too new", run_s=None),
        res("operators/Clip-11/opset13/float32/0", "reference", "error", message="boom", run_s=None),
        res("operators/Clip-11/opset13/float32/0", "onnxruntime", "mismatch", verdict=MISMATCH, message="values differ"),
        res("operators/Clip-11/opset13/float32/1", "reference", "xfail", raw="mismatch", reason="clip ties (https://example.org/1)"),
        res("operators/Clip-11/opset13/float32/1", "onnxruntime", "pass"),
        res("onnx-light/test_tiny_net", "reference", "pass", run_s=0.5),
        res("onnx-light/test_tiny_net", "onnxruntime", "pass", run_s=0.05),
        res("onnx-node/test_skip_me", "reference", "skip", run_s=None),
        res("onnx-node/test_skip_me", "onnxruntime", "skip", run_s=None),
    ]


def run2_results(bundles: Path) -> list[Result]:
    """Run 2 against run 1: one regression, one improvement, one changed failure, one new, one removed."""
    out = []
    for r in run1_results(bundles):
        if r.case_id == "onnx-node/test_skip_me":
            continue  # removed
        if r.case_id.endswith("Relu-14/opset14/float32/0") and r.backend == "onnxruntime":
            r = res(r.case_id, "onnxruntime", "mismatch", verdict=MISMATCH, message="values differ now",
                    bundle=str(bundles / "run-2" / "onnxruntime" / "relu0"))
        elif r.case_id.endswith("Relu-14/opset14/float32/1") and r.backend == "onnxruntime":
            r = res(r.case_id, "onnxruntime", "pass")
        elif r.case_id.endswith("Clip-11/opset13/float32/0") and r.backend == "reference":
            r = res(r.case_id, "reference", "crash", message="worker died (signal 11)", run_s=None)
        out.append(r)
    out.append(res("operators/Add-14/opset14/float32/0", "reference", "pass"))
    out.append(res("operators/Add-14/opset14/float32/0", "onnxruntime", "pass"))
    return out


def make_store(tmp_path: Path, runs: int = 2) -> Path:
    path = tmp_path / "reports" / "results.sqlite"
    store = Store(path)
    add_run(store, run1_results(tmp_path / "reports" / "bundles"))
    if runs >= 2:  # the same suites again (onnx-node's one case is gone)
        add_run(store, run2_results(tmp_path / "reports" / "bundles"), args={"store": str(path), "suites": ["onnx-light", "onnx-node", "operators"]})
    store.close()
    return path


OPS = ["Abs", "Add", "Clip", "Conv", "Relu", "Softmax", "MatMul", "Gemm", "Cast", "Resize", "Pad", "Where", "ReduceSum", "Gather"]
DTYPES = ["float32", "float16", "float64", "int32", "int64", "bfloat16", "uint8"]
FAIL_MESSAGES = {
    "mismatch": "output 0: values differ: {n}/{t} bad, first at [{i},0]: got {g:.6g}, expected {e:.6g}; max abs {a:.3g}, max rel {r:.3g}, max ulp {u} (rtol 0.001, atol 1e-07)",
    "unsupported": "NotImplemented: [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation for {op}({v}) node with name ''",
    "error": "data set 0: RuntimeError: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running {op} node. Name:'n{i}' Status Message: shape mismatch at dim {n}",
    "rejected": "InvalidGraph: [ONNXRuntimeError] : 10 : INVALID_GRAPH : Load model failed: opset {v} of domain '' is not supported (max 23)",
}


def make_large_store(path: Path, n_results: int = 50_000, seed: int = 7) -> Path:
    """A synthetic store shaped like a big operators run: n_results over two backends plus an
    unavailable one, 12% failures with distinct messages and bundles, timings for all."""
    rng = random.Random(seed)
    store = Store(path)
    results = []
    n_cases = n_results // 2
    for k in range(n_cases):
        op = OPS[k % len(OPS)]
        since = [1, 6, 11, 13, 14, 18, 21][(k // len(OPS)) % 7]
        dtype = DTYPES[(k // 98) % len(DTYPES)]
        case_id = f"operators/{op}-{since}/opset{since + (k % 3)}/{dtype}/ex{k}"
        for backend in ("reference", "onnxruntime"):
            x = rng.random()
            outcome = "pass" if x < 0.88 else rng.choice(["mismatch", "mismatch", "unsupported", "error", "rejected", "wrong-shape", "xfail"])
            kw: dict = {"run_s": rng.uniform(1e-5, 2e-3)}
            if backend == "onnxruntime" and k % 4 == 0:
                kw.update(run_median_s=kw["run_s"] * 0.9, run_p90_s=kw["run_s"] * 1.2)
            if outcome not in ("pass", "xfail"):
                template = FAIL_MESSAGES.get(outcome, FAIL_MESSAGES["error"])
                kw["message"] = template.format(n=rng.randint(1, 99), t=100, i=k, g=rng.random(), e=rng.random(), a=rng.random(),
                                                r=rng.random(), u=rng.randint(2, 10**6), op=op, v=since)
                kw["bundle"] = str(path.parent / "bundles" / "run-1" / backend / case_id.replace("/", "__"))
            if outcome == "mismatch":
                kw["verdict"] = dict(MISMATCH, max_abs=rng.random(), bad_count=rng.randint(1, 99), total=100)
            if outcome == "xfail":
                kw.update(raw="mismatch", reason=f"{op} rounding differs (https://github.com/onnx/onnx/issues/{1000 + since})")
            results.append(res(case_id, backend, outcome, **kw))
    add_run(store, results)
    store.close()
    return path


# -- tests ---------------------------------------------------------------------------------------
@pytest.fixture
def store_path(tmp_path):
    return make_store(tmp_path)


def test_backend_summary_matches_the_cli_counts_and_keeps_unavailable_reasons(store_path):
    report = build_report([RunRef(store_path, 1)])
    cli = backend_counts(Store(store_path), 1)
    for b in report.backends:
        if b.available:
            assert (b.total, b.loadable, b.pass_rate) == (cli[b.name]["total"], cli[b.name]["loadable"], cli[b.name]["pass_rate"])
            assert dict(b.counts) == dict(cli[b.name]["counts"])
    ref, ort = report.backend("reference"), report.backend("onnxruntime")
    # run 1 by hand: reference 4 pass, an error, an xfail (the skip is not counted); onnxruntime 3
    # pass, 2 mismatch, 1 rejected (not loadable)
    assert (ref.total, ref.loadable, ref.passed) == (6, 6, 4) and ref.pass_rate == pytest.approx(4 / 6)
    assert (ort.loadable, ort.not_loadable, ort.passed) == (5, 1, 3) and ort.pass_rate == pytest.approx(3 / 5)
    vendor = report.backend("vendor")
    assert not vendor.available and vendor.pass_rate is None and "vendor-sdk" in vendor.reason
    assert [b.label for b in report.backends] == ["reference", "onnxruntime", "vendor"]


def test_matrix_rows_per_view(store_path):
    m = build_report([RunRef(store_path, 1)]).matrix
    rows = {(r.group, r.key): r for r in m.rows("op-version")}
    relu14 = rows[("Relu", "14")]
    assert relu14.cases == 2 and relu14.cells["onnxruntime"] == {"pass": 1, "mismatch": 1} and relu14.passed("reference") == 2
    assert rows[("Relu", "6")].cells["onnxruntime"] == {"rejected": 1}
    assert rows[(GRAPH_ROW, "-")].cases == 2  # the multi-node cases
    assert list(rows)[-1][0] == GRAPH_ROW  # graphs after the ops
    assert [(r.group, r.key) for r in m.rows("op-version")][:3] == [("Clip", "11"), ("Relu", "6"), ("Relu", "14")]  # numeric order
    assert {(r.group, r.key) for r in m.rows("opset")} >= {("Relu", "13"), ("Relu", "14"), ("Clip", "13")}
    assert {(r.group, r.key) for r in m.rows("dtype")} >= {("Relu", "float32"), ("Relu", "float16"), (GRAPH_ROW, "float32")}  # ONNX's "float" in one vocabulary
    suites = {r.group: r for r in m.rows("suite")}
    assert set(suites) == {"operators", "onnx-light", "onnx-node"} and suites["operators"].ran("reference") == 5
    assert m.rows("op-version")[0].cells["vendor"] == {}  # an unavailable backend has a column, no counts
    with pytest.raises(ValueError):
        m.rows("nosuch")


def test_fails_only_here_needs_one_failure_and_passes_elsewhere(store_path):
    m = build_report([RunRef(store_path, 1)]).matrix
    assert m.fails_only_here == {("operators/Relu-14/opset14/float32/1", "onnxruntime"),
                                 ("operators/Relu-6/opset13/float16/0", "onnxruntime")}
    # both failing (Clip-11/0), an expected failure (Clip-11/1) and a single-backend case are not marked
    one = ConformanceMatrix.from_results(["a"], [{"case_id": "x/y", "backend": "a", "outcome": "mismatch", "tags": {}}])
    assert one.fails_only_here == set()


def test_perf_table_prefers_the_median_and_computes_ratios(store_path):
    perf = build_report([RunRef(store_path, 1)]).perf
    assert perf.onnxruntime == "onnxruntime"
    rows = {r.case_id: r for r in perf.rows}
    relu = rows["operators/Relu-14/opset14/float32/0"]
    assert relu.cells["onnxruntime"].source == "median" and relu.cells["onnxruntime"].latency_s == 0.0008
    assert relu.fastest == "onnxruntime" and relu.cells["reference"].ratio_fastest == pytest.approx(2.5)
    assert relu.cells["reference"].ratio_onnxruntime == pytest.approx(2.5)
    assert set(rows["operators/Clip-11/opset13/float32/0"].cells) == {"onnxruntime"}  # the reference's error has no time
    assert [r.case_id for r in perf.model_rows()] == ["onnx-light/test_tiny_net"]
    assert perf.model_rows()[0].cells["reference"].ratio_fastest == pytest.approx(10)
    summary = perf.summary()
    assert summary["onnxruntime"]["geomean_vs_onnxruntime"] == pytest.approx(1.0)
    # reference against the fastest: 10 (tiny net), 2.5 (Relu 0), and 1 on Relu-6 (alone), Relu 1, Clip 1 (ties)
    assert summary["reference"]["cases"] == 5 and summary["reference"]["geomean_vs_fastest"] == pytest.approx(25 ** (1 / 5))
    assert summary["reference"]["geomean_vs_onnxruntime"] == pytest.approx(25 ** (1 / 4))
    assert summary["onnxruntime"]["fastest"] == 2  # strictly faster on the tiny net and Relu 0
    assert summary["vendor"] == {"cases": 0, "fastest": 0, "geomean_vs_fastest": None, "geomean_vs_onnxruntime": None}


def test_history_counts_passes_per_run_and_backend(store_path):
    hist = build_report([RunRef(store_path, 2)]).history
    assert [r["id"] for r in hist.runs] == [1, 2]
    # one line per backend and suite, never one line across different suites
    assert [p.passed for p in hist.series["reference · operators"]] == [3, 4]
    assert [p.passed for p in hist.series["onnxruntime · operators"]] == [2, 3]
    assert [p.total for p in hist.series["onnxruntime · operators"]] == [5, 6]
    assert [p.passed for p in hist.series["onnxruntime · onnx-light"]] == [1, 1]
    assert [p.passed for p in hist.series["onnxruntime · onnx-node"]] == [0, None]  # run 2 did not run it: a gap
    assert [p.passed for p in hist.series["vendor"]] == [None, None]  # unavailable: a gap, never 0


def test_merged_runs_put_backends_side_by_side(tmp_path):
    a = Store(tmp_path / "a.sqlite")
    add_run(a, [res("operators/Relu-14/opset14/float32/0", "onnxruntime", "pass")], {"onnxruntime": (True, "", "1.31.1")})
    b = Store(tmp_path / "b.sqlite")
    add_run(b, [res("operators/Relu-14/opset14/float32/0", "tensorflow", "mismatch", verdict=MISMATCH)],
            {"tensorflow": (True, "", "2.21.0")})
    add_run(b, [res("operators/Relu-14/opset14/float32/0", "tensorflow", "pass")], {"tensorflow": (True, "", "2.21.0")})
    refs = resolve_runs([], [a.path, b.path])
    assert [(r.store_label, r.run_id) for r in refs] == [("a", 1), ("b", 2)]
    report = build_report(refs)
    assert [c.label for c in report.backends] == ["onnxruntime", "tensorflow"]
    assert report.matrix.outcome("operators/Relu-14/opset14/float32/0", "tensorflow") == "pass"
    assert set(report.history.series) == {"a:onnxruntime · operators", "b:tensorflow · operators"}
    assert resolve_run("2:1", [a.path, b.path]) == RunRef(b.path, 1, "b")
    assert resolve_run(f"{b.path}:2", [a.path, b.path]).run_id == 2


def test_same_backend_two_versions_are_two_columns_same_version_is_a_union(tmp_path):
    s = Store(tmp_path / "r.sqlite")
    add_run(s, [res("operators/Relu-14/opset14/float32/0", "onnxruntime", "pass")], {"onnxruntime": (True, "", "1.20.0")})
    add_run(s, [res("operators/Relu-14/opset14/float32/0", "onnxruntime", "mismatch", verdict=MISMATCH)], {"onnxruntime": (True, "", "1.31.1")})
    add_run(s, [res("operators/Clip-11/opset13/float32/0", "onnxruntime", "pass")], {"onnxruntime": (True, "", "1.31.1")})
    side = build_report([RunRef(s.path, 1), RunRef(s.path, 2)])
    assert [b.label for b in side.backends] == ["onnxruntime 1.20.0", "onnxruntime 1.31.1"]
    union = build_report([RunRef(s.path, 2), RunRef(s.path, 3)])
    assert [b.label for b in union.backends] == ["onnxruntime"] and union.backends[0].total == 2
    assert union.backends[0].runs == ["run 2", "run 3"]


def test_run_references_and_their_errors(store_path, tmp_path):
    # the default: the newest run of every (suite, backend): run 2 did not run onnx-node
    assert resolve_runs([], [store_path]) == [RunRef(store_path, 1, "", frozenset({("onnx-node", "onnxruntime"), ("onnx-node", "reference")})),
                                              RunRef(store_path, 2)]
    assert resolve_runs(["1", "latest"], [store_path]) == [RunRef(store_path, 1), RunRef(store_path, 2)]
    assert resolve_run("previous", [store_path]).run_id == 1
    assert previous_run([RunRef(store_path, 2)]) == RunRef(store_path, 1)
    assert previous_run([RunRef(store_path, 1)]) is None
    with pytest.raises(ReportError, match="no run 9"):
        resolve_run("9", [store_path])
    with pytest.raises(ReportError, match="no results store"):
        resolve_runs([], [tmp_path / "missing.sqlite"])
    with pytest.raises(ReportError, match="ambiguous"):
        resolve_run("1", [store_path, store_path])
    with pytest.raises(ReportError, match="bad run"):
        resolve_run("first", [store_path])


def test_relative_bundle_paths_resolve_against_the_folder_the_run_started_in(tmp_path):
    s = Store(tmp_path / "proj" / "reports" / "results.sqlite")
    add_run(s, [res("operators/Relu-14/opset14/float32/0", "reference", "error", bundle="reports/bundles/run-1/reference/x")],
            {"reference": (True, "", "1")}, args={"store": "reports/results.sqlite"})
    report = build_report([RunRef(s.path, 1)])
    assert report.results[0]["bundle_path"] == str((tmp_path / "proj" / "reports" / "bundles" / "run-1" / "reference" / "x").resolve())


def test_history_of_merged_stores_with_different_run_counts_stays_aligned(tmp_path):
    from harness.worker import Result
    from harness.report.history import History
    from harness.store import Store

    paths = []
    for name, runs in (("a", 1), ("b", 2)):
        path = tmp_path / f"{name}.sqlite"
        store = Store(path)
        for _ in range(runs):
            run = store.start_run("cmd", {}, {})
            store.record_backend(run, name, True, "", "1", {})
            store.add_result(run, Result("c1", name, "pass"))
            store.finish_run(run)
        paths.append(path)
    hist = History.from_stores(paths)
    assert len(hist.runs) == 3
    assert all(len(points) == 3 for points in hist.series.values())


def test_failures_group_by_op_and_normalized_message(tmp_path):
    from harness.report.failures import normalize_message

    store = Store(tmp_path / "r.sqlite")
    results = []
    for n in range(147):  # one missing kernel over many cases, node names and versions differing
        v = 11 + n % 3
        results.append(res(f"operators/ArgMax-{v}/opset{v}/float16/{n}", "onnxruntime", "unsupported", run_s=None,
                           message=f"NotImplemented: [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation for ArgMax({v}) node with name 'n{n}'"))
    for n in range(140):  # mismatches with their own values
        results.append(res(f"operators/Softmax-13/opset13/float32/{n}", "onnxruntime", "mismatch", verdict=MISMATCH,
                           message=f"output 0: values differ: {n + 1}/64 bad, first at [{n},0]: got {n * 0.5:.6g}, expected {n * 0.25 - 1:.6g}; max abs {n:.3g}"))
    results.append(res("operators/Softmax-13/opset13/float64/0", "onnxruntime", "error", message="data set 0: RuntimeError: boom at /tmp/a/b.onnx"))
    results.append(res("operators/ArgMax-13/opset13/float32/0", "onnxruntime", "pass"))
    add_run(store, results, {"onnxruntime": (True, "", "1.32.0")})
    report = build_report([RunRef(store.path, 1)])
    groups = report.failure_groups()
    assert [(g.kind, g.op, g.outcome, g.cases, dict(g.dtypes)) for g in groups] == [
        ("wrong answer", "Softmax", "mismatch", 140, {"float32": 140}),
        ("error", "Softmax", "error", 1, {"float64": 1}),
        ("not implemented", "ArgMax", "unsupported", 147, {"float16": 147})]
    argmax = groups[2]
    assert argmax.cause == "NotImplemented: [ONNXRuntimeError] : N : NOT_IMPLEMENTED : Could not find an implementation for ArgMax(N) node with name '…'"
    assert argmax.label.startswith("ArgMax unsupported for float16: ") and argmax.op_versions == ["ArgMax-11", "ArgMax-12", "ArgMax-13"]
    assert len(argmax.members) == 147 and groups[1].cause == "data set N: RuntimeError: boom at <path>"
    # dtype and op names keep their digits; quoted names go
    assert normalize_message("float16 Conv2D 'node_7' got -1.5e-07") == "float16 Conv2D '…' got N"
    # the first bad index of any rank, and shapes: one cause, not one per rank
    assert (normalize_message("values differ: 3/8 bad, first at [1,0,2]: got 7, expected 6") ==
            normalize_message("values differ: 1/1 bad, first at []: got 7, expected 6") ==
            "values differ: N/N bad, first at […]: got N, expected N")
    assert normalize_message("shape [2, 3], expected [6]") == "shape […], expected […]"


def test_dtypes_have_one_vocabulary(tmp_path):
    from harness.schema import model_tags
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Add", ["a", "b"], ["c"])], "g",
                              [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1]), helper.make_tensor_value_info("b", TensorProto.DOUBLE, [1])],
                              [helper.make_tensor_value_info("c", TensorProto.FLOAT, [1])])
    assert model_tags(helper.make_model(graph))["dtypes"] == ["float32", "float64"]
    # a store written before: official cases tagged "float" read as float32 in the report
    store = Store(tmp_path / "r.sqlite")
    add_run(store, [res("onnx-node/test_add", "reference", "mismatch", tags={"suite": "onnx-node", "op": "Add", "dtypes": ["double", "float"]})],
            {"reference": (True, "", "1.23.2")})
    report = build_report([RunRef(store.path, 1)])
    assert report.matrix.cases["onnx-node/test_add"].dtype == "float64,float32"
    assert dict(report.failure_groups()[0].dtypes) == {"float64,float32": 1}


def test_default_report_is_the_newest_run_of_every_suite_and_backend(tmp_path):
    from harness.report.selection import baseline_runs, default_runs

    s = Store(tmp_path / "r.sqlite")
    both = {"reference": (True, "", "1.23.2"), "onnxruntime": (True, "", "1.32.0")}
    ort = {"onnxruntime": (True, "", "1.32.0")}
    add_run(s, [res("onnx-node/test_abs", "reference", "pass"), res("onnx-node/test_abs", "onnxruntime", "mismatch", verdict=MISMATCH),
                res("onnx-node/test_add", "reference", "pass"), res("onnx-node/test_add", "onnxruntime", "pass")], both)
    add_run(s, [res("operators/ReduceSum-13/opset13/float32/0", "onnxruntime", "pass")], ort)
    add_run(s, [res("onnx-node/test_abs", "onnxruntime", "pass")], ort)  # the node suite again, narrowed, on one backend
    refs = default_runs(s.path)
    assert refs == [RunRef(s.path, 1, "", frozenset({("onnx-node", "reference")})), RunRef(s.path, 2), RunRef(s.path, 3)]
    report = build_report(refs, baseline_runs(refs))
    assert [b.label for b in report.backends] == ["reference", "onnxruntime"]
    # onnxruntime's node results are run 3's only: run 1's test_add is not the newest run of that pair
    assert sorted((r["case_id"], r["column"], r["run"]) for r in report.results) == [
        ("onnx-node/test_abs", "onnxruntime", "run 3"), ("onnx-node/test_abs", "reference", "run 1"), ("onnx-node/test_add", "reference", "run 1"),
        ("operators/ReduceSum-13/opset13/float32/0", "onnxruntime", "run 2")]
    # the diff: onnx-node on onnxruntime against run 1, the same suite on the same backend
    assert baseline_runs(refs) == [RunRef(s.path, 1, "", frozenset({("onnx-node", "onnxruntime")}))]
    assert [(c.kind, c.case_id, c.backend) for c in report.diff.changes] == [
        ("removed", "onnx-node/test_add", "onnxruntime"), ("improved", "onnx-node/test_abs", "onnxruntime")]
    assert report.diff.compared == [("onnx-node", "onnxruntime")]


def test_same_backend_with_other_options_is_another_column(tmp_path):
    s = Store(tmp_path / "r.sqlite")
    ort = {"onnxruntime": (True, "", "1.32.0")}
    args = lambda **opts: {"backends": [{"name": "onnxruntime", "spec": "onnxruntime", "options": opts}]}  # noqa: E731
    add_run(s, [res("operators/Relu-14/opset14/float32/0", "onnxruntime", "pass")], ort, args=args())
    add_run(s, [res("operators/Relu-14/opset14/float32/0", "onnxruntime", "mismatch", verdict=MISMATCH)], ort, args=args(optimization="disable"))
    add_run(s, [res("operators/Clip-11/opset13/float32/0", "onnxruntime", "pass")], ort, args=args(optimization="disable"))
    report = build_report([RunRef(s.path, 1), RunRef(s.path, 2), RunRef(s.path, 3)])
    assert [(b.label, b.runs) for b in report.backends] == [("onnxruntime (default options)", ["run 1"]),
                                                            ("onnxruntime (optimization=disable)", ["run 2", "run 3"])]
    assert report.matrix.outcome("operators/Relu-14/opset14/float32/0", "onnxruntime (default options)") == "pass"
    assert report.matrix.outcome("operators/Relu-14/opset14/float32/0", "onnxruntime (optimization=disable)") == "mismatch"
