"""The site's data, computed once from merged stores, before any page is written.

- A **column** is one runtime at one release (``onnxruntime`` 1.32.0, ``onnxruntime@1.28`` is
  ``onnxruntime`` 1.28.x): the runs :func:`harness.report.selection.default_runs` takes for it
  (the newest full run of each suite; a ``-k`` subset never hides a fuller run).
- **Like for like**: per suite, the cases every scored column ran with the same draw (suite,
  opset, seed, examples). A column's conformance on the front page is computed over that common
  set and says so; a column of another draw is "not compared".
- A column that looks broken (no case, every case skipped or unsupported, the backend
  unavailable, or a collapse of more than 20 points against the previous release over the same
  cases) is **flagged**, not scored.
- Per op-version (cases tagged with ``op`` and ``since_version``: the operators suite and the
  official cases built per node), per column: outcome counts and the non-passes with their
  message, the expectation's reason and the finding it names.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import findings as findings_mod
from ..report.records import APART, ERRORS, PASSING, WRONG_ANSWERS
from ..report.selection import Selection, default_runs, store_selections
from ..report.sources import ReportError, _absolute_bundle, _run_root, open_store, portable_text, suite_of

#: the display classes of an outcome (its raw outcome: an expected mismatch is still a wrong answer)
CLASSES = ("pass", "wrong", "unsupported", "error", "unspecified", "refused", "skip")
#: a drop in conformance over the same cases that flags a release as a collapse
COLLAPSE_POINTS = 20.0
#: non-passes listed per column on an op-version page (all of them are in its JSON)
LISTED = 60


def outcome_class(outcome: str, raw: str | None) -> str:
    raw = raw or outcome
    if outcome in PASSING or raw in PASSING:
        return "pass"
    if raw in WRONG_ANSWERS:
        return "wrong"
    if raw in ERRORS:
        return "error"
    if raw in APART:
        return "unspecified"
    if raw in ("rejected", "export-failed"):
        return "refused"
    if raw == "skip":
        return "skip"
    return raw if raw in CLASSES else "error"


def split_backend(name: str, version: str) -> tuple[str, str]:
    """(runtime, release): ``onnxruntime@1.28`` at 1.28.1 is ``onnxruntime`` 1.28.1; a backend
    without a version is its own release "-"."""
    runtime = name.split("@", 1)[0]
    return runtime, version or (name.split("@", 1)[1] if "@" in name else "-")


def release_key(release: str) -> tuple:
    return tuple(int(p) if p.isdigit() else -1 for p in re.split(r"[.+-]", release))


@dataclass
class SuiteStat:
    selection: str
    draw: tuple
    counts: Counter = field(default_factory=Counter)
    known: int = 0  # non-passes an expectation lists
    cases: set[str] = field(default_factory=set)  # every case run, skips excluded
    passed: set[str] = field(default_factory=set)
    apart: set[str] = field(default_factory=set)
    # over the like-for-like case set (filled by ``compare``)
    common: int = 0
    common_pass: int = 0
    common_attempted: int = 0
    compared: bool = True

    @property
    def total(self) -> int:
        return sum(self.counts.values()) - self.counts["skip"]

    @property
    def conformance(self) -> float | None:
        return 100.0 * self.common_pass / self.common_attempted if self.common_attempted else None


@dataclass
class Column:
    runtime: str
    release: str
    backend: str
    store: str
    available: bool = True
    reason: str = ""
    suites: dict[str, SuiteStat] = field(default_factory=dict)
    flags: dict[str, str] = field(default_factory=dict)  # suite -> why it is not scored

    @property
    def key(self) -> str:
        return f"{self.runtime} {self.release}"

    @property
    def slug(self) -> str:
        return slug(f"{self.runtime}-{self.release}")


@dataclass
class Site:
    columns: list[Column]
    suites: list[str]
    #: op-version key -> (suite, column index) -> Counter of classes: a cell compares one suite's cases
    cells: dict[str, dict[tuple[str, int], Counter]]
    #: op-version key -> (suite, column index) -> non-passes (case, class, outcome, message, reason, finding, and
    #: the bundle's path on this machine: read to pack a download, never written out)
    failures: dict[str, dict[tuple[str, int], list[dict[str, Any]]]]
    #: op-version key -> {op, domain, since, dtypes}
    ops: dict[str, dict[str, Any]]
    #: finding id -> record
    findings: dict[str, dict]
    #: finding id -> column indices where a case it names does not pass
    finding_columns: dict[str, set[int]]
    stores: list[str]


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def op_key(tags: dict[str, Any]) -> str | None:
    op, since = tags.get("op"), tags.get("since_version")
    if not op or not since:
        return None
    domain = tags.get("domain") or ""
    return f"{domain + '.' if domain not in ('', 'ai.onnx') else ''}{op}-{since}"


def collect(stores: list[Path]) -> Site:
    """Read every store's default runs into columns and per-op-version cells."""
    if not stores:
        raise ReportError("site: name at least one store")
    named = findings_mod.named_by_expectations()
    records = findings_mod.load()
    columns: dict[tuple[str, str], Column] = {}
    cells: dict[str, dict[tuple[str, int], Counter]] = defaultdict(lambda: defaultdict(Counter))
    failures: dict[str, dict[tuple[str, int], list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    ops: dict[str, dict[str, Any]] = {}
    finding_columns: dict[str, set[int]] = defaultdict(set)
    index: dict[tuple[str, str], int] = {}
    labels = []
    pending: list[dict[str, Any]] = []  # rows read, placed once the columns are ordered
    parsed: dict[str, dict[str, Any]] = {}
    for path in stores:
        if not Path(path).is_file():
            raise ReportError(f"site: no store {path}")
        label = Path(path).stem
        labels.append(Path(path).name)
        store = open_store(path)
        selections = store_selections(path)
        for ref in default_runs(path, label):
            backends = {b["name"]: b for b in store.backends(ref.run_id)}
            root = _run_root(Path(path), (store.run(ref.run_id).get("args") or {}).get("store"))
            for row in store.summary_rows(ref.run_id):
                suite = suite_of(row["case_id"])
                if ref.only is not None and (suite, row["backend"]) not in ref.only:
                    continue
                b = backends.get(row["backend"], {})
                runtime, release = split_backend(row["backend"], b.get("version", ""))
                ck = (runtime, release)
                if ck not in columns:
                    columns[ck] = Column(runtime, release, row["backend"], label)
                    index[ck] = -1
                col = columns[ck]
                sel = selections[ref.run_id].get(suite) or Selection(suite)
                stat = col.suites.setdefault(suite, SuiteStat(sel.describe(), sel.draw))
                cls = outcome_class(row["outcome"], row["raw_outcome"])
                stat.counts[cls] += 1
                if cls != "skip":
                    stat.cases.add(row["case_id"])
                    if cls == "pass":
                        stat.passed.add(row["case_id"])
                    elif cls == "unspecified":
                        stat.apart.add(row["case_id"])
                if row["outcome"] == "xfail":
                    stat.known += 1
                text = row["tags"] or "{}"
                tags = parsed.get(text) or parsed.setdefault(text, json.loads(text))  # a case's tags, shared by its backends
                key = op_key(tags)
                row["_finding"] = findings_mod.finding_of(named, row["backend"], row["case_id"], row["reason"] or "") \
                    if row["outcome"] == "xfail" else None
                row["_key"], row["_class"], row["_col"] = key, cls, ck
                row["_bundle"] = _absolute_bundle(row["bundle"], root)  # this machine's path: read, never written out
                if cls != "pass":  # what a page shows of it: a traceback's files without the machine's folders
                    row["message"] = portable_text(row["message"], root)
                if key:
                    ops.setdefault(key, {"op": tags.get("op"), "domain": tags.get("domain") or "", "since": tags.get("since_version"),
                                         "dtypes": set()})["dtypes"].add(tags.get("dtype") or "")
                pending.append(row)
            for name, b in backends.items():
                if not b["available"]:
                    runtime, release = split_backend(name, b.get("version", ""))
                    col = columns.setdefault((runtime, release), Column(runtime, release, name, label))
                    col.available, col.reason = False, b.get("reason", "")
    ordered = sorted(columns.values(), key=lambda c: (c.runtime, release_key(c.release)))
    position = {(c.runtime, c.release): k for k, c in enumerate(ordered)}
    for row in pending:
        k = position[row["_col"]]
        if row["_key"]:
            cell = (suite_of(row["case_id"]), k)
            cells[row["_key"]][cell][row["_class"]] += 1
            if row["_class"] != "pass":
                failures[row["_key"]][cell].append({"case": row["case_id"], "class": row["_class"], "outcome": row["outcome"],
                                                  "raw": row["raw_outcome"] or row["outcome"], "message": (row["message"] or "")[:400],
                                                  "reason": row["reason"] or "", "finding": row["_finding"], "bundle": row["_bundle"]})
        if row["_finding"]:
            finding_columns[row["_finding"]].add(k)
    suites = sorted({s for c in ordered for s in c.suites})
    site = Site(ordered, suites, {k: dict(v) for k, v in cells.items()}, {k: dict(v) for k, v in failures.items()}, ops,
                records, dict(finding_columns), labels)
    compare(site)
    return site


def compare(site: Site) -> None:
    """Like-for-like conformance per suite and the flags of columns that look broken."""
    for suite in site.suites:
        stats = [(k, c.suites[suite]) for k, c in enumerate(site.columns) if suite in c.suites]
        for k, stat in stats:
            flag = _broken(stat)
            if flag:
                site.columns[k].flags[suite] = flag
        scored = [(k, s) for k, s in stats if suite not in site.columns[k].flags]
        if not scored:
            continue
        draws = Counter(s.draw for _, s in scored)
        draw = draws.most_common(1)[0][0]
        same = [(k, s) for k, s in scored if s.draw == draw]
        common = set.intersection(*(s.cases for _, s in same)) if same else set()
        for k, s in scored:
            if s.draw != draw:
                s.compared = False
                continue
            s.common = len(common)
            s.common_pass = len(common & s.passed)
            s.common_attempted = len(common - s.apart)
        _collapses(site, suite)


def _broken(stat: SuiteStat) -> str:
    if stat.total == 0:
        return "no case ran (every case skipped)" if stat.counts["skip"] else "no case"
    if stat.counts["pass"] == 0 and stat.counts["unsupported"] + stat.counts["refused"] >= 0.99 * stat.total:
        return f"every case unsupported or refused ({stat.total}): the runtime did not load"
    return ""


def _collapses(site: Site, suite: str) -> None:
    by_runtime: dict[str, list[int]] = defaultdict(list)
    for k, c in enumerate(site.columns):
        if suite in c.suites and suite not in c.flags:
            by_runtime[c.runtime].append(k)
    for ks in by_runtime.values():
        for before, after in zip(ks, ks[1:]):
            a, b = site.columns[before].suites[suite], site.columns[after].suites[suite]
            both = (a.cases & b.cases) - a.apart - b.apart
            if not both:
                continue
            ra, rb = 100 * len(both & a.passed) / len(both), 100 * len(both & b.passed) / len(both)
            if ra - rb > COLLAPSE_POINTS:
                site.columns[after].flags[suite] = (f"collapse: {rb:.1f} % against {ra:.1f} % for {site.columns[before].release} "
                                                    f"over the {len(both)} cases both ran")
