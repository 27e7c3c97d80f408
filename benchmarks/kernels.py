"""How fast is the ``kernels`` backend? Measured side by side with onnx.reference and ONNX
Runtime, in one run, and printed as ratios.

Workloads:
  light/<model>/b1, b8   the nine light CNNs shipped in onnx's wheel; inputs are float32
                         arange(n)/n reshaped, unbound dimensions 1 (b1) or 8 (b8)
  op/<Op>                single-operator models: Conv, MaxPool, Softmax, MatMul,
                         LayerNormalization, LSTM
  suite/onnx-node        every official node case: prepare and run, end to end

Configurations: kernels and onnxruntime at 1 thread and at all cores (BLAS threads through
threadpoolctl for kernels, intra_op_num_threads for onnxruntime), onnx.reference at 1 BLAS
thread (it interprets the graph in Python; its ratio is taken against kernels@1). Each
configuration runs in its own long-lived subprocess, so the peak memory of every workload is
the subprocess's peak resident set above what it held before the workload (Linux /proc;
tracemalloc elsewhere, which sees numpy allocations only). The driver hands the workloads
out one at a time, going round the configurations for each, so both sides of a ratio run
under the same load of a shared machine. It prints the geometric mean of kernels/onnxruntime
at 1 thread over the light models, the worst five workloads, the largest memory ratio and
the BLAS each configuration computes with (threadpoolctl).

Warm against warm, passing against passing: every latency is the median of runs after one
untimed warm-up run (a warm run slower than ``--slow`` seconds is measured once); the node
suite times, per case, a warm prepare-and-run of the cases whose outputs match the official
expected outputs (each model re-stamped once beforehand, as our runner does). A ratio compares
only what passes on both sides: the suite sums the cases passing on both; a light model at b1
counts when both match onnx's stored output, and every model or operator workload when both
sides' outputs agree. onnx.reference skips b8 runs whose estimate (8 x b1) is over
``--ref-limit`` seconds.

    python benchmarks/kernels.py            # default run, under ~10 minutes on 2 cores
    python benchmarks/kernels.py --quick    # a smaller set, about 2 minutes
    python benchmarks/kernels.py --only kernels@1,onnxruntime@1 --filter '^light/'
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
LIGHT_MODELS = [
    "bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
    "shufflenet", "squeezenet", "vgg19", "zfnet512",
]
QUICK_MODELS = ["squeezenet", "shufflenet", "resnet50"]
OPS = ["Conv", "MaxPool", "Softmax", "MatMul", "LayerNormalization", "LSTM"]


# -- workloads ------------------------------------------------------------------------------


def _light_dir() -> Path:
    import onnx.backend.test

    return Path(onnx.backend.test.__file__).parent / "data" / "light"


def _arange_feeds(model, batch: int) -> dict[str, np.ndarray]:
    import onnx

    init = {t.name for t in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in init:
            continue
        tt = vi.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else batch for d in tt.shape.dim]
        if shape and not tt.shape.dim[0].HasField("dim_value"):
            shape[0] = batch
        elif shape and batch != 1 and shape[0] == 1:
            shape[0] = batch  # the light models fix the batch to 1; b8 widens it
        n = int(np.prod(shape))
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        feeds[vi.name] = (np.arange(n) / max(n, 1)).astype(dtype).reshape(shape)
    return feeds


def _with_batch(model, batch: int):
    """The model with its input and output batch dimension made symbolic (light models pin 1)."""
    if batch == 1:
        return model
    import onnx

    model = onnx.ModelProto.FromString(model.SerializeToString())
    init = {t.name for t in model.graph.initializer}
    for vi in [*model.graph.input, *model.graph.output]:
        if vi.name in init:
            continue
        dims = vi.type.tensor_type.shape.dim
        if dims and dims[0].HasField("dim_value") and dims[0].dim_value == 1:
            dims[0].dim_param = "N"
    del model.graph.value_info[:]
    # Reshape targets that pin the batch (e.g. [1, -1] before the classifier) follow it
    for node in model.graph.node:
        if node.op_type == "Reshape":
            for t in model.graph.initializer:
                if t.name == node.input[1]:
                    shape = onnx.numpy_helper.to_array(t).copy()
                    if shape.size and shape[0] == 1:
                        shape[0] = 0 if -1 in shape[1:] else -1
                        t.CopyFrom(onnx.numpy_helper.from_array(shape, t.name))
    return model


def _light_passes(name: str, outputs) -> bool:
    """Whether a light model's b1 outputs match the outputs onnx stores for it, at the official
    onnx-light case's tolerance (its data.json)."""
    import onnx

    from harness.case import Tolerance
    from harness.compare import Comparator

    light = _light_dir()
    metas = [json.loads(f.read_text()) for f in sorted((light.parent / "real").glob("*/data.json"))]
    meta = next((m for m in metas if m.get("model_name") == name), None)
    if meta is None:
        return False  # no stored output: nothing to pass against
    expected = [onnx.numpy_helper.to_array(onnx.load_tensor(light / f"light_{name}_output_{k}.pb")) for k in range(len(outputs))]
    return bool(Comparator().compare(expected, [np.asarray(o) for o in outputs], Tolerance.from_dict(meta)))


def _op_model(op: str):
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    F = TensorProto.FLOAT

    def w(name, *shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.05).astype(np.float32), name)

    if op == "Conv":
        node = helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1], kernel_shape=[3, 3])
        inits, x, y = [w("w", 64, 64, 3, 3), w("b", 64)], [1, 64, 56, 56], [1, 64, 56, 56]
    elif op == "MaxPool":
        node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
        inits, x, y = [], [1, 64, 112, 112], [1, 64, 56, 56]
    elif op == "Softmax":
        node = helper.make_node("Softmax", ["x"], ["y"], axis=-1)
        inits, x, y = [], [8, 12, 128, 128], [8, 12, 128, 128]
    elif op == "MatMul":
        node = helper.make_node("MatMul", ["x", "w"], ["y"])
        inits, x, y = [w("w", 1024, 1024)], [512, 1024], [512, 1024]
    elif op == "LayerNormalization":
        node = helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=-1, epsilon=1e-5)
        inits, x, y = [w("s", 768), w("b", 768)], [8, 128, 768], [8, 128, 768]
    elif op == "LSTM":
        hidden = 256
        node = helper.make_node("LSTM", ["x", "W", "R", "B"], ["y"], hidden_size=hidden)
        inits, x, y = [w("W", 1, 4 * hidden, 128), w("R", 1, 4 * hidden, hidden), w("B", 1, 8 * hidden)], [32, 8, 128], [32, 1, 8, hidden]
    else:
        raise ValueError(op)
    graph = helper.make_graph([node], op, [helper.make_tensor_value_info("x", F, x)], [helper.make_tensor_value_info("y", F, y)], inits)
    # IR 8 (onnx 1.11+, opset 17): every runtime under comparison loads it
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _node_suite():
    from harness.suites.onnx_official import collect

    from harness.schema import negotiate

    # re-stamped once, before any timing, as our runner does for every backend
    return [(name, negotiate(model)[0], data, tol) for _, name, model, data, tol in collect(["onnx-node"])]


# -- backends -------------------------------------------------------------------------------


def _preparer(backend: str, threads: int) -> Callable:
    """backend -> function(model) -> function(feeds) -> outputs."""
    if backend == "kernels":
        from harness.backends.kernels import KernelsBackend

        be = KernelsBackend(threads=threads)
        be.load()
        return lambda model: be.prepare(model).run
    if backend == "onnxruntime":
        import onnxruntime as ort

        def prepare(model):
            so = ort.SessionOptions()
            so.intra_op_num_threads = threads
            so.inter_op_num_threads = 1
            so.log_severity_level = 3
            sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
            return lambda feeds: sess.run(None, feeds)

        return prepare
    if backend == "reference":
        from onnx.reference import ReferenceEvaluator

        try:
            import threadpoolctl

            threadpoolctl.threadpool_limits(limits=threads, user_api="blas")
        except ImportError:
            pass

        def prepare(model):
            ev = ReferenceEvaluator(model)
            return lambda feeds: ev.run(None, feeds)

        return prepare
    raise ValueError(backend)


# -- memory ---------------------------------------------------------------------------------


def _release_free_memory() -> None:
    """Collect garbage and hand freed heap pages back to the OS (glibc), so that the resident
    set before a workload is what is still alive."""
    import gc

    gc.collect()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


class PeakMemory:
    """Peak resident memory of this process during a block, above its level at the start."""

    def __init__(self):
        _release_free_memory()
        self.proc = Path("/proc/self/clear_refs").exists()
        if not self.proc:
            import tracemalloc

            self.tracemalloc = tracemalloc

    @staticmethod
    def _status(key: str) -> int:
        text = Path("/proc/self/status").read_text()
        return int(re.search(rf"{key}:\s+(\d+)", text).group(1)) * 1024

    def __enter__(self):
        if self.proc:
            try:
                Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS
            except OSError:
                self.proc = False
                import tracemalloc

                self.tracemalloc = tracemalloc
        if self.proc:
            self.base = self._status("VmRSS")
        else:
            self.tracemalloc.start()
            self.tracemalloc.reset_peak()
            self.base = self.tracemalloc.get_traced_memory()[0]
        return self

    def __exit__(self, *exc):
        if self.proc:
            self.peak = max(self._status("VmHWM") - self.base, 0)
        else:
            self.peak = self.tracemalloc.get_traced_memory()[1] - self.base
            self.tracemalloc.stop()
        return False


# -- the worker: one configuration, many workloads -------------------------------------------


def _time_runs(run: Callable, feeds, reps: int, budget: float, slow: float) -> tuple[list[tuple[float, float]], str, Any]:
    """Timed runs after one untimed warm-up run: ((wall, cpu) seconds of each run, note, the
    warm-up's outputs). A warm run slower than ``slow`` seconds is measured once, still after
    its warm-up. The CPU seconds are the process's (every thread): on a loaded machine they
    leave out the time the run waited for a core, which the wall time counts."""
    outputs = run(feeds)  # warm-up: never timed
    times: list[tuple[float, float]] = []
    start = time.perf_counter()
    while len(times) < reps or (time.perf_counter() - start < budget and len(times) < 50):
        t, c = time.perf_counter(), time.process_time()
        run(feeds)
        times.append((time.perf_counter() - t, time.process_time() - c))
        if times[0][0] > slow:
            return times, "one warm run (slow)", outputs
        if len(times) >= reps and time.perf_counter() - start > budget:
            break
    return times, "", outputs


def _passes(run: Callable, data, tolerance) -> bool:
    """Whether the case's every data set, run now, matches the official expected outputs
    (the harness's comparator, the case's tolerance; no expected outputs: not a pass)."""
    from harness.compare import Comparator

    comparator = Comparator()
    for ds in data:
        if not ds.expected:
            return False
        if not comparator.compare(ds.expected, list(run(ds.inputs)), tolerance):
            return False
    return True


def suite_case_times(prepare: Callable, cases, reps: int) -> tuple[dict[str, float], int, int]:
    """Per passing case, the median seconds of ``reps`` warm prepare-and-run passes (after one
    untimed pass that also decides whether the case passes); (times, failed, raised)."""
    times: dict[str, list[float]] = {}
    failed = raised = 0
    for name, model, data, tolerance in cases:
        try:
            if not _passes(prepare(model), data, tolerance):  # the warm-up pass
                failed += 1
                continue
            for _ in range(reps):
                t = time.perf_counter()
                run = prepare(model)
                for ds in data:
                    run(ds.inputs)
                times.setdefault(name, []).append(time.perf_counter() - t)
        except Exception:  # noqa: BLE001 - a case this backend cannot run is counted and left out of the timing
            raised += 1
    return {name: statistics.median(t) for name, t in times.items()}, failed, raised


def _blas(backend: str, threads: int) -> str:
    """What computes this configuration's matrix products, as threadpoolctl reads numpy's BLAS
    in this process (onnxruntime computes with its own MLAS, whatever numpy loaded)."""
    try:
        import threadpoolctl

        pools = [i for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
    except ImportError:
        pools = []
    numpy_blas = ", ".join(f"{p.get('internal_api')} {p.get('version')} {p.get('architecture') or ''} ({p.get('num_threads')} threads)" for p in pools) or "unknown"
    if backend == "onnxruntime":
        return f"onnxruntime MLAS ({threads} intra-op threads); numpy: {numpy_blas}"
    return numpy_blas


def worker(args) -> None:
    """Runs the workloads named on standard input, one a line, each as soon as it is named,
    and prints one JSON line per workload (the driver alternates the configurations, so that
    every side of a ratio is measured under the same load); the first line says which BLAS."""
    warnings.filterwarnings("ignore")
    np.seterr(all="ignore")
    sys.path.insert(0, str(ROOT))
    prepare = _preparer(args.backend, args.threads)
    import onnx

    print(json.dumps({"blas": _blas(args.backend, args.threads)}), flush=True)
    b1_median: dict[str, float] = {}
    for line in sys.stdin:
        wl = line.strip()
        if not wl:
            continue
        result: dict[str, Any] = {"workload": wl}
        try:
            if wl.startswith("suite/"):
                cases = _node_suite()
                with PeakMemory() as mem:
                    case_s, failed, raised = suite_case_times(prepare, cases, args.suite_reps)
                result.update(median_ms=sum(case_s.values()) * 1000, reps=args.suite_reps, peak_mb=mem.peak / 2**20,
                              case_ms={k: v * 1000 for k, v in case_s.items()},
                              note=f"{len(case_s)} of {len(cases)} cases pass ({failed} fail, {raised} raise)")
            else:
                kind, name, *rest = wl.split("/")
                if kind == "light":
                    batch = int(rest[0][1:])
                    if args.backend == "reference" and batch > 1 and b1_median.get(name, 0) * batch > args.ref_limit:
                        result.update(note=f"skipped: estimated {b1_median[name] * batch:.0f} s > --ref-limit")
                        print(json.dumps(result), flush=True)
                        continue
                    model = _with_batch(onnx.load(_light_dir() / f"light_{name}.onnx"), batch)
                    feeds = _arange_feeds(model, batch)
                else:
                    model = _op_model(name)
                    feeds = _arange_feeds(model, 1)
                with PeakMemory() as mem:
                    run = prepare(model)
                    times, note, outputs = _time_runs(run, feeds, args.reps, args.budget, args.slow)
                if args.outputs:
                    np.savez(Path(args.outputs) / f"{wl.replace('/', '_')}.npz", *[np.asarray(o) for o in outputs])
                median = statistics.median(t for t, _ in times)
                if kind == "light" and rest[0] == "b1":
                    b1_median[name] = median
                    result["passed"] = _light_passes(name, outputs)
                result.update(median_ms=median * 1000, cpu_ms=statistics.median(c for _, c in times) * 1000,
                              reps=len(times), peak_mb=mem.peak / 2**20, note=note)
                del run, model, feeds, outputs
        except Exception as exc:  # a backend that cannot run a workload says so in the table
            result.update(error=f"{type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}")
        print(json.dumps(result), flush=True)


# -- the driver -------------------------------------------------------------------------------


def _configs(cores: int) -> list[tuple[str, str, int]]:
    configs = [("kernels@1", "kernels", 1), ("onnxruntime@1", "onnxruntime", 1)]
    if cores > 1:
        configs += [(f"kernels@{cores}", "kernels", cores), (f"onnxruntime@{cores}", "onnxruntime", cores)]
    # onnx.reference is a Python interpreter of the graph: one thread, compared with kernels@1
    configs.append(("reference@1", "reference", 1))
    return configs


def _workloads(quick: bool) -> list[str]:
    models = QUICK_MODELS if quick else LIGHT_MODELS
    wl = [f"light/{m}/b1" for m in models]
    wl += [f"light/{m}/b8" for m in models]
    wl += [f"op/{op}" for op in OPS]
    wl.append("suite/onnx-node")
    return wl


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def _agree(dir_a: Path, dir_b: Path, wl: str) -> bool:
    """Whether two configurations' saved outputs of ``wl`` agree (rtol 1e-3, atol 1e-3 times
    the largest magnitude); missing outputs do not agree."""
    name = f"{wl.replace('/', '_')}.npz"
    if not (dir_a / name).exists() or not (dir_b / name).exists():
        return False
    with np.load(dir_a / name) as fa, np.load(dir_b / name) as fb:
        if sorted(fa.files) != sorted(fb.files):
            return False
        for key in fa.files:
            a, b = fa[key], fb[key]
            if a.shape != b.shape:
                return False
            if a.dtype.kind in "fc":
                scale = float(np.nanmax(np.abs(b))) if b.size else 0.0
                if not np.allclose(a, b, rtol=1e-3, atol=1e-3 * max(scale, 1e-6), equal_nan=True):
                    return False
            elif not np.array_equal(a, b):
                return False
    return True


def pair_ratio(wl: str, a: dict[str, Any], b: dict[str, Any], dir_a: Path, dir_b: Path) -> float | None:
    """Time of ``a`` over time of ``b`` on ``wl``, over passing runs only: for the suite the sum
    over the cases that pass on both; for a model or operator, only when both pass (a light b1
    model against onnx's stored output) and their outputs agree. None when nothing passes on both."""
    if wl.startswith("suite/"):
        common = set(a.get("case_ms", {})) & set(b.get("case_ms", {}))
        if not common:
            return None
        return _ratio(sum(a["case_ms"][c] for c in common), sum(b["case_ms"][c] for c in common))
    if a.get("passed") is False or b.get("passed") is False or not _agree(dir_a, dir_b, wl):
        return None
    return _ratio(a.get("median_ms"), b.get("median_ms"))


def summary(rows: list[dict[str, Any]], key: str = "kernels/onnxruntime@1", a: str = "kernels@1", b: str = "onnxruntime@1") -> dict[str, Any]:
    """The issue's figures for ``key``: the geometric mean of the ratio over the light models'
    workloads that have one (and how many lack one), the worst five workloads of all, and the
    largest peak-memory ratio ``a``/``b`` over the light workloads."""
    light = [(r["workload"], r["ratios"].get(key)) for r in rows if r["workload"].startswith("light/")]
    counted = [v for _, v in light if v]
    every = sorted(((v, r["workload"]) for r in rows if (v := r["ratios"].get(key))), reverse=True)
    memory = []
    for r in rows:
        ra, rb = r["results"].get(a, {}), r["results"].get(b, {})
        if r["workload"].startswith("light/") and ra.get("peak_mb") and rb.get("peak_mb"):
            memory.append((ra["peak_mb"] / rb["peak_mb"], r["workload"]))
    return {
        "ratio": key,
        "light_geomean": float(np.exp(np.mean(np.log(counted)))) if counted else None,
        "light_counted": len(counted),
        "light_uncounted": [wl for wl, v in light if not v],
        "worst": [{"workload": wl, "ratio": v} for v, wl in every[:5]],
        "light_memory_max": {"workload": max(memory)[1], "ratio": max(memory)[0]} if memory else None,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="three light models, fewer repetitions")
    p.add_argument("--out", default=str(ROOT / "reports" / "bench-kernels.json"))
    p.add_argument("--only", default="", help="comma-separated configuration names to run (default: all)")
    p.add_argument("--filter", default="", help="run only the workloads this regular expression finds (e.g. '^light/')")
    p.add_argument("--reps", type=int, default=None, help="minimum timed runs per workload")
    p.add_argument("--budget", type=float, default=None, help="seconds of timed runs per workload")
    p.add_argument("--slow", type=float, default=3.0, help="a warm run slower than this is measured once (after its warm-up)")
    p.add_argument("--ref-limit", type=float, default=15.0, help="skip reference b8 runs estimated above this (s)")
    # worker mode (internal)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--backend", help=argparse.SUPPRESS)
    p.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--suite-reps", type=int, default=2, help=argparse.SUPPRESS)
    p.add_argument("--outputs", default="", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.reps is None:
        args.reps = 3 if args.quick else 5
    if args.budget is None:
        args.budget = 0.5 if args.quick else 1.5
    if args.worker:
        worker(args)
        return 0

    cores = os.cpu_count() or 1
    configs = _configs(cores)
    if args.only:
        keep = set(args.only.split(","))
        configs = [c for c in configs if c[0] in keep]
    workloads = _workloads(args.quick)
    if args.filter:
        workloads = [wl for wl in workloads if re.search(args.filter, wl)]
    results: dict[str, dict[str, dict[str, Any]]] = {wl: {} for wl in workloads}
    blas: dict[str, str] = {}
    started = time.perf_counter()
    load_start = os.getloadavg()[0]
    outputs_dir = Path(tempfile.mkdtemp(prefix="bench-kernels-"))
    # one long-lived worker per configuration; the driver names one workload at a time and
    # goes round the configurations, so both sides of a ratio run minutes apart at most
    procs: dict[str, subprocess.Popen] = {}
    for label, backend, threads in configs:
        (outputs_dir / label).mkdir()
        cmd = [
            sys.executable, __file__, "--worker", "--backend", backend, "--threads", str(threads),
            "--reps", str(args.reps), "--budget", str(args.budget),
            "--slow", str(args.slow), "--ref-limit", str(args.ref_limit), "--suite-reps", "1" if args.quick else "2",
            "--outputs", str(outputs_dir / label),
        ]
        procs[label] = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
        blas[label] = json.loads(procs[label].stdout.readline() or '{"blas": "worker did not start"}')["blas"]

    def ask(label: str, wl: str) -> dict[str, Any]:
        proc = procs[label]
        if proc.poll() is not None:
            return {"error": f"worker exited with {proc.returncode}"}
        proc.stdin.write(wl + "\n")
        proc.stdin.flush()
        for line in proc.stdout:
            if line.startswith("{"):
                r = json.loads(line)
                r.pop("workload", None)
                return r
        return {"error": f"worker exited with {proc.wait()}"}

    for wl in workloads:
        print(f"[{time.perf_counter() - started:6.0f}s] {wl} ...", file=sys.stderr, flush=True)
        for label, _, _ in configs:
            results[wl][label] = ask(label, wl)
    for proc in procs.values():
        proc.stdin.close()
        proc.wait()

    labels = [c[0] for c in configs]
    k1, kn = "kernels@1", f"kernels@{cores}"
    o1, on = "onnxruntime@1", f"onnxruntime@{cores}"

    def ratio(wl, a, b, cpu=False):
        ra, rb = results[wl].get(a, {}), results[wl].get(b, {})
        if cpu:  # the same comparison of CPU seconds (model and operator workloads)
            if wl.startswith("suite/"):
                return None
            ra, rb = {**ra, "median_ms": ra.get("cpu_ms")}, {**rb, "median_ms": rb.get("cpu_ms")}
        return pair_ratio(wl, ra, rb, outputs_dir / a, outputs_dir / b)

    rows, table = [], []
    for wl in workloads:
        ratios = {
            "reference/kernels@1": ratio(wl, "reference@1", k1),
            "kernels/onnxruntime@1": ratio(wl, k1, o1),
            "kernels/onnxruntime@1 cpu": ratio(wl, k1, o1, cpu=True),
            f"kernels/onnxruntime@{cores}": ratio(wl, kn, on) if cores > 1 else None,
        }
        rows.append({"workload": wl, "results": results[wl], "ratios": ratios})
        cells = []
        for label in labels:
            r = results[wl].get(label, {})
            if "median_ms" in r:
                cells.append(f"{r['median_ms']:.1f} ms / {r['peak_mb']:.0f} MB")
            else:
                cells.append(r.get("error", r.get("note", "-"))[:28])
        cells += ["-" if v is None else f"{v:.2f}x" for v in ratios.values()]
        table.append([wl, *cells])

    headers = ["workload", *labels, "ref/kernels@1", "kernels/ort@1", "kernels/ort@1 cpu", f"kernels/ort@{cores}"]
    try:
        from tabulate import tabulate

        print(tabulate(table, headers=headers, tablefmt="github"))
    except ImportError:
        print("\t".join(headers))
        for row in table:
            print("\t".join(map(str, row)))
    shutil.rmtree(outputs_dir)
    figures = summary(rows, "kernels/onnxruntime@1", k1, o1)
    cpu_figures = summary(rows, "kernels/onnxruntime@1 cpu", k1, o1)
    print()
    for f in (figures, cpu_figures):
        geo = f["light_geomean"]
        print(f"{f['ratio']} over the light models: geo-mean {'-' if geo is None else f'{geo:.2f}x'} "
              f"({f['light_counted']} workloads counted; not counted: {', '.join(f['light_uncounted']) or 'none'})")
        print(f"  worst five: " + ", ".join(f"{w['workload']} {w['ratio']:.2f}x" for w in f["worst"]))
    if figures["light_memory_max"]:
        print(f"largest peak memory kernels/onnxruntime@1 on a light model: {figures['light_memory_max']['ratio']:.2f}x ({figures['light_memory_max']['workload']})")
    for label in labels:
        print(f"BLAS of {label}: {blas[label]}")
    print(f"load average (1 min) at the start and the end: {load_start:.2f}, {os.getloadavg()[0]:.2f}")
    for wl in workloads:
        if wl.startswith("suite/"):
            for label in labels:
                print(f"{wl} on {label}: {results[wl].get(label, {}).get('note', '-')}")
            passing = {label: set(results[wl].get(label, {}).get("case_ms", {})) for label in labels}
            for name, (a, b) in {"ref/kernels@1": ("reference@1", k1), "kernels/ort@1": (k1, o1), f"kernels/ort@{cores}": (kn, on)}.items():
                if a in passing and b in passing:
                    print(f"{wl} {name}: over the {len(passing[a] & passing[b])} cases passing on both")
    print("\nlatency: median of warm runs (after an untimed warm-up run); memory: peak RSS above the level before the workload")
    print("ratios compare passing runs only: suite/onnx-node sums the cases that pass on both sides (official expected")
    print("outputs and tolerance); a light b1 model counts when both match onnx's stored output; every light/op workload")
    print("counts only when both sides' outputs agree (rtol 1e-3, atol 1e-3 x the largest magnitude); otherwise '-'")
    print("ref/kernels > 1: kernels is faster than onnx.reference; kernels/ort < 1: kernels is faster than onnxruntime")
    print("'cpu': the same ratio of the medians of the process's CPU seconds per run (a loaded machine's waits left out)")

    import onnx

    versions = {"python": platform.python_version(), "numpy": np.__version__, "onnx": onnx.__version__}
    try:
        import onnxruntime

        versions["onnxruntime"] = onnxruntime.__version__
    except ImportError:
        pass
    report = {
        "benchmark": "kernels",
        "quick": args.quick,
        "machine": {"platform": platform.platform(), "cores": cores, "processor": platform.processor()},
        "versions": versions,
        "configurations": labels,
        "seconds": round(time.perf_counter() - started, 1),
        "rows": rows,
        "summary": figures,
        "summary_cpu": cpu_figures,
        "blas": blas,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"\nwrote {out} in {report['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
