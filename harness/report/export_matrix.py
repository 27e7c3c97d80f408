"""The export matrix: for every model of the models suite, exporter x opset x backend, "train in
A, export with B, run in C" at a glance.

A row is one model (its framework and name) exported by one exporter at one opset; a column is a
report column (a backend). A cell is what happened to that export on that backend, in the
matrix's own words:

- ``export-failed``: the exporter gave no model (its message is the row's ``export_error``);
- ``rejected``: the backend refused the model or has no kernel for one of its ops (``rejected``,
  ``unsupported``);
- ``wrong``: it ran and computed something else (``mismatch``, ``wrong-shape``, ``wrong-dtype``);
- ``error``: it broke while running (``error``, ``crash``, ``timeout``);
- ``pass`` (``pass``, ``xpass``), ``unspecified``, ``skip``.

A known failure (``xfail``) is shown as what it is underneath (its raw outcome) and flagged
``known``. Data here; the HTML template and ``summary.md`` render it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from .failures import _natural

CELLS = ("pass", "wrong", "rejected", "error", "export-failed", "unspecified", "skip")
_CELL_OF = {
    "pass": "pass", "xpass": "pass",
    "mismatch": "wrong", "wrong-shape": "wrong", "wrong-dtype": "wrong",
    "rejected": "rejected", "unsupported": "rejected",
    "error": "error", "crash": "error", "timeout": "error",
    "export-failed": "export-failed", "unspecified": "unspecified", "skip": "skip",
}


def cell_of(outcome: str, raw_outcome: str | None = None) -> tuple[str, bool]:
    """(cell, known): the matrix cell of one result, and whether it is a known failure."""
    if outcome == "xfail":
        return _CELL_OF.get(raw_outcome or "", "error"), True
    return _CELL_OF.get(outcome, "error"), False


@dataclass
class ExportRow:
    framework: str
    model: str
    exporter: str
    opset: str
    #: the exporter's message when the export failed (the same on every backend)
    export_error: str = ""
    #: backend label -> {"cell", "outcome", "known", "message", "case_id"}
    cells: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"framework": self.framework, "model": self.model, "exporter": self.exporter, "opset": self.opset,
                "export_error": self.export_error, "cells": self.cells}


@dataclass
class ExportMatrix:
    backends: list[str]
    rows: list[ExportRow]

    @classmethod
    def of_report(cls, report: Any) -> "ExportMatrix":
        """The matrix of a report's results (:class:`harness.report.matrix.Report`)."""
        return cls.from_results([b.label for b in report.backends], report.results)

    @classmethod
    def from_results(cls, backends: list[str], results: Iterable[dict[str, Any]]) -> "ExportMatrix":
        rows: dict[tuple[str, str, str, str], ExportRow] = {}
        for r in results:
            tags = r.get("tags") or {}
            if tags.get("suite") != "models" or not tags.get("model"):
                continue
            key = (str(tags.get("framework") or "-"), str(tags["model"]), str(tags.get("exporter") or "-"),
                   str(tags.get("opset") if tags.get("opset") is not None else "-"))
            row = rows.get(key)
            if row is None:
                row = rows[key] = ExportRow(*key)
            if tags.get("export_error"):
                row.export_error = str(tags["export_error"])
            cell, known = cell_of(r["outcome"], r.get("raw_outcome"))
            row.cells[r.get("column") or r["backend"]] = {"cell": cell, "outcome": r["outcome"], "known": known,
                                                          "message": r.get("message") or "", "case_id": r["case_id"]}
        ordered = sorted(rows.values(), key=lambda x: (x.framework, x.model, x.exporter, _natural(x.opset)))
        return cls(list(backends), ordered)

    def counts(self, backend: str) -> dict[str, int]:
        out = dict.fromkeys(CELLS, 0)
        for row in self.rows:
            c = row.cells.get(backend)
            if c:
                out[c["cell"]] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"backends": self.backends, "rows": [r.to_dict() for r in self.rows],
                "counts": {b: self.counts(b) for b in self.backends}}
