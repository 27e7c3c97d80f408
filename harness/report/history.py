"""Pass counts per backend and suite over every run a store holds."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from .failures import _natural
from .records import APART, PASSING
from .sources import RunRef, _store_labels, open_store



# -- history --------------------------------------------------------------------------------------
@dataclass
class HistoryPoint:
    run_id: int
    started: float | None
    status: str
    passed: int | None  # None: the backend was not in this run (or unavailable)
    total: int | None
    unavailable: bool = False


@dataclass
class History:
    """Pass counts per backend and suite (``onnxruntime · onnx-node``) over every run of the
    stores the report reads: a line never joins runs of different suites."""

    runs: list[dict[str, Any]]  # label, store, id, started, status
    series: dict[str, list[HistoryPoint]]

    @classmethod
    def from_stores(cls, stores: list[Path], labels: list[str] | None = None) -> "History":
        labels = labels or _store_labels(stores)
        runs: list[dict[str, Any]] = []
        series: dict[str, list[HistoryPoint]] = {}
        for path, slabel in zip(stores, labels):
            store = open_store(path)
            store_runs = store.runs()
            # one series per backend and suite: runs of different suites are never one line
            counts: dict[tuple[int, str], Counter] = defaultdict(Counter)
            for run_id, backend, suite, outcome, n in store.outcome_counts():
                counts[(run_id, f"{backend} · {suite}")][outcome] = n
            unavailable = store.unavailable_backends()
            ran = {b.split(" · ")[0] for (_, b) in counts}
            names = sorted({b for (_, b) in counts}, key=_natural) + list(dict.fromkeys(b for (_, b) in unavailable if b not in ran))
            for name in names:
                key = f"{slabel}:{name}" if slabel else name
                points = series.setdefault(key, [])
                backend = name.split(" · ")[0]
                for run in store_runs:
                    c = counts.get((run["id"], name))
                    if c is None or (run["id"], backend) in unavailable:
                        points.append(HistoryPoint(run["id"], run["started"], run["status"], None, None, (run["id"], backend) in unavailable))
                    else:
                        points.append(HistoryPoint(run["id"], run["started"], run["status"],
                                                   sum(c[o] for o in PASSING), sum(c.values()) - c["skip"] - sum(c[o] for o in APART)))
            # every series has one point per run of every store (None for the other stores' runs),
            # so that series from merged stores stay aligned with the run axis
            for key, points in series.items():
                if len(points) < len(runs) + len(store_runs):
                    if key.startswith(f"{slabel}:") or not slabel:
                        points[:0] = [HistoryPoint(r["id"], r["started"], r["status"], None, None, False) for r in runs[: len(runs) + len(store_runs) - len(points)]]
                    else:
                        points.extend(HistoryPoint(r["id"], r["started"], r["status"], None, None, False) for r in store_runs)
            runs.extend({"label": RunRef(path, r["id"], slabel).label, "store": str(path), "id": r["id"],
                         "started": r["started"], "status": r["status"]} for r in store_runs)
        return cls(runs, series)
