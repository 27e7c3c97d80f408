"""``--executor ray`` against the local runner, on ONNX Runtime, in one run, with ratios.

1. Overhead at equal cores: the same cases (the official suites plus the operators suite by
   default) with the local runner at ``-j C`` and on a local Ray cluster of C worker nodes of
   one CPU each (the head node has none, so it only hosts the controller's connection), for
   each C in ``--cores``; the per-case overhead ratio is Ray's wall time over the local one.
2. Scaling: the Ray run on 1..N worker nodes (``--nodes``). On a machine with fewer cores than
   nodes, the extra nodes are oversubscribed: they share the cores, and the table says so.
3. Where a difference comes from: the two runners alone (no store) on one CPU, Ray with one
   task in flight per CPU (as the local runner works) and with its usual queue.
4. The controller's ingest ceiling: tasks that return a prepared result at once (no backend),
   as fast as the workers can send them, stored one transaction per result by the same
   controller loop (``RayRunner.run``); beside it, the store alone (no Ray) and Ray alone (no
   store), so the bottleneck is visible.

    python benchmarks/ray_scaling.py [--corpus corpus] [--suite onnx --suite operators] [-k PATTERN]
                                     [--cores 1,2] [--nodes 1,2,4] [--ingest 3000]

The local Ray cluster is ray.cluster_utils.Cluster: one raylet per node on this machine, as
``ray start --head --num-cpus 0`` plus ``ray start --address ... --num-cpus 1`` per node would give.
Needs the [ray] extra.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ray  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from harness.case import Case  # noqa: E402
from harness.worker import Result  # noqa: E402
from harness.executors import ray as ray_executor  # noqa: E402
from harness.run import RunConfig, execute_run, select_cases  # noqa: E402
from harness.runner import BackendSpec, Runner  # noqa: E402
from harness.timing import cores  # noqa: E402
from harness.store import Store  # noqa: E402


def _cluster(nodes: int) -> Cluster:
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    for _ in range(nodes):
        cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    return cluster


@dataclass
class Timing:
    total: float  # the whole run: select the cases, start or join Ray, probe, run, store
    run: float  # from the first task sent to the last result stored: the per-case cost
    cases: int


def sweep(args: argparse.Namespace, workdir: Path, label: str, **kw) -> tuple[Timing, dict[tuple[str, str], str]]:
    # one ONNX Runtime thread per worker on both sides: -j C local workers and C one-CPU Ray tasks
    # (left unset, -j 1 here would give its one worker every core's thread, and spin them)
    config = RunConfig(suites=args.suite, backends=[BackendSpec("onnxruntime", {"threads": 1})], pattern=args.k, corpus=Path(args.corpus),
                       store=workdir / f"{label}.sqlite", **kw)
    store = Store(config.store)
    marks = {}

    def progress(total: int):  # called once the cases are selected and the backend probed
        marks["run"] = time.perf_counter()
        return None

    t0 = time.perf_counter()
    outcome = execute_run(config, store, say=lambda m: None, progress=progress)
    end = time.perf_counter()
    rows = {(r["case_id"], r["backend"]): r["outcome"] for r in store.results(outcome.run_id)}
    store.close()
    return Timing(end - t0, end - marks["run"], len(rows)), rows


def ray_sweep(args, workdir: Path, nodes: int) -> tuple[Timing, dict]:
    cluster = _cluster(nodes)
    try:
        return sweep(args, workdir, f"ray-{nodes}", executor="ray", ray_address=cluster.address)
    finally:
        cluster.shutdown()


def queueing(args, nodes: int) -> list[list]:
    """The runners alone (no store), Ray with one task in flight per CPU (as the local runner
    sends a worker its next case only once it has the last result) and with its usual queue."""
    cases = select_cases(RunConfig(suites=args.suite, backends=[], pattern=args.k, corpus=Path(args.corpus)), say=lambda m: None)
    specs = [BackendSpec("onnxruntime", {"threads": 1})]
    tasks = [(c, "onnxruntime") for c in cases]

    def per_case(runner) -> float:
        got: list = []
        t0 = time.perf_counter()
        runner.run(tasks, got.append)
        assert len(got) == len(tasks)
        return 1e3 * (time.perf_counter() - t0) / len(tasks)

    results: dict[str, list[float]] = {}
    cluster = _cluster(nodes)
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        for _ in range(args.rounds):  # interleaved: a shared machine's load drifts between runs
            results.setdefault(f"local runner -j {nodes}", []).append(per_case(Runner(specs, jobs=nodes)))
            for window, label in ((nodes, "one task in flight per CPU"), (None, "queued (default: 2 per CPU, at least 8)")):
                results.setdefault(f"Ray, {label}", []).append(per_case(ray_executor.RayRunner(specs, say=lambda m: None, window=window)))
    finally:
        ray.shutdown()
        cluster.shutdown()
    return [[label] + [f"{x:.1f}" for x in times] for label, times in results.items()]


# -- ingest ceiling -------------------------------------------------------------------------
_VERDICT = {"max_abs": 0.0, "max_rel": 0.0, "max_ulp": 0, "bad_count": 0, "first_bad": None, "message": "ok"}


def _instant(setup, case: Case, name: str, threads: int) -> Result:
    """A stand-in for ``_run_case``: the result a fast case sends, without running anything."""
    return Result(case.id, name, "pass", "", dict(_VERDICT), 0.001, 0.0001, tags=dict(case.tags))


def ingest(n: int, workdir: Path, nodes: int) -> dict[str, float]:
    cases = [Case(id=f"ingest/case{i}", suite="ingest", model_bytes=b"", tags={"op": "Relu", "dtype": "float32"}) for i in range(n)]
    out: dict[str, float] = {}
    store = Store(workdir / "ingest-store.sqlite")
    run_id = store.start_run("ingest", {}, {})
    t0 = time.perf_counter()
    for case in cases:
        store.add_result(run_id, _instant(None, case, "x", 1))
    out["store alone"] = n / (time.perf_counter() - t0)
    store.close()

    cluster = _cluster(nodes)
    real = ray_executor._run_case
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        spec = BackendSpec("x")
        for label, with_store in (("Ray alone (no store)", False), ("Ray + store (the controller)", True)):
            store = Store(workdir / f"ingest-{with_store}.sqlite")
            run_id = store.start_run("ingest", {}, {})
            ray_executor._run_case = _instant
            runner = ray_executor.RayRunner([spec], say=lambda m: None)
            on_result = (lambda r: store.add_result(run_id, r)) if with_store else (lambda r: None)
            runner.run([(c, "x") for c in cases[:1]], on_result)  # warm the workers up
            t0 = time.perf_counter()
            runner.run([(c, "x") for c in cases[1:]], on_result)
            out[label] = (n - 1) / (time.perf_counter() - t0)
            store.close()
        # the controller's own cost per result (fetch, unpickle, store): results arrive 100 per task,
        # so the workers' per-task cost (the limit above on a small machine) is out of the way
        store = Store(workdir / "ingest-batched.sqlite")
        run_id = store.start_run("ingest", {}, {})
        batch = ray.remote(lambda ids: [_instant(None, Case(id=i, suite="ingest", model_bytes=b""), "x", 1) for i in ids])
        ids = [c.id for c in cases]
        t0 = time.perf_counter()
        pending = [batch.remote(ids[k:k + 100]) for k in range(0, n, 100)]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for result in ray.get(ready[0]):
                store.add_result(run_id, result)
        out["controller alone (100 results per task)"] = n / (time.perf_counter() - t0)
        store.close()
    finally:
        ray_executor._run_case = real
        ray.shutdown()
        cluster.shutdown()
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", default="corpus")
    p.add_argument("--suite", action="append", help="suites to sweep (default: onnx and operators)")
    p.add_argument("-k", help="only cases whose id matches (a smaller sweep)")
    p.add_argument("--cores", default="1,2", help="core counts for the side-by-side (local -j C vs C Ray nodes)")
    p.add_argument("--nodes", default="1,2,4", help="Ray worker nodes for the scaling table")
    p.add_argument("--ingest", type=int, default=3000, help="results for the ingest ceiling (0: skip)")
    p.add_argument("--no-queue", dest="queue", action="store_false", help="skip the runners-alone comparison")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the runners-alone comparison (default 3)")
    args = p.parse_args()
    args.suite = args.suite or ["onnx", "operators"]
    here = cores()
    work = Path(tempfile.mkdtemp(prefix="ray-scaling-"))
    from tabulate import tabulate

    print(f"machine: {here} core(s) for this process; ray {ray.__version__}; suites {', '.join(args.suite)} on onnxruntime"
          + (f", -k {args.k}" if args.k else ""), flush=True)
    select_cases(RunConfig(suites=args.suite, backends=[], pattern=args.k, corpus=Path(args.corpus)), say=lambda m: None)  # warm caches
    ray_times: dict[int, Timing] = {}
    rows = []
    for c in [int(x) for x in args.cores.split(",")]:
        local, local_rows = sweep(args, work, f"local-{c}", jobs=c)
        remote, ray_rows = ray_sweep(args, work, c)
        ray_times[c] = remote
        same = sum(local_rows.get(k) == v for k, v in ray_rows.items())
        n = local.cases
        rows.append([c, n, f"{local.total:.1f}", f"{remote.total:.1f}", f"{1e3 * local.run / n:.1f}", f"{1e3 * remote.run / remote.cases:.1f}",
                     f"{remote.run / local.run:.2f}", f"{same}/{n}"])
        print(f"  cores {c}: local {local.total:.1f} s (run {local.run:.1f} s), ray {remote.total:.1f} s (run {remote.run:.1f} s)", flush=True)
    print("\n## Ray vs the local runner at equal cores\n")
    print("total: the whole run (select, start or join Ray, probe, run, store); per case: the run phase (first task sent "
          "to last result stored) over the cases; ratio: Ray's run phase over the local one\n")
    print(tabulate(rows, headers=["cores", "cases", "local total s", "ray total s", "local ms/case", "ray ms/case", "ray/local",
                                  "same outcome"], tablefmt="github"))

    scale = []
    for nodes in [int(x) for x in args.nodes.split(",")]:
        if nodes not in ray_times:
            ray_times[nodes] = ray_sweep(args, work, nodes)[0]
            print(f"  ray {nodes} node(s): run {ray_times[nodes].run:.1f} s", flush=True)
    base = ray_times[min(ray_times)].run
    for nodes in sorted(ray_times):
        t = ray_times[nodes]
        note = f"oversubscribed: {nodes} nodes on {here} cores" if nodes > here else ""
        scale.append([nodes, t.cases, f"{t.run:.1f}", f"{t.cases / t.run:.1f}", f"{base / t.run:.2f}", note])
    print("\n## Scaling on Ray worker nodes of 1 CPU each (run phase)\n")
    print(tabulate(scale, headers=["nodes", "cases", "run s", "cases/s", f"speed-up vs {min(ray_times)}", ""], tablefmt="github"))

    if args.queue:
        rows = queueing(args, nodes=1)
        print("\n## Where the difference comes from: the runners alone (no store), 1 CPU\n")
        print(tabulate(rows, headers=["runner"] + [f"ms/case, round {i + 1}" for i in range(args.rounds)], tablefmt="github"))

    if args.ingest:
        rates = ingest(args.ingest, work, nodes=min(2, max(1, here)))
        print(f"\n## The controller's ingest ceiling ({args.ingest} prepared results, one transaction each)\n")
        print(tabulate([[k, f"{v:,.0f}"] for k, v in rates.items()], headers=["path", "results/s"], tablefmt="github"))
    print(f"\nstores in {work}")
    os.environ.pop("RAY_ADDRESS", None)


if __name__ == "__main__":
    main()
