"""Noise-aware performance: ratios to a baseline backend with intervals, and regressions that hold.

A timed result (``run --timing`` / ``--repeat``) carries its samples, their median and the
median's confidence interval (:mod:`harness.timing`). Two timings differ *significantly* when
their intervals do not overlap and, where both kept at least :data:`~harness.timing.MIN_CI_SAMPLES`
samples, a one-sided Mann-Whitney rank test agrees at level ``alpha`` (default 0.01). A result
without an interval (an untimed run, too few samples) is never significant.

- :class:`PerfMatrix`: per case, each backend's latency as a ratio to a chosen baseline backend
  with the ratio's interval (``[low / base_high, high / base_low]``); cells within noise (not
  significantly apart, or apart by less than :data:`NOISE_FLOOR`) are marked so; rows sorted by the largest significant gap.
- :func:`perf_changes`: what ``onnx-harness diff --perf-threshold 10%`` reports: a case x backend
  slower (or faster) than before by more than the threshold, significantly. Only calibrated
  timings are compared (an interval and samples enough on both sides); a single unwarmed run
  time is never compared with anything.
- :func:`confirm`: the gate. A machine shared with other work slows whole stretches of a run, so
  two identical runs differ "significantly" where one of them met a busy minute. A regression
  fails the gate only when a re-measurement of the case agrees (:class:`Remeasured`: the case
  measured again on the new backend, interleaved with the base backend where the base run's
  version of it is installed here, else against the stored base scaled by how much slower the
  machine is now on control cases); :func:`load_note` says when the runs' loads differ.
"""

from __future__ import annotations

import fnmatch
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..timing import MIN_CI_SAMPLES
from .failures import _natural
from .records import BackendSummary, MODEL_SUITES, TIMED_OUTCOMES

DEFAULT_ALPHA = 0.01
#: A matrix cell differs from the baseline only when the ratio's whole interval lies beyond this
#: relative gap too. Within one run the intervals see each sample's noise, not the drift between
#: stretches of a run (clock, caches, other work): two real runs of the same 10 ms sleep on this
#: 2-core machine at load 2 differed by 0.7 % (interval 0.4 % to 1.2 %), "significant" by the
#: rank test alone. Gaps this small are not a backend's doing; 2 % is well under any threshold a
#: gate uses (``--perf-threshold`` 10 %).
NOISE_FLOOR = 0.02


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

    @property
    def calibrated(self) -> bool:
        """A calibrated timing: an interval of its median and the samples it came from."""
        return self.has_interval and len(self.samples) >= MIN_CI_SAMPLES

    def scaled(self, factor: float) -> "Stat":
        return Stat(self.median * factor, self.low * factor if self.low is not None else None,
                    self.high * factor if self.high is not None else None, [x * factor for x in self.samples])

    @classmethod
    def pooled(cls, stats: list["Stat"]) -> "Stat":
        """One timing of the samples of several measurements of a case."""
        from ..timing import summarize

        t = summarize([x for s in stats for x in s.samples])
        return cls(t.median_s, t.ci_low_s, t.ci_high_s, t.samples)


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
                    beyond = (cell.low is not None and cell.low > 1 + NOISE_FLOOR) or (cell.high is not None and cell.high < 1 / (1 + NOISE_FLOOR))
                    cell.significant = name != baseline and beyond and differ(stat, base, alpha)
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
    #: a regression confirmed by a re-measurement (:func:`confirm`); None: not re-measured
    confirmed: bool | None = None
    #: what the re-measurement found, or why there was none
    note: str = ""
    before: Stat | None = field(default=None, repr=False)
    after: Stat | None = field(default=None, repr=False)

    @property
    def ratio(self) -> float:
        return self.after_s / self.before_s

    @property
    def regression(self) -> bool:
        return self.kind == "perf-regressed"

    @property
    def fails(self) -> bool:
        """A regression that fails the gate: confirmed by a re-measurement and not allowed."""
        return self.regression and bool(self.confirmed) and not self.allowed

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k not in ("before", "after")}
        return {**d, "ratio": self.ratio}


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
    """Significant changes of latency above ``threshold`` per (case, backend) with a calibrated
    timing in both runs, regressions first, largest first; and how many pairs were compared."""
    before = {(r["case_id"], r["backend"]): s for r in base if (s := Stat.of(r)) is not None and s.calibrated}
    changes, compared = [], 0
    for r in new:
        key = (r["case_id"], r["backend"])
        b, a = before.get(key), Stat.of(r)
        if b is None or a is None or not a.calibrated or b.median <= 0:
            continue
        compared += 1
        kind = _change(b, a, threshold, alpha)
        if kind:
            changes.append(PerfChange(kind, *key, b.median, a.median, before=b, after=a))
    changes.sort(key=lambda c: (not c.regression, -abs(math.log(c.ratio))))
    return changes, compared


def _change(before: Stat, after: Stat, threshold: float, alpha: float) -> str:
    ratio = after.median / before.median
    if ratio > 1 + threshold and slower(after, before, alpha):
        return "perf-regressed"
    if ratio < 1 / (1 + threshold) and slower(before, after, alpha):
        return "perf-improved"
    return ""


@dataclass
class Remeasured:
    """A case measured again for the gate: on the new side, and on the base side interleaved with
    it (``base``) when the base run's version of the backend is installed here; without it the
    stored base timing is scaled by ``factor``, how much slower the machine is now than in the
    base run on control cases (``controls`` of them)."""

    after: Stat | None
    base: Stat | None = None
    factor: float = 1.0
    controls: int = 0
    #: why there is no re-measurement (``after`` None)
    why: str = ""


def confirm(changes: list[PerfChange], again: dict[tuple[str, str], Remeasured], threshold: float,
            alpha: float = DEFAULT_ALPHA) -> None:
    """Mark each regression confirmed or not by its re-measurement (``again`` by (case, backend)):
    confirmed when the case is again slower by more than ``threshold``, significantly, than the
    base measured beside it, or than the stored base scaled to the machine's speed now."""
    for c in changes:
        if not c.regression:
            continue
        r = again.get((c.case_id, c.backend))
        if r is None or r.after is None:
            c.confirmed, c.note = False, f"not re-measured: {r.why if r else 'no re-measurement'}"
            continue
        if r.base is not None:
            base, against = r.base, "the base backend measured beside it"
        else:
            base = c.before.scaled(r.factor) if c.before else None
            against = f"the base run's timing x{r.factor:.2f} (the machine's speed now, by {r.controls} control case(s))"
        if base is None or base.median <= 0:
            c.confirmed, c.note = False, "not re-measured: no base timing"
            continue
        c.confirmed = _change(base, r.after, threshold, alpha) == "perf-regressed"
        c.note = f"re-measured {r.after.median / base.median:.2f}x against {against}: " + ("confirmed" if c.confirmed else "not confirmed")


def load_note(base_env: dict[str, Any], new_env: dict[str, Any]) -> tuple[str, bool]:
    """The machine's load during each run (1-minute load average at start and end, per core) and
    whether they differ (by more than half a core's worth): timings of a loaded run are slower."""
    def per_core(env: dict[str, Any]) -> float | None:
        info = env.get("machine_info") or {}
        loads = [x[0] for x in (info.get("load_average"), info.get("load_average_end")) if x]
        return max(loads) / max(1, info.get("cores") or 1) if loads else None

    a, b = per_core(base_env), per_core(new_env)
    if a is None or b is None:
        return "the load of " + ("both runs" if a is None and b is None else "one run") + " was not recorded", False
    differ = abs(a - b) > 0.5
    return f"load per core {a:.2f} in the base run, {b:.2f} in the new one" + (" (they differ: timings are not comparable as they stand)" if differ else ""), differ


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


# -- performance ----------------------------------------------------------------------------------
@dataclass
class PerfCell:
    latency_s: float
    p90_s: float | None
    source: str  # "median" (timed repeats) or "run" (one timed run per data set)
    ratio_fastest: float = 1.0
    ratio_onnxruntime: float | None = None


@dataclass
class PerfRow:
    case_id: str
    suite: str
    is_model: bool
    cells: dict[str, PerfCell]
    fastest: str


class PerfTable:
    """Latency per case and backend: the median (and p90) of timed repeats where recorded,
    else the run time; ratios to the fastest backend and to onnxruntime on the same case."""

    def __init__(self, backends: list[str], rows: list[PerfRow], onnxruntime: str | None) -> None:
        self.backends = backends
        self.rows = rows
        self.onnxruntime = onnxruntime

    @classmethod
    def from_results(cls, backends: list[BackendSummary] | list[str], results: Iterable[dict[str, Any]]) -> "PerfTable":
        labels = [b.label if isinstance(b, BackendSummary) else b for b in backends]
        names = {b.label: b.name for b in backends} if backends and isinstance(backends[0], BackendSummary) else {b: b for b in labels}
        ort = next((label for label in labels if names.get(label) == "onnxruntime"), None)
        per_case: dict[str, dict[str, PerfCell]] = defaultdict(dict)
        suites: dict[str, str] = {}
        for r in results:
            if r["outcome"] not in TIMED_OUTCOMES:
                continue
            if r.get("run_median_s") is not None:
                cell = PerfCell(r["run_median_s"], r.get("run_p90_s"), "median")
            elif r.get("run_s") is not None:
                cell = PerfCell(r["run_s"], None, "run")
            else:
                continue
            per_case[r["case_id"]][r.get("column", r["backend"])] = cell
            suites[r["case_id"]] = (r.get("tags") or {}).get("suite") or r["case_id"].split("/", 1)[0]
        rows = []
        for case_id, cells in per_case.items():
            fastest = min(cells, key=lambda b: cells[b].latency_s)
            best = cells[fastest].latency_s
            base = cells[ort].latency_s if ort in cells else None
            for cell in cells.values():
                cell.ratio_fastest = cell.latency_s / best if best > 0 else 1.0
                cell.ratio_onnxruntime = cell.latency_s / base if base else None
            suite = suites[case_id]
            rows.append(PerfRow(case_id, suite, suite in MODEL_SUITES, cells, fastest))
        rows.sort(key=lambda r: _natural(r.case_id))
        return cls(labels, rows, ort)

    def unwarmed(self) -> tuple[int, int]:
        """(timings that are one unwarmed run per data set, all timings): the former come from
        runs without ``--repeat``, alongside other workers, and are indicative only."""
        cells = [c for r in self.rows for c in r.cells.values()]
        return sum(1 for c in cells if c.source == "run"), len(cells)

    def model_rows(self) -> list[PerfRow]:
        return [r for r in self.rows if r.is_model]

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per backend: timed cases, cases where it was fastest, geometric mean of its ratios."""
        out: dict[str, dict[str, Any]] = {}
        for b in self.backends:
            cells = [r.cells[b] for r in self.rows if b in r.cells]
            vs_ort = [c.ratio_onnxruntime for c in cells if c.ratio_onnxruntime]
            out[b] = {
                "cases": len(cells),
                "fastest": sum(1 for r in self.rows if r.fastest == b and len(r.cells) > 1),
                "geomean_vs_fastest": _geomean([c.ratio_fastest for c in cells if c.ratio_fastest > 0]),
                "geomean_vs_onnxruntime": _geomean(vs_ort),
            }
        return out


#: the backend that runs onnx.reference (harness/backends/reference.py): the speed anchor of "against onnx.reference"
REFERENCE = "reference"


def against_reference(perf: PerfTable, names: dict[str, str]) -> dict[str, dict[str, Any]] | None:
    """Speed against onnx.reference on the same cases: per backend (label), over the cases both it
    and the ``reference`` backend timed: their count, the geometric mean of latency / reference
    latency, and on how many it was faster or slower. None when no backend is ``reference``.
    ``names``: label -> backend name."""
    ref = next((label for label, name in names.items() if name == REFERENCE), None)
    if ref is None:
        return None
    out = {}
    for label in perf.backends:
        if label == ref:
            continue
        ratios = [r.cells[label].latency_s / r.cells[ref].latency_s for r in perf.rows
                  if label in r.cells and ref in r.cells and r.cells[ref].latency_s > 0]
        out[label] = {"cases": len(ratios), "geomean": _geomean(ratios), "faster": sum(1 for x in ratios if x < 1),
                      "slower": sum(1 for x in ratios if x > 1), "reference": ref}
    return out


def _geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None
