"""Noise-aware performance: ratios to a baseline backend with intervals, and regressions that hold.

A timed result (``run --timing`` / ``--repeat``) carries its samples, their median and the
median's confidence interval (:mod:`harness.timing`). Two timings differ *significantly* when
their intervals do not overlap and, where both kept at least :data:`~harness.timing.MIN_CI_SAMPLES`
samples, a one-sided Mann-Whitney rank test agrees at level ``alpha`` (default 0.01). A result
without an interval (an untimed run, too few samples) is never significant.

- :class:`PerfMatrix`: per case, each backend's latency as a ratio to a chosen baseline backend
  with the ratio's interval (``[low / base_high, high / base_low]``); cells within noise are
  marked so; rows sorted by the largest significant gap.
- :func:`perf_changes`: what ``onnx-harness diff --perf-threshold 10%`` reports: a case x backend
  slower (or faster) than before by more than the threshold, significantly.
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..timing import MIN_CI_SAMPLES

DEFAULT_ALPHA = 0.01


@dataclass
class Stat:
    median: float
    low: float | None
    high: float | None
    samples: list[float] = field(default_factory=list)

    @classmethod
    def of(cls, row: dict[str, Any]) -> "Stat | None":
        """The timing of a result row; None for a row without a latency."""
        t = row.get("timing") or {}
        if t.get("median_s") is not None:
            return cls(t["median_s"], t.get("ci_low_s"), t.get("ci_high_s"), list(t.get("samples") or []))
        if row.get("run_median_s") is not None:
            return cls(row["run_median_s"], None, None)
        return None

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None


def slower(new: Stat, base: Stat, alpha: float = DEFAULT_ALPHA) -> bool:
    """``new`` is significantly slower than ``base``: intervals apart, and the rank test agrees
    where both have samples enough."""
    if not (new.has_interval and base.has_interval) or not new.low > base.high:  # type: ignore[operator]
        return False
    if len(new.samples) >= MIN_CI_SAMPLES and len(base.samples) >= MIN_CI_SAMPLES:
        from scipy.stats import mannwhitneyu

        return float(mannwhitneyu(new.samples, base.samples, alternative="greater").pvalue) < alpha
    return True


def differ(a: Stat, b: Stat, alpha: float = DEFAULT_ALPHA) -> bool:
    return slower(a, b, alpha) or slower(b, a, alpha)


# -- the matrix -------------------------------------------------------------------------------------
@dataclass
class RatioCell:
    latency_s: float
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    significant: bool = False
    peak_rss: int | None = None


@dataclass
class PerfMatrixRow:
    case_id: str
    cells: dict[str, RatioCell]

    @property
    def gap(self) -> float:
        """The largest significant gap to the baseline, as |log ratio| (0: none)."""
        return max((abs(math.log(c.ratio)) for c in self.cells.values() if c.significant and c.ratio), default=0.0)


@dataclass
class PerfMatrix:
    baseline: str
    backends: list[str]
    rows: list[PerfMatrixRow]
    alpha: float = DEFAULT_ALPHA

    @classmethod
    def build(cls, results: Iterable[dict[str, Any]], backends: list[str], baseline: str | None,
              alpha: float = DEFAULT_ALPHA) -> "PerfMatrix | None":
        """From result rows (``column`` or ``backend`` names the backend); None without a
        baseline among ``backends`` or without timed results."""
        per_case: dict[str, dict[str, tuple[Stat, dict[str, Any]]]] = {}
        for r in results:
            if r.get("outcome") not in ("pass", "unspecified", "xfail", "xpass"):
                continue
            stat = Stat.of(r)
            if stat is not None and stat.has_interval:
                per_case.setdefault(r["case_id"], {})[r.get("column", r["backend"])] = (stat, r.get("timing") or {})
        if not baseline or baseline not in backends or not per_case:
            return None
        rows = []
        for case_id, stats in per_case.items():
            if baseline not in stats:
                continue
            base = stats[baseline][0]
            cells = {}
            for name, (stat, timing) in stats.items():
                cell = RatioCell(stat.median, peak_rss=timing.get("peak_rss"))
                if base.median > 0:
                    cell.ratio = stat.median / base.median
                    cell.low = stat.low / base.high if base.high else None  # type: ignore[operator]
                    cell.high = stat.high / base.low if base.low else None  # type: ignore[operator]
                    cell.significant = name != baseline and differ(stat, base, alpha)
                cells[name] = cell
            rows.append(PerfMatrixRow(case_id, cells))
        rows.sort(key=lambda row: (-row.gap, row.case_id))
        return cls(baseline, [b for b in backends if any(b in r.cells for r in rows)], rows, alpha)

    def significant(self) -> int:
        return sum(1 for r in self.rows for c in r.cells.values() if c.significant)


# -- the diff ---------------------------------------------------------------------------------------
@dataclass
class PerfChange:
    kind: str  # "perf-regressed" or "perf-improved"
    case_id: str
    backend: str
    before_s: float
    after_s: float
    allowed: bool = False

    @property
    def ratio(self) -> float:
        return self.after_s / self.before_s

    @property
    def regression(self) -> bool:
        return self.kind == "perf-regressed"

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "ratio": self.ratio}


def parse_threshold(text: str) -> float:
    """``10%`` or ``0.1`` -> 0.1."""
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise ValueError(f"--perf-threshold {text!r}: expected a percentage like 10% or a fraction like 0.1") from None
    if not 0 <= value < 10:
        raise ValueError(f"--perf-threshold {text!r}: out of range")
    return value


def perf_changes(base: Iterable[dict[str, Any]], new: Iterable[dict[str, Any]], threshold: float,
                 alpha: float = DEFAULT_ALPHA) -> tuple[list[PerfChange], int]:
    """Significant changes of latency above ``threshold`` per (case, backend) timed in both runs,
    regressions first, largest first; and how many pairs were compared."""
    before = {(r["case_id"], r["backend"]): s for r in base if (s := Stat.of(r)) is not None}
    changes, compared = [], 0
    for r in new:
        key = (r["case_id"], r["backend"])
        b, a = before.get(key), Stat.of(r)
        if b is None or a is None or b.median <= 0:
            continue
        compared += 1
        ratio = a.median / b.median
        if ratio > 1 + threshold and slower(a, b, alpha):
            changes.append(PerfChange("perf-regressed", *key, b.median, a.median))
        elif ratio < 1 / (1 + threshold) and slower(b, a, alpha):
            changes.append(PerfChange("perf-improved", *key, b.median, a.median))
    changes.sort(key=lambda c: (not c.regression, -abs(math.log(c.ratio))))
    return changes, compared


def allow(changes: list[PerfChange], patterns: Iterable[str]) -> set[str]:
    """Mark changes matching ``[BACKEND:]CASE-GLOB`` allowed; the patterns that matched."""
    used = set()
    for pattern in patterns:
        backend_glob, sep, case_glob = pattern.partition(":")
        if not sep:
            backend_glob, case_glob = "*", pattern
        for c in changes:
            if fnmatch.fnmatchcase(c.backend, backend_glob) and fnmatch.fnmatchcase(c.case_id, case_glob):
                c.allowed = True
                used.add(pattern)
    return used
