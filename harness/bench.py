"""``onnx-harness bench``: operators at a ladder of realistic sizes, per dtype, on each backend.

    onnx-harness bench --op Conv,MatMul,Softmax --backend onnxruntime --backend kernels [--dtype float32,float16]

Each (op, size, dtype) is a one-node model with an oracle computed here in NumPy at float64, so
a timing counts only for a backend that answered right (``pass``); the runner times it as
``run --timing`` does (isolated workers, threads = cores / jobs, calibrated samples, the median's
interval, peak memory). Every result goes to the store as a run of suite ``bench``, its tags
carrying the op, size label, dtype and the analytic cost: ``flops`` and ``bytes`` (inputs read
and outputs written once). Before the cases, a quick STREAM-like triad and a GEMM probe measure
this machine's bandwidth and float32 peak, with the same thread count, kept with the run
(``environment["bench_probe"]``) for the report's roofline.

Sizes come from common layers: ResNet-50's convolutions, BERT-base's projections and attention,
classifier heads; ``--sizes N`` keeps the first N of each ladder (small first).
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .case import Case, DataSet, Tolerance

DTYPES = {"float32": np.float32, "float16": np.float16}


@dataclass(frozen=True)
class Size:
    label: str
    shapes: dict[str, tuple[int, ...]]
    attrs: dict[str, Any]
    flops: float
    bytes: float


@dataclass(frozen=True)
class BenchOp:
    op: str
    opset: int
    inputs: tuple[str, ...]
    sizes: tuple[Size, ...]
    oracle: Callable[..., np.ndarray]
    #: "flops" (compute bound: GFLOP/s) or "bytes" (memory bound: GB/s)
    bound: str


def _nbytes(shapes: list[tuple[int, ...]], itemsize: int = 4) -> float:
    return float(sum(math.prod(s) for s in shapes) * itemsize)


def _matmul(m: int, k: int, n: int, label: str) -> Size:
    return Size(f"{label} {m}x{k}x{n}", {"A": (m, k), "B": (k, n)}, {}, 2.0 * m * k * n, _nbytes([(m, k), (k, n), (m, n)]))


def _conv(c: int, hw: int, cout: int, k: int, stride: int, label: str) -> Size:
    pad = k // 2
    out = (hw + 2 * pad - k) // stride + 1
    return Size(f"{label} {c}x{hw}x{hw}->{cout} k{k}s{stride}", {"X": (1, c, hw, hw), "W": (cout, c, k, k)},
                {"kernel_shape": [k, k], "strides": [stride, stride], "pads": [pad] * 4},
                2.0 * cout * out * out * c * k * k, _nbytes([(1, c, hw, hw), (cout, c, k, k), (1, cout, out, out)]))


def _rows(shape: tuple[int, ...], label: str, flops_per: float) -> Size:
    n = math.prod(shape)
    return Size(f"{label} {'x'.join(map(str, shape))}", {"X": shape}, {"axis": -1}, flops_per * n, _nbytes([shape, shape]))


def _elementwise(n: int, label: str, inputs: tuple[str, ...]) -> Size:
    return Size(f"{label} {n:,}", {name: (n,) for name in inputs}, {}, float(n), _nbytes([(n,)] * (len(inputs) + 1)))


def _conv_oracle(x: np.ndarray, w: np.ndarray, kernel_shape: list[int], strides: list[int], pads: list[int]) -> np.ndarray:
    """Conv (ONNX Conv-11, NCHW, group 1, no dilation) as a tensor contraction over windows."""
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    win = np.lib.stride_tricks.sliding_window_view(xp, kernel_shape, axis=(2, 3))[:, :, ::strides[0], ::strides[1]]
    return np.einsum("nchwij,ocij->nohw", win, w, optimize=True)


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


OPS: dict[str, BenchOp] = {b.op: b for b in (
    BenchOp("MatMul", 13, ("A", "B"), (
        _matmul(64, 64, 64, "tiny"),
        _matmul(128, 768, 768, "BERT-base projection, seq 128"),
        _matmul(128, 768, 3072, "BERT-base FFN, seq 128"),
        _matmul(512, 1024, 1024, "BERT-large projection, seq 512"),
    ), lambda A, B: A @ B, "flops"),
    BenchOp("Conv", 11, ("X", "W"), (
        _conv(64, 14, 64, 3, 1, "small 3x3"),
        _conv(64, 56, 64, 3, 1, "ResNet-50 conv2_x"),
        _conv(3, 224, 64, 7, 2, "ResNet-50 stem"),
        _conv(256, 14, 256, 3, 1, "ResNet-50 conv4_x"),
    ), lambda X, W, **a: _conv_oracle(X, W, **a), "flops"),
    BenchOp("Softmax", 13, ("X",), (
        _rows((1, 1000), "classifier head", 4),
        _rows((12, 128, 128), "BERT-base attention, seq 128", 4),
        _rows((12, 384, 384), "BERT-base attention, seq 384", 4),
    ), lambda X, axis: _softmax(X, axis), "bytes"),
    BenchOp("Add", 14, ("A", "B"), (
        _elementwise(10_000, "vector", ("A", "B")),
        _elementwise(1_000_000, "vector", ("A", "B")),
        _elementwise(16_000_000, "vector", ("A", "B")),
    ), lambda A, B: A + B, "bytes"),
    BenchOp("Relu", 14, ("X",), (
        _elementwise(10_000, "vector", ("X",)),
        _elementwise(1_000_000, "vector", ("X",)),
        _elementwise(16_000_000, "vector", ("X",)),
    ), lambda X: np.maximum(X, 0), "bytes"),
)}


def bench_cases(ops: list[str], dtypes: list[str], sizes: int | None = None, seed: int = 0) -> list[Case]:
    """One case per (op, size, dtype): a one-node model, inputs drawn from N(0, 1), the NumPy
    oracle at float64 cast to the dtype. Tolerance grows with the reduction length."""
    import onnx
    from onnx import helper, numpy_helper  # noqa: F401

    cases = []
    for name in ops:
        bop = OPS[name]
        for dtype in dtypes:
            np_dtype = DTYPES[dtype]
            elem = helper.np_dtype_to_tensor_dtype(np.dtype(np_dtype))
            itemsize = np.dtype(np_dtype).itemsize
            for k, size in enumerate(bop.sizes[:sizes]):
                rng = np.random.default_rng(seed + k)
                feeds = {i: rng.standard_normal(size.shapes[i]).astype(np_dtype) for i in bop.inputs}
                wide = {i: v.astype(np.float64) for i, v in feeds.items()}
                expected = bop.oracle(**wide, **size.attrs).astype(np_dtype)
                node = helper.make_node(bop.op, list(bop.inputs), ["Y"], **size.attrs)
                graph = helper.make_graph([node], f"bench_{bop.op}",
                                          [helper.make_tensor_value_info(i, elem, list(size.shapes[i])) for i in bop.inputs],
                                          [helper.make_tensor_value_info("Y", elem, list(expected.shape))])
                model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", bop.opset)], ir_version=8)
                onnx.checker.check_model(model)
                reduction = _reduction(bop.op, size)
                rtol = 1e-3 if dtype == "float32" else 1e-2
                tolerance = Tolerance(rtol=rtol, atol=rtol * math.sqrt(reduction))
                scale = itemsize / 4
                cases.append(Case(
                    id=f"bench/{bop.op}/{dtype}/{k}", suite="bench", model_bytes=model.SerializeToString(),
                    data=[DataSet(feeds, [expected])], tolerance=tolerance,
                    tags={"suite": "bench", "op": bop.op, "dtype": dtype, "size": size.label, "rung": k,
                          "flops": size.flops, "bytes": size.bytes * scale, "bound": bop.bound}))
    return cases


def _reduction(op: str, size: Size) -> int:
    if op == "MatMul":
        return size.shapes["A"][-1]
    if op == "Conv":
        w = size.shapes["W"]
        return w[1] * w[2] * w[3]
    return 1


# -- machine probes -----------------------------------------------------------------------------------
def probe_machine(threads: int, seconds: float = 0.3) -> dict[str, Any]:
    """Bandwidth of a STREAM-like triad (``a = b + s * c`` on arrays far beyond the caches,
    counted as 3 x 8 bytes an element, NumPy's temporary not counted) and float32 GEMM peak
    (NumPy's BLAS, 1024^3), each the best of repeats within ``seconds``, at ``threads`` BLAS
    threads. The triad runs on one thread (NumPy's element-wise loops are single-threaded)."""
    from threadpoolctl import threadpool_limits

    n = 1 << 23  # 64 MiB a float64 array, far beyond any cache
    b, c, a = np.ones(n), np.full(n, 2.0), np.zeros(n)  # touched: no page faults in the timed loop
    best, reps = math.inf, 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or reps < 3:
        reps += 1
        t0 = time.perf_counter()
        np.multiply(c, 3.0, out=a)
        np.add(a, b, out=a)
        best = min(best, time.perf_counter() - t0)
    triad_gbs = 3 * 8 * n / best / 1e9
    m = 1024
    x = np.random.default_rng(0).standard_normal((m, m)).astype(np.float32)
    with threadpool_limits(limits=threads):
        x @ x
        best, reps = math.inf, 0
        end = time.perf_counter() + seconds
        while time.perf_counter() < end or reps < 3:
            reps += 1
            t0 = time.perf_counter()
            x @ x
            best = min(best, time.perf_counter() - t0)
    return {"stream_triad_gbs": round(triad_gbs, 2), "gemm_gflops": round(2 * m ** 3 / best / 1e9, 2), "threads": threads,
            "gemm": f"numpy float32 {m}x{m}x{m}", "triad": f"numpy float64, {n:,} elements, one thread"}


# -- the command --------------------------------------------------------------------------------------
def register(subparsers: Any) -> None:
    p = subparsers.add_parser("bench", help="operators at a ladder of realistic sizes on backends: latency, throughput, "
                              "ratio to the best; results in the store and the HTML report")
    p.add_argument("--op", default="Conv,MatMul,Softmax,Add,Relu", help=f"comma-separated ops (default: all of {', '.join(OPS)})")
    p.add_argument("--backend", action="append", help="backend (repeatable; default onnxruntime)")
    p.add_argument("--option", action="append", default=[], metavar="BACKEND.NAME=VALUE", help="backend option")
    p.add_argument("--dtype", default="float32", help=f"comma-separated dtypes (of {', '.join(DTYPES)}; default float32)")
    p.add_argument("--sizes", type=int, help="only the first N sizes of each ladder (small first)")
    p.add_argument("--timing", type=float, default=1.0, metavar="SECONDS", help="timing budget per case and backend (default 1)")
    p.add_argument("-j", "--jobs", type=int, default=1, help="worker processes (default 1: quiet numbers; threads = cores / jobs)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per case and backend (default 300)")
    p.add_argument("--store", default=str(Path("reports") / "results.sqlite"), help="results store (default: reports/results.sqlite)")
    p.set_defaults(func=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    from .cliutil import CliError
    from .cliutil import parse_options

    ops = [o.strip() for o in args.op.split(",") if o.strip()]
    dtypes = [d.strip() for d in args.dtype.split(",") if d.strip()]
    unknown = [o for o in ops if o not in OPS] + [d for d in dtypes if d not in DTYPES]
    if unknown:
        raise CliError(f"bench: unknown op or dtype {', '.join(unknown)} (ops: {', '.join(OPS)}; dtypes: {', '.join(DTYPES)})")
    options = parse_options(args.option)
    outcome = run_bench(ops, dtypes, args.backend or ["onnxruntime"], Path(args.store), sizes=args.sizes, budget=args.timing,
                        jobs=args.jobs, timeout=args.timeout, options=options)
    print_bench(outcome)
    return 1 if outcome["unexpected"] else 0


def run_bench(ops: list[str], dtypes: list[str], backends: list[str], store_path: Path, sizes: int | None = None,
              budget: float = 1.0, jobs: int = 1, timeout: float = 300.0, options: dict[str, dict[str, Any]] | None = None,
              say: Callable[[str], None] = print) -> dict[str, Any]:
    """Run the benchmark into a new run of the store; returns the run id, the probe and the rows."""
    import sys

    from .worker import ExecOptions
    from .runner import BackendSpec, Runner, default_threads
    from .store import Store
    from .timing import TimingPolicy, machine

    specs = [BackendSpec(b, (options or {}).get(b, {})) for b in dict.fromkeys(backends)]
    cases = bench_cases(ops, dtypes, sizes)
    threads = default_threads(jobs)
    probe = probe_machine(threads)
    say(f"machine: triad {probe['stream_triad_gbs']} GB/s, float32 GEMM {probe['gemm_gflops']} GFLOP/s at {threads} thread(s)")
    store = Store(store_path)
    env = {"command": " ".join(sys.argv), "machine_info": machine(), "jobs": jobs, "bench_probe": probe}
    args = {"suites": ["bench"], "ops": ops, "dtypes": dtypes, "backends": [{"spec": s.spec, "options": s.options, "name": s.name} for s in specs],
            "store": str(store_path), "timing_budget": budget}
    run_id = store.start_run(env["command"], args, env)
    policy = TimingPolicy(budget_s=budget, min_samples=10, max_warmups=5)
    runner = Runner(specs, jobs=jobs, timeout=timeout, options=ExecOptions(restamp=False, timing=policy))
    infos = runner.probe(keep=True)
    for name, info in infos.items():
        store.record_backend(run_id, name, info.available, info.reason, info.version, info.environment)
    live = [s.name for s in specs if infos[s.name].available]
    unexpected = [f"{name} unavailable: {info.reason}" for name, info in infos.items() if not info.available]
    rows: list[Any] = []

    def keep(result):
        store.add_result(run_id, result)
        rows.append(result)
        if result.outcome != "pass":
            unexpected.append(f"{result.backend} {result.case_id} ({result.tags.get('size')}): {result.outcome}: {result.message[:200]}")

    try:
        runner.run([(c, b) for c in cases for b in live], keep)
    finally:
        store.finish_run(run_id)
    return {"run_id": run_id, "store": store_path, "probe": probe, "results": rows, "unexpected": unexpected}


def throughput(tags: dict[str, Any], seconds: float) -> tuple[float, str]:
    """(GFLOP/s or GB/s, unit) of a case's analytic cost done in ``seconds``."""
    if tags.get("bound") == "flops":
        return tags["flops"] / seconds / 1e9, "GFLOP/s"
    return tags["bytes"] / seconds / 1e9, "GB/s"


def print_bench(outcome: dict[str, Any]) -> None:
    from tabulate import tabulate

    best: dict[str, float] = {}
    for r in outcome["results"]:
        if r.run_median_s:
            best[r.case_id] = min(best.get(r.case_id, math.inf), r.run_median_s)
    rows = []
    for r in sorted(outcome["results"], key=lambda r: (r.case_id, r.backend)):
        t = r.timing
        if r.outcome != "pass" or not r.run_median_s:
            rows.append([r.tags["op"], r.tags["dtype"], r.tags["size"], r.backend, r.outcome, "", "", ""])
            continue
        rate, unit = throughput(r.tags, r.run_median_s)
        ci = f" [{t['ci_low_s'] * 1e3:.4g}, {t['ci_high_s'] * 1e3:.4g}]" if t.get("ci_low_s") is not None else ""
        rows.append([r.tags["op"], r.tags["dtype"], r.tags["size"], r.backend, f"{r.run_median_s * 1e3:.4g} ms{ci}",
                     f"{rate:.3g} {unit}", f"{r.run_median_s / best[r.case_id]:.2f}x", f"{(t.get('peak_rss') or 0) / 2**20:.0f} MiB"])
    print(tabulate(rows, headers=["op", "dtype", "size", "backend", "median [95% interval]", "throughput", "x best", "peak RSS"],
                   tablefmt="github"))
    for line in outcome["unexpected"]:
        print(f"unexpected: {line}")
    print(f"results: run {outcome['run_id']} in {outcome['store']}; report: onnx-harness report {outcome['run_id']} --store {outcome['store']}")
