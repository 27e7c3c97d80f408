"""The graph fuzzer, measured in one run and set against NNSmith (ASPLOS 2023).

Prints:
  valid-graph rate      share of drawn graphs (at least one node) that pass onnx.checker
                        (full check) and strict shape inference, with the shapes our
                        reference gives; opsets 13 to the newest x float32/16/64, up to 20 nodes
  NaN/Inf-free share    graphs of exactly 10 and 30 nodes (float32, no NaN inputs) whose
                        every intermediate, run on ONNX Runtime, is free of NaN and Inf; with
                        value-aware generation and without it (same specs)
  differential tests/s  graphs drawn, validated, run on ONNX Runtime (optimized and
                        unoptimized sessions, one thread) and judged against the composed
                        reference, per second of generation on one core (shrinking excluded);
                        <= 10 nodes and 30 nodes, in-process and with the backend in a child
                        process
  operator coverage     distinct op-versions drawn, of those with a template and a reference

    python benchmarks/fuzz.py            # about 4 minutes
    python benchmarks/fuzz.py --quick    # about 1 minute
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# NNSmith (ASPLOS 2023), as reported: tests per second on ONNX Runtime and the share of
# 10/20/30-node graphs for which it found NaN/Inf-free inputs
NNSMITH_RATE = (0.7, 3.8)
NNSMITH_NAN_FREE = {10: 0.97, 20: 0.95, 30: 0.86}
TARGET_VALID = 0.995
TARGET_NAN_FREE = {10: 0.97, 30: 0.90}
TARGET_RATE = {10: 50.0, 30: 10.0}


def _specs(n: int, seed: int, min_specs: int, max_specs: int):
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    from harness.suites import generated as G

    out = []

    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @hseed(seed)
    @given(G.graph_specs(min_specs, max_specs))
    def collect(spec):
        out.append(spec)

    collect()
    return out


def validity(n: int) -> tuple[float, int, int, set[str], set[str]]:
    from harness.suites import generated as G

    config = G.GenConfig(max_nodes=20)
    valid = invalid = 0
    drawn: set[str] = set()
    for spec in _specs(n, 11, 10, 40):
        g = G.realize(spec, config)
        if not g.nodes:
            continue
        try:
            G.check_graph(g)
            valid += 1
            drawn.update(node.key for node in g.nodes)
        except G.InvalidGraph:
            invalid += 1
    available = {f"{op}-{since}" for o in config.opsets for d in config.dtypes for op, since in G.available_ops(o, d)}
    return valid / max(1, valid + invalid), valid, invalid, drawn, available


def nan_free(nodes: int, n: int, value_aware: bool) -> tuple[float, float, int, int]:
    """(share reaching ``nodes`` nodes, NaN/Inf-free share of those ONNX Runtime runs, how many
    it ran, how many it cannot run: an op-version it lacks, such as Swish-24)."""
    import onnxruntime as ort

    from harness.suites import generated as G

    ort.set_default_logger_severity(4)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    config = G.GenConfig(max_nodes=nodes, dtypes=("float32",), nan_rate=0.0, value_aware=value_aware)
    reached = ran = clean = 0
    specs = _specs(n, 21 + nodes, 2 * nodes, 3 * nodes)
    for spec in specs:
        g = G.realize(spec, config)
        if len(g.nodes) < nodes:
            continue
        reached += 1
        exposed = G.all_outputs(g)
        try:
            session = ort.InferenceSession(exposed.model().SerializeToString(), opts, providers=["CPUExecutionProvider"])
            outs = session.run(None, exposed.feeds())
        except Exception:
            continue
        ran += 1
        if all(np.isfinite(np.asarray(o, dtype=np.float64)).all() for o in outs if np.asarray(o).dtype.kind == "f"):
            clean += 1
    return reached / max(1, len(specs)), clean / max(1, ran), ran, reached - ran


def throughput(max_nodes: int, graphs: int, isolate: bool, budget: float, min_specs: int | None = None,
               dtypes: tuple[str, ...] = ("float32", "float16", "float64")) -> tuple[float, float, int, float]:
    from harness import fuzz as F
    from harness.suites import generated as G

    specs = F.expand_backends(["onnxruntime"], {})
    config = F.FuzzConfig(backends=specs, gen=G.GenConfig(opsets=tuple(range(13, 27)), dtypes=dtypes, max_nodes=max_nodes),
                          budget_s=budget, seed=5, max_graphs=graphs, isolate=isolate, shrink_s=20, min_specs=min_specs)
    report = F.Campaign(config).run()
    s = report.stats
    return s.rate, s.nodes / max(1, s.valid), s.tested, s.gen_seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core, for the fuzzer and its child
    scale = 0.25 if args.quick else 1.0

    t0 = time.perf_counter()
    rate, valid, invalid, drawn, available = validity(int(2000 * scale))
    print(f"valid-graph rate: {100 * rate:.2f}% ({valid} valid, {invalid} invalid; target >= {100 * TARGET_VALID:.1f}%)")
    print(f"operator coverage: {len(drawn)} distinct op-versions drawn of {len(available)} with a template and a reference "
          f"(cbourjau/onnx-tests: 112 op-versions; NNSmith: 65 operators)")
    missing = sorted(available - drawn)
    if missing:
        print(f"  not drawn in this run: {', '.join(missing)}")

    print("NaN/Inf-free graphs on ONNX Runtime (float32, every intermediate checked):")
    for nodes in (10, 30):
        n = int((600 if nodes == 10 else 300) * scale)
        reach, share, count, lacking = nan_free(nodes, n, True)
        _, share_off, count_off, _ = nan_free(nodes, n, False)
        nn = NNSMITH_NAN_FREE[nodes]
        print(f"  {nodes} nodes: {100 * share:.1f}% of {count} graphs ({100 * reach:.0f}% of draws reached {nodes} nodes; "
              f"{lacking} left out: ONNX Runtime lacks one of their op-versions); without value-aware generation "
              f"{100 * share_off:.1f}% of {count_off}; NNSmith {100 * nn:.0f}% (target >= {100 * TARGET_NAN_FREE[nodes]:.0f}%)")

    print("differential tests per second against ONNX Runtime (optimized + unoptimized sessions, 1 thread, 1 core):")
    rows = [(10, False, None, "<= 10 nodes, in-process"), (10, True, None, "<= 10 nodes, backend in a child process"),
            (30, False, 30, "30 nodes, in-process")]
    for max_nodes, isolate, min_specs, label in rows:
        graphs = int((1500 if max_nodes == 10 else 500) * scale)
        r, mean_nodes, tested, secs = throughput(max_nodes, graphs, isolate, 120 * scale + 30, min_specs)
        lo, hi = NNSMITH_RATE
        target = TARGET_RATE[max_nodes]
        print(f"  {label}: {r:.1f} tests/s ({tested} graphs, {mean_nodes:.1f} nodes on average, {secs:.1f} s); "
              f"{r / hi:.0f}x-{r / lo:.0f}x NNSmith's {lo}-{hi}/s (target >= {target:g}/s)")
    print(f"benchmark time {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
