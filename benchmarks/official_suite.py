"""The official ONNX suites on ONNX Runtime, four ways in one run, with ratios.

1. our runner from the frozen corpus (isolated worker processes, -j 2, store and bundles), its
   fork server started and its imports done before the clock starts (as the bare loop's imports);
2. a bare single-process loop over the same corpus: the cases as the runner selects them, each
   case's digest checked, its model loaded, checked and re-stamped by the runner's own functions
   (case.verify_folder, Case.load_model, intake.check_model, Case.load_data, schema.negotiate),
   serialized once, InferenceSession with one thread, run, np.allclose (the floor set by ONNX
   Runtime itself);
3. as many bare loops at once as (1) has cores, taking the cases from one shared count: the
   floor this machine really gives n processes, which (2) / cores cannot show (two busy cores
   share caches, memory bandwidth and the boost clock a lone core gets);
4. onnx's own pytest backend runner (onnx.backend.test.BackendTest with onnxruntime.backend).

    python benchmarks/official_suite.py [--corpus corpus] [--jobs 2] [--rounds 3] [--skip-pytest]

(1) to (3) run side by side ``--rounds`` times, each going first in turn (the machine may be
shared: compare within a round). Targets: (1) within 1.15x of (2) / cores, where cores is
min(--jobs, cores of this machine); (1) at least 10x faster than (4). Printed beside them: (1)
over (3), the runner's own overhead, and (3) over (2) / cores, the machine's scaling.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.case import verify_folder  # noqa: E402
from harness.intake import Limits, check_model  # noqa: E402
from harness.run import RunConfig, execute_run, select_cases  # noqa: E402
from harness.timing import cores  # noqa: E402
from harness.runner import BackendSpec  # noqa: E402
from harness.schema import negotiate  # noqa: E402
from harness.store import Store  # noqa: E402
from harness.suites import SuiteContext, ensure_corpus  # noqa: E402


def cpu_seconds() -> float:
    """CPU seconds of this process, its reaped children, and the multiprocessing forkserver with
    the workers it reaped (the runner's workers are the forkserver's children, not ours)."""
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    total = sum(u.ru_utime + u.ru_stime for u in usage)
    try:
        from multiprocessing import forkserver

        pid = forkserver._forkserver._forkserver_pid
        if pid:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime
    except (OSError, AttributeError, ValueError) as exc:
        print(f"forkserver CPU time not counted: {exc}", file=sys.stderr)
    return total


def warm_forkserver() -> None:
    """Start the runner's fork server and let it finish its imports (numpy, onnx, the harness,
    ONNX Runtime), as the command line does first thing: the clock of our side starts after them,
    as the bare loop's starts after its own imports."""
    from harness import forkserver

    forkserver.start(["onnxruntime"])
    process = forkserver.context().Process(target=len, args=((),))
    process.start()
    process.join()


def ours(corpus: Path, jobs: int, workdir: Path) -> tuple[float, dict, float]:
    return timed_run(RunConfig(suites=["onnx"], backends=[BackendSpec("onnxruntime")], jobs=jobs, store=workdir / "bench.sqlite",
                               corpus=corpus))


def timed_run(config: RunConfig) -> tuple[float, dict, float]:
    """Our run of ``config`` on ONNX Runtime, the fork server warm: wall seconds, the outcome
    counts, CPU seconds (ours and our workers')."""
    store = Store(config.store)
    warm_forkserver()
    c0, t0 = cpu_seconds(), time.perf_counter()
    outcome = execute_run(config, store, say=lambda m: None)
    elapsed = time.perf_counter() - t0
    return elapsed, dict(outcome.counts["onnxruntime"]), cpu_seconds() - c0


def bare_model(case):
    """The model as our runner hands it to ONNX Runtime: loaded and checked by the runner's
    intake, re-stamped by the same negotiation (lowest opset and IR version at which every node
    keeps its schema)."""
    model = case.load_model()
    check_model(model, Limits(), case.model_size())
    return negotiate(model)[0]


def bare_loop(corpus: Path, counter: str | None = None) -> tuple[float, dict, float]:
    """One process, one ONNX Runtime thread: one core's work, as each of our workers gets one
    core at -j 2 on two cores (ORT's default pool would spin a thread per core here). With
    ``counter`` (a file several bare loops share), the cases biggest first, as our runner orders
    them, and each loop takes the next case not yet taken: a shared count under a file lock."""
    ort, options = one_thread_ort()
    counts = {"pass": 0, "fail": 0}
    c0, t0 = time.process_time(), time.perf_counter()
    # as the runner: selected without hashing, each case's digest checked as it is loaded
    cases = select_cases(RunConfig(suites=["onnx"], backends=[], corpus=corpus), say=lambda m: None, verify=False)
    if counter:
        cases = _taken_in_turn(sorted(cases, key=lambda c: -c.model_size()), counter)
    for case in cases:
        verify_folder(case)  # a corpus that does not match stops the benchmark, as it stops a run
        try:
            model = bare_model(case)
            data = case.load_data(model)
            sess = ort.InferenceSession(model.SerializeToString(), sess_options=options,  # the one serialization
                                        providers=["CPUExecutionProvider"])
            counts["pass" if bare_passes(sess, data, case.tolerance) else "fail"] += 1
        except Exception:
            counts["fail"] += 1
    return time.perf_counter() - t0, counts, time.process_time() - c0


def one_thread_ort():
    """ONNX Runtime, silenced, and session options of one thread (intra- and inter-op)."""
    import onnxruntime as ort

    ort.set_default_logger_severity(4)
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    return ort, options


def bare_passes(sess, data, tolerance) -> bool:
    """The bare loop's verdict on one case: every output of every input set has the expected
    shape and, within the case's rtol and atol (NaN equal to NaN), its values; exact for other
    kinds than float and complex."""
    names = [o.name for o in sess.get_outputs()]
    ok = True
    for ds in data:
        outs = sess.run(names, ds.inputs)
        for e, a in zip(ds.expected or [], outs):
            e, a = np.asarray(e), np.asarray(a)
            if e.dtype.kind in "fc":
                ok &= e.shape == a.shape and np.allclose(a, e, rtol=tolerance.rtol, atol=tolerance.atol, equal_nan=True)
            else:
                ok &= e.shape == a.shape and bool(np.all(e == a))
    return ok


def _taken_in_turn(cases: list, counter: str):
    """The cases this process takes: each the next one no process sharing ``counter`` took."""
    import fcntl

    with open(counter, "r+b") as fh:
        while True:
            fcntl.flock(fh, fcntl.LOCK_EX)
            fh.seek(0)
            index = int.from_bytes(fh.read(8), "little")
            fh.seek(0)
            fh.write((index + 1).to_bytes(8, "little"))
            fh.flush()
            fcntl.flock(fh, fcntl.LOCK_UN)
            if index >= len(cases):
                return
            yield cases[index]


def bare_parallel(corpus: Path, n: int, workdir: Path, script: str = __file__) -> tuple[float, float]:
    """The machine's own floor at ``n`` cores: ``n`` bare loops at once in ``n`` processes sharing
    the cases (imports done, started together; each takes the next case, as our workers do);
    (wall seconds from the first start to the last end, CPU seconds of all). Two cores running
    at once share caches, memory bandwidth and the clock boost a lone core gets: this is what
    bare / cores cannot show. ``script`` is the benchmark whose ``--bare-share`` child runs a share
    (operators_suite.py uses this too)."""
    counter = workdir / "bare-counter"
    counter.write_bytes((0).to_bytes(8, "little"))
    procs = [subprocess.Popen([sys.executable, script, "--corpus", str(corpus), "--bare-share", str(counter)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(n)]
    for p in procs:
        if p.stdout.readline().strip() != "ready":
            raise RuntimeError("a bare loop process did not start")
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    shares = [json.loads(p.communicate()[0]) for p in procs]
    if any(p.returncode for p in procs):
        raise RuntimeError("a bare loop process failed")
    return max(s["end"] for s in shares) - min(s["start"] for s in shares), sum(s["cpu"] for s in shares)


def bare_share(corpus: Path, counter: str, loop=None) -> int:
    """A child of :func:`bare_parallel`: says ready, waits for go, runs its share of ``loop``
    (default :func:`bare_loop`), prints times (perf_counter is the system's monotonic clock:
    comparable between processes)."""
    print("ready", flush=True)
    sys.stdin.readline()
    start = time.perf_counter()
    _, counts, cpu = (loop or bare_loop)(corpus, counter)
    print(json.dumps({"start": start, "end": time.perf_counter(), "cpu": cpu, "counts": counts}), flush=True)
    return 0


def onnx_pytest_runner(workdir: Path) -> tuple[float, str]:
    test_file = workdir / "test_onnx_backend_ort.py"
    test_file.write_text(textwrap.dedent("""
        import onnx.backend.test
        import onnxruntime as ort
        import onnxruntime.backend as backend
        ort.set_default_logger_severity(4)
        globals().update(onnx.backend.test.BackendTest(backend, __name__).test_cases)
    """))
    env = dict(os.environ, ONNX_HOME=str(workdir / "onnx_home"))
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
                          capture_output=True, text=True, cwd=workdir, env=env)
    elapsed = time.perf_counter() - t0
    summary = (done.stdout.strip().splitlines() or ["?"])[-1]
    return elapsed, summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="corpus")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1, help="side-by-side rounds of (1) and (2), alternating order (default 1)")
    parser.add_argument("--skip-pytest", action="store_true", help="skip onnx's pytest runner (about a minute)")
    parser.add_argument("--json", help="also write the numbers here")
    parser.add_argument("--bare-share", help=argparse.SUPPRESS)  # a counter file: one process of the parallel bare floor
    args = parser.parse_args()
    corpus = Path(args.corpus)
    if args.bare_share:
        return bare_share(corpus, args.bare_share)
    ensure_corpus(SuiteContext(corpus=corpus, say=print))
    used = min(args.jobs, cores())
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for n in range(args.rounds):
            sides = {}
            order = ["bare", "parallel", "ours"] if used > 1 else ["bare", "ours"]
            for side in order[n % len(order):] + order[:n % len(order)]:  # each side goes first in turn
                if side == "bare":
                    sides["bare"] = bare_loop(corpus)
                    print(f"round {n + 1}: bare loop (1 process):        {sides['bare'][0]:6.2f} s  {sides['bare'][1]}  CPU {sides['bare'][2]:.2f} s", flush=True)
                elif side == "parallel":
                    sides["parallel"] = bare_parallel(corpus, used, workdir)
                    print(f"round {n + 1}: {used} bare loops at once:       {sides['parallel'][0]:6.2f} s  CPU {sides['parallel'][1]:.2f} s", flush=True)
                else:
                    sides["ours"] = ours(corpus, args.jobs, workdir / f"round-{n}")
                    print(f"round {n + 1}: our runner (-j {args.jobs}, isolated): {sides['ours'][0]:6.2f} s  {sides['ours'][1]}  CPU {sides['ours'][2]:.2f} s", flush=True)
            (t_bare, c_bare, cpu_bare), (t_ours, c_ours, cpu_ours) = sides["bare"], sides["ours"]
            t_par = sides["parallel"][0] if "parallel" in sides else t_bare
            ratio = t_ours / (t_bare / used)
            rounds.append({"bare_s": t_bare, "ours_s": t_ours, "parallel_bare_s": t_par, "ratio_to_ideal": ratio,
                           "ratio_to_parallel": t_ours / t_par, "scaling": t_par / (t_bare / used), "bare_cpu_s": cpu_bare,
                           "ours_cpu_s": cpu_ours, "cpu_ratio": cpu_ours / cpu_bare, "load_average": os.getloadavg()})
            print(f"round {n + 1}: ours / (bare / {used} cores): {ratio:5.2f}x  (target <= 1.15); ours / {used} bare loops at once: "
                  f"{t_ours / t_par:5.2f}x; {used} bare loops at once / (bare / {used}): {t_par / (t_bare / used):5.2f}x (the machine's own "
                  f"scaling); CPU seconds ours / bare: {cpu_ours / cpu_bare:5.2f}x; load average {os.getloadavg()[0]:.1f}", flush=True)
        t_pytest, s_pytest = (None, "skipped") if args.skip_pytest else onnx_pytest_runner(workdir)
        if t_pytest is not None:
            print(f"onnx pytest backend runner:   {t_pytest:6.2f} s  {s_pytest}", flush=True)
    ratios = sorted(r["ratio_to_ideal"] for r in rounds)
    median = statistics.median(ratios)
    print()
    print(f"ours / (bare / {used} cores): median {median:5.2f}x over {len(rounds)} round(s) {[round(r, 2) for r in ratios]}  (target <= 1.15)")
    for key, what in (("ratio_to_parallel", f"ours / {used} bare loops at once"), ("scaling", f"{used} bare loops at once / (bare / {used})"),
                      ("cpu_ratio", "CPU seconds ours / bare")):
        values = sorted(r[key] for r in rounds)
        print(f"{what}: median {statistics.median(values):5.2f}x {[round(v, 2) for v in values]}")
    print(f"ours / bare loop:   {rounds[-1]['ours_s'] / rounds[-1]['bare_s']:5.2f}x  (last round)")
    if t_pytest is not None:
        print(f"pytest runner / ours: {t_pytest / rounds[-1]['ours_s']:5.1f}x faster  (target >= 10)")
    if args.json:
        Path(args.json).write_text(json.dumps({"rounds": rounds, "median_ratio_to_ideal": median, "cores_used": used, "pytest_s": t_pytest,
                                               "ours": c_ours, "bare": c_bare, "pytest": s_pytest}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
