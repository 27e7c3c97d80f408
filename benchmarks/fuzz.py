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

  side by side with NNSmith 0.1.0 (measured here, in its own virtual environment, see
  nnsmith_python): tests/s, valid share, raw reports and distinct findings of both fuzzers on
  ONNX Runtime, <= 10 nodes, the same seconds each

    python benchmarks/fuzz.py                  # about 8 minutes (plus NNSmith's setup, once)
    python benchmarks/fuzz.py --quick          # about 3 minutes
    python benchmarks/fuzz.py --only-nnsmith   # the side-by-side run alone
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# NNSmith (ASPLOS 2023), reported in the paper (never printed as measured): the share of
# 10/30-node graphs for which it found NaN/Inf-free inputs
NNSMITH_PAPER_NAN_FREE = {10: 0.97, 30: 0.86}
TARGET_VALID = 0.995
TARGET_NAN_FREE = {10: 0.97, 30: 0.90}
TARGET_RATE = {10: 50.0, 30: 10.0}


def _specs(n: int, seed: int, min_specs: int, max_specs: int):
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    from harness.generated.spec import graph_specs

    out = []

    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @hseed(seed)
    @given(graph_specs(min_specs, max_specs))
    def collect(spec):
        out.append(spec)

    collect()
    return out


def validity(n: int) -> tuple[float, int, int, set[str], set[str]]:
    from harness.generated.builder import realize
    from harness.generated.graph import InvalidGraph, available_ops, check_graph
    from harness.generated.spec import GenConfig

    config = GenConfig(max_nodes=20)
    valid = invalid = 0
    drawn: set[str] = set()
    for spec in _specs(n, 11, 10, 40):
        g = realize(spec, config)
        if not g.nodes:
            continue
        try:
            check_graph(g)
            valid += 1
            drawn.update(node.key for node in g.nodes)
        except InvalidGraph:
            invalid += 1
    available = {f"{op}-{since}" for o in config.opsets for d in config.dtypes for op, since in available_ops(o, d)}
    return valid / max(1, valid + invalid), valid, invalid, drawn, available


def nan_free(nodes: int, n: int, value_aware: bool) -> tuple[float, float, int, int]:
    """(share reaching ``nodes`` nodes, NaN/Inf-free share of those ONNX Runtime runs, how many
    it ran, how many it cannot run: an op-version it lacks, such as Swish-24)."""
    import onnxruntime as ort

    from harness.generated.builder import realize
    from harness.generated.shrink import all_outputs
    from harness.generated.spec import GenConfig

    ort.set_default_logger_severity(4)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    config = GenConfig(max_nodes=nodes, dtypes=("float32",), nan_rate=0.0, value_aware=value_aware)
    reached = ran = clean = 0
    specs = _specs(n, 21 + nodes, 2 * nodes, 3 * nodes)
    for spec in specs:
        g = realize(spec, config)
        if len(g.nodes) < nodes:
            continue
        reached += 1
        exposed = all_outputs(g)
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
    from harness.generated.campaign import Campaign, FuzzConfig, expand_backends
    from harness.generated.spec import GenConfig

    specs = expand_backends(["onnxruntime"], {})
    config = FuzzConfig(backends=specs, gen=GenConfig(opsets=tuple(range(13, 27)), dtypes=dtypes, max_nodes=max_nodes),
                          budget_s=budget, seed=5, max_graphs=graphs, isolate=isolate, shrink_s=20, min_specs=min_specs)
    report = Campaign(config).run()
    s = report.stats
    return s.rate, s.nodes / max(1, s.valid), s.tested, s.gen_seconds


# =============================================================================================
# NNSmith, measured here side by side (never a number from its paper printed as measured)
# =============================================================================================
NNSMITH_VENV = Path(os.environ.get("NNSMITH_VENV", Path.home() / ".cache" / "onnx-harness" / "nnsmith-venv"))
NNSMITH_PINS = ["nnsmith==0.1.0", "z3-solver==4.12.6.0", "torch==2.13.0", "onnx", "onnxruntime==1.32.*"]
#: our three compatibility fixes to nnsmith 0.1.0 (relative file, text it has, text it gets).
#: torch 2.13's torch.onnx.export defaults to the dynamo exporter, which nnsmith's models do
#: not go through; onnx >= 1.17 removed onnx._serialize. (The third fix is the z3-solver pin.)
NNSMITH_PATCHES = [
    ("materialize/onnx/__init__.py", "                opset_version=14,\n            )",
     "                opset_version=14,\n                dynamo=False,\n            )"),
    ("backends/onnxruntime.py", "onnx._serialize(model.native_model)", "model.native_model.SerializeToString()"),
]


def patch_text(text: str, old: str, new: str, where: str) -> str:
    """``text`` with ``old`` replaced by ``new``; unchanged when already patched; an error naming
    ``where`` when neither is there (another nnsmith version: the fix must be looked at again)."""
    if new in text:
        return text
    if text.count(old) != 1:
        raise RuntimeError(f"{where}: expected exactly one {old!r} to patch, found {text.count(old)}")
    return text.replace(old, new)


def nnsmith_python(venv: Path) -> Path:
    """The venv's python with nnsmith 0.1.0 and the pins installed and patched (created on first use)."""
    import subprocess

    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating NNSmith's virtual environment at {venv} (a few minutes) ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    check = subprocess.run([str(python), "-c", "import nnsmith, z3, torch, onnxruntime; print(torch.__version__, z3.get_version_string(), onnxruntime.__version__)"],
                           capture_output=True, text=True)
    if check.returncode or not check.stdout.startswith("2.13.0") or " 4.12.6" not in check.stdout or " 1.32." not in check.stdout:
        subprocess.run([str(python), "-m", "pip", "install", "-q", *NNSMITH_PINS], check=True)
    site = subprocess.run([str(python), "-c", "import nnsmith, os; print(os.path.dirname(nnsmith.__file__))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    for rel, old, new in NNSMITH_PATCHES:
        path = Path(site) / rel
        text = path.read_text()
        patched = patch_text(text, old, new, str(path))
        if patched != text:
            path.write_text(patched)
    return python


_MISSING_KERNEL = re.compile(r"Could not find an implementation for (\w+\(\d+\))")
_ORT_STATUS = re.compile(r"\[ONNXRuntimeError\] : \d+ : ([A-Z_]+) :")


def nnsmith_signature(meta: dict, log: str, ops: list[str]) -> tuple[str, ...]:
    """How NNSmith's raw bug reports are deduplicated here: an ONNX Runtime kernel it lacks is
    one finding per op-version ("missing-kernel", "Sin(7)"), whatever the graph around it; any
    other report is one finding per (symptom, stage, ONNX Runtime status if any, sorted set of
    the op types in its model)."""
    missing = _MISSING_KERNEL.search(log)
    if missing:
        return ("missing-kernel", missing.group(1))
    status = _ORT_STATUS.search(log)
    return (meta.get("symptom", "?"), meta.get("stage", "?"), status.group(1) if status else "", ",".join(sorted(set(ops))))


def nnsmith_reports(root: Path) -> list[tuple[tuple[str, ...], str]]:
    """(signature, stage) of every bug report NNSmith wrote under ``root``."""
    import json

    out = []
    for folder in sorted(root.glob("bug-*")):
        meta = json.loads((folder / "meta.json").read_text()) if (folder / "meta.json").exists() else {}
        log = "".join(p.read_text(errors="replace") for p in folder.glob("*.log") if p.is_file())
        ops: list[str] = []
        onnx_files = list(folder.glob("*.onnx"))
        if onnx_files:
            import onnx

            ops = [n.op_type for n in onnx.load(onnx_files[0]).graph.node]
        out.append((nnsmith_signature(meta, log, ops), meta.get("stage", "?")))
    return out


_LOG_TIME = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\]")


def nnsmith_log_counts(log: str) -> tuple[int, int, float]:
    """(tests, models it failed to make, seconds of its fuzzing loop) from NNSmith's fuzz.log:
    its own closing totals, and the time from its first loop line to its last line."""
    from datetime import datetime

    tests = re.search(r"Total (\d+) testcases generated", log)
    failed = re.search(r"Total (\d+) failed to make testcases", log)
    if tests is None or failed is None:
        raise RuntimeError("NNSmith's log has no closing totals: it did not finish (see its fuzz.log)")
    stamps = [datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f") for line in log.splitlines() if (m := _LOG_TIME.match(line))]
    loop = [line for line in log.splitlines() if "Test success info supressed" in line]
    start = datetime.strptime(_LOG_TIME.match(loop[0]).group(1), "%Y-%m-%d %H:%M:%S,%f") if loop else stamps[0]
    return int(tests.group(1)), int(failed.group(1)), (stamps[-1] - start).total_seconds()


def run_nnsmith(python: Path, seconds: int, max_nodes: int, root: Path) -> dict:
    """NNSmith's fuzzer on ONNX Runtime for ``seconds``; its numbers read from its output folder."""
    import subprocess

    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    common = ["model.type=onnx", "backend.type=onnxruntime", f"hydra.run.dir={root / 'hydra'}"]
    probe = subprocess.run([str(python), "-m", "nnsmith.cli.dtype_test", *common], env=env, cwd=root,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=1800)
    if probe.returncode:
        raise RuntimeError(f"NNSmith's dtype_test exited {probe.returncode}: {probe.stderr.strip()[-800:]}")
    cmd = [str(python), "-m", "nnsmith.cli.fuzz", f"fuzz.time={seconds}s", *common, f"mgen.max_nodes={max_nodes}",
           f"fuzz.root={root / 'out'}", "fuzz.seed=5"]
    done = subprocess.run(cmd, env=env, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          timeout=seconds + 600)
    log_file = root / "hydra" / "fuzz.log"
    if done.returncode or not log_file.exists():
        raise RuntimeError(f"NNSmith exited {done.returncode}: {done.stderr.strip()[-800:]}")
    tests, failed_make, loop_s = nnsmith_log_counts(log_file.read_text())
    reports = nnsmith_reports(root / "out")
    # a report at compilation or execution is a model ONNX Runtime could not load or run
    not_run = sum(1 for _, stage in reports if stage in ("compilation", "execution"))
    distinct = {sig for sig, _ in reports}
    return {"tests": tests, "seconds": loop_s, "made": tests + failed_make, "not_run": not_run, "raw": len(reports),
            "distinct": len(distinct), "missing_kernels": sum(1 for s in distinct if s[0] == "missing-kernel"),
            "numeric": sum(1 for s in distinct if s[0] == "inconsistency"),
            "raw_missing": sum(1 for s, _ in reports if s[0] == "missing-kernel"),
            "raw_numeric": sum(1 for s, _ in reports if s[0] == "inconsistency")}


def run_ours_side_by_side(seconds: int, max_nodes: int) -> dict:
    """Our fuzzer for ``seconds`` of wall time on ONNX Runtime in this process (as NNSmith runs
    it), with the counts that set it beside NNSmith's."""
    from harness.generated.campaign import Campaign, FuzzConfig, expand_backends
    from harness.generated.spec import GenConfig

    config = FuzzConfig(backends=expand_backends(["onnxruntime"], {}), gen=GenConfig(max_nodes=max_nodes),
                          budget_s=seconds, seed=5, isolate=False)
    campaign = Campaign(config)
    # which tested graphs ONNX Runtime could not load or run: the tester's call for the k-th
    # tested graph is the last call made while stats.tested == k (tested counts it right after;
    # later calls, for localizing and shrinking, see k + 1)
    calls: dict[int, tuple[bool, bool]] = {}  # tested index -> (failed at all, failed to load/run)
    setup = campaign._setup

    def counting_setup() -> None:
        setup()
        test = campaign.tester.test

        def counted(g, model_bytes, groups=None):
            failures = test(g, model_bytes, groups)
            calls[campaign.stats.tested] = (bool(failures), any(f.outcome != "mismatch" for f in failures))
            return failures

        campaign.tester.test = counted

    campaign._setup = counting_setup
    t0 = time.monotonic()
    report = campaign.run()
    wall = time.monotonic() - t0
    s = report.stats
    tested = [v for k, v in calls.items() if k < s.tested]
    return {"tests": s.tested, "seconds": wall, "made": s.graphs, "valid": s.valid, "not_run": sum(v[1] for v in tested),
            "raw": sum(v[0] for v in tested), "distinct": len(report.findings), "gen_rate": s.rate,
            "kinds": sorted({f"{f.group} {f.kind}" for f in report.findings})}


def side_by_side(seconds: int, max_nodes: int, venv: Path) -> None:
    import tempfile

    python = nnsmith_python(venv)
    ours = run_ours_side_by_side(seconds, max_nodes)
    with tempfile.TemporaryDirectory(prefix="nnsmith-") as tmp:
        theirs = run_nnsmith(python, seconds, max_nodes, Path(tmp))
    print(f"side by side on ONNX Runtime 1.32 (CPU, one core), <= {max_nodes} nodes, {seconds} s each, measured in this run:")
    print("  tests/s: differential tests finished / wall seconds of the fuzzing loop (ours: shrinking included)")
    print("  ran on ORT: share of tested models ONNX Runtime loaded and ran without an error "
          "(NNSmith: no report at its compilation or execution stage; ours: no error/crash outcome)")
    print("  valid: share of generated models that are tested (NNSmith: made and materialized / attempts; "
          "ours: onnx.checker full check + strict shape inference / graphs built)")
    print("  raw reports: tested models with a failure, before deduplication (NNSmith: its bug-* folders)")
    print("  distinct: NNSmith's reports deduplicated here (a missing kernel per op-version; otherwise symptom, stage, "
          "ORT status, op set); ours: the campaign's findings (deduplicated by op pattern, family, kind; shrinking "
          "can add findings beside the one it reduces)")
    rows = [("ours", ours, ours["valid"] / max(1, ours["made"])), ("NNSmith 0.1.0", theirs, theirs["tests"] / max(1, theirs["made"]))]
    print(f"  {'fuzzer':<14} {'tests':>6} {'seconds':>8} {'tests/s':>8} {'valid':>7} {'ran on ORT':>10} {'raw':>5} {'distinct':>8}")
    for name, r, valid in rows:
        ran = 1 - r["not_run"] / max(1, r["tests"])
        print(f"  {name:<14} {r['tests']:>6} {r['seconds']:>8.1f} {r['tests'] / max(r['seconds'], 1e-9):>8.1f} "
              f"{100 * valid:>6.1f}% {100 * ran:>9.1f}% {r['raw']:>5} {r['distinct']:>8}")
    print(f"  NNSmith's reports: {theirs['raw_missing']} raw / {theirs['missing_kernels']} distinct missing ONNX Runtime kernels, "
          f"{theirs['raw_numeric']} raw / {theirs['numeric']} distinct numeric differences against torch eager, "
          f"{theirs['raw'] - theirs['raw_missing'] - theirs['raw_numeric']} raw other")
    print(f"  our findings: {', '.join(ours['kinds']) or 'none'}")
    print(f"  ours without the time it spent shrinking (NNSmith does not shrink): {ours['gen_rate']:.1f} tests/s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--nnsmith-seconds", type=int, default=None, help="seconds each fuzzer runs side by side (default 120, --quick 60)")
    parser.add_argument("--nnsmith-venv", type=Path, default=NNSMITH_VENV, help=f"NNSmith's virtual environment, created on first use (default {NNSMITH_VENV}; env NNSMITH_VENV)")
    parser.add_argument("--no-nnsmith", action="store_true", help="skip the side-by-side run with NNSmith")
    parser.add_argument("--only-nnsmith", action="store_true", help="only the side-by-side run with NNSmith")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core, for the fuzzer and its child
    scale = 0.25 if args.quick else 1.0

    t0 = time.perf_counter()
    if not args.no_nnsmith:
        side_by_side(args.nnsmith_seconds or (60 if args.quick else 120), 10, args.nnsmith_venv)
        if args.only_nnsmith:
            return 0
    rate, valid, invalid, drawn, available = validity(int(2000 * scale))
    print(f"valid-graph rate: {100 * rate:.2f}% ({valid} valid, {invalid} invalid; target >= {100 * TARGET_VALID:.1f}%)")
    print(f"operator coverage: {len(drawn)} distinct op-versions drawn of {len(available)} with a template and a reference "
          f"(reported by those projects, not measured: cbourjau/onnx-tests 112 op-versions, NNSmith 65 operators)")
    missing = sorted(available - drawn)
    if missing:
        print(f"  not drawn in this run: {', '.join(missing)}")

    print("NaN/Inf-free graphs on ONNX Runtime (float32, every intermediate checked):")
    for nodes in (10, 30):
        n = int((600 if nodes == 10 else 300) * scale)
        reach, share, count, lacking = nan_free(nodes, n, True)
        _, share_off, count_off, _ = nan_free(nodes, n, False)
        nn = NNSMITH_PAPER_NAN_FREE[nodes]
        print(f"  {nodes} nodes: {100 * share:.1f}% of {count} graphs ({100 * reach:.0f}% of draws reached {nodes} nodes; "
              f"{lacking} left out: ONNX Runtime lacks one of their op-versions); without value-aware generation "
              f"{100 * share_off:.1f}% of {count_off}; NNSmith {100 * nn:.0f}% reported in the paper (target >= {100 * TARGET_NAN_FREE[nodes]:.0f}%)")

    print("differential tests per second against ONNX Runtime (optimized + unoptimized sessions, 1 thread, 1 core):")
    rows = [(10, False, None, "<= 10 nodes, in-process"), (10, True, None, "<= 10 nodes, backend in a child process"),
            (30, False, 30, "30 nodes, in-process")]
    for max_nodes, isolate, min_specs, label in rows:
        graphs = int((1500 if max_nodes == 10 else 500) * scale)
        r, mean_nodes, tested, secs = throughput(max_nodes, graphs, isolate, 120 * scale + 30, min_specs)
        print(f"  {label}: {r:.1f} tests/s ({tested} graphs, {mean_nodes:.1f} nodes on average, {secs:.1f} s; "
              f"target >= {TARGET_RATE[max_nodes]:g}/s)")
    print(f"benchmark time {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
