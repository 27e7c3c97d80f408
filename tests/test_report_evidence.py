"""The evidence a non-pass carries into the store and the reports: inputs, a window of expected
and actual values around the first bad element with the bad ones marked, and the tolerance with
its source (dtype default, override with its reason, the case's own)."""

from __future__ import annotations

import numpy as np

from harness.case import Case, Tolerance
from harness.compare import Comparator
from harness.evidence import WINDOW, window
from harness.worker import execute_case
from harness.tolerances import tolerance_source

from .fault_backends import AlwaysWrong, Unsupported
from .util import relu_case


def test_window_marks_the_comparators_bad_elements():
    e = np.arange(40, dtype=np.float32).reshape(4, 10)
    a = e.copy()
    a[2, 3] = 99.0  # flat 23
    a[2, 5] = np.nan  # flat 25
    v = Comparator().compare([e], [a], Tolerance(0.0, 0.0))
    w = v.window
    assert v.outcome == "mismatch" and v.first_bad == "[2,3]" and v.bad_count == 2
    assert w["shape"] == [4, 10] and len(w["expected"]) == len(w["actual"]) == WINDOW
    # the window holds the first bad element, and marks exactly the bad ones it holds
    assert [w["start"] + k for k in w["bad"]] == [23, 25]
    assert w["actual"][23 - w["start"]] == "99.0" and w["expected"][23 - w["start"]] == "23.0"
    assert w["actual"][25 - w["start"]] == "nan"


def test_window_at_the_end_of_a_small_tensor():
    e = np.array([1, 2, 3], np.int64)
    a = np.array([1, 2, 4], np.int64)
    w = window(e, a, e != a)
    assert w == {"start": 0, "shape": [3], "expected": [1, 2, 3], "actual": [1, 2, 4], "bad": [2]}


def test_a_mismatch_records_inputs_outputs_and_tolerance_source():
    x = np.linspace(-3, 3, 30, dtype=np.float32)
    case = relu_case("test/relu-evidence", x=x)
    result = execute_case(AlwaysWrong(), case)
    assert result.outcome == "mismatch"
    ev = result.verdict["evidence"]
    assert ev["inputs"]["x"]["shape"] == [30] and ev["inputs"]["x"]["dtype"] == "float32"
    assert ev["inputs"]["x"]["values"][0] == str(np.float32(-3.0))
    assert ev["expected"][0]["shape"] == ev["actual"][0]["shape"] == [30]
    w = result.verdict["window"]
    assert w["bad"] and w["start"] == 0  # every element is one off: the first is bad
    assert float(w["actual"][0]) == float(w["expected"][0]) + 1
    assert result.verdict["tolerance"]["source"] == "case"


class _NoKernel(AlwaysWrong):
    name = "no-kernel"

    def prepare(self, model):
        from harness.backends.base import Unsupported

        raise Unsupported("no kernel for Relu(14) float32")


def test_a_failure_at_run_records_the_inputs_and_one_at_load_their_shapes():
    result = execute_case(Unsupported(), relu_case("test/x", graph_name="FAULT"))
    assert result.outcome == "unsupported" and result.message.startswith("data set 0")
    assert result.verdict["evidence"]["inputs"]["x"] == {"shape": [3], "dtype": "float32", "size": 3, "values": ["-1.0", "0.5", "2.0"]}
    result = execute_case(_NoKernel(), relu_case("test/y"))
    assert result.outcome == "unsupported" and result.prepare_s is not None
    assert result.verdict["evidence"]["inputs"]["x"] == {"shape": [3], "dtype": "float32", "size": 3, "values": []}


def _case(case_id: str, tolerance: Tolerance, **tags) -> Case:
    return Case(id=case_id, suite=case_id.split("/")[0], tolerance=tolerance, tags=tags)


def test_tolerance_source_names_default_override_and_case():
    default = _case("operators/Relu-14/opset14/float32/0", Tolerance(1e-5, 1e-6, 4), op="Relu", dtypes=["float32"])
    src = tolerance_source(default)
    assert src["source"] == "dtype default" and src["dtype"] == "float32" and src["file"] == "harness/data/tolerances.toml"
    assert (src["rtol"], src["atol"], src["ulp"]) == (1e-5, 1e-6, 4)

    cast = _case("operators/Cast-21/opset21/float32/0", Tolerance(1e-5, 1e-6, 4), op="Cast", dtypes=["float32"])
    src = tolerance_source(cast)
    assert src["source"] == "override" and src["match"] == {"op": "Cast"} and "rounds each value once" in src["reason"]
    assert (src["rtol"], src["atol"], src["ulp"]) == (0.0, 0.0, 0)

    official = _case("onnx-node/test_softmax_example", Tolerance(1e-3, 1e-7), op="Softmax", dtypes=["float"])
    src = tolerance_source(official)
    assert src["source"] == "case" and src["ulp"] is None and "no ULP bound" in src["reason"]


def test_commands_are_portable_and_shell_quoted(monkeypatch):
    import shlex

    from harness.report.records import RunInfo
    from harness.report.reproduce import repro_command, run_command
    from harness.run import RunConfig, environment

    args = {"opset": 13, "restamp": False, "examples": 5, "seed": 3, "corpus": "/home/me/corpus",
            "backends": [{"name": "onnxruntime", "spec": "onnxruntime", "options": {"threads": 1}}]}
    case = "operators/Relu-14/opset14/float32/it's 1"
    assert run_command(args, case, "onnxruntime") == (
        "onnx-harness run --suite operators --opset 13 --no-restamp --examples 5 --seed 3 --backend onnxruntime "
        "--option=onnxruntime.threads=1 -k '^operators/Relu\\-14/opset14/float32/it'\"'\"'s\\ 1$'")
    assert repro_command(args, case, "onnxruntime") == (
        "onnx-harness repro 'operators/Relu-14/opset14/float32/it'\"'\"'s 1' --backend onnxruntime --option=onnxruntime.threads=1 -o repro --no-restamp")
    # the -k pattern, pasted into a shell, selects that id and no other
    import re
    pattern = shlex.split(run_command(args, case, "onnxruntime"))[-1]
    assert re.search(pattern, case) and not re.search(pattern, case + "0") and not re.search(pattern, "x" + case)
    # an official case: the corpus is a machine path here, left out; a relative one is kept
    assert run_command({"corpus": "/abs/corpus"}, "onnx-node/test_abs", "reference") == "onnx-harness run --suite onnx-node --backend reference -k '^onnx\\-node/test_abs$'"
    assert run_command({"corpus": "build/corpus"}, "onnx-node/test_abs", "reference").startswith("onnx-harness run --suite onnx-node --corpus build/corpus ")

    # the run's own command: stored portable and quoted; older stores' commands are made so
    monkeypatch.setattr("sys.argv", ["/work/x/harness/cli.py", "run", "-k", "Reduce|Softmax", "--suite", "operators"])
    assert environment(RunConfig(suites=["operators"], backends=[]))["command"] == "onnx-harness run -k 'Reduce|Softmax' --suite operators"
    old = RunInfo("run 2", "s", 2, None, None, "complete", "/work/x/harness/cli.py run --suite operators -k Reduce|Softmax", {})
    assert old.portable_command == "onnx-harness run --suite operators -k 'Reduce|Softmax'"


def int64_store(tmp_path):
    """One int64 mismatch by one unit at 2**57 + 1 (a JavaScript number holds neither value
    exactly), with the evidence execute_case records and the case's float tolerance."""
    from harness.evidence import tensor
    from harness.store import Store

    from .test_report_matrix import MISMATCH, add_run, res

    e = np.array([2**57 + 1, 7, 2**63 - 1], dtype=np.int64)
    a = np.array([2**57, 7, 2**63 - 1], dtype=np.int64)
    verdict = {**MISMATCH, "output": 0, "window": window(e, a, e != a), "evidence": {"expected": [tensor(e)], "actual": [tensor(a)]},
               "tolerance": {"rtol": 1e-3, "atol": 1e-7, "ulp": None, "source": "case", "reason": "the official case's rtol/atol"}}
    s = Store(tmp_path / "r.sqlite")
    add_run(s, [res("onnx-node/test_reduce_sum_square_int64", "onnxruntime", "mismatch", verdict=verdict)], {"onnxruntime": (True, "", "1.32.0")})
    return s.path


def test_the_page_keeps_int64_values_exact_and_names_the_exact_comparison(tmp_path):
    import json

    from harness.report.html import page_data
    from harness.report.matrix import build_report
    from harness.report.sources import RunRef

    data = page_data(build_report([RunRef(int64_store(tmp_path), 1)]))
    (ev,) = [json.loads(data["S"][i], parse_int=float) for i in _dense(data["res"]["ev"]) if i >= 0]  # numbers as JavaScript reads them
    w = ev["window"]
    assert (w["expected"], w["actual"], w["bad"]) == (["144115188075855873", 7.0, "9223372036854775807"],
                                                      ["144115188075855872", 7.0, "9223372036854775807"], [0])
    assert ev["tolerance"]["exact"] == "int64"


def _dense(col):
    """The values a page column holds (a sparse column is {d: default, i: gaps, v: values})."""
    if not isinstance(col, dict):
        return col
    out, p = [], -1
    for gap, v in zip(col["i"], col["v"]):
        p += gap
        out.append(v)
    return out
