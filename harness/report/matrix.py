"""Report data: plain objects built from the results store, which every writer renders.

- :class:`Report` gathers one or several runs (from one or several store files) into a merged
  view: a backend with the same name and version in two runs is one column (the later run wins
  a case both ran); the same name at two versions is two columns, side by side.
- :class:`ConformanceMatrix`: outcome counts per row (op x op-version, op x opset, op x dtype,
  suite) and backend, plus the "fails only here" pairs.
Beside it: where results come from (:mod:`.sources`), failures grouped by cause
(:mod:`.failures`), latency tables (:mod:`.perf`), history (:mod:`.history`), run-to-run
diffs (:mod:`.diff`).

Nothing here formats text for a reader or judges an output again: outcomes and verdict numbers
are taken from the store as recorded.
"""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from .. import expectations
from ..worker import FAILURES, NOT_LOADABLE
from .diff import RunDiff, diff_like_with_like
from .failures import FailureGroup, _natural, failure_groups
from .history import History
from .perf import PerfTable
from .records import BackendSummary, CaseInfo, GRAPH_ROW, PASSING, RunInfo, unchecked
from .selection import Selection, conformance_rows, ref_selections, store_selections
from .sources import ReportError, RunRef, _absolute_bundle, _restrict, _run_root, load_rows, open_store, portable_bundle, portable_text, portable_value, read_results, suite_of

# -- the conformance matrix ----------------------------------------------------------------------
@dataclass
class MatrixRow:
    group: str
    key: str
    cases: int
    cells: dict[str, Counter]

    def passed(self, backend: str) -> int:
        return sum(self.cells[backend][o] for o in PASSING) if backend in self.cells else 0

    def ran(self, backend: str) -> int:
        return sum(self.cells[backend].values()) if backend in self.cells else 0


class ConformanceMatrix:
    """Outcome counts per (row, backend) for every view, and the "fails only here" pairs."""

    def __init__(self, backends: list[str], cases: dict[str, CaseInfo], outcomes: dict[tuple[str, str], str]) -> None:
        self.backends = list(backends)
        self.cases = cases
        self.outcomes = outcomes  # (case_id, backend label) -> outcome
        self._by_case: dict[str, dict[str, str]] = defaultdict(dict)
        for (case_id, backend), outcome in outcomes.items():
            self._by_case[case_id][backend] = outcome
        self.fails_only_here: set[tuple[str, str]] = self._fails_only_here()

    @classmethod
    def from_results(cls, backends: list[str], results: Iterable[dict[str, Any]]) -> "ConformanceMatrix":
        cases: dict[str, CaseInfo] = {}
        outcomes: dict[tuple[str, str], str] = {}
        for r in results:
            cases.setdefault(r["case_id"], CaseInfo.from_tags(r["case_id"], r.get("tags") or {}))
            outcomes[(r["case_id"], r.get("column", r["backend"]))] = r["outcome"]
        return cls(backends, cases, outcomes)

    def outcome(self, case_id: str, backend: str) -> str | None:
        return self.outcomes.get((case_id, backend))

    def _fails_only_here(self) -> set[tuple[str, str]]:
        """A case that fails on exactly one backend and passes on every other one that ran it
        (at least one other)."""
        out = set()
        for case_id, per in self._by_case.items():
            if len(per) < 2:
                continue
            failing = [b for b, o in per.items() if o in FAILURES]
            if len(failing) == 1 and all(o in PASSING for b, o in per.items() if b != failing[0]):
                out.add((case_id, failing[0]))
        return out

    def rows(self, view: str = "op-version") -> list[MatrixRow]:
        grouped: dict[tuple[str, str], MatrixRow] = {}
        for case_id, per in self._by_case.items():
            group, key = self.cases[case_id].row_key(view)
            row = grouped.get((group, key))
            if row is None:
                row = grouped[(group, key)] = MatrixRow(group, key, 0, {b: Counter() for b in self.backends})
            row.cases += 1
            for backend, outcome in per.items():
                row.cells.setdefault(backend, Counter())[outcome] += 1
        graph_last = lambda k: (k[0] == GRAPH_ROW, _natural(k[0]), _natural(k[1]))  # noqa: E731
        return [grouped[k] for k in sorted(grouped, key=graph_last)]

    def totals(self, backend: str) -> Counter:
        return Counter(o for (c, b), o in self.outcomes.items() if b == backend)


# -- the report -------------------------------------------------------------------------------------
@dataclass
class Report:
    runs: list[RunInfo]
    backends: list[BackendSummary]
    results: list[dict[str, Any]]  # merged: one row per (case, column), with "column", "run", "bundle_path"
    matrix: ConformanceMatrix
    perf: PerfTable
    history: History | None
    baseline: RunInfo | None = None
    diff: RunDiff | None = None
    #: the backend the perf matrix divides by (``report --perf-baseline``; default onnxruntime)
    perf_baseline: str | None = None
    generated: float = field(default_factory=time.time)
    #: benchmark results (``onnx-harness bench``): the performance section's, never conformance
    bench: list[dict[str, Any]] = field(default_factory=list)
    #: runs newer than those shown that the report leaves out because they ran a subset
    #: (:func:`.selection.hidden_runs`): (run label, what they ran)
    hidden: list[tuple[str, str]] = field(default_factory=list)
    _groups: list[FailureGroup] | None = field(default=None, repr=False)

    @property
    def title(self) -> str:
        return ", ".join(r.label for r in self.runs)

    def backend(self, label: str) -> BackendSummary:
        return next(b for b in self.backends if b.label == label)

    def failures(self) -> list[dict[str, Any]]:
        return [r for r in self.results if r["outcome"] in FAILURES]

    def failure_groups(self) -> list[FailureGroup]:
        """The non-passes grouped by cause (see :func:`failure_groups`), computed once."""
        if self._groups is None:
            self._groups = failure_groups(self.results, [b.label for b in self.backends], self.matrix.cases)
        return self._groups

    def unspecified(self) -> list[dict[str, Any]]:
        """Where runtimes differ on unspecified behaviour, backend by backend: per backend (in
        column order) its ``unspecified`` results grouped by spec-silent point, each with the
        point's spec text, our choice, the invariants kept, the op-versions and cases, and the
        first case's two values and bundle (as the comparator recorded them)."""
        out = []
        for b in self.backends:
            points: dict[str, dict[str, Any]] = {}
            for r in self.results:
                if r["column"] != b.label or (r.get("raw_outcome") or r["outcome"]) != "unspecified":
                    continue
                info = (r.get("verdict") or {}).get("spec_silent") or {}
                key = info.get("point") or "?"
                entry = points.get(key)
                if entry is None:
                    entry = points[key] = {"point": key, "spec": info.get("spec", ""), "choice": info.get("choice", ""),
                                           "invariants": info.get("invariants", []), "op_versions": [], "cases": 0,
                                           "example": r["case_id"], "expected": info.get("expected", ""),
                                           "actual": info.get("actual", ""), "index": info.get("index", ""),
                                           "bundle": r.get("bundle_rel") or ""}
                entry["cases"] += 1
                version = CaseInfo.from_tags(r["case_id"], r.get("tags") or {}).op_version
                if version and version not in entry["op_versions"]:
                    entry["op_versions"].append(version)
            for entry in points.values():
                entry["op_versions"].sort(key=_natural)
            if points:
                out.append({"backend": b.label, "points": [points[k] for k in sorted(points, key=_natural)]})
        return out


def build_report(refs: list[RunRef], baseline: RunRef | list[RunRef] | None = None, history: bool = True) -> Report:
    """Merge the runs into one view, then build the matrix, perf table, history and diff.
    ``baseline``: one run, or one run per (suite, backend) (:func:`.selection.baseline_runs`);
    the diff compares like for like (:func:`.selection.like_for_like`). Benchmark results go
    to ``Report.bench``, never to conformance."""
    if not refs:
        raise ReportError("no runs to report")
    runs = [RunInfo.from_store(ref) for ref in refs]
    # columns: (name, version); an unavailable entry is dropped when the name is available elsewhere
    entries: list[tuple[RunRef, dict[str, Any]]] = []
    rows_by_ref: dict[RunRef, list[dict[str, Any]]] = {}
    for ref in refs:
        store = open_store(ref.store)
        infos = {b["name"]: b for b in store.backends(ref.run_id)}
        rows = _restrict(read_results(store, ref.run_id), ref.only)
        if ref.only is not None:  # a run taken for some pairs: its other backends are another run's columns
            infos = {n: b for n, b in infos.items() if not b["available"] or any(n == backend for _, backend in ref.only)}
        rows_by_ref[ref] = rows
        for name in dict.fromkeys(r["backend"] for r in rows):
            infos.setdefault(name, {"name": name, "available": True, "reason": "", "version": "", "environment": {}})
        entries.extend((ref, info) for info in infos.values())
    available_names = {info["name"] for _, info in entries if info["available"]}
    # a column is a backend at one version with one set of options (--option): onnxruntime with
    # graph optimization disabled is not the same system as with it enabled
    options = {ref: {b.get("name"): b.get("options") or {} for b in run.args.get("backends") or []} for ref, run in zip(refs, runs)}
    config = lambda ref, name: json.dumps(options[ref].get(name) or {}, sort_keys=True, default=str)  # noqa: E731
    columns: dict[tuple[str, str, str], BackendSummary] = {}
    for ref, info in entries:
        if not info["available"] and info["name"] in available_names:
            continue
        key = (info["name"], info.get("version") or "", config(ref, info["name"])) if info["available"] else (info["name"], "", "")
        col = columns.get(key)
        if col is None:
            col = columns[key] = BackendSummary(info["name"], info["name"], info.get("version") or "", bool(info["available"]),
                                                info.get("reason") or "", portable_value(info.get("environment") or {}))
        if ref.label not in col.runs:
            col.runs.append(ref.label)
    clash = Counter(name for name, _, _ in columns)
    versions_of = defaultdict(set)
    for name, version, _ in columns:
        versions_of[name].add(version)
    for (name, version, opts), col in columns.items():
        if clash[name] > 1:
            mine = json.loads(opts or "{}")
            others = [json.loads(o or "{}") for n, _, o in columns if n == name and o != opts]
            differ = sorted({k for other in others for k in set(mine) | set(other) if mine.get(k) != other.get(k)})
            shown = ", ".join(f"{k}={mine[k]}" for k in differ if k in mine) or ("default options" if differ else "")
            label = f"{name} {version}".strip() if len(versions_of[name]) > 1 else name
            col.label = f"{label} ({shown})" if shown else label if label != name else f"{name} ({col.runs[0]})"
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for ref, run in zip(refs, runs):
        root = _run_root(ref.store, (run_environment_args(ref) or {}).get("store"))
        versions = {b["name"]: b.get("version") or "" for b in open_store(ref.store).backends(ref.run_id)}
        for r in rows_by_ref[ref]:
            col = columns.get((r["backend"], versions.get(r["backend"], ""), config(ref, r["backend"])))
            if col is None:  # a result of a backend recorded as unavailable: keep it under its name
                col = next(c for (n, _, _), c in columns.items() if n == r["backend"])
            r["column"] = col.label
            r["run"] = ref.label
            # the bundle's path on this machine (for links relative to a report's folder; never
            # written out) and relative to the folder the run started in (what artifacts show)
            r["bundle_path"] = _absolute_bundle(r.get("bundle"), root)
            r["bundle_rel"] = portable_bundle(r.get("bundle"), root)
            r["message"] = portable_text(r.get("message"), root)  # a traceback names the machine's files
            merged[(r["case_id"], col.label)] = r
    # benchmark results are their own view (the performance section), never conformance
    results, bench = conformance_rows(merged.values())
    backends = list(columns.values())
    by_label = {b.label: b for b in backends}
    for r in results:
        backend = by_label[r["column"]]
        backend.counts[r["outcome"]] += 1
        backend.raw_counts[r.get("raw_outcome") or r["outcome"]] += 1
        backend.not_loadable += (r.get("raw_outcome") or r["outcome"]) in NOT_LOADABLE
        backend.unchecked += unchecked(r)
    # every headline says over which cases it is computed
    selections = {ref: store_selections(ref.store)[ref.run_id] for ref in refs}
    ref_by_label = {ref.label: ref for ref in refs}
    over: dict[str, Counter] = defaultdict(Counter)
    for r in results:
        suite = suite_of(r["case_id"])
        selection = selections[ref_by_label[r["run"]]].get(suite) or Selection(suite)
        over[r["column"]][(selection.describe(), r["run"])] += 1
    for b in backends:
        b.over = [f"{text}, {run}: {n:,} case{'s' if n != 1 else ''}" for (text, run), n in over[b.label].items()]
    labels = [b.label for b in backends]
    matrix = ConformanceMatrix.from_results(labels, results)
    perf = PerfTable.from_results(backends, results)
    stores = list(dict.fromkeys(ref.store for ref in refs))
    hist = History.from_stores(stores, [next(r.store_label for r in refs if r.store == s) for s in stores]) if history else None
    report = Report(runs, backends, results, matrix, perf, hist, bench=bench)
    bases = [baseline] if isinstance(baseline, RunRef) else list(baseline or [])
    if bases:
        report.baseline = RunInfo.from_store(bases[0])
        label = bases[0].label if len(bases) == 1 else ", ".join(b.label for b in bases)
        rows = [r for b in bases for r in load_rows(b)]
        # the merged rows carry the backend's name in "backend": pairs match across the two sides
        report.diff = diff_like_with_like(rows, results, label, report.title, ref_selections(bases), ref_selections(refs))
        # as `onnx-harness diff` judges: a case an expectation marks nondeterministic may move between passing outcomes
        report.diff.allow_varying(expectations.load(sorted({c.backend for c in report.diff.changes})))
    return report


def run_environment_args(ref: RunRef) -> dict[str, Any]:
    return open_store(ref.store).run(ref.run_id).get("args") or {}
