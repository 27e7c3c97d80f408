"""A fixed slice of the operators suite on ONNX Runtime, through our runner and through bare
loops, in one run, with ratios.

The slice (``SLICE``, a ``-k`` pattern): twelve op-versions of several families (elementwise,
convolution, gather, normalization, matmul, reduction, resize, softmax, transpose, where,
reshape), about 3,800 cases of the default draw.

1. our runner, ``-j 2``: isolated worker processes, expectations, store, bundles (its fork server
   warm, as the bare loops' imports are done before their clocks start);
2. one bare loop: the same cases, selected as the runner selects them (the frozen draw), each
   case's model loaded from its bytes, one InferenceSession with one thread, run on each data
   set, np.allclose / equality against the expected outputs;
3. as many bare loops at once as (1) has cores, taking the cases in turn from one shared count:
   what this machine gives that many processes (two busy cores share caches and the clock).

    python benchmarks/operators_suite.py [--corpus corpus] [--jobs 2] [--rounds 3]

Each round runs the three, each going first in turn. Targets: (1) / (3) <= 1.3 in wall time.
Printed beside it: CPU seconds of (1) over (3) (the same parallelism) and over (2), and the load
average; medians and the spread over rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from official_suite import _taken_in_turn, bare_parallel, bare_passes, bare_share, one_thread_ort, timed_run  # noqa: E402

from harness.run import RunConfig, select_cases  # noqa: E402
from harness.runner import BackendSpec  # noqa: E402
from harness.timing import cores  # noqa: E402

SLICE = ("^operators/(Add-14|Conv-22|Gather-13|LayerNormalization-17|MatMul-13|ReduceSum-13|Relu-14|Reshape-21|Resize-19|"
         "Softmax-13|Transpose-21|Where-16)/")


def config(corpus: Path, jobs: int, store: Path) -> RunConfig:
    return RunConfig(suites=["operators"], backends=[BackendSpec("onnxruntime")], pattern=SLICE, jobs=jobs, store=store, corpus=corpus)


def ours(corpus: Path, jobs: int, workdir: Path) -> tuple[float, dict, float]:
    return timed_run(config(corpus, jobs, workdir / "bench.sqlite"))


def bare_loop(corpus: Path, counter: str | None = None) -> tuple[float, dict, float]:
    """One process, one ONNX Runtime thread; with ``counter`` the cases are taken in turn with
    the other processes sharing it, biggest model first, as the runner orders them."""
    ort, options = one_thread_ort()
    counts = {"pass": 0, "fail": 0}
    c0, t0 = time.process_time(), time.perf_counter()
    cases = select_cases(config(corpus, 1, Path("unused")), say=lambda m: None, verify=False)
    if counter:
        cases = _taken_in_turn(sorted(cases, key=lambda c: -c.model_size()), counter)
    for case in cases:
        try:
            sess = ort.InferenceSession(case.model_bytes, sess_options=options, providers=["CPUExecutionProvider"])
            counts["pass" if bare_passes(sess, case.data, case.tolerance) else "fail"] += 1
        except Exception:  # the runtime refusing a case (a known failure) is the bare loop's "fail", counted
            counts["fail"] += 1
    return time.perf_counter() - t0, counts, time.process_time() - c0


def _bare_share(corpus: Path, counter: str) -> int:
    select_cases(config(corpus, 1, Path("unused")), say=lambda m: None, verify=False)  # the frozen draw read once, as imports
    return bare_share(corpus, counter, loop=bare_loop)


def _spread(values: list[float]) -> str:
    values = sorted(values)
    return f"median {statistics.median(values):5.2f}x  (min {values[0]:.2f}, max {values[-1]:.2f}; {[round(v, 2) for v in values]})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="corpus")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="also write the numbers here")
    parser.add_argument("--bare-share", help=argparse.SUPPRESS)
    args = parser.parse_args()
    corpus = Path(args.corpus)
    if args.bare_share:
        return _bare_share(corpus, args.bare_share)
    used = min(args.jobs, cores())
    n_cases = len(select_cases(config(corpus, 1, Path("unused")), say=lambda m: None, verify=False))  # draws the slice once if needed
    print(f"slice: {n_cases:,} cases ({SLICE})")
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for n in range(args.rounds):
            sides: dict[str, tuple] = {}
            order = ["bare", "parallel", "ours"]
            load0 = os.getloadavg()[0]
            for side in order[n % 3:] + order[:n % 3]:
                if side == "bare":
                    sides[side] = bare_loop(corpus)
                    print(f"round {n + 1}: bare loop (1 process):        {sides[side][0]:6.2f} s  {sides[side][1]}  CPU {sides[side][2]:.2f} s", flush=True)
                elif side == "parallel":
                    sides[side] = bare_parallel(corpus, used, workdir, __file__)
                    print(f"round {n + 1}: {used} bare loops at once:       {sides[side][0]:6.2f} s  CPU {sides[side][1]:.2f} s", flush=True)
                else:
                    sides[side] = ours(corpus, args.jobs, workdir / f"round-{n}")
                    print(f"round {n + 1}: our runner (-j {args.jobs}):            {sides[side][0]:6.2f} s  {sides[side][1]}  CPU {sides[side][2]:.2f} s", flush=True)
            (t_bare, _, cpu_bare), (t_par, cpu_par), (t_ours, _, cpu_ours) = sides["bare"], sides["parallel"], sides["ours"]
            load = (load0 + os.getloadavg()[0]) / 2
            r = {"bare_s": t_bare, "parallel_s": t_par, "ours_s": t_ours, "bare_cpu_s": cpu_bare, "parallel_cpu_s": cpu_par, "ours_cpu_s": cpu_ours,
                 "wall_vs_parallel": t_ours / t_par, "cpu_vs_parallel": cpu_ours / cpu_par, "cpu_vs_bare": cpu_ours / cpu_bare,
                 "cases_per_s": n_cases / t_ours, "load_average": load}
            rounds.append(r)
            print(f"round {n + 1}: ours / {used} bare loops at once: {r['wall_vs_parallel']:5.2f}x (target <= 1.3); CPU ours / theirs: "
                  f"{r['cpu_vs_parallel']:5.2f}x; CPU ours / one bare loop: {r['cpu_vs_bare']:5.2f}x; {r['cases_per_s']:.0f} cases/s; "
                  f"load average {load:.1f}", flush=True)
    print()
    for key, what in (("wall_vs_parallel", f"wall: ours / {used} bare loops at once (target <= 1.3)"),
                      ("cpu_vs_parallel", f"CPU seconds: ours / {used} bare loops at once"), ("cpu_vs_bare", "CPU seconds: ours / one bare loop")):
        print(f"{what}: {_spread([r[key] for r in rounds])}")
    print(f"load average over the rounds: {[round(r['load_average'], 1) for r in rounds]} on {cores()} cores")
    if args.json:
        Path(args.json).write_text(json.dumps({"slice": SLICE, "cases": n_cases, "rounds": rounds}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
