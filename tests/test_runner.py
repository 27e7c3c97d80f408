import os

import pytest

from harness.runner import BackendSpec, Runner

from .util import relu_case


def _run(backend: str, jobs: int = 1, timeout: float = 30.0, **kw):
    cases = [relu_case("t/ok1"), relu_case("t/bad", graph_name="FAULT"), relu_case("t/ok2"), relu_case("t/ok3")]
    runner = Runner([BackendSpec(f"tests.fault_backends:{backend}", name=backend)], jobs=jobs, timeout=timeout, **kw)
    results = []
    runner.run([(c, backend) for c in cases], results.append)
    return {r.case_id: r for r in results}


@pytest.mark.parametrize(
    "backend, outcome, words",
    [
        ("Segfault", "crash", "SIGSEGV"),
        ("Abort", "crash", "SIGABRT"),
        ("Exit", "crash", "exited with status 3"),
        ("Raise", "error", "deliberate failure"),
        ("Unsupported", "unsupported", "no kernel for Fault-1"),
    ],
)
def test_a_misbehaving_backend_costs_only_its_own_case(backend, outcome, words):
    results = _run(backend)
    assert len(results) == 4
    assert results["t/bad"].outcome == outcome
    assert words in results["t/bad"].message
    for ok in ("t/ok1", "t/ok2", "t/ok3"):
        assert results[ok].outcome == "pass", results[ok].message


def test_a_hang_becomes_a_timeout_and_the_worker_is_replaced():
    results = _run("Hang", jobs=2, timeout=3)
    assert results["t/bad"].outcome == "timeout"
    assert "3 s" in results["t/bad"].message
    assert [results[k].outcome for k in ("t/ok1", "t/ok2", "t/ok3")] == ["pass"] * 3


def test_wrong_values_are_a_mismatch_with_a_verdict():
    results = _run("WrongValue")
    bad = results["t/bad"]
    assert bad.outcome == "mismatch"
    assert bad.verdict["max_abs"] == pytest.approx(1.0)
    assert bad.verdict["bad_count"] == 3


def test_probe_reports_an_unavailable_backend_with_its_reason():
    runner = Runner([BackendSpec("tests.fault_backends:Raise", name="ok"), BackendSpec("tests.no_such_module:X", name="missing")])
    infos = runner.probe()
    assert infos["ok"].available and infos["ok"].version
    assert not infos["missing"].available and "no_such_module" in infos["missing"].reason


@pytest.mark.parametrize("recycle_after, processes", [(0, 1), (1, 4), (2, 2)])
def test_workers_are_recycled_after_n_cases(tmp_path, recycle_after, processes):
    cases = [relu_case(f"t/ok{k}", graph_name=f"g{k}") for k in range(4)]  # four models: each prepared
    runner = Runner([BackendSpec("tests.fault_backends:Pids", options={"folder": str(tmp_path)}, name="pids")], recycle_after=recycle_after)
    results = []
    runner.run([(c, "pids") for c in cases], results.append)
    assert [r.outcome for r in results] == ["pass"] * 4
    pids = (tmp_path / "pids").read_text().split()
    assert len(pids) == 4 and str(os.getpid()) not in pids
    # one worker, replaced after every ``recycle_after`` cases: a new process id each time
    assert len(set(pids)) == processes, pids
    assert pids == sorted(pids, key=pids.index)  # each process's cases are consecutive


def test_a_worker_with_lingering_threads_is_recycled():
    results = _run("Threads", recycle_after=1)
    assert [results[k].outcome for k in ("t/ok1", "t/bad", "t/ok2", "t/ok3")] == ["pass"] * 4


# -- threads per worker from -j ------------------------------------------------------------
def _kernels_threads(monkeypatch, cores: int, jobs: int, **options) -> int:
    from harness import runner as runner_module

    monkeypatch.setattr(runner_module, "cores", lambda: cores)
    results = []
    Runner([BackendSpec("kernels", options)], jobs=jobs).run([(relu_case("t/threads"), "kernels")], results.append)
    assert results[0].outcome == "pass", results[0].message
    return results[0].tags["threads"]  # read back from the BLAS pool inside the worker


def test_two_jobs_on_two_cores_run_one_blas_thread_each(monkeypatch):
    assert _kernels_threads(monkeypatch, cores=2, jobs=2) == 1


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="OpenBLAS cannot run 2 threads on 1 core")
def test_an_explicit_threads_option_wins_over_the_default(monkeypatch):
    assert _kernels_threads(monkeypatch, cores=8, jobs=8, threads=2) == 2


def test_the_thread_count_is_stored_with_each_result(monkeypatch, tmp_path):
    from harness import runner as runner_module
    from harness.run import RunConfig, execute_run
    from harness.store import Store

    monkeypatch.setattr(runner_module, "cores", lambda: 2)
    model = tmp_path / "relu.onnx"
    model.write_bytes(relu_case().model_bytes)
    store = Store(tmp_path / "results.sqlite")
    config = RunConfig(suites=[], backends=[BackendSpec("kernels")], jobs=2, models=[str(model)], store=tmp_path / "results.sqlite")
    outcome = execute_run(config, store, say=lambda _: None)
    rows = list(store.results(outcome.run_id))
    assert rows and all(r["tags"]["threads"] == 1 for r in rows), rows
    assert store.backends(outcome.run_id)[0]["environment"]["threads"] == 1
