"""The words of report data: outcome classes, the headline of a backend's results, and the plain
records every report part shares (a run, a backend column, a case's identity)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any

from ..worker import OUTCOMES
from ..schema import dtype_label
from .sources import RunRef, _run_root, open_store, portable_command, portable_path, portable_value

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
        """The run as a report shows it: its store, arguments, environment and command without
        the machine's paths (:func:`.sources.portable_value`)."""
        run = open_store(ref.store).run(ref.run_id)
        args = run.get("args") or {}
        root = _run_root(ref.store, args.get("store"))
        portable = portable_value(args, root)
        corpus = args.get("corpus")
        if corpus and os.path.isabs(corpus) and portable.get("corpus") == Path(corpus).name:
            portable.pop("corpus")  # a corpus elsewhere on that machine: the commands use the default one
        return cls(ref.label, portable_path(ref.store, keep=1), run["id"], run["started"], run["finished"], run["status"],
                   portable_command(run.get("command") or "", root), portable_value(run.get("environment") or {}, root), portable)

    @property
    def portable_command(self) -> str:
        """The run's command as ``onnx-harness run ...``, shell-quoted, without the machine's paths."""
        return portable_command(self.command)


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
    #: the cases the headline is computed over: per selection and run, ``"onnx-node -k 'abs'
    #: (subset), run 3: 59 cases"`` (:mod:`.selection`)
    over: list[str] = field(default_factory=list)

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
                "headline": self.headline, "over": self.over}


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
