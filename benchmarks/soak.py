"""Soak: 20,000 case executions on reference and onnxruntime, memory over time, and the count
of lost or duplicated results after a scripted kill -9 and --resume.

    python benchmarks/soak.py [--executions 20000] [--corpus corpus] [--recycle-after 500]

All rounds run in ONE controller process (``execute_run`` called round after round into the
same store), so memory the controller keeps from round to round shows as growth. Prints the
peak RSS of the controller and of the workers in the first and in the last round (target: flat
within 10 %), and the lost/duplicated counts (target: 0). Every wait has a time limit: a
controller that hangs ends the benchmark with an error, not a hang.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
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


class Timeout(RuntimeError):
    pass


def wait_until(done, timeout: float, what: str, poll: float = 0.5) -> None:
    """Poll ``done()`` until it is true; raise :class:`Timeout` naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise Timeout(f"{what}: not done after {timeout:.0f} s")
        time.sleep(poll)


def kill_and_wait(proc: subprocess.Popen, timeout: float) -> int:
    """SIGKILL ``proc`` and reap it; raise :class:`Timeout` if it is still there after ``timeout`` s."""
    os.kill(proc.pid, signal.SIGKILL)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Timeout(f"process {proc.pid} still running {timeout:.0f} s after SIGKILL") from None


def _cli(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "harness.cli", *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=dict(os.environ, PYTHONPATH=str(ROOT)))


def controller(args) -> int:
    """The one controller: ``--rounds`` runs in this process, one JSON line per finished round."""
    from harness.run import RunConfig, execute_run
    from harness.runner import BackendSpec

    config = RunConfig(suites=[args.suite], backends=[BackendSpec("reference"), BackendSpec("onnxruntime")], jobs=2,
                       store=Path(args.store), corpus=Path(args.corpus), recycle_after=args.recycle_after)
    store = Store(config.store)
    for k in range(args.rounds):
        outcome = execute_run(config, store, say=lambda m: None)
        executions = sum(sum(c.values()) for c in outcome.counts.values())
        outcomes = {f"{b} {o}": n for b, c in outcome.counts.items() for o, n in sorted(c.items())}
        print(json.dumps({"round": k + 1, "pid": os.getpid(), "run_id": outcome.run_id, "executions": executions,
                          "outcomes": outcomes, "rss_kib": _rss_kib(os.getpid())}), flush=True)
    return 0


def soak_rounds(corpus: Path, store: Path, rounds: int, recycle_after: int, timeout: float,
                suite: str = "onnx-node") -> tuple[list[dict], list[tuple[float, int, int]], list[float]]:
    """Run the controller; (its per-round lines, RSS samples, the time each round ended)."""
    cmd = [sys.executable, __file__, "--controller", "--rounds", str(rounds), "--corpus", str(corpus), "--store", str(store),
           "--recycle-after", str(recycle_after), "--suite", suite]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    sampler = Sampler(proc.pid)
    sampler.start()
    lines: list[dict] = []
    ends: list[float] = []
    other: list[str] = []

    def read() -> None:
        for text in proc.stdout:
            if not text.startswith("{"):
                other.append(text.rstrip())  # shown if the controller fails
                continue
            line = json.loads(text)
            lines.append(line)
            ends.append(time.time())
            print(f"round {line['round']}/{rounds}: {line['executions']} executions, controller pid {line['pid']}, "
                  f"RSS {line['rss_kib'] / 1024:.0f} MiB at its end", file=sys.stderr, flush=True)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_and_wait(proc, 30)
        raise Timeout(f"the controller did not finish {rounds} rounds in {timeout:.0f} s ({len(lines)} done)") from None
    finally:
        sampler.stop.set()
    reader.join(30)
    if code != 0 or len(lines) != rounds:
        raise RuntimeError(f"the controller exited {code} after {len(lines)} of {rounds} rounds" + "".join(f"\n  {x}" for x in other[-20:]))
    return lines, sampler.samples, ends


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--executions", type=int, default=20000)
    parser.add_argument("--corpus", default="corpus")
    parser.add_argument("--recycle-after", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=4 * 3600, help="seconds for all rounds together")
    parser.add_argument("--kill-timeout", type=float, default=600, help="seconds for each wait around the kill -9")
    parser.add_argument("--controller", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--suite", default="onnx-node", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.controller:
        return controller(args)
    corpus = Path(args.corpus).resolve()
    ensure_corpus(SuiteContext(corpus=corpus, say=print))
    n_cases = sum(1 for _ in iter_corpus_cases(corpus, ["onnx-node"]))
    rounds = max(2, round(args.executions / (2 * n_cases)))
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "soak.sqlite"
        t0 = time.time()
        lines, samples, ends = soak_rounds(corpus, store, rounds, args.recycle_after, args.timeout)
        pids = {x["pid"] for x in lines}
        print(f"outcomes of the last round: {lines[-1]['outcomes']}")
        rss = ", ".join(f"{x['rss_kib'] / 1024:.0f}" for x in lines)
        print(f"executions: {sum(x['executions'] for x in lines)} in {time.time() - t0:.0f} s, {len(lines)} rounds, "
              f"{len(pids)} controller process(es); controller RSS at the end of each round: "
              f"{rss} MiB")
        # like for like: the peaks of the first and of the last round of the same controller
        first = [r for r in samples if r[0] <= ends[0]]
        last = [r for r in samples if ends[-2] < r[0] <= ends[-1]]
        peak = lambda rows, i: max([r[i] for r in rows] or [0]) / 1024  # noqa: E731
        print(f"controller peak RSS: first round {peak(first, 1):.0f} MiB, last round {peak(last, 1):.0f} MiB "
              f"({peak(last, 1) / max(peak(first, 1), 1e-9):.2f}x)")
        print(f"worker peak RSS:     first round {peak(first, 2):.0f} MiB, last round {peak(last, 2):.0f} MiB "
              f"({peak(last, 2) / max(peak(first, 2), 1e-9):.2f}x)")

        # kill -9 in the middle of a run, then --resume
        kill_store = Path(tmp) / "kill.sqlite"
        cmd = ["run", "--suite", "onnx-node", "--backend", "reference", "--backend", "onnxruntime", "-j", "2",
               "--corpus", str(corpus), "--store", str(kill_store)]
        proc = _cli(cmd)

        def stored() -> int:
            try:
                return Store(kill_store).db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
            except sqlite3.Error:  # the store is not created yet
                return 0

        try:
            wait_until(lambda: stored() >= n_cases or proc.poll() is not None, args.kill_timeout, "half of the kill run")
        except Timeout:
            kill_and_wait(proc, 30)
            raise
        if proc.poll() is not None:
            raise RuntimeError(f"the run to be killed ended by itself (exit {proc.returncode}) before half of its results")
        kill_and_wait(proc, 30)
        before = {(r["case_id"], r["backend"]) for r in Store(kill_store).results(1)}
        resume = _cli(["run", "--resume", "--store", str(kill_store)])
        try:
            resume.wait(timeout=args.kill_timeout)
        except subprocess.TimeoutExpired:
            kill_and_wait(resume, 30)
            raise Timeout(f"--resume did not finish in {args.kill_timeout:.0f} s") from None
        rows = [(r["case_id"], r["backend"]) for r in Store(kill_store).results(1)]
        expected = {(c.id, b) for c in iter_corpus_cases(corpus, ["onnx-node"]) for b in ("reference", "onnxruntime")}
        lost = len(expected - set(rows)) + len(before - set(rows))
        duplicated = len(rows) - len(set(rows))
        print(f"kill -9 after {len(before)} results, then --resume (exit {resume.returncode}): {len(rows)} stored, "
              f"{lost} lost, {duplicated} duplicated (target 0, 0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
