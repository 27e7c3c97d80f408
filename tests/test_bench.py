"""``onnx-harness bench``: the ladder's oracles and costs, timings only for right answers, results
and the machine probe in the store, and the report's plots and tables built from them."""

from __future__ import annotations

import pytest

from harness.bench import OPS, bench_cases, run_bench, throughput
from harness.cli import main


def test_every_oracle_agrees_with_the_reference_backend_on_the_small_sizes():
    from harness.backends.reference import ReferenceBackend
    from harness.worker import execute_case

    backend = ReferenceBackend()
    backend.load()
    cases = bench_cases(list(OPS), ["float32", "float16"], sizes=1)
    assert len(cases) == 2 * len(OPS)
    for case in cases:
        result = execute_case(backend, case)
        assert result.outcome == "pass", (case.id, result.message)


def test_analytic_costs_of_known_layers():
    by_label = {s.label: s for op in OPS.values() for s in op.sizes}
    stem = by_label["ResNet-50 stem 3x224x224->64 k7s2"]
    assert stem.flops == 2 * 64 * 112 * 112 * 3 * 7 * 7  # 118 M multiply-adds
    ffn = by_label["BERT-base FFN, seq 128 128x768x3072"]
    assert ffn.flops == 2 * 128 * 768 * 3072 and ffn.bytes == 4 * (128 * 768 + 768 * 3072 + 128 * 3072)
    assert throughput({"bound": "flops", "flops": 2e9, "bytes": 1}, 0.5) == (4.0, "GFLOP/s")
    assert throughput({"bound": "bytes", "flops": 1, "bytes": 3e9}, 1.5) == (2.0, "GB/s")


def test_bench_times_right_answers_and_stores_the_run(tmp_path):
    from harness.store import Store

    path = tmp_path / "bench.sqlite"
    outcome = run_bench(["MatMul", "Relu"], ["float32"], ["reference", "tests.fault_backends:AlwaysWrong"], path, sizes=1,
                        budget=0.05, say=lambda m: None)
    store = Store(path)
    rows = {(r["case_id"], r["backend"]): r for r in store.results(outcome["run_id"])}
    assert set(rows) == {(c, b) for c in ("bench/MatMul/float32/0", "bench/Relu/float32/0") for b in ("reference", "tests.fault_backends:AlwaysWrong")}
    for (case_id, backend), r in rows.items():
        if backend == "reference":
            assert r["outcome"] == "pass" and r["timing"]["n"] >= 6 and r["timing"]["ci_low_s"] <= r["run_median_s"]
            assert r["tags"]["suite"] == "bench" and r["tags"]["flops"] > 0
        else:  # a wrong answer is never timed
            assert r["outcome"] == "mismatch" and "median_s" not in r["timing"]
    assert len(outcome["unexpected"]) == 2
    probe = store.run(outcome["run_id"])["environment"]["bench_probe"]
    assert probe["gemm_gflops"] > 0 and probe["stream_triad_gbs"] > 0


def test_bench_refuses_an_unknown_op(capsys):
    assert main(["bench", "--op", "Conv,Frobnicate"]) == 2
    assert "Frobnicate" in capsys.readouterr().err


@pytest.mark.parametrize("points", [[(1e3, 1e-5), (1e6, 1e-3)]])
def test_loglog_places_points_by_their_logarithm(points):
    from harness.report.perf_html import loglog

    chart = loglog({"a": points}, {"a": "#000"}, "FLOP", "s", width=400, height=200)
    (x_lo, y_lo), (x_hi, y_hi) = [(m["x"], m["y"]) for m in chart["series"][0]["marks"]]
    assert x_lo == chart["x0"] and x_hi == chart["x1"]  # the axis spans the decades of the data
    assert y_lo == chart["y1"] and y_hi == chart["y0"]  # larger latency higher up
    assert [t["label"] for t in chart["xticks"]] == ["1000", "10000", "1e5", "1e6"]
