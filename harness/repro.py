"""Repro bundles: everything needed to see a failure again, without the corpus or the store.

A bundle holds ``model.onnx``, ``test_data_set_N/input_K.pb`` and ``output_K.pb`` (expected),
``meta.json`` (case, backend and its options, outcome, verdict, message, tolerance, re-stamping
or the ``--opset`` it ran at)
and ``repro.py``, a standalone script that re-runs the case on the backend and prints the
verdict.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from .case import Case, write_case_folder
from .worker import Result

_SCRIPT = '''\
"""Re-run {case_id} on backend {backend} and print the verdict.

    python repro.py            # uses this folder's model.onnx and data sets
Needs onnx-harness installed (pip install onnx-harness{extra}).
"""
import json
import sys
from pathlib import Path

from harness.case import Case, Tolerance
from harness.worker import ExecOptions, execute_case
from harness.runner import BackendSpec, _build_backend

here = Path(__file__).resolve().parent
meta = json.loads((here / "meta.json").read_text())
case = Case(id=meta["case_id"], suite=meta["suite"], path=here, tolerance=Tolerance.from_dict(meta["tolerance"]),
            tags=meta["tags"], check=meta["check"])
backend = _build_backend(BackendSpec(meta["backend_spec"], meta["backend_options"], meta["backend"]))
result = execute_case(backend, case, ExecOptions(restamp=meta["restamp_enabled"], opset=meta.get("opset")))
print(f"{{result.case_id}} on {{result.backend}}: {{result.outcome}}")
if result.message:
    print(result.message)
print(f"recorded: {{meta['outcome']}}: {{meta['message']}}")
sys.exit(0 if result.outcome == "pass" else 1)
'''


def bundle_dir(root: Path, run_id: int, backend: str, case_id: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "__", case_id)
    return Path(root) / f"run-{run_id}" / re.sub(r"[^A-Za-z0-9._-]+", "_", backend) / safe


def write_bundle(folder: Path, case: Case, result: Result, backend_spec: str, backend_options: dict[str, Any], restamp: bool = True,
                 opset: int | None = None) -> Path:
    """Write the bundle of ``result``; ``restamp`` and ``opset`` are how the run stamped the
    model (``ExecOptions``), so that a replay runs what the backend ran."""
    folder = Path(folder)
    if folder.exists():
        shutil.rmtree(folder)
    if case.path is not None:
        # the bytes only (no times, modes or extended attributes): a bundle is a new copy
        shutil.copytree(case.path, folder, ignore=shutil.ignore_patterns("case.json"), copy_function=shutil.copyfile)
    else:
        model = case.load_model()
        write_case_folder(folder, model, case.load_data(model), {})
        (folder / "case.json").unlink(missing_ok=True)
    meta = {
        "case_id": case.id,
        "suite": case.suite,
        "backend": result.backend,
        "backend_spec": backend_spec,
        "backend_options": backend_options,
        "outcome": result.outcome,
        "raw_outcome": result.raw_outcome or result.outcome,
        "message": result.message,
        "verdict": result.verdict,
        "tolerance": case.tolerance.to_dict(),
        "tags": case.tags,
        "check": case.check,
        "restamp_enabled": restamp,
        "opset": opset,
        "restamp": result.restamp,
    }
    (folder / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True, default=str))
    extra = {"onnxruntime": "[onnxruntime]", "tensorflow": "[tensorflow]", "pytorch": "[torch]"}.get(result.backend, "")
    (folder / "repro.py").write_text(_SCRIPT.format(case_id=case.id, backend=result.backend, extra=extra))
    return folder
