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

  side by side with NNSmith 0.1.0 (measured here, in its own virtual environment, made by hand
  and named by NNSMITH_VENV or --nnsmith-venv; skipped, said so, without one): tests/s of both
  fuzzers on ONNX Runtime, <= 10 nodes, the same seconds each, and their ratio; both fuzzers'
  reports judged the same way (ONNX Runtime's outputs, and NNSmith's torch eager ones, against
  our references composed over the graph: who is wrong) and deduplicated by root cause

    python benchmarks/fuzz.py                  # about 8 minutes
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
from typing import Any, NamedTuple

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
#: NNSmith's virtual environment, made by hand (this benchmark installs nothing):
#:   python -m venv DIR; DIR/bin/pip install "nnsmith[onnx]" onnxruntime torch==2.13.0
NNSMITH_VENV_VAR = "NNSMITH_VENV"
NNSMITH_SETUP = 'python -m venv DIR; DIR/bin/pip install "nnsmith[onnx]" onnxruntime torch==2.13.0'
#: run in NNSmith's python before its command line, in its process only (its files stay as
#: installed): torch 2.13's torch.onnx.export defaults to the dynamo exporter, which NNSmith
#: 0.1.0's models do not go through (every dtype probe fails and its operator set is empty);
#: onnx >= 1.17 has no onnx._serialize, which its ONNX Runtime backend calls
NNSMITH_FIXES = """
import runpy, sys
import onnx, torch.onnx
_export = torch.onnx.export
def _legacy_export(*args, **kwargs):
    kwargs.setdefault("dynamo", False)
    return _export(*args, **kwargs)
torch.onnx.export = _legacy_export
if not hasattr(onnx, "_serialize"):
    onnx._serialize = lambda model: model.SerializeToString()
module = sys.argv[1]
sys.argv = [module] + sys.argv[2:]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


class NNSmithUnavailable(Exception):
    """NNSmith cannot run here; the message says why and how to set it up."""


def nnsmith_python(venv: Path | None) -> tuple[Path, str]:
    """NNSmith's python and the versions it runs with; :class:`NNSmithUnavailable` when there is
    no such environment (nothing is installed here)."""
    import subprocess

    how = f"make one with: {NNSMITH_SETUP}; then set {NNSMITH_VENV_VAR}=DIR or pass --nnsmith-venv DIR"
    if venv is None:
        raise NNSmithUnavailable(f"no NNSmith environment named ({NNSMITH_VENV_VAR} is not set); {how}")
    python = Path(venv) / "bin" / "python"
    if not python.exists():
        raise NNSmithUnavailable(f"no virtual environment at {venv} (no bin/python); {how}")
    check = subprocess.run([str(python), "-c", "import importlib.metadata as m; "
                            "print(*(m.version(p) for p in ('nnsmith', 'torch', 'onnxruntime', 'onnx', 'z3-solver')))"],
                           capture_output=True, text=True)
    if check.returncode:
        raise NNSmithUnavailable(f"{python} cannot report NNSmith's packages: {check.stderr.strip()[-300:]}; {how}")
    names = ("nnsmith", "torch", "onnxruntime", "onnx", "z3-solver")
    return python, ", ".join(f"{n} {v}" for n, v in zip(names, check.stdout.split()))


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


def start_nnsmith(python: Path, seconds: int, max_nodes: int, root: Path, seed: int) -> Any:
    """NNSmith's fuzzer on ONNX Runtime for ``seconds``, started in the background (after its
    dtype probe, which makes its operator set, has run)."""
    import subprocess

    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    common = ["model.type=onnx", "backend.type=onnxruntime", f"hydra.run.dir={root / 'hydra'}"]
    probe = subprocess.run([str(python), "-c", NNSMITH_FIXES, "nnsmith.cli.dtype_test", *common], env=env, cwd=root,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=1800)
    if probe.returncode:
        raise RuntimeError(f"NNSmith's dtype_test exited {probe.returncode}: {probe.stderr.strip()[-800:]}")
    cmd = [str(python), "-c", NNSMITH_FIXES, "nnsmith.cli.fuzz", f"fuzz.time={seconds}s", *common,
           f"mgen.max_nodes={max_nodes}", f"fuzz.root={root / 'out'}", f"fuzz.seed={seed}"]
    proc = subprocess.Popen(cmd, env=env, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    proc.probe_log = probe.stderr
    proc.cpu_before = _children_cpu()
    return proc


def _children_cpu() -> float:
    """CPU seconds of this process's finished children (NNSmith's, once it has been waited for)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def finish_nnsmith(proc: Any, seconds: int, root: Path) -> dict:
    """Wait for NNSmith; its numbers read from its output folder, its reports judged by
    :func:`judge_nnsmith_report`."""
    _, err = proc.communicate(timeout=seconds + 900)
    cpu = _children_cpu() - proc.cpu_before
    log_file = root / "hydra" / "fuzz.log"
    if proc.returncode or not log_file.exists():
        raise RuntimeError(f"NNSmith exited {proc.returncode}: {err.strip()[-800:]}")
    tests, failed_make, loop_s = nnsmith_log_counts(log_file.read_text())
    if tests == 0 and failed_make:
        cache = re.search(r"topset from (\S+?)\.?\s", proc.probe_log)
        raise RuntimeError(f"NNSmith made no test case ({failed_make} attempts failed): its operator set is empty; "
                           f"delete its cached set {cache.group(1) if cache else '(~/.cache/nnsmith-*)'} and run again")
    slowest = max((float(m.group(1)) + float(m.group(2)) for m in re.finditer(r"Timing: gen: ([\d.]+)ms, eval: ([\d.]+)ms",
                                                                             log_file.read_text())), default=0.0) / 1000
    reports = [judge_nnsmith_report(folder) for folder in sorted((root / "out").glob("bug-*"))]
    return {"tests": tests, "seconds": loop_s, "cpu": cpu, "made": tests + failed_make, "reports": reports, "slowest": slowest,
            "not_run": sum(1 for r in reports if r.stage in ("compilation", "execution"))}


# -- judging a report: both fuzzers the same way -----------------------------------------------
#: who a report shows wrong, by the composed reference (our operator references over the graph)
#: onnxruntime wrong: a node of it off ours when run alone on our values (or the graph off with
#: its optimizations only, every node right alone); torch off: its output off ours where ONNX Runtime's node is right alone
#: (torch's nodes cannot be run alone here); rounding: ONNX Runtime off only through rounding a
#: later step magnifies, no node of it wrong alone, torch within
ORT_WRONG, TORCH_WRONG, BOTH_OFF, AGREE = "onnxruntime wrong", "torch off", "both off ours", "both within tolerance"
ROUNDING, MISSING, ORT_ERROR, UNJUDGED = "rounding", "missing kernel", "onnxruntime error", "unjudged"
#: ONNX Runtime's first diverging node, run alone, keeps a reading and the invariants of the node's
#: spec-silent points (what our campaign's judge calls ``unspecified``, never a finding)
SILENT = "spec-silent reading"
VERDICTS = (ORT_WRONG, TORCH_WRONG, BOTH_OFF, ROUNDING, SILENT, AGREE, MISSING, ORT_ERROR, UNJUDGED)


class Judged(NamedTuple):
    """One bug report, judged: ``root`` is its root cause, what it is deduplicated by (who is
    wrong, op-version and dtype of the first diverging node, outcome, message signature)."""

    verdict: str
    root: tuple[str, ...]
    detail: str
    where: str = ""
    stage: str = ""


_MISSING_KERNEL = re.compile(r"Could not find an implementation for (\w+)\((\d+)\) node with name '([^']*)'")


def _dtype_at(model: Any, node_name: str) -> str:
    """The element type of the first input of the node named ``node_name`` (from the graph's
    declared and inferred types), or '?'."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception as exc:  # the type is only a label of the root cause: said, not guessed
        return f"? ({type(exc).__name__})"
    types = {v.name: v.type.tensor_type.elem_type for v in [*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output]}
    types.update({t.name: t.data_type for t in inferred.graph.initializer})
    node = next((n for n in inferred.graph.node if n.name == node_name), None)
    if node is None or not node.input or not types.get(node.input[0]):
        return "?"
    return onnx.helper.tensor_dtype_to_np_dtype(types[node.input[0]]).name


def judge_nnsmith_report(folder: Path) -> Judged:
    """A ``bug-*`` folder of NNSmith, judged by the composed reference as our own findings are."""
    import json

    import onnx

    from harness.generated.judge import kind_of, symptom_of

    meta = json.loads((folder / "meta.json").read_text()) if (folder / "meta.json").exists() else {}
    stage = meta.get("stage", "?")
    log = "".join(p.read_text(errors="replace") for p in sorted(folder.glob("*.log")))
    model = onnx.load(folder / "model.onnx") if (folder / "model.onnx").exists() else None
    if meta.get("symptom") == "exception":
        missing = _MISSING_KERNEL.search(log)
        if missing:
            op, since, name = missing.groups()
            dtype = _dtype_at(model, name) if model is not None else "?"
            return Judged(MISSING, ("onnxruntime", f"{op}-{since} {dtype}", "unsupported", "NOT_IMPLEMENTED"),
                          missing.group(0), folder.name, stage)
        outcome = "rejected" if stage == "compilation" else "error"
        last = next((line for line in reversed(log.splitlines()) if line.strip()), "")
        ops = "+".join(sorted({n.op_type for n in model.graph.node})) if model is not None else "?"
        return Judged(ORT_ERROR, ("onnxruntime", ops, outcome, kind_of(symptom_of(outcome, last))), last[:300], folder.name, stage)
    if model is None or not (folder / "oracle.pkl").exists():
        return Judged(UNJUDGED, ("?", "?", "?", "no model or oracle in the report"), "", folder.name, stage)
    import pickle

    with open(folder / "oracle.pkl", "rb") as fh:
        oracle = pickle.load(fh)
    return judge_difference(model, oracle["input"], oracle["output"], folder.name, stage)


def judge_difference(model: Any, inputs: dict[str, Any], torch_outputs: dict[str, Any], where: str = "", stage: str = "") -> Judged:
    """ONNX Runtime (every graph optimization, as NNSmith runs it) and torch eager's outputs
    (``torch_outputs``, NNSmith's oracle) against our references composed over ``model``."""
    import numpy as np
    import onnxruntime as ort

    from harness.case import Tolerance
    from harness.compare import Comparator
    from harness.generated.judge import kind_of, symptom_of
    from harness.registry import spec_silent_points
    from harness.localize import (_all_outputs, _apply, _compare, _graph, _node_info, _one_node, _with_outputs, reference_steps,
                                  value_tolerance)

    g = _graph(model)
    steps = reference_steps(g)
    lacking = [s for s in steps if isinstance(s, str)]
    if lacking:
        return Judged(UNJUDGED, ("?", "?", "?", lacking[0]), lacking[0], where, stage)
    env: dict[str, Any] = {**g.initializers, **{k: np.asarray(v) for k, v in inputs.items()}}
    try:
        for node, step in zip(g.nodes, steps):
            env.update((o, y) for o, y in zip(node.output, _apply(step, node, env)) if o)
    except Exception as exc:  # our reference refusing these values: the report stays unjudged, said why
        why = f"our reference raised {type(exc).__name__}: {exc}"[:300]
        return Judged(UNJUDGED, ("?", "?", "?", why), why, where, stage)
    producer = {o: k for k, node in enumerate(g.nodes) for o in node.output if o}
    order = sorted((n for n in torch_outputs if n in producer), key=lambda n: producer[n])

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    opts.log_severity_level = 4

    def ort_run(model_bytes: bytes, names: list[str], feeds: dict[str, Any] = inputs, optimize: bool = True) -> dict[str, Any]:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimize else ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        session = ort.InferenceSession(model_bytes, opts, providers=["CPUExecutionProvider"])
        return dict(zip(names, session.run(names, {i.name: np.asarray(feeds[i.name]) for i in session.get_inputs()})))

    def off(name: str, actual: Any) -> Any:
        expected = env[name]
        v = _compare(expected, np.asarray(actual), value_tolerance(expected, g.depth.get(name, 1), Tolerance(0.0, 0.0)))
        return None if v.outcome in ("pass", "unspecified") else v

    def root(side: str, name: str, v: Any, suffix: str = "") -> tuple[str, ...]:
        info = _node_info(g, producer[name], env)
        dtype = str(np.asarray(env[name]).dtype)
        return (side, f"{info.op}-{info.since}{suffix} {dtype}", v.outcome, kind_of(symptom_of(v.outcome, v.message, v.__dict__)))

    silent: list[tuple[tuple[str, ...], str]] = []

    def wrong_alone(name: str) -> Any:
        """ONNX Runtime's node that makes ``name``, run alone on our values: its divergence, or
        None; a divergence at the node's spec-silent points is judged by them, as our campaign's
        judge does (kept in ``silent`` when a reading and every invariant hold)."""
        k = producer[name]
        one, feeds = _one_node(g, k, env)
        outs = [o for o in g.nodes[k].output if o]
        got = ort_run(one.SerializeToString(), outs, feeds)
        v = off(name, got[name])
        if v is None or v.outcome != "mismatch":
            return v
        ref, attrs = steps[k]
        since = _node_info(g, k, env).since
        ins = [env[i] if i else None for i in g.nodes[k].input]
        expected = [env[o] for o in outs]
        points = [p for p in spec_silent_points(g.nodes[k].op_type, since) if p.reached(ins, attrs, expected, since)]
        if not points:
            return v
        tol = value_tolerance(env[name], g.depth.get(name, 1), Tolerance(0.0, 0.0))
        with np.errstate(all="ignore"):
            again = Comparator().spec_silent(v, points, ins, attrs, expected, [got[o] for o in outs], tol, since, ref)
        if again.outcome == "unspecified":
            silent.append((root("onnxruntime", name, v, " (spec-silent)"), again.message))
            return None
        return again

    try:
        theirs = ort_run(model.SerializeToString(), order)
    except Exception as exc:  # NNSmith ran it; here it fails: shown as an error of the runtime
        return Judged(ORT_ERROR, ("onnxruntime", "?", "error", type(exc).__name__), str(exc)[:300], where, stage)
    torch_bad = next(((n, v) for n in order if (v := off(n, torch_outputs[n])) is not None), None)
    ort_bad = next(((n, v) for n in order if (v := off(n, theirs[n])) is not None), None)
    ort_root = None
    if ort_bad is not None:
        # the first node ONNX Runtime gets wrong run alone on our values, of those whose output
        # diverges with every value a graph output; where none diverges so, the graph
        # optimizations that hiding the values allows, when the output is right without them;
        # anything else is rounding carried into a step (Floor, Cast to an integer, ArgMax)
        # that magnifies it
        names = _all_outputs(g)
        exposed = ort_run(_with_outputs(g.model, g.nodes, names, g.types), names)
        diverging = [(n, v) for n in names if n in exposed and (v := off(n, exposed[n])) is not None]
        confirmed = next(((n, v) for n, v in diverging if wrong_alone(n) is not None), None)
        if confirmed is not None:
            ort_root = root("onnxruntime", *confirmed)
        elif not diverging and off(ort_bad[0], ort_run(model.SerializeToString(), [ort_bad[0]], optimize=False)[ort_bad[0]]) is None:
            ort_root = root("onnxruntime", *ort_bad, suffix=" (optimized only)")
    if ort_bad is None and torch_bad is None:
        return Judged(AGREE, ("-", "-", "pass", "within our tolerance"), "", where, stage)
    if ort_root is not None and torch_bad is None:
        return Judged(ORT_WRONG, ort_root, ort_bad[1].message[:300], where, stage)
    if silent and ort_root is None and torch_bad is None:
        return Judged(SILENT, silent[0][0], silent[0][1][:300], where, stage)
    if ort_root is not None:
        return Judged(BOTH_OFF, ("both",) + ort_root[1:], f"onnxruntime: {ort_bad[1].message[:200]}; torch: {torch_bad[1].message[:200]}",
                      where, stage)
    if torch_bad is not None:
        return Judged(TORCH_WRONG, root("torch", *torch_bad), torch_bad[1].message[:300], where, stage)
    return Judged(ROUNDING, root("onnxruntime", *(diverging or [ort_bad])[0], suffix=" (rounding)"), ort_bad[1].message[:300], where, stage)


def judge_our_finding(finding: Any) -> Judged:
    """One of our campaign's findings, under the same root-cause key: its minimal graph's
    op-versions and dtype, outcome, message signature (the judge's kind)."""
    g, f = finding.graph, finding.failure
    verdict = MISSING if f.outcome == "unsupported" else ORT_WRONG if f.outcome == "mismatch" or f.kind.startswith(("optimized", "opt-vs")) else ORT_ERROR
    return Judged(verdict, (f.group, f"{'+'.join(g.op_versions)} {g.dtype}", f.outcome, f.kind), f.message[:300],
                  finding.bundle or finding.case_id or "", "")


#: seconds our fuzzer may shrink one disagreement side by side at most (shrinking waits for the
#: end of the window: harness.generated.campaign.SHRINK_SHARE of it at most is kept for it)
SHRINK_S = 20


def run_ours_side_by_side(seconds: int, max_nodes: int, seed: int = 5) -> dict:
    """Our fuzzer for ``seconds`` of wall time on ONNX Runtime in this process (as NNSmith runs
    it), with the counts that set it beside NNSmith's."""
    from harness.generated.campaign import Campaign, FuzzConfig, expand_backends
    from harness.generated.spec import GenConfig

    config = FuzzConfig(backends=expand_backends(["onnxruntime"], {}), gen=GenConfig(max_nodes=max_nodes),
                          budget_s=seconds, seed=seed, isolate=False, shrink_s=SHRINK_S)
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
    t0, cpu0 = time.monotonic(), time.process_time()
    report = campaign.run()
    wall, cpu = time.monotonic() - t0, time.process_time() - cpu0
    s = report.stats
    tested = [v for k, v in calls.items() if k < s.tested]
    return {"tests": s.tested, "seconds": wall, "cpu": cpu, "made": s.graphs, "valid": s.valid, "not_run": sum(v[1] for v in tested),
            "raw": sum(v[0] for v in tested), "gen_rate": s.rate, "reports": [judge_our_finding(f) for f in report.findings]}


def by_root(reports: list[Judged]) -> dict[str, dict[tuple[str, ...], list[Judged]]]:
    """verdict -> root cause -> the reports of it."""
    out: dict[str, dict[tuple[str, ...], list[Judged]]] = {v: {} for v in VERDICTS}
    for r in reports:
        out[r.verdict].setdefault(r.root, []).append(r)
    return out


def side_by_side(seconds: int, max_nodes: int, venv: Path | None, keep: Path | None = None, seed: int = 5) -> None:
    """Both fuzzers in the same wall-clock window, side by side (NNSmith in its own process,
    ours in this one, on the same core): the machine's other load falls on both alike."""
    import tempfile

    try:
        python, versions = nnsmith_python(venv)
    except NNSmithUnavailable as exc:
        print(f"side by side with NNSmith: skipped: {exc}")
        return
    with tempfile.TemporaryDirectory(prefix="nnsmith-") as tmp:
        root = Path(keep) if keep else Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        proc = start_nnsmith(python, seconds, max_nodes, root, seed)
        try:
            ours = run_ours_side_by_side(seconds, max_nodes, seed)
        except BaseException:
            proc.kill()  # ours failed: NNSmith's half of the comparison is of no use
            raise
        theirs = finish_nnsmith(proc, seconds, root)
    theirs["raw"] = len(theirs["reports"])
    print(f"side by side on ONNX Runtime (CPU), <= {max_nodes} nodes, the same {seconds} s window on one core shared by both, "
          f"seed {seed}; NNSmith with {versions}")
    from harness.generated.campaign import SHRINK_EACH, SHRINK_SHARE

    print(f"  tests/s: differential tests finished / wall seconds of the fuzzing loop (ours: shrinking included: testing "
          f"stops {SHRINK_EACH:g} s per distinct disagreement waiting, at most {100 * SHRINK_SHARE:g}% of the window, before "
          f"its end, and each is shrunk for at most {SHRINK_S} s); "
          "tests/cpu-s: the same per CPU second of the fuzzer's processes, startup included (the machine's other load "
          "does not count there)")
    print("  ran on ORT: share of tested models ONNX Runtime loaded and ran without an error")
    print("  raw: reports before deduplication (NNSmith: its bug-* folders; ours: tested graphs with a failure)")
    print("  both fuzzers' reports judged the same way: ONNX Runtime's outputs (and NNSmith's torch eager ones) against our "
          "references composed over the graph; deduplicated by root cause (who is wrong, op-version and dtype of the first "
          "diverging node, outcome, message signature)")
    rows = [("ours", ours), ("NNSmith", theirs)]
    print(f"  {'fuzzer':<8} {'tests':>6} {'seconds':>8} {'tests/s':>8} {'cpu-s':>7} {'tests/cpu-s':>11} {'ran on ORT':>10} {'raw':>5}  "
          + "  ".join(f"{v:>{max(6, len(v))}}" for v in VERDICTS))
    grouped = {}
    for name, r in rows:
        grouped[name] = by_root(r["reports"])
        ran = 1 - r["not_run"] / max(1, r["tests"])
        print(f"  {name:<8} {r['tests']:>6} {r['seconds']:>8.1f} {r['tests'] / max(r['seconds'], 1e-9):>8.1f} {r['cpu']:>7.1f} "
              f"{r['tests'] / max(r['cpu'], 1e-9):>11.1f} {100 * ran:>9.1f}% "
              f"{r['raw']:>5}  " + "  ".join(f"{len(grouped[name][v]):>{max(6, len(v))}}" for v in VERDICTS))
    rate = {name: r["tests"] / max(r["seconds"], 1e-9) for name, r in rows}
    per_cpu = {name: r["tests"] / max(r["cpu"], 1e-9) for name, r in rows}
    print(f"  tests/s ratio ours / NNSmith: {rate['ours'] / max(rate['NNSmith'], 1e-9):.2f}x (target >= 3x), per CPU second "
          f"{per_cpu['ours'] / max(per_cpu['NNSmith'], 1e-9):.2f}x; ours without "
          f"the time it spent shrinking (NNSmith does not shrink): {ours['gen_rate']:.1f} tests/s; NNSmith's slowest test "
          f"took {theirs['slowest']:.1f} s (it checks its budget between tests)")
    for name, _ in rows:
        for verdict in (ORT_WRONG, BOTH_OFF, TORCH_WRONG, ROUNDING, SILENT, MISSING, ORT_ERROR, UNJUDGED):
            for key, items in sorted(grouped[name][verdict].items()):
                print(f"  {name} {verdict}: {' | '.join(key)} ({len(items)} reports, e.g. {items[0].where}): {items[0].detail[:160]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--nnsmith-seconds", type=int, default=None, help="seconds each fuzzer runs side by side (default 120, --quick 60)")
    parser.add_argument("--nnsmith-venv", type=Path, default=os.environ.get(NNSMITH_VENV_VAR) or None,
                        help=f"NNSmith's virtual environment, made by hand: {NNSMITH_SETUP} (default: env {NNSMITH_VENV_VAR}; "
                             "without one the side-by-side run is skipped, said so)")
    parser.add_argument("--seed", type=int, default=5, help="seed of both fuzzers side by side (default 5)")
    parser.add_argument("--nnsmith-keep", type=Path, help="keep NNSmith's output (its bug reports) in this folder")
    parser.add_argument("--no-nnsmith", action="store_true", help="skip the side-by-side run with NNSmith")
    parser.add_argument("--only-nnsmith", action="store_true", help="only the side-by-side run with NNSmith")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core, for the fuzzer and its child
    scale = 0.25 if args.quick else 1.0

    t0 = time.perf_counter()
    if not args.no_nnsmith:
        side_by_side(args.nnsmith_seconds or (60 if args.quick else 120), 10, args.nnsmith_venv, args.nnsmith_keep, args.seed)
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
