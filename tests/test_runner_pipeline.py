"""The runner keeps tasks queued on each worker (up to ``depth`` while they are quick): a death or
a timeout still costs only the case that was running, the queued cases run elsewhere exactly
once, and the probe's workers, started while the cases are selected, go on to run cases."""

from __future__ import annotations

import os
import sys
from collections import deque
from types import SimpleNamespace

import pytest

from harness import forkserver
from harness import runner as runner_module
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


def test_a_worker_holds_its_pace_worth_of_tasks_up_to_depth_and_two_while_they_take_long():
    runner = Runner([BackendSpec("reference")], jobs=1)
    runner.ahead_s = 0.03
    worker = SimpleNamespace(pace=None, done=0)
    assert runner._room(worker) == 2  # nothing known of its pace yet
    worker.pace = 0.001  # a millisecond a case: 30 ms of work held
    assert runner._room(worker) == 30
    worker.pace = 0.0001
    assert runner._room(worker) == runner.depth == 64
    worker.pace = 0.5  # a long case holds only one other behind it
    assert runner._room(worker) == 2
    runner.recycle_after, worker.pace, worker.done = 3, 0.0001, 1
    assert runner._room(worker) == 2  # never past its recycling


def test_a_chunk_stops_growing_at_chunk_bytes_of_models_and_data_held_in_memory(monkeypatch):
    """A chunk always fits in the pipe: the controller never blocks sending it while the worker
    blocks sending the answers the controller is not reading then."""
    import numpy as np

    from harness.case import DataSet

    runner = Runner([BackendSpec("reference")], jobs=1)
    sent = []
    worker = SimpleNamespace(tasks=[], pace=0.0001, done=0, send=lambda tasks, timeout: sent.append(tasks))
    runner.workers = [worker]
    heavy = relu_case("t/heavy")
    heavy.data = [DataSet({"x": np.zeros(4096, np.float32)}, [np.zeros(4096, np.float32)])]  # 32 KiB of data
    assert runner_module._held_bytes(heavy) == len(heavy.model_bytes) + 32768
    queue = deque([(heavy, "reference")] * 10 + [(relu_case("t/light"), "reference")])
    runner._feed(queue)
    assert [len(chunk) for chunk in sent] == [2] and len(queue) == 9  # 2 x 32 KiB reach 64 KiB
    runner.chunk_bytes = 1 << 30
    sent.clear()
    runner._feed(deque([(heavy, "reference")] * 10))
    assert [len(chunk) for chunk in sent] == [10]


class _Recording(Runner):
    """Records how many tasks each worker was allowed to hold."""

    def _room(self, worker):
        room = super()._room(worker)
        self.rooms.append(room)
        return room


def test_a_crash_behind_a_deep_queue_costs_only_its_case_and_the_queued_ones_run_once():
    cases = [relu_case(f"t/ok{k}") for k in range(15)] + [relu_case("t/bad", graph_name="FAULT")] + [relu_case(f"t/late{k}") for k in range(10)]
    runner = _Recording([BackendSpec("tests.fault_backends:Segfault", name="Segfault")], jobs=1, timeout=30)
    runner.rooms, runner.ahead_s = [], 1000.0  # every case counts as quick, however loaded the machine
    results = []
    runner.run([(c, "Segfault") for c in cases], results.append)
    assert max(runner.rooms) == runner.depth  # quick cases: the queue was deep
    assert sorted(r.case_id for r in results) == sorted(c.id for c in cases)  # each exactly once
    got = {r.case_id: r.outcome for r in results}
    assert got.pop("t/bad") == "crash"
    assert set(got.values()) == {"pass"}


def test_no_selected_case_stops_the_workers_started_to_probe(tmp_path):
    from harness.run import BadPattern, RunConfig, _select_while_probing

    runner = Runner([BackendSpec("reference")], jobs=2)
    config = RunConfig(suites=["onnx-simple"], backends=[BackendSpec("reference")], pattern="^no such case$", corpus=tmp_path / "corpus")
    with pytest.raises(BadPattern, match="no case matches"):
        _select_while_probing(config, runner, say=lambda m: None)
    assert runner.workers == [] and not os.path.exists(runner.log_dir)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers come from a fork server on Linux only")
def test_a_worker_starts_with_hypothesis_imported(tmp_path):
    """Judging a case at a spec-silent point imports its operator module, which draws on
    hypothesis: the fork server has imported it once, so no worker pays the import itself."""
    out = tmp_path / "imported"
    code = f"import sys; open({str(out)!r}, 'w').write(' '.join(m for m in ('hypothesis', 'numpy', 'onnx') if m in sys.modules))"
    worker = forkserver.context().Process(target=exec, args=(code,))
    worker.start()
    worker.join(60)
    assert out.read_text().split() == ["hypothesis", "numpy", "onnx"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers come from a fork server on Linux only")
@pytest.mark.parametrize("backends, imported", [(["onnxruntime"], "onnxruntime"), (["reference", "exec:a,b", "no-such"], "")])
def test_a_fork_server_started_for_a_run_imports_its_backends_runtimes_once(backends, imported, tmp_path):
    """``onnx-harness run`` starts the fork server naming the run's backends: a worker forked from
    it finds ONNX Runtime imported, and a run without it (or naming what cannot load) does not."""
    import subprocess

    pytest.importorskip("onnxruntime")
    out = tmp_path / "imported"
    code = f"import sys; open({str(out)!r}, 'w').write(' '.join(m for m in ('onnxruntime',) if m in sys.modules))"
    script = (f"from harness import forkserver\nforkserver.start({backends!r})\n"
              f"p = forkserver.context().Process(target=exec, args=({code!r},)); p.start(); p.join(60)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert out.read_text() == imported


def test_a_worker_gets_its_queued_tasks_in_one_message_and_answers_each(monkeypatch):

    messages = []
    send = runner_module._Worker.send

    def counted(self, tasks, timeout):
        messages.append([case.id for case, _ in tasks])
        send(self, tasks, timeout)

    monkeypatch.setattr(runner_module._Worker, "send", counted)
    cases = [relu_case(f"t/ok{k}") for k in range(20)]
    runner = Runner([BackendSpec("reference")], jobs=1)
    runner.ahead_s = 1000.0  # every case counts as quick, however loaded the machine
    results = []
    runner.run([(c, "reference") for c in cases], results.append)
    assert [r.case_id for r in results] == [c.id for c in cases] and {r.outcome for r in results} == {"pass"}
    assert [i for m in messages for i in m] == [c.id for c in cases]  # each sent once, in order
    assert max(len(m) for m in messages) > 1 and len(messages) < len(cases)


def test_answers_waiting_together_are_taken_in_one_round(monkeypatch):
    """A controller busy storing a result finds the worker's next answers waiting: it takes them
    all before it waits again."""
    import time

    waits = []
    wait = Runner._wait

    def counted(*args, **kwargs):
        waits.append(1)
        return wait(*args, **kwargs)

    monkeypatch.setattr(Runner, "_wait", counted)
    cases = [relu_case(f"t/ok{k}") for k in range(8)]
    runner = Runner([BackendSpec("reference")], jobs=1)
    runner.ahead_s = 1000.0  # every case counts as quick: after the first answer the worker holds all the others
    results = []

    def slow_first(result):
        results.append(result)
        if len(results) == 1:
            time.sleep(2)  # the worker finishes the others meanwhile

    runner.run([(c, "reference") for c in cases], slow_first)
    assert [r.outcome for r in results] == ["pass"] * 8
    assert len(waits) < len(cases) - 1


def test_the_controller_lingers_only_while_every_worker_has_work_queued(monkeypatch):
    """While each worker holds ``linger_when`` tasks or more and more than it is fed at (half its
    room), the controller sleeps ``linger_s`` between rounds (answers gather and are taken
    together); with fewer, it never does."""
    naps = []

    def nap(seconds):
        naps.append((seconds, min(len(w.tasks) for w in runner.workers)))

    monkeypatch.setattr(runner_module.time, "sleep", nap)
    runner = Runner([BackendSpec("reference")], jobs=1)
    runner.ahead_s = 1000.0  # every case counts as quick: the worker holds up to depth tasks
    results = []
    runner.run([(relu_case(f"t/ok{k}"), "reference") for k in range(200)], results.append)
    assert sorted(r.case_id for r in results) == sorted(f"t/ok{k}" for k in range(200)) and {r.outcome for r in results} == {"pass"}
    assert naps and all(seconds == runner.linger_s > 0 and held > runner.depth // 2 for seconds, held in naps)


def test_the_controllers_wait_answers_what_multiprocessing_wait_does_and_follows_the_busy_workers():
    import multiprocessing as mp
    from multiprocessing.connection import wait

    pipes = [mp.Pipe() for _ in range(3)]
    sentinels = [mp.Pipe() for _ in range(3)]  # a readable end stands in for a dead worker's sentinel
    workers = [SimpleNamespace(conn=pipes[k][0], process=SimpleNamespace(sentinel=sentinels[k][0].fileno())) for k in range(3)]
    runner = Runner([BackendSpec("reference")], jobs=1)
    pipes[1][1].send("answer")
    sentinels[2][1].send("died")
    for busy in (workers[:2], workers, workers[1:], [workers[0]]):  # the busy set changes: the poll object follows
        objects = [w.conn for w in busy] + [w.process.sentinel for w in busy]
        assert sorted(map(str, runner._wait(busy, 0.05))) == sorted(map(str, wait(objects, 0.05)))
    assert runner._wait([workers[0]], 0.01) == []
    runner.close()
