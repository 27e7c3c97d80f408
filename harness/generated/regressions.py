"""Findings that last (issue 35): every distinct finding of a fuzz campaign becomes a named
regression case, a frozen few-node model with its inputs, the composed reference's outputs and
their tolerance, which the ``generated`` suite replays in every later run (so a fix, or a
regression, shows in the report).

A regression case is one folder in the onnx_test_runner layout (``model.onnx``,
``test_data_set_0/``) plus ``case.json`` (tags, tolerance; ``bound.npz`` holds the elementwise
allowances of an edge-value graph), under a name that is its root cause: the op pattern of the
minimal graph, the optimizer patterns it holds, its dtype and the kind of failure
(:func:`regression_key`). Campaigns deduplicate by that name across runs: a finding whose
folder exists already is counted there (``seen``), not written again.

The checked-in folder :data:`REGRESSIONS` is what the ``generated`` suite replays. A campaign
writes its new cases next to its store (:func:`regressions_root`, or ``--regressions DIR``),
never into the package: a real finding's folder is copied here with its write-up.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from ..case import Case, DataSet, Tolerance, write_case_folder
from .cases import graph_case
from .judge import Finding

REGRESSIONS = Path(__file__).parent / "regressions"
SUITE_PREFIX = "generated/regression/"


def regressions_root(store_path: Path | str) -> Path:
    """Where a campaign writes its regression cases by default, beside its bundles:
    ``reports/regressions/results`` for ``reports/results.sqlite``."""
    path = Path(store_path)
    return path.parent / "regressions" / path.stem


def regression_key(finding: Finding) -> str:
    """The root cause a finding stands for, as a folder name: op pattern, optimizer patterns,
    dtype, kind (``MatMul+Add.MatMulAdd.float32.wrong-values``)."""
    g = finding.graph
    optimizer = "+".join(sorted({p.split(":")[0] for p in g.patterns})) or "ops"
    return re.sub(r"[^A-Za-z0-9+.-]+", "-", f"{finding.pattern}.{optimizer}.{g.dtype}.{finding.kind}")


def save_regression(finding: Finding, folder: Path = REGRESSIONS) -> tuple[Path, bool]:
    """Write ``finding`` as a regression case under ``folder`` unless one of its root cause is
    there; return its folder and whether it is new (an old one has its ``seen`` count raised)."""
    key = regression_key(finding)
    target = Path(folder) / key
    meta_file = target / "case.json"
    if meta_file.exists():
        meta = json.loads(meta_file.read_text())
        meta["seen"] = int(meta.get("seen", 1)) + 1
        meta_file.write_text(json.dumps(meta, indent=1, sort_keys=True))
        return target, False
    g = finding.graph
    case = graph_case(g)  # the oracle's outputs and tolerances, not what a backend was compared with
    tol = case.tolerance
    tags = {**case.tags, "regression": key, "found_on": finding.group, "kind": finding.kind, "symptom": finding.symptom,
            "message": finding.message[:500], "optimizer_patterns": list(g.patterns)}
    meta = {"case_id": SUITE_PREFIX + key, "tags": tags, "tolerance": tol.to_dict(), "seen": 1}
    write_case_folder(target, g.model(), case.data, meta)
    if tol.bound is not None:
        np.savez(target / "bound.npz", **{f"output_{k}": np.asarray(b) for k, b in enumerate(tol.bound) if b is not None})
    return target, True


def load_regression(folder: Path) -> Case:
    meta: dict[str, Any] = json.loads((folder / "case.json").read_text())
    tol = Tolerance.from_dict(meta["tolerance"])
    bound_file = folder / "bound.npz"
    if bound_file.exists():
        n = len(meta["tags"]["output_tolerances"])
        with np.load(bound_file) as data:
            tol = Tolerance(tol.rtol, tol.atol, tol.ulp, bound=tuple(data.get(f"output_{k}") for k in range(n)))
    case = Case(id=meta["case_id"], suite="generated", path=folder, tolerance=tol, tags=meta["tags"])
    model = case.load_model()
    data: list[DataSet] = case.load_data(model)
    return Case(id=case.id, suite="generated", model_bytes=model.SerializeToString(), data=data, tolerance=tol, tags=case.tags)


def regression_cases(folder: Path = REGRESSIONS) -> list[Case]:
    """Every regression case under ``folder``, by name."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return [load_regression(p) for p in sorted(folder.iterdir()) if (p / "case.json").exists()]
