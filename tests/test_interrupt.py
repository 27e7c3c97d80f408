"""Ctrl-C keeps every finished result and writes a partial report; --resume completes the run."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

from harness.store import Store
from harness.suites import onnx_official as official

ROOT = Path(__file__).resolve().parent.parent


def test_ctrl_c_keeps_finished_results_and_resume_completes(tmp_path):
    corpus = tmp_path / "corpus"
    official.build_corpus(corpus, ["onnx-simple"])
    store_path = tmp_path / "r.sqlite"
    # the Hang backend stalls on cases whose graph name holds FAULT; none do, so slow it down instead
    cmd = [sys.executable, "-m", "harness.cli", "run", "--suite", "onnx-simple", "--backend", "tests.fault_backends:Slow",
           "-j", "1", "--corpus", str(corpus), "--store", str(store_path)]
    # a pytest-xdist worker ignores SIGINT, and an ignored SIGINT is inherited: give the run the
    # default disposition a terminal would, or Python installs no KeyboardInterrupt handler
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)), preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # poll with a plain read-only connection: opening a Store writes its schema and can wait on
    # the run's own writes until the run is over
    deadline, finished = time.time() + 60, 0
    while time.time() < deadline and proc.poll() is None and finished < 3:
        time.sleep(0.2)
        try:
            with closing(sqlite3.connect(f"file:{store_path}?mode=ro", uri=True)) as db:
                finished = db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        except sqlite3.OperationalError:  # the run has not created the store (or its tables) yet
            pass
    assert proc.poll() is None and finished >= 3, f"the run ended or stalled before 3 results ({finished})"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in out and "--resume 1" in out
    store = Store(store_path)
    run = store.run(1)
    assert run["status"] == "interrupted"
    kept = list(store.results(1))
    assert 3 <= len(kept) < 23
    doc = json.loads((tmp_path / "r.run-1.json").read_text())
    assert len(doc["results"]) == len(kept)

    done = subprocess.run([sys.executable, "-m", "harness.cli", "run", "--resume", "1", "--store", str(store_path), "--exit-zero"],
                          cwd=ROOT, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr
    rows = list(store.results(1))
    assert len(rows) == 23 and len({r["case_id"] for r in rows}) == 23
    assert store.run(1)["status"] == "complete"
