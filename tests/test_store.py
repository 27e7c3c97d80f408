import sqlite3

from harness.worker import Result
from harness.store import Store


def test_runs_add_history_and_never_overwrite(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    first = store.start_run("cmd", {"suites": ["x"]}, {"onnx": "1"})
    store.add_result(first, Result("c1", "b", "pass", verdict={"max_abs": 0.0}))
    store.add_result(first, Result("c2", "b", "mismatch", "values differ", verdict={"max_abs": 0.5, "bad_count": 1}))
    store.finish_run(first)
    second = store.start_run("cmd", {"suites": ["x"]}, {"onnx": "1"})
    store.add_result(second, Result("c1", "b", "error", "boom"))
    store.finish_run(second, "interrupted")

    assert [r["status"] for r in store.runs()] == ["complete", "interrupted"]
    assert [r["outcome"] for r in store.results(first)] == ["pass", "mismatch"]
    assert [r["outcome"] for r in store.results(second)] == ["error"]
    row = [r for r in store.results(first) if r["case_id"] == "c2"][0]
    assert row["max_abs"] == 0.5 and row["bad_count"] == 1 and row["verdict"]["max_abs"] == 0.5
    assert [h["run_id"] for h in store.case_history("c1")] == [second, first]
    assert store.latest_run("interrupted")["id"] == second
    assert store.done_pairs(first) == {("c1", "b"), ("c2", "b")}


def test_a_result_is_stored_once_per_run(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    run = store.start_run("cmd", {}, {})
    store.add_result(run, Result("c1", "b", "pass"))
    store.add_result(run, Result("c1", "b", "pass"))
    assert len(list(store.results(run))) == 1


def test_results_are_visible_to_another_connection_at_once(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    run = store.start_run("cmd", {}, {})
    store.add_result(run, Result("c1", "b", "pass"))
    other = sqlite3.connect(tmp_path / "r.sqlite")
    assert other.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 1
    assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def _writer(path, run_id, prefix, n):
    store = Store(path)
    for i in range(n):
        store.add_result(run_id, Result(f"{prefix}/{i}", "b", "pass"))


def test_two_processes_writing_one_store_at_once_lose_nothing(tmp_path):
    import multiprocessing as mp

    path = tmp_path / "r.sqlite"
    store = Store(path)
    runs = [store.start_run("cmd", {}, {}) for _ in range(2)]
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, run, f"p{k}", 400)) for k, run in enumerate(runs)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    assert [len(list(store.results(r))) for r in runs] == [400, 400]
    assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_kill_9_of_the_controller_keeps_results_and_resume_completes(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from harness.suites import onnx_official as official

    root = Path(__file__).resolve().parent.parent
    corpus = tmp_path / "corpus"
    official.build_corpus(corpus, ["onnx-simple"])
    path = tmp_path / "r.sqlite"
    env = dict(os.environ, PYTHONPATH=str(root))
    cmd = [sys.executable, "-m", "harness.cli", "run", "--suite", "onnx-simple", "--backend", "tests.fault_backends:Slow",
           "-j", "2", "--corpus", str(corpus), "--store", str(path)]
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline:
        time.sleep(0.2)
        try:
            if path.exists() and Store(path).db.execute("SELECT COUNT(*) FROM results").fetchone()[0] >= 4:
                break
        except Exception:
            pass
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    store = Store(path)
    kept = {r["case_id"] for r in store.results(1)}
    assert store.run(1)["status"] == "running" and 4 <= len(kept) < 23
    done = subprocess.run([sys.executable, "-m", "harness.cli", "run", "--resume", "--store", str(path), "--exit-zero"], cwd=root, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rows = list(store.results(1))
    assert len(rows) == 23 and len({r["case_id"] for r in rows}) == 23
    assert kept <= {r["case_id"] for r in rows}


def test_run_files_are_named_after_their_store(tmp_path):
    from harness.store import bundles_root, run_json_path

    a, b = tmp_path / "py311.sqlite", tmp_path / "py312.sqlite"
    assert run_json_path(a, 3) == tmp_path / "py311.run-3.json" != run_json_path(b, 3)
    assert bundles_root(a) == tmp_path / "bundles" / "py311" != bundles_root(b)


_KILL_IN_SECOND_BATCH = """
import json, os, signal, sys
from harness import store as S
from harness.cli import main

S.ResultBatch.__init__.__defaults__ = (4, 3600.0)  # a batch of 4 results, committed when full
flushes, flush = [0], S.ResultBatch.flush


def second_batch_killed(self):
    flushes[0] += 1
    if flushes[0] == 2 and self.waiting:  # its rows are written inside the transaction, then the kill
        with open(sys.argv[1], "w") as fh:
            json.dump([r.case_id for r in self.waiting], fh)
        S.Store._commit = lambda store: os.kill(os.getpid(), signal.SIGKILL)
    flush(self)


S.ResultBatch.flush = second_batch_killed
sys.exit(main(sys.argv[2:]))
"""


def test_a_kill_between_a_batchs_results_and_its_commit_loses_nothing(tmp_path):
    """The controller dies after writing a batch's rows and before committing them: the rows are
    gone with the transaction, every result committed before stays as it was, and --resume runs
    each case without a stored result again, once: every finished result is stored or re-run once."""
    import hashlib
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    from harness.run import RunConfig, select_cases
    from harness.schema import negotiate
    from harness.suites import onnx_official as official

    root = Path(__file__).resolve().parent.parent
    corpus = tmp_path / "corpus"
    official.build_corpus(corpus, ["onnx-simple"])
    path, killed_file, log = tmp_path / "r.sqlite", tmp_path / "killed.json", tmp_path / "runs.log"
    env = dict(os.environ, PYTHONPATH=str(root), ONNX_HARNESS_RUN_LOG=str(log))
    run = ["run", "--suite", "onnx-simple", "--backend", "tests.fault_backends:RunLog", "-j", "1", "--corpus", str(corpus), "--store", str(path)]
    killed = subprocess.run([sys.executable, "-c", _KILL_IN_SECOND_BATCH, str(killed_file), *run], cwd=root, env=env,
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == -9, killed.stderr
    store = Store(path)
    before = {r["case_id"]: (r["id"], r["recorded"]) for r in store.results(1)}
    lost = json.loads(killed_file.read_text())
    assert len(before) == 4 and len(lost) == 4 and not set(lost) & set(before)  # the first batch committed, the second not
    assert store.run(1)["status"] == "running"

    done = subprocess.run([sys.executable, "-m", "harness.cli", "run", "--resume", "--store", str(path), "--exit-zero"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = list(store.results(1))
    cases = {c.id: c for c in select_cases(RunConfig(suites=["onnx-simple"], backends=[], corpus=corpus), say=lambda m: None)}
    assert sorted(r["case_id"] for r in rows) == sorted(cases) and len(rows) == 23  # each stored once
    assert {r["case_id"]: (r["id"], r["recorded"]) for r in rows if r["case_id"] in before} == before  # untouched
    ran = log.read_text().split()
    # what each case ran: its model as the run re-stamps it (23 different models)
    prints = {cid: hashlib.sha256(negotiate(c.load_model())[0].SerializeToString()).hexdigest() for cid, c in cases.items()}
    assert len(set(prints.values())) == 23
    times = {cid: ran.count(prints[cid]) for cid in cases}
    assert all(times[cid] == 1 for cid in before)  # stored before the kill: not run again
    assert all(times[cid] == 2 for cid in lost)  # finished, lost with the uncommitted batch: run again, once
    assert all(1 <= n <= 2 for n in times.values()), times
