"""The runner keeps a second task queued on each worker: a death or a timeout still costs only
the case that was running, the queued case runs elsewhere exactly once, and the probe's worker
goes on to run cases."""

from __future__ import annotations

import os

import pytest

from harness.runner import BackendSpec, Runner

from .util import relu_case


def _cases():
    return [relu_case("t/ok1"), relu_case("t/bad", graph_name="FAULT"), relu_case("t/ok2"), relu_case("t/ok3"), relu_case("t/ok4")]


@pytest.mark.parametrize("backend, outcome", [("Segfault", "crash"), ("Hang", "timeout")])
def test_the_case_queued_behind_a_dying_one_runs_once_elsewhere(backend, outcome):
    runner = Runner([BackendSpec(f"tests.fault_backends:{backend}", name=backend)], jobs=1, timeout=3)
    results = []
    runner.run([(c, backend) for c in _cases()], results.append)
    assert sorted(r.case_id for r in results) == sorted(c.id for c in _cases())  # each exactly once
    got = {r.case_id: r.outcome for r in results}
    assert got.pop("t/bad") == outcome
    assert set(got.values()) == {"pass"}


def test_the_probe_worker_runs_the_cases_after_it(tmp_path):
    spec = BackendSpec("tests.fault_backends:Pids", {"folder": str(tmp_path)}, name="pids")
    runner = Runner([spec], jobs=1)
    assert runner.probe(keep=True)["pids"].available
    probed = runner.workers[0].process.pid
    results = []
    runner.run([(relu_case(f"t/ok{k}"), "pids") for k in range(3)], results.append)
    assert [r.outcome for r in results] == ["pass"] * 3
    assert set((tmp_path / "pids").read_text().split()) == {str(probed)}
    assert runner.workers == [] and not os.path.exists(runner.log_dir)


def test_probe_without_keep_leaves_no_worker():
    runner = Runner([BackendSpec("reference")], jobs=1)
    runner.probe()
    assert runner.workers == []


def test_the_other_workers_load_the_backends_while_the_probe_runs(tmp_path):
    spec = BackendSpec("tests.fault_backends:Pids", {"folder": str(tmp_path)}, name="pids")
    runner = Runner([spec], jobs=2)
    assert runner.probe(keep=True)["pids"].available
    assert len(runner.workers) == 2
    pids = {w.process.pid for w in runner.workers}
    results = []
    runner.run([(relu_case(f"t/ok{k}"), "pids") for k in range(6)], results.append)
    assert [r.outcome for r in results] == ["pass"] * 6
    assert set((tmp_path / "pids").read_text().split()) <= {str(p) for p in pids}  # no other worker was spawned


def test_a_backend_that_kills_its_loader_leaves_no_warming_worker_behind():
    runner = Runner([BackendSpec("tests.fault_backends:DieOnLoad", name="die")], jobs=2, timeout=5)
    infos = runner.probe(keep=True)
    assert not infos["die"].available and "while loading" in infos["die"].reason
    assert all(w.process.is_alive() for w in runner.workers) and len(runner.workers) == 1
    runner.run([], lambda r: None)
    assert runner.workers == []
