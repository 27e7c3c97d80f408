"""``results.json``: the report's data for other programs.

Runs, backend summaries (counts, pass rate over loadable cases, unavailable reasons), every
merged result as the store holds it (plus its report column and run; ``bundle`` relative to
the folder the run started in: no artifact holds a path of the machine), the performance summary
with the speed against onnx.reference, and the diff against the baseline. ``onnx-harness diff`` reads this
file back as a BASE or NEW.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .matrix import Report
from .perf import against_reference

FORMAT = "onnx-harness-report/1"


_FLOATS = ("max_abs", "max_rel", "max_ulp", "prepare_s", "run_s", "run_median_s", "run_p90_s")


def _finite(x: Any) -> Any:
    # JSON has no inf/nan: write them as strings rather than as invalid tokens
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def _result(r: dict[str, Any]) -> dict[str, Any]:
    # the bundle relative to the folder the run started in; never the machine's path
    d = {k: v for k, v in r.items() if k not in ("id", "bundle_path", "bundle_rel")}
    d["bundle"] = r.get("bundle_rel", r.get("bundle")) or None
    for k in _FLOATS:
        if k in d:
            d[k] = _finite(d[k])
    if r.get("verdict"):  # the verdict's message is the result's message: once is enough
        d["verdict"] = {k: _finite(v) for k, v in r["verdict"].items() if k != "message"}
    return d


def document(report: Report) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "generated": report.generated,
        "runs": [asdict(r) for r in report.runs],
        "backends": [b.to_dict() for b in report.backends],
        "baseline": asdict(report.baseline) if report.baseline else None,
        "diff": report.diff.to_dict() if report.diff else None,
        "performance": report.perf.summary(),
        "against_reference": against_reference(report.perf, {b.label: b.name for b in report.backends}),
        "fails_only_here": [{"case_id": c, "backend": b} for c, b in sorted(report.matrix.fails_only_here)],
        "unspecified": report.unspecified(),
        "results": [_result(r) for r in report.results],
        "bench": [_result(r) for r in report.bench],
        "not_shown": [{"run": label, "ran": what} for label, what in report.hidden],
    }


class JsonWriter:
    name = "json"
    filename = "results.json"

    def write(self, report: Report, folder: Path) -> Path:
        path = Path(folder) / self.filename
        text = json.dumps(document(report), separators=(",", ":"), default=str, allow_nan=False, ensure_ascii=False)
        path.write_text(text, encoding="utf-8")
        return path
