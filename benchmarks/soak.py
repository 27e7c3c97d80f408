"""Soak: 20,000 case executions on reference and onnxruntime, memory over time, and the count
of lost or duplicated results after a scripted kill -9 and --resume.

    python benchmarks/soak.py [--executions 20000] [--corpus corpus] [--recycle-after 500]

Prints the peak RSS of the controller and of the workers in the first and in the last tenth of
the run (target: flat within 10 %), and the lost/duplicated counts (target: 0).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.store import Store  # noqa: E402
from harness.suites import SuiteContext, ensure_corpus  # noqa: E402
from harness.suites.onnx_official import iter_corpus_cases  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    kids.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return kids


class Sampler(threading.Thread):
    """Samples (time, controller RSS, max worker RSS) of a process tree every half second."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.samples, self.stop = pid, [], threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            workers = [k for c in _children(self.pid) for k in [c, *_children(c)]]
            self.samples.append((time.time(), _rss_kib(self.pid), max([_rss_kib(w) for w in workers] or [0])))
            time.sleep(0.5)


def run_cli(args: list[str], sample: bool = True) -> tuple[int, list]:
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    sampler = Sampler(proc.pid)
    if sample:
        sampler.start()
    code = proc.wait()
    sampler.stop.set()
    return code, sampler.samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--executions", type=int, default=20000)
    parser.add_argument("--corpus", default="corpus")
    parser.add_argument("--recycle-after", type=int, default=0)
    args = parser.parse_args()
    corpus = Path(args.corpus).resolve()
    ensure_corpus(SuiteContext(corpus=corpus, say=print))
    n_cases = sum(1 for _ in iter_corpus_cases(corpus, ["onnx-node"]))
    rounds = max(1, round(args.executions / (2 * n_cases)))
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "soak.sqlite"
        base = ["--suite", "onnx-node", "--backend", "reference", "--backend", "onnxruntime", "-j", "2",
                "--corpus", str(corpus), "--store", str(store), "--recycle-after", str(args.recycle_after)]
        rounds_samples: list = []
        t0 = time.time()
        for k in range(rounds):
            code, s = run_cli(["run", *base])
            rounds_samples.append(s)
            print(f"round {k + 1}/{rounds}: exit {code}, {2 * n_cases} executions, {time.time() - t0:.0f} s", flush=True)
        # like for like: the peaks of the first and of the last run into the same growing store
        # (each run is a fresh controller; its workers live through the whole run)
        peak = lambda rows, i: max(r[i] for r in rows) / 1024  # noqa: E731
        first, last = rounds_samples[0], rounds_samples[-1]
        print(f"executions: {rounds * 2 * n_cases}")
        print(f"controller peak RSS: first run {peak(first, 1):.0f} MiB, last run {peak(last, 1):.0f} MiB ({peak(last, 1) / max(peak(first, 1), 1e-9):.2f}x)")
        print(f"worker peak RSS:     first run {peak(first, 2):.0f} MiB, last run {peak(last, 2):.0f} MiB ({peak(last, 2) / max(peak(first, 2), 1e-9):.2f}x)")
        half = len(last) // 2
        print(f"within the last run: worker peak RSS {peak(last[:half], 2):.0f} MiB in its first half, {peak(last[half:], 2):.0f} MiB in its second")

        # kill -9 in the middle of a run, then --resume
        kill_store = Path(tmp) / "kill.sqlite"
        cmd = ["run", *base[:-6], "--corpus", str(corpus), "--store", str(kill_store)]
        proc = subprocess.Popen([sys.executable, "-m", "harness.cli", *cmd], cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        while True:
            time.sleep(0.5)
            try:
                done = Store(kill_store).db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
            except Exception:
                done = 0
            if done >= n_cases:
                break
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        before = {(r["case_id"], r["backend"]) for r in Store(kill_store).results(1)}
        run_cli(["run", "--resume", "--store", str(kill_store)], sample=False)
        rows = [(r["case_id"], r["backend"]) for r in Store(kill_store).results(1)]
        expected = {(c.id, b) for c in iter_corpus_cases(corpus, ["onnx-node"]) for b in ("reference", "onnxruntime")}
        lost = len(expected - set(rows)) + len(before - set(rows))
        duplicated = len(rows) - len(set(rows))
        print(f"kill -9 after {len(before)} results, then --resume: {len(rows)} stored, {lost} lost, {duplicated} duplicated (target 0, 0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
