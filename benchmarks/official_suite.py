"""The official ONNX suites on ONNX Runtime, three ways in one run, with ratios.

1. our runner from the frozen corpus (isolated worker processes, -j 2, store and bundles);
2. a bare single-process loop over the same corpus: load, re-stamp as our runner does
   (harness.schema.negotiate), serialize once, InferenceSession, run, compare (the floor set by
   ONNX Runtime itself);
3. onnx's own pytest backend runner (onnx.backend.test.BackendTest with onnxruntime.backend).

    python benchmarks/official_suite.py [--corpus corpus] [--jobs 2] [--skip-pytest]

Targets: (1) no slower than (2); (1) at least 10x faster than (3).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.case import read_data_sets  # noqa: E402
from harness.run import RunConfig, execute_run  # noqa: E402
from harness.runner import BackendSpec  # noqa: E402
from harness.schema import negotiate  # noqa: E402
from harness.store import Store  # noqa: E402
from harness.suites import SuiteContext, ensure_corpus  # noqa: E402
from harness.suites.onnx_official import iter_corpus_cases  # noqa: E402
from harness.suites.onnx_official import SUITES  # noqa: E402


def ours(corpus: Path, jobs: int, workdir: Path) -> tuple[float, dict]:
    config = RunConfig(suites=["onnx"], backends=[BackendSpec("onnxruntime")], jobs=jobs, store=workdir / "bench.sqlite", corpus=corpus)
    store = Store(config.store)
    t0 = time.perf_counter()
    outcome = execute_run(config, store, say=lambda m: None)
    elapsed = time.perf_counter() - t0
    return elapsed, dict(outcome.counts["onnxruntime"])


def bare_model(path: Path):
    """The model as our runner hands it to ONNX Runtime: loaded once and re-stamped by the same
    negotiation (lowest opset and IR version at which every node keeps its schema)."""
    import onnx

    return negotiate(onnx.load(path))[0]


def bare_loop(corpus: Path) -> tuple[float, dict]:
    import onnxruntime as ort

    ort.set_default_logger_severity(4)
    counts = {"pass": 0, "fail": 0}
    t0 = time.perf_counter()
    for case in iter_corpus_cases(corpus, list(SUITES)):
        try:
            model = bare_model(case.path / "model.onnx")
            data = read_data_sets(case.path, model)
            sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])  # the one serialization
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
    return time.perf_counter() - t0, counts


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
    parser.add_argument("--skip-pytest", action="store_true", help="skip onnx's pytest runner (about a minute)")
    parser.add_argument("--json", help="also write the numbers here")
    args = parser.parse_args()
    corpus = Path(args.corpus)
    ensure_corpus(SuiteContext(corpus=corpus, say=print))
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        t_bare, c_bare = bare_loop(corpus)
        print(f"bare loop (1 process):        {t_bare:6.2f} s  {c_bare}", flush=True)
        t_ours, c_ours = ours(corpus, args.jobs, workdir)
        print(f"our runner (-j {args.jobs}, isolated): {t_ours:6.2f} s  {c_ours}", flush=True)
        t_pytest, s_pytest = (None, "skipped") if args.skip_pytest else onnx_pytest_runner(workdir)
        if t_pytest is not None:
            print(f"onnx pytest backend runner:   {t_pytest:6.2f} s  {s_pytest}", flush=True)
    print()
    print(f"ours / bare loop:   {t_ours / t_bare:5.2f}x  (target <= 1.0)")
    if t_pytest is not None:
        print(f"pytest runner / ours: {t_pytest / t_ours:5.1f}x faster  (target >= 10)")
    if args.json:
        Path(args.json).write_text(json.dumps({"ours_s": t_ours, "bare_s": t_bare, "pytest_s": t_pytest, "ours": c_ours, "bare": c_bare, "pytest": s_pytest}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
