"""The terminal after ``run``: the counts table, the largest failure groups per backend (wrong
answers first) and the command that writes the report."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

from harness.cli import print_summary
from harness.store import Store

from .test_report_matrix import MISMATCH, add_run, res


def test_run_summary_names_the_top_failing_groups_and_the_report_command(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    results = [res(f"operators/ArgMax-13/opset13/float16/{n}", "onnxruntime", "unsupported", run_s=None,
                   message=f"NOT_IMPLEMENTED : Could not find an implementation for ArgMax(13) node with name 'n{n}'") for n in range(9)]
    results += [res(f"operators/Softmax-13/opset13/float32/{n}", "onnxruntime", "mismatch", verdict=MISMATCH,
                    message=f"output 0: values differ: {n + 1}/8 bad") for n in range(3)]
    results += [res(f"operators/Op{k}-1/opset13/float32/0", "onnxruntime", "error", message=f"boom {k}") for k in range(6)]
    results += [res("operators/Relu-14/opset14/float32/0", "reference", "pass")]
    run_id = add_run(store, results, {"reference": (True, "", "1.23.2"), "onnxruntime": (True, "", "1.32.0")})
    buf = io.StringIO()
    with redirect_stdout(buf):
        print_summary(store, run_id)
    lines = buf.getvalue().splitlines()
    start = lines.index("onnxruntime: 18 non-passes in 8 groups by cause; the first 5:")
    assert lines[start + 1].split() == ["3", "wrong", "answer:", "Softmax", "mismatch", "for", "float32:", "output", "N:", "values", "differ:", "N/N", "bad"]
    assert lines[start + 2].strip() == "e.g. operators/Softmax-13/opset13/float32/0"
    # then the errors (one each), the missing kernel last though it is the largest
    assert [line.split()[1] for line in lines[start + 3: start + 11: 2]] == ["error:"] * 4
    assert not any(line.startswith("reference:") for line in lines)  # nothing failed there
    assert lines[-1] == f"report: onnx-harness report {run_id} --store {store.path} -o reports/  (then open reports/index.html)"
