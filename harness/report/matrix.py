"""Report data: plain objects built from the results store, which every writer renders.

- :class:`Report` gathers one or several runs (from one or several store files) into a merged
  view: a backend with the same name and version in two runs is one column (the later run wins
  a case both ran); the same name at two versions is two columns, side by side.
- :class:`ConformanceMatrix`: outcome counts per row (op x op-version, op x opset, op x dtype,
  suite) and backend, plus the "fails only here" pairs.
- :class:`PerfTable`: latency per case and backend with ratios to the fastest and to
  onnxruntime.
- :class:`History`: pass counts per backend over every run a store holds.
- :class:`RunDiff`: per case x backend, what changed between a base and a new set of results.

Nothing here formats text for a reader or judges an output again: outcomes and verdict numbers
are taken from the store as recorded.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import math
import os
import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..execute import FAILURES, NOT_LOADABLE, OUTCOMES
from ..schema import dtype_label

#: outcomes that count as passing (the pass rate's numerator)
PASSING = ("pass", "xpass")
#: outcomes counted apart, in neither the pass rate's numerator nor its denominator: a
#: difference only where the spec is silent, every invariant kept
APART = ("unspecified",)
#: the backend's own failures without an answer (the headline's "errors")
ERRORS = ("error", "crash", "timeout")
#: wrong answers: the backend computed something and it is wrong (the headline's first number after the rate)
WRONG_ANSWERS = ("mismatch", "wrong-shape", "wrong-dtype")
#: suites whose cases are whole models (bar charts in the performance section)
MODEL_SUITES = ("models", "onnx-light")
#: outcomes after which the latency measures a complete run
TIMED_OUTCOMES = ("pass", "xpass", "xfail", "unspecified", "mismatch", "wrong-shape", "wrong-dtype")
VIEWS = ("op-version", "opset", "dtype", "suite")
GRAPH_ROW = "(graphs)"


class ReportError(Exception):
    """A user-facing problem with the report's inputs (missing store, unknown run, ...)."""


# -- sources ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunRef:
    """One run in one store file; ``store_label`` is set when several stores are merged;
    ``only``: the (suite, backend) pairs taken from it (None: all of it)."""

    store: Path
    run_id: int
    store_label: str = ""
    only: frozenset[tuple[str, str]] | None = None

    @property
    def label(self) -> str:
        return f"{self.store_label}:run {self.run_id}" if self.store_label else f"run {self.run_id}"


@dataclass(frozen=True)
class JsonRef:
    """Results read from a JSON file (``results.json`` of a report, or a run's ``<store>.run-N.json``)."""

    path: Path

    @property
    def label(self) -> str:
        return self.path.name


_STORES: dict[Path, Any] = {}


def open_store(path: Path | str):
    from ..store import Store

    path = Path(path)
    if not path.is_file():
        raise ReportError(f"no results store at {path} (write one with: onnx-harness run ... --store {path})")
    key = path.resolve()
    if key not in _STORES:
        _STORES[key] = Store(path)
    return _STORES[key]


def _store_labels(stores: list[Path]) -> list[str]:
    if len(stores) <= 1:
        return [""] * len(stores)
    names = [Path(s).stem for s in stores]
    if len(set(names)) < len(names):
        names = [str(s) for s in stores]
    return names


def suite_of(case_id: str) -> str:
    """The suite a case id belongs to (its first segment: ``onnx-node/test_abs`` -> ``onnx-node``)."""
    return case_id.split("/", 1)[0]


def _pairs_per_run(store) -> dict[int, Counter]:
    """Per run: result count per (suite, backend)."""
    out: dict[int, Counter] = defaultdict(Counter)
    query = ("SELECT run_id, CASE WHEN instr(case_id, '/') > 0 THEN substr(case_id, 1, instr(case_id, '/') - 1) ELSE case_id END, "
             "backend, COUNT(*) FROM results GROUP BY 1, 2, 3")
    for run_id, suite, backend, n in store.db.execute(query):
        out[run_id][(suite, backend)] = n
    return out


def newest_runs(path: Path, label: str = "") -> list[RunRef]:
    """The newest run of every (suite, backend) the store holds, oldest first: a run is taken
    for the pairs no later run ran (``only``), or whole when no later run ran any of its pairs."""
    store = open_store(path)
    pairs = _pairs_per_run(store)
    taken: set[tuple[str, str]] = set()
    refs = []
    for run in reversed(store.runs()):
        mine = set(pairs.get(run["id"], ()))
        fresh = mine - taken
        if fresh or (not mine and not refs):  # a run without results (every backend unavailable) when nothing newer
            refs.append(RunRef(Path(path), run["id"], label, None if fresh == mine else frozenset(fresh)))
            taken |= fresh
    return list(reversed(refs))


def resolve_runs(texts: Iterable[str], stores: list[Path | str]) -> list[RunRef]:
    """RUN arguments -> run references. Without RUN: the newest run of every (suite, backend)
    of every store (:func:`newest_runs`).

    A RUN is ``N``, ``latest`` or ``previous`` (in the only store), ``S:N`` where S is a store
    file or the 1-based position of a ``--store``, or a store file (its latest run).
    """
    stores = [Path(s) for s in stores]
    labels = _store_labels(stores)
    texts = list(texts)
    if not texts:
        refs = []
        for path, label in zip(stores, labels):
            if open_store(path).latest_run() is None:
                raise ReportError(f"{path} holds no runs yet")
            refs.extend(newest_runs(path, label))
        return refs
    return [resolve_run(t, stores, labels) for t in texts]


def resolve_run(text: str, stores: list[Path], labels: list[str] | None = None) -> RunRef:
    labels = labels or _store_labels(stores)
    where, sep, which = text.rpartition(":")
    if sep and where:
        if where.isdigit() and 1 <= int(where) <= len(stores) and not Path(where).exists():
            index = int(where) - 1
            return _pick(stores[index], which, labels[index])
        path = Path(where)
        return _pick(path, which, _label_for(path, stores, labels))
    if Path(text).is_file():
        return _pick(Path(text), "latest", _label_for(Path(text), stores, labels))
    if len(stores) != 1:
        raise ReportError(f"run {text!r} is ambiguous with {len(stores)} stores: write STORE:RUN, e.g. 1:{text} or {stores[0]}:{text}")
    return _pick(stores[0], text, labels[0])


def _label_for(path: Path, stores: list[Path], labels: list[str]) -> str:
    for s, label in zip(stores, labels):
        if Path(s).resolve() == path.resolve():
            return label
    return path.stem if len(stores) > 1 or stores and Path(stores[0]).resolve() != path.resolve() else ""


def _pick(store_path: Path, which: str, label: str) -> RunRef:
    store = open_store(store_path)
    runs = store.runs()
    if not runs:
        raise ReportError(f"{store_path} holds no runs yet")
    which = which.strip().lower()
    if which in ("", "latest", "last"):
        return RunRef(store_path, runs[-1]["id"], label)
    if which in ("previous", "prev"):
        if len(runs) < 2:
            raise ReportError(f"{store_path} holds only one run: there is no previous run")
        return RunRef(store_path, runs[-2]["id"], label)
    if not which.isdigit():
        raise ReportError(f"bad run {which!r}: expected a run number, 'latest' or 'previous'")
    ids = [r["id"] for r in runs]
    if int(which) not in ids:
        raise ReportError(f"no run {which} in {store_path} (runs: {_ranges(ids)})")
    return RunRef(store_path, int(which), label)


def _ranges(ids: list[int]) -> str:
    return f"{ids[0]}..{ids[-1]}" if len(ids) > 3 else ", ".join(map(str, ids))


def read_results(store, run_id: int) -> list[dict[str, Any]]:
    """The rows of ``Store.results``, read in one pass; identical JSON texts (a case's tags,
    shared by every backend) are parsed once and shared, so treat the dicts as read-only."""
    parsed: dict[str, Any] = {}

    def load(text: str | None) -> Any:
        if not text:
            return {}
        value = parsed.get(text)
        if value is None:
            value = parsed[text] = json.loads(text)
        return value

    rows = []
    for row in store.db.execute("SELECT * FROM results WHERE run_id = ? ORDER BY id", (run_id,)):
        d = dict(row)
        d["verdict"] = json.loads(d["verdict"]) if d["verdict"] else {}
        d["restamp"] = load(d["restamp"])
        d["tags"] = load(d["tags"])
        d["timing"] = json.loads(d["timing"]) if d.get("timing") else {}
        rows.append(d)
    return rows


def pairs_of(ref: RunRef) -> set[tuple[str, str]]:
    """The (suite, backend) pairs a run reference covers."""
    ran = set(_pairs_per_run(open_store(ref.store)).get(ref.run_id, ()))
    return ran if ref.only is None else ran & set(ref.only)


def previous_like(refs: list[RunRef]) -> list[RunRef]:
    """The default baseline, like with like: for every (suite, backend) the selected runs cover,
    the newest earlier run of the same store that ran that suite on that backend (restricted
    to it). Pairs run for the first time have none."""
    out: dict[tuple[Path, int], set[tuple[str, str]]] = defaultdict(set)
    labels = {}
    for ref in refs:
        per_run = _pairs_per_run(open_store(ref.store))
        for pair in pairs_of(ref):
            earlier = [run_id for run_id, pairs in per_run.items() if run_id < ref.run_id and pair in pairs]
            if earlier:
                out[(ref.store, max(earlier))].add(pair)
                labels[ref.store] = ref.store_label
    return [RunRef(store, run_id, labels[store], frozenset(pairs)) for (store, run_id), pairs in sorted(out.items(), key=lambda kv: kv[0][1])]


def previous_run(refs: list[RunRef]) -> RunRef | None:
    """The default baseline: the run just before the earliest selected run of the first store."""
    if not refs:
        return None
    first = refs[0]
    selected = {r.run_id for r in refs if r.store == first.store}
    earlier = [r["id"] for r in open_store(first.store).runs() if r["id"] < min(selected)]
    return RunRef(first.store, earlier[-1], first.store_label) if earlier else None


def _run_root(store_path: Path, stored: str | None) -> Path:
    """The folder a run was started from, which relative bundle paths are relative to."""
    resolved = store_path.resolve()
    if stored and not Path(stored).is_absolute():
        parts = Path(stored).parts
        if len(parts) < len(resolved.parts) and resolved.parts[-len(parts):] == parts:
            return Path(*resolved.parts[: -len(parts)])
    return resolved.parent.parent if resolved.parent.name == "reports" else resolved.parent


def _absolute_bundle(bundle: str | None, root: Path) -> str:
    if not bundle:
        return ""
    return bundle if os.path.isabs(bundle) else os.path.join(root, bundle)


def portable_bundle(bundle: str | None, root: Path) -> str:
    """A bundle's path as a reader elsewhere can use it: relative to the folder the run started
    in (``reports/bundles/run-2/onnxruntime/...``); an absolute path outside that folder keeps
    only its last three parts (``run-2/onnxruntime/<case>``), never the machine's path."""
    if not bundle:
        return ""
    if not os.path.isabs(bundle):
        return Path(bundle).as_posix()
    try:
        return Path(bundle).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return "/".join(Path(bundle).parts[-3:])


# -- the headline -----------------------------------------------------------------------------
def unchecked(result: dict[str, Any]) -> bool:
    """An ``unspecified`` result whose differing open elements no reading of its spec-silent
    points computes (``Comparator.spec_silent``): accepted, but not checked against any reading."""
    return result.get("outcome") == "unspecified" and bool(((result.get("verdict") or {}).get("spec_silent") or {}).get("unchecked"))


def headline(counts: Counter, raw: Counter, not_loadable: int, unchecked: int = 0) -> dict[str, Any]:
    """A backend's headline numbers, the same in the terminal, results.json, summary.md and the
    HTML report. ``counts``: results per outcome after expectations; ``raw``: per outcome before
    them (an expected mismatch is still a wrong answer); ``not_loadable``: results whose raw
    outcome is in ``NOT_LOADABLE``.

    - ``attempted``: the cases run (skips excluded) less those the backend could not load because
      the model is invalid (``rejected``, which the ONNX checker confirms; see
      harness/backends/base.py) or its export failed, less those counted apart (``unspecified``):
      the pass rate's denominator, shown with what it leaves out (``refused``, ``unspecified``).
    - ``conformance``: passes over ``attempted`` (the pass rate).
    - ``wrong_answers``, ``not_implemented`` (``unsupported``: a missing op, type or version at
      load or at run), ``errors`` (error, crash, timeout), each with its share of ``attempted``;
      with the passes they add up to ``attempted``.
    - ``unchecked``: of the ``unspecified`` results, those no reading of their point checks
      (``unchecked``).
    """
    total = sum(counts.values()) - counts["skip"]
    apart = sum(counts[o] for o in APART)
    attempted = total - not_loadable - apart
    passed = sum(counts[o] for o in PASSING)
    share = lambda n: n / attempted if attempted else None  # noqa: E731
    wrong = sum(raw[o] for o in WRONG_ANSWERS)
    missing = raw["unsupported"]
    errors = sum(raw[o] for o in ERRORS)
    return {"attempted": attempted, "passed": passed, "conformance": share(passed),
            "wrong_answers": wrong, "wrong_answer_share": share(wrong),
            "not_implemented": missing, "not_implemented_share": share(missing),
            "errors": errors, "error_share": share(errors),
            "refused": not_loadable, "unspecified": apart, "unchecked": unchecked}


# -- plain records ------------------------------------------------------------------------------
@dataclass
class RunInfo:
    label: str
    store: str
    id: int
    started: float | None
    finished: float | None
    status: str
    command: str
    environment: dict[str, Any]
    #: the run's arguments as stored (what the reproduce commands are built from)
    args: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_store(cls, ref: RunRef) -> "RunInfo":
        run = open_store(ref.store).run(ref.run_id)
        return cls(ref.label, str(ref.store), run["id"], run["started"], run["finished"], run["status"],
                   run.get("command") or "", run.get("environment") or {}, run.get("args") or {})

    @property
    def portable_command(self) -> str:
        """The run's command as ``onnx-harness run ...``, shell-quoted, without the machine's
        path to the script (stored commands start with it)."""
        import shlex

        try:
            argv = shlex.split(self.command)
        except ValueError:
            return self.command
        if "run" in argv[:3]:
            argv = ["onnx-harness", *argv[argv.index("run"):]]
        return shlex.join(argv)


@dataclass
class BackendSummary:
    """One column of the report: a backend at one version, over the runs that ran it."""

    label: str
    name: str
    version: str = ""
    available: bool = True
    reason: str = ""
    environment: dict[str, Any] = field(default_factory=dict)
    runs: list[str] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)
    #: results the backend could not load (rejected models, failed exports), known failures included
    not_loadable: int = 0
    #: results per outcome before expectations (an xfail counted as what it was)
    raw_counts: Counter = field(default_factory=Counter)
    #: ``unspecified`` results that no reading checks (:func:`unchecked`)
    unchecked: int = 0

    @property
    def total(self) -> int:
        """Cases that ran (skips excluded), as ``cli.backend_counts`` counts them."""
        return sum(self.counts.values()) - self.counts["skip"]

    @property
    def loadable(self) -> int:
        """The pass rate's denominator: cases it could load, less those counted apart (``APART``)."""
        return self.total - self.not_loadable - sum(self.counts[o] for o in APART)

    @property
    def passed(self) -> int:
        return sum(self.counts[o] for o in PASSING)

    @property
    def pass_rate(self) -> float | None:
        """Passes over the cases it could load; None when it loaded none (or is unavailable)."""
        return self.passed / self.loadable if self.available and self.loadable else None

    @property
    def headline(self) -> dict[str, Any]:
        """See :func:`headline`; shares are None when the backend is unavailable."""
        numbers = headline(self.counts, self.raw_counts, self.not_loadable, self.unchecked)
        if not self.available:
            numbers.update({k: None for k in numbers if k == "conformance" or k.endswith("_share")})
        return numbers

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "name": self.name, "version": self.version, "available": self.available,
                "reason": self.reason, "environment": self.environment, "runs": self.runs,
                "counts": {o: self.counts[o] for o in OUTCOMES if self.counts[o]}, "total": self.total,
                "loadable": self.loadable, "not_loadable": self.not_loadable, "pass_rate": self.pass_rate,
                "headline": self.headline}


@dataclass
class CaseInfo:
    """What the report knows of a case: its tags, as the suite recorded them."""

    case_id: str
    suite: str
    op: str | None
    domain: str
    since_version: int | None
    opset: int | None
    dtype: str
    tags: dict[str, Any]

    @classmethod
    def from_tags(cls, case_id: str, tags: dict[str, Any]) -> "CaseInfo":
        suite = tags.get("suite") or case_id.split("/", 1)[0]
        # one vocabulary: stores written before model_tags named dtypes "float", "double"
        dtype = dtype_label(tags.get("dtype") or "") or ",".join(dtype_label(d) for d in tags.get("dtypes") or []) or "-"
        since = tags.get("since_version")
        opset = tags.get("opset")
        return cls(case_id, suite, tags.get("op"), tags.get("domain") or "ai.onnx",
                   int(since) if since is not None else None, int(opset) if opset is not None else None, str(dtype), tags)

    @property
    def op_label(self) -> str:
        if not self.op:
            return GRAPH_ROW
        return self.op if self.domain in ("ai.onnx", "") else f"{self.domain}.{self.op}"

    @property
    def op_version(self) -> str | None:
        return f"{self.op_label}-{self.since_version}" if self.op and self.since_version is not None else None

    @property
    def is_model(self) -> bool:
        return self.suite in MODEL_SUITES

    def row_key(self, view: str) -> tuple[str, str]:
        """(group, key) of the matrix row this case falls in, for one view."""
        if view == "op-version":
            return self.op_label, str(self.since_version) if self.since_version is not None else "-"
        if view == "opset":
            return self.op_label, str(self.opset) if self.opset is not None else "-"
        if view == "dtype":
            return self.op_label, self.dtype
        if view == "suite":
            return self.suite, ""
        raise ValueError(f"unknown view {view!r}; views: {', '.join(VIEWS)}")


_DIGITS = re.compile(r"(\d+)")


@functools.lru_cache(maxsize=200_000)
def _natural(text: str) -> tuple[Any, ...]:
    """Sort key that puts ``Clip-6`` before ``Clip-11``."""
    return tuple((0, int(p)) if p.isdigit() else (1, p.lower()) for p in _DIGITS.split(text) if p)


# -- failures grouped by cause ------------------------------------------------------------------------
#: how a non-pass ranks in the failure groups (first: what a vendor must fix first), with its kind
CAUSE_KINDS = {
    "mismatch": (0, "wrong answer"), "wrong-shape": (0, "wrong answer"), "wrong-dtype": (0, "wrong answer"),
    "error": (1, "error"), "crash": (1, "error"), "timeout": (1, "error"),
    "unsupported": (2, "not implemented"),
    "rejected": (3, "refused"), "export-failed": (3, "refused"),
    "xfail": (4, "expected failure"),
}
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.+-]+){2,}[\\/]?")
# a number not glued to a name (float16, int64, Conv2D keep theirs)
_NUMBER = re.compile(r"(?<![A-Za-z_\d.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?![A-Za-z_\d])")
_INDEX = re.compile(r"\[(?:N(?:,\s*N)*)?\]")
CAUSE_CHARS = 200


def normalize_message(message: str | None) -> str:
    """A message with what differs from case to case stripped: numbers (values, indices, shapes,
    counts) become ``N`` (a bracketed index or shape of any rank ``[…]``), quoted names ``'…'``, paths ``<path>``; dtype and op names stay, so
    one cause over many cases reads as one text."""
    text = " ".join(str(message or "").split())[:2000]
    text = _HEX.sub("0x…", text)
    text = _QUOTED.sub("'…'", text)
    text = _PATH.sub("<path>", text)
    text = _NUMBER.sub("N", text)
    text = _INDEX.sub("[…]", text)  # an index or shape of any rank: [N], [N,N,N] are one cause
    text = " ".join(text.split())
    return text[: CAUSE_CHARS - 1] + "…" if len(text) > CAUSE_CHARS else text


@dataclass
class FailureGroup:
    """Non-passes of one backend that share an op, an outcome and a normalized message."""

    backend: str
    op: str
    outcome: str
    cause: str
    kind: str
    rank: int
    cases: int = 0
    dtypes: Counter = field(default_factory=Counter)
    op_versions: list[str] = field(default_factory=list)
    example: dict[str, Any] = field(default_factory=dict)
    #: the (case id, column) of every member
    members: list[tuple[str, str]] = field(default_factory=list)

    @property
    def label(self) -> str:
        """E.g. ``ArgMax unsupported for float16: NOT_IMPLEMENTED : Could not find ...``."""
        dtypes = ", ".join(self.dtypes)
        return f"{self.op} {self.outcome}" + (f" for {dtypes}" if dtypes and dtypes != "-" else "") + (f": {self.cause}" if self.cause else "")

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "op": self.op, "outcome": self.outcome, "kind": self.kind, "cause": self.cause,
                "cases": self.cases, "dtypes": dict(self.dtypes), "op_versions": self.op_versions,
                "example": self.example.get("case_id", ""), "label": self.label}


def failure_groups(results: Iterable[dict[str, Any]], backends: list[str], cases: dict[str, "CaseInfo"] | None = None) -> list[FailureGroup]:
    """Cluster the non-passes (failures and expected failures) per backend by op, outcome and
    normalized message (:func:`normalize_message`). Ordered: wrong answers, then the backend's
    errors, missing kernels, refused models, expected failures; within a kind the largest first."""
    order = {b: n for n, b in enumerate(backends)}
    groups: dict[tuple[str, str, str, str], FailureGroup] = {}
    for r in results:
        outcome = r["outcome"]
        if outcome not in CAUSE_KINDS:
            continue
        info = (cases or {}).get(r["case_id"]) or CaseInfo.from_tags(r["case_id"], r.get("tags") or {})
        column = r.get("column", r["backend"])
        op = info.op_label if info.op else f"{info.suite} graphs"
        cause = normalize_message(r.get("message"))
        key = (column, op, outcome, cause)
        g = groups.get(key)
        if g is None:
            rank, kind = CAUSE_KINDS[outcome]
            g = groups[key] = FailureGroup(column, op, outcome, cause, kind, rank, example=r)
        g.cases += 1
        g.dtypes[info.dtype] += 1
        if info.op_version and info.op_version not in g.op_versions:
            g.op_versions.append(info.op_version)
        g.members.append((r["case_id"], column))
    for g in groups.values():
        g.op_versions.sort(key=_natural)
        g.dtypes = Counter(dict(sorted(g.dtypes.items(), key=lambda kv: _natural(kv[0]))))
    return sorted(groups.values(), key=lambda g: (g.rank, -g.cases, order.get(g.backend, len(order)), _natural(g.op), g.cause))


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
            for run_id, backend, suite, outcome, n in store.db.execute(
                    "SELECT run_id, backend, CASE WHEN instr(case_id, '/') > 0 THEN substr(case_id, 1, instr(case_id, '/') - 1) "
                    "ELSE case_id END, outcome, COUNT(*) FROM results GROUP BY 1, 2, 3, 4"):
                counts[(run_id, f"{backend} · {suite}")][outcome] = n
            unavailable = {(r[0], r[1]) for r in store.db.execute("SELECT run_id, name FROM backends WHERE available = 0")}
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


# -- diffs ------------------------------------------------------------------------------------------
def outcome_class(outcome: str | None) -> str | None:
    """The row and column of :data:`TRANSITIONS`: ``pass`` (pass, xpass), ``xfail``, ``skip``,
    ``unspecified``, ``failure`` (any other outcome) or None (the case x backend is not in that run)."""
    if outcome is None or outcome in ("xfail", "skip", "unspecified"):
        return outcome
    return "pass" if outcome in PASSING else "failure"


#: What a change of outcome of one case x backend is, for every pair of outcome classes (before,
#: after); a change is in its kind's section. ``failure -> failure`` is one failure outcome for
#: another (mismatch -> crash); an outcome that stayed the same is no change. The regressions
#: (what ``diff`` fails on) are every loss of evidence that a case passes or that a failure is
#: known: a pass or known failure that now fails, is skipped or is gone; a failure that now
#: fails differently (the bug moved, its expectation and bundle no longer describe it); a case
#: that runs for the first time (new, or before skipped) without passing.
#:
#: ``unspecified`` (a difference only where the spec is silent, every invariant kept) is no
#: regression when it comes from or goes to a pass: the backend changed its choice where the spec
#: leaves the choice to it, so no evidence of conformance is lost; such a change is listed in its
#: own kind (a user relying on one choice wants to see it). Breaking an invariant after keeping it
#: (unspecified -> failure) is a regression like pass -> failure.
TRANSITIONS: dict[tuple[str | None, str | None], str] = {
    ("pass", "failure"): "regressed",
    ("pass", "xfail"): "pass-to-xfail",
    ("xfail", "failure"): "xfail-to-failure",
    ("failure", "failure"): "failure-changed",
    ("pass", "skip"): "skipped",
    ("xfail", "skip"): "skipped",
    ("failure", "skip"): "skipped",
    ("skip", "failure"): "skip-to-failure",
    ("skip", "xfail"): "skip-to-failure",
    (None, "failure"): "new-failing",
    (None, "xfail"): "new-failing",
    (None, "skip"): "new-failing",
    ("pass", None): "removed",
    ("xfail", None): "removed",
    ("failure", None): "removed",
    ("skip", None): "removed",
    ("xfail", "pass"): "improved",
    ("failure", "pass"): "improved",
    ("skip", "pass"): "improved",
    ("pass", "pass"): "changed",       # pass <-> xpass: an expectation was added or removed
    ("failure", "xfail"): "changed",   # a failure now expected
    (None, "pass"): "new",
    ("pass", "unspecified"): "unspecified-changed",
    ("unspecified", "pass"): "unspecified-changed",
    ("unspecified", "failure"): "regressed",
    ("unspecified", "xfail"): "pass-to-xfail",
    ("unspecified", "skip"): "skipped",
    ("unspecified", None): "removed",
    ("failure", "unspecified"): "improved",
    ("xfail", "unspecified"): "improved",
    ("skip", "unspecified"): "improved",
    (None, "unspecified"): "new",
}
#: every kind in the order ``diff`` and the reports list them, with what it means; the first
#: ones are the regressions
KINDS: dict[str, str] = {
    "regressed": "pass -> failure",  # unspecified -> failure too (see TRANSITIONS)
    "pass-to-xfail": "pass -> expected failure",
    "xfail-to-failure": "expected failure -> a failure no expectation covers",
    "failure-changed": "one failure -> another",
    "skipped": "ran -> skip",
    "skip-to-failure": "skip -> failure or expected failure",
    "new-failing": "new case x backend that does not pass",
    "removed": "case x backend no longer in the run",
    "unspecified-changed": "pass <-> unspecified: the backend's choice where the spec is silent changed, every invariant kept",
    "improved": "failure, expected failure or skip -> pass or unspecified",
    "changed": "pass <-> xpass, failure -> expected failure",
    "new": "new case x backend that passes (or differs only where the spec is silent)",
}
REGRESSION_KINDS = tuple(KINDS)[:8]
CHANGE_KINDS = tuple(KINDS)


def classify_change(before: str | None, after: str | None) -> str | None:
    """The kind of a change of outcome (see :data:`TRANSITIONS`); None when nothing changed."""
    if before == after:
        return None
    return TRANSITIONS[outcome_class(before), outcome_class(after)]


@dataclass
class Change:
    kind: str
    case_id: str
    backend: str
    before: str | None
    after: str | None
    message: str = ""
    bundle: str = ""
    allowed: bool = False

    @property
    def regression(self) -> bool:
        return self.kind in REGRESSION_KINDS

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "regression": self.regression}


def _allow_matches(pattern: str, change: Change) -> bool:
    backend_glob, sep, case_glob = pattern.partition(":")
    if not sep:
        backend_glob, case_glob = "*", pattern
    return fnmatch.fnmatchcase(change.backend, backend_glob) and fnmatch.fnmatchcase(change.case_id, case_glob)


@dataclass
class RunDiff:
    base: str
    new: str
    changes: list[Change]
    #: with :func:`diff_like_with_like`: the (suite, backend) pairs compared, and those only one side ran (with case counts)
    compared: list[tuple[str, str]] | None = None
    only_base: dict[tuple[str, str], int] = field(default_factory=dict)
    only_new: dict[tuple[str, str], int] = field(default_factory=dict)

    @property
    def disjoint(self) -> bool:
        """Both sides ran something, but no suite on the same backend: nothing to compare."""
        return self.compared == [] and bool(self.only_base) and bool(self.only_new)

    def scope(self) -> str:
        """What was compared, in words (empty for a plain diff)."""
        if self.compared is None:
            return ""
        if self.disjoint:
            return (f"{self.base} and {self.new} ran no suite on the same backend ({self.base}: {pair_text(self.only_base)}; "
                    f"{self.new}: {pair_text(self.only_new)}): nothing to compare")
        text = f"compared: {pair_text(self.compared)}"
        counted = lambda pairs: ", ".join(f"{s} on {b} ({n:,} result{'s' if n != 1 else ''})" for (s, b), n in pairs.items())  # noqa: E731
        if self.only_new:
            text += f"; nothing earlier to compare with: {counted(self.only_new)}"
        if self.only_base:
            text += f"; only in {self.base}: {counted(self.only_base)}"
        return text

    def of_kind(self, kind: str) -> list[Change]:
        return [c for c in self.changes if c.kind == kind]

    @property
    def regressions(self) -> list[Change]:
        """Regressions not accepted by an ``--allow`` pattern: what fails a CI gate."""
        return [c for c in self.changes if c.regression and not c.allowed]

    def counts(self) -> Counter:
        return Counter(c.kind for c in self.changes)

    def allow(self, patterns: Iterable[str]) -> list[str]:
        """Mark the changes matching ``[BACKEND:]CASE-GLOB`` as accepted; returns the patterns that
        matched nothing."""
        unused = []
        for pattern in patterns:
            hit = False
            for change in self.changes:
                if _allow_matches(pattern, change):
                    change.allowed = hit = True
            if not hit:
                unused.append(pattern)
        return unused

    def to_dict(self) -> dict[str, Any]:
        out = {"base": self.base, "new": self.new, "counts": dict(self.counts()), "changes": [c.to_dict() for c in self.changes]}
        if self.compared is not None:
            out.update(compared=[list(p) for p in self.compared], scope=self.scope(), disjoint=self.disjoint,
                       only_base=[[s, b, n] for (s, b), n in self.only_base.items()],
                       only_new=[[s, b, n] for (s, b), n in self.only_new.items()])
        return out


def diff_results(base: Iterable[dict[str, Any]], new: Iterable[dict[str, Any]], base_label: str = "base", new_label: str = "new") -> RunDiff:
    """Compare two sets of result rows per (case id, backend name); later rows win duplicates."""
    before = {(r["case_id"], r["backend"]): r for r in base}
    after = {(r["case_id"], r["backend"]): r for r in new}
    changes = []
    for key in list(before) + [k for k in after if k not in before]:
        b, a = before.get(key), after.get(key)
        kind = classify_change(b["outcome"] if b else None, a["outcome"] if a else None)
        if kind:
            row = a or b
            changes.append(Change(kind, key[0], key[1], b["outcome"] if b else None, a["outcome"] if a else None,
                                  (row.get("message") or "") if a else "", (a or {}).get("bundle_path") or (a or {}).get("bundle") or ""))
    order = {k: n for n, k in enumerate(CHANGE_KINDS)}
    changes.sort(key=lambda c: (order[c.kind], _natural(c.case_id), c.backend))
    return RunDiff(base_label, new_label, changes)


def load_rows(source: RunRef | JsonRef) -> list[dict[str, Any]]:
    """Result rows of a run in a store, or of a JSON file written by ``report`` or ``run``."""
    if isinstance(source, JsonRef):
        try:
            doc = json.loads(source.path.read_text())
        except (OSError, ValueError) as exc:
            raise ReportError(f"cannot read results from {source.path}: {exc}") from exc
        rows = doc.get("results") if isinstance(doc, dict) else None
        if not isinstance(rows, list) or not all(isinstance(r, dict) and {"case_id", "backend", "outcome"} <= set(r) for r in rows):
            raise ReportError(f"{source.path} is not a results file (expected a 'results' list with case_id, backend, outcome)")
        return rows
    return _restrict(read_results(open_store(source.store), source.run_id), source.only)


def _restrict(rows: list[dict[str, Any]], only: frozenset[tuple[str, str]] | set[tuple[str, str]] | None) -> list[dict[str, Any]]:
    return rows if only is None else [r for r in rows if (suite_of(r["case_id"]), r["backend"]) in only]


def _pair_counts(rows: Iterable[dict[str, Any]]) -> Counter:
    return Counter((suite_of(r["case_id"]), r["backend"]) for r in rows)


def pair_text(pairs: Iterable[tuple[str, str]]) -> str:
    """``onnx-node on reference, onnxruntime; operators on onnxruntime``."""
    by_suite: dict[str, list[str]] = defaultdict(list)
    for suite, backend in sorted(pairs):
        by_suite[suite].append(backend)
    return "; ".join(f"{suite} on {', '.join(b)}" for suite, b in by_suite.items()) or "nothing"


def diff_like_with_like(base: list[dict[str, Any]], new: list[dict[str, Any]], base_label: str, new_label: str) -> RunDiff:
    """A diff over the (suite, backend) pairs both sides ran, and only those: a suite or backend
    one side did not run is named in ``only_base`` / ``only_new`` with its case count instead
    of listing every one of its cases as removed or new. Two sides without a pair in common
    give a diff with no change and ``disjoint`` set: nothing was compared."""
    before, after = _pair_counts(base), _pair_counts(new)
    common = set(before) & set(after)
    diff = diff_results(_restrict(base, common), _restrict(new, common), base_label, new_label)
    diff.compared = sorted(common)
    diff.only_base = {p: n for p, n in sorted(before.items()) if p not in common}
    diff.only_new = {p: n for p, n in sorted(after.items()) if p not in common}
    return diff


def resolve_source(text: str, stores: list[Path]) -> RunRef | JsonRef:
    """A diff side: a JSON results file, or a run as :func:`resolve_run` reads it."""
    if text.endswith(".json"):
        path = Path(text)
        if not path.is_file():
            raise ReportError(f"no results file {path}")
        return JsonRef(path)
    return resolve_run(text, stores)


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

    def export_matrix(self):
        """The models suite's exporter x opset x backend matrix (:mod:`.export_matrix`)."""
        from .export_matrix import ExportMatrix

        return ExportMatrix.from_results([b.label for b in self.backends], self.results)

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
                                           "bundle": r.get("bundle_path") or ""}
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
    ``baseline``: one run, or one run per (suite, backend) (:func:`previous_like`); the diff
    compares like with like (:func:`diff_like_with_like`)."""
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
                                                info.get("reason") or "", info.get("environment") or {})
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
            r["bundle_path"] = _absolute_bundle(r.get("bundle"), root)
            r["bundle_rel"] = portable_bundle(r.get("bundle"), root)
            merged[(r["case_id"], col.label)] = r
    results = list(merged.values())
    backends = list(columns.values())
    for r in results:
        backend = next(b for b in backends if b.label == r["column"])
        backend.counts[r["outcome"]] += 1
        backend.raw_counts[r.get("raw_outcome") or r["outcome"]] += 1
        backend.not_loadable += (r.get("raw_outcome") or r["outcome"]) in NOT_LOADABLE
        backend.unchecked += unchecked(r)
    labels = [b.label for b in backends]
    matrix = ConformanceMatrix.from_results(labels, results)
    perf = PerfTable.from_results(backends, results)
    stores = list(dict.fromkeys(ref.store for ref in refs))
    hist = History.from_stores(stores, [next(r.store_label for r in refs if r.store == s) for s in stores]) if history else None
    report = Report(runs, backends, results, matrix, perf, hist)
    bases = [baseline] if isinstance(baseline, RunRef) else list(baseline or [])
    if bases:
        report.baseline = RunInfo.from_store(bases[0])
        label = bases[0].label if len(bases) == 1 else ", ".join(b.label for b in bases)
        rows = [r for b in bases for r in load_rows(b)]
        # the merged rows carry the backend's name in "backend": pairs match across the two sides
        scope = diff_like_with_like(rows, results, label, report.title)
        if isinstance(baseline, RunRef) and not scope.disjoint:
            # a baseline the user chose: every change, a suite or backend that vanished included
            full = diff_results(rows, results, label, report.title)
            full.compared, full.only_base, full.only_new = scope.compared, scope.only_base, scope.only_new
            scope = full
        report.diff = scope
    return report


def run_environment_args(ref: RunRef) -> dict[str, Any]:
    return open_store(ref.store).run(ref.run_id).get("args") or {}
