"""The official ONNX suites on ONNX Runtime, three ways in one run, with ratios.

1. our runner from the frozen corpus (isolated worker processes, -j 2, store and bundles);
2. a bare single-process loop over the same corpus: the cases as the runner selects them, each
   model loaded, checked and re-stamped by the runner's own functions (Case.load_model,
   intake.check_model, Case.load_data, schema.negotiate), serialized once, InferenceSession with
   one thread, run, np.allclose (the floor set by ONNX Runtime itself);
3. onnx's own pytest backend runner (onnx.backend.test.BackendTest with onnxruntime.backend).

    python benchmarks/official_suite.py [--corpus corpus] [--jobs 2] [--rounds 3] [--skip-pytest]

(1) and (2) run side by side ``--rounds`` times, alternating which goes first (the machine may be
shared: compare within a round). Targets: (1) within 1.15x of (2) / cores, where cores is
min(--jobs, cores of this machine); (1) at least 10x faster than (3).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.intake import Limits, check_model  # noqa: E402
from harness.run import RunConfig, execute_run, select_cases  # noqa: E402
from harness.runner import cores  # noqa: E402
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


def ours(corpus: Path, jobs: int, workdir: Path) -> tuple[float, dict, float]:
    config = RunConfig(suites=["onnx"], backends=[BackendSpec("onnxruntime")], jobs=jobs, store=workdir / "bench.sqlite", corpus=corpus)
    store = Store(config.store)
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


def bare_loop(corpus: Path) -> tuple[float, dict, float]:
    """One process, one ONNX Runtime thread: one core's work, as each of our workers gets one
    core at -j 2 on two cores (ORT's default pool would spin a thread per core here)."""
    import onnxruntime as ort

    ort.set_default_logger_severity(4)
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    counts = {"pass": 0, "fail": 0}
    c0, t0 = time.process_time(), time.perf_counter()
    for case in select_cases(RunConfig(suites=["onnx"], backends=[], corpus=corpus), say=lambda m: None):
        try:
            model = bare_model(case)
            data = case.load_data(model)
            sess = ort.InferenceSession(model.SerializeToString(), sess_options=options,  # the one serialization
                                        providers=["CPUExecutionProvider"])
            names = [o.name for o in sess.get_outputs()]
            ok = True
            for ds in data:
                outs = sess.run(names, ds.inputs)
                for e, a in zip(ds.expected or [], outs):
                    e, a = np.asarray(e), np.asarray(a)
                    if e.dtype.kind in "fc":
                        ok &= e.shape == a.shape and np.allclose(a, e, rtol=case.tolerance.rtol, atol=case.tolerance.atol, equal_nan=True)
                    else:
                        ok &= e.shape == a.shape and bool(np.all(e == a))
            counts["pass" if ok else "fail"] += 1
        except Exception:
            counts["fail"] += 1
    return time.perf_counter() - t0, counts, time.process_time() - c0


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
    args = parser.parse_args()
    corpus = Path(args.corpus)
    ensure_corpus(SuiteContext(corpus=corpus, say=print))
    used = min(args.jobs, cores())
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for n in range(args.rounds):
            sides = {}
            for side in (("bare", "ours") if n % 2 == 0 else ("ours", "bare")):
                if side == "bare":
                    sides["bare"] = bare_loop(corpus)
                    print(f"round {n + 1}: bare loop (1 process):        {sides['bare'][0]:6.2f} s  {sides['bare'][1]}  CPU {sides['bare'][2]:.2f} s", flush=True)
                else:
                    sides["ours"] = ours(corpus, args.jobs, workdir / f"round-{n}")
                    print(f"round {n + 1}: our runner (-j {args.jobs}, isolated): {sides['ours'][0]:6.2f} s  {sides['ours'][1]}  CPU {sides['ours'][2]:.2f} s", flush=True)
            (t_bare, c_bare, cpu_bare), (t_ours, c_ours, cpu_ours) = sides["bare"], sides["ours"]
            ratio = t_ours / (t_bare / used)
            rounds.append({"bare_s": t_bare, "ours_s": t_ours, "ratio_to_ideal": ratio, "bare_cpu_s": cpu_bare, "ours_cpu_s": cpu_ours,
                           "cpu_ratio": cpu_ours / cpu_bare, "load_average": os.getloadavg()})
            print(f"round {n + 1}: ours / (bare / {used} cores): {ratio:5.2f}x  (target <= 1.15); CPU seconds ours / bare: "
                  f"{cpu_ours / cpu_bare:5.2f}x (what the machine's load does not move); load average {os.getloadavg()[0]:.1f}", flush=True)
        t_pytest, s_pytest = (None, "skipped") if args.skip_pytest else onnx_pytest_runner(workdir)
        if t_pytest is not None:
            print(f"onnx pytest backend runner:   {t_pytest:6.2f} s  {s_pytest}", flush=True)
    ratios = sorted(r["ratio_to_ideal"] for r in rounds)
    median = ratios[len(ratios) // 2] if len(ratios) % 2 else (ratios[len(ratios) // 2 - 1] + ratios[len(ratios) // 2]) / 2
    print()
    print(f"ours / (bare / {used} cores): median {median:5.2f}x over {len(rounds)} round(s) {[round(r, 2) for r in ratios]}  (target <= 1.15)")
    cpu = sorted(r["cpu_ratio"] for r in rounds)
    print(f"CPU seconds ours / bare: median {cpu[len(cpu) // 2]:5.2f}x {[round(r, 2) for r in cpu]}")
    print(f"ours / bare loop:   {rounds[-1]['ours_s'] / rounds[-1]['bare_s']:5.2f}x  (last round)")
    if t_pytest is not None:
        print(f"pytest runner / ours: {t_pytest / rounds[-1]['ours_s']:5.1f}x faster  (target >= 10)")
    if args.json:
        Path(args.json).write_text(json.dumps({"rounds": rounds, "median_ratio_to_ideal": median, "cores_used": used, "pytest_s": t_pytest,
                                               "ours": c_ours, "bare": c_bare, "pytest": s_pytest}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
