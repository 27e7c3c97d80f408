"""Judging one generated graph on the selected backends, and what a disagreement becomes (a finding)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..case import Tolerance
from ..compare import Comparator
from ..runner import BackendSpec
from .engine import Outcome
from .graph import Graph, combined_tolerance

#: outcome priority when one graph fails several ways (the first is shrunk first)
_PRIORITY = ("crash", "timeout", "error", "wrong-shape", "wrong-dtype", "mismatch", "rejected", "unsupported")


# =============================================================================================
# judging one graph
# =============================================================================================
@dataclass
class Failure:
    backend: str
    #: the backend family ("onnxruntime" for its optimized and unoptimized sessions)
    group: str
    symptom: str
    outcome: str
    message: str
    verdict: dict[str, Any] | None = None
    #: what the backend was compared with: the oracle, or another session's outputs
    expected: list[Any] | None = None
    tolerance: Tolerance | None = None
    #: what the backend returned (None when it failed to run)
    actual: list[Any] | None = None

    @property
    def kind(self) -> str:
        return kind_of(self.symptom)

    @property
    def signature(self) -> tuple[str, str]:
        return (self.group, self.kind)


_WRONG_VALUES = ("mismatch:values", "mismatch:inf", "mismatch:outputs", "wrong-shape")


def kind_of(symptom: str) -> str:
    """The class of a symptom that findings are deduplicated by: a wrong shape and wrong values
    are one class ("wrong-values", the same root cause often shows as either), NaN placement
    another; errors keep their kind; "optimized:" and "opt-vs-noopt:" prefixes stay."""
    prefix = ""
    for p in ("optimized:", "opt-vs-noopt:"):
        if symptom.startswith(p):
            prefix, symptom = p, symptom[len(p):]
    if symptom in _WRONG_VALUES:
        symptom = "wrong-values"
    elif symptom == "mismatch:nan":
        symptom = "nan"
    return prefix + symptom


def symptom_of(outcome: str, message: str, verdict: dict[str, Any] | None = None) -> str:
    """A coarse, stable description of how a backend failed (part of the deduplication key)."""
    if outcome == "mismatch":
        # NaN placement is its own symptom only when nothing else is off (NaN moved by a wrong
        # broadcast is wrong values)
        if verdict and verdict.get("nan_mismatch") and verdict.get("nan_mismatch") == verdict.get("bad_count"):
            return "mismatch:nan"
        if "infinity" in message:
            return "mismatch:inf"
        return "mismatch:values"
    if outcome in ("error", "rejected", "unsupported"):
        status = re.search(r":\s*([A-Z][A-Z_]{3,})\s*:", message)  # ORT status names (INVALID_ARGUMENT, FAIL)
        kind = status.group(1) if status else message.split(":", 1)[0].strip()[:40]
        return f"{outcome}:{kind}"
    return outcome


@dataclass
class Tester:
    """Runs one graph on every backend and judges it."""

    executor: Any
    backends: list[BackendSpec]
    #: backend name -> family name (variants of one runtime share a family)
    groups: dict[str, str]
    #: (optimized, unoptimized) pairs compared with each other
    pairs: list[tuple[str, str]] = field(default_factory=list)
    comparator: Any = None
    runs: int = 0
    #: outputs judged ``unspecified`` at a spec-silent point (a reading matched, invariants kept), by point
    unspecified: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        if self.comparator is None:
            self.comparator = Comparator()

    def test(self, g: Graph, model_bytes: bytes, groups: set[str] | None = None) -> list[Failure]:
        """Failures of ``g`` on every backend (of ``groups`` only, when given)."""
        feeds = g.feeds()
        expected = g.expected()
        tols = g.tolerances()
        outs: dict[str, Outcome] = {}
        failures: list[Failure] = []
        for spec in self.backends:
            if groups is not None and self.groups.get(spec.name, spec.name) not in groups:
                continue
            res = self.executor.run(spec.name, model_bytes, feeds)
            self.runs += 1
            outs[spec.name] = res
            fail = self._judge(spec.name, res, expected, tols, g)
            if fail:
                failures.append(fail)
        failed = {f.backend for f in failures}
        for opt, noopt in self.pairs:
            # One session failing the oracle alone is classified by _merge ("optimized:" when the
            # optimizer made the difference). Both failing leaves one question the oracle cannot
            # answer where its own verdict rests on an assumption (what NaN does in Max, say):
            # do the two sessions at least agree? Twice the tolerance: two results that each
            # pass the oracle never differ by more.
            a, b = outs.get(opt), outs.get(noopt)
            if opt not in failed or noopt not in failed or a is None or b is None or a.outputs is None or b.outputs is None:
                continue
            # a per-element bound fits the graph's output shapes: where the unoptimized session
            # returned another shape (a wrong one, which the oracle has already reported), its
            # largest value stands for it
            fitted = [t if k < len(b.outputs) and np.shape(b.outputs[k]) == np.shape(e) else _without_bound(t)
                      for k, (t, e) in enumerate(zip(tols, expected))]
            fail = self._judge(opt, a, b.outputs, [_scaled(t, 2.0) for t in fitted])
            if fail:
                fail.symptom = f"opt-vs-noopt:{fail.symptom}"
                fail.message = f"optimized vs unoptimized session: {fail.message}"
                failures.append(fail)
        return self._merge(failures)

    def _judge(self, name: str, res: Outcome, expected: list[Any], tols: list[Tolerance], g: Graph | None = None) -> Failure | None:
        group = self.groups.get(name, name)
        if res.outputs is None:
            return Failure(name, group, symptom_of(res.outcome, res.message), res.outcome, res.message, expected=expected,
                           tolerance=_loosest(tols))
        if len(res.outputs) != len(expected):
            msg = f"returned {len(res.outputs)} outputs, expected {len(expected)}"
            return Failure(name, group, "mismatch:outputs", "mismatch", msg, expected=expected, tolerance=_loosest(tols),
                           actual=res.outputs)
        for k, (e, a, tol) in enumerate(zip(expected, res.outputs, tols)):
            verdict = self.comparator.compare([e], [a], tol)
            site = g.silent.get(g.outputs[k].name) if g is not None else None
            if not verdict and site is not None:
                verdict = self._at_point(g, site, res.outputs, verdict, tol)
                if verdict.outcome == "unspecified":
                    self.unspecified.update(site.points)
                    continue
            if not verdict:
                vd = verdict.to_dict()
                vd["output"] = k
                message = verdict.message.replace("output 0:", f"output {k}:", 1)
                return Failure(name, group, symptom_of(verdict.outcome, message, vd), verdict.outcome, message, vd,
                               expected=expected, tolerance=tol, actual=res.outputs)
        return None

    def _at_point(self, g: Graph, site: Any, outputs: list[Any], verdict: Any, tol: Tolerance) -> Any:
        """A mismatch of an output of a node that reached spec-silent points, judged again by the
        points (the elements the spec fixes must match; an open one must match our value or one
        reading; every invariant must hold): ``unspecified`` or a mismatch that says why. The
        node's outputs the graph no longer shows take our values."""
        from ..registry import load_all, spec_silent_point

        index = {v.name: k for k, v in enumerate(g.outputs)}
        actual = [outputs[index[o]] if o in index else e for o, e in zip(site.outputs, site.expected)]
        points = [spec_silent_point(p) for p in site.points]
        reference = load_all()[("", site.op, site.since)].reference
        return self.comparator.spec_silent(verdict, points, site.inputs, site.attrs, site.expected, actual,
                                           _without_bound(tol), site.since, reference)

    def _merge(self, failures: list[Failure]) -> list[Failure]:
        """One failure per (family, symptom); a failure of the optimized session only is an
        optimizer symptom."""
        by_group: dict[str, list[Failure]] = {}
        for f in failures:
            by_group.setdefault(f.group, []).append(f)
        merged: list[Failure] = []
        for fs in by_group.values():
            seen: dict[str, Failure] = {}
            for f in fs:
                seen.setdefault(f.symptom, f)
            for f in seen.values():
                variants = {x.backend for x in fs if x.symptom == f.symptom}
                opt_only = any(f.backend == opt and noopt not in variants and not f.symptom.startswith("opt-vs-noopt")
                               for opt, noopt in self.pairs)
                if opt_only:
                    f.symptom = f"optimized:{f.symptom}"
                merged.append(f)
        merged.sort(key=lambda f: _PRIORITY.index(f.outcome) if f.outcome in _PRIORITY else len(_PRIORITY))
        return merged


def _scaled(t: Tolerance, k: float) -> Tolerance:
    bound = None if t.bound is None else tuple(None if b is None else b * k for b in t.bound)
    return Tolerance(t.rtol * k, t.atol * k, int(t.ulp * k) if t.ulp is not None else None, bound=bound)


def _loosest(tols: list[Tolerance]) -> Tolerance:
    return combined_tolerance(tols)


def _without_bound(t: Tolerance) -> Tolerance:
    """``t`` for a node's several outputs: its elementwise allowance (of one graph output) as
    its largest value."""
    if t.bound is None:
        return t
    extra = max((float(np.max(b)) for b in t.bound if b is not None and np.size(b)), default=0.0)
    return Tolerance(t.rtol, t.atol + extra, t.ulp)

# =============================================================================================
# findings
# =============================================================================================
@dataclass
class Finding:
    pattern: str
    backend: str
    group: str
    symptom: str
    outcome: str
    message: str
    graph: Graph
    failure: Failure
    shrunk: bool
    count: int = 1
    bundle: str = ""
    case_id: str = ""
    #: "spec" when the spec decides; otherwise why the spec does not (NaN behaviour not stated)
    spec_status: str = "spec"

    #: every symptom seen for this finding (a wrong shape and wrong values count as one kind)
    symptoms: Counter = field(default_factory=Counter)
    #: the name of its regression case (harness.generated.regressions), once written
    regression: str = ""

    @property
    def kind(self) -> str:
        return kind_of(self.symptom)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.pattern, self.group, self.kind)

    @property
    def ops(self) -> set[str]:
        return {n.op for n in self.graph.nodes}

    def summary(self) -> str:
        where = f" [{self.spec_status}]" if self.spec_status != "spec" else ""
        shrunk = "" if self.shrunk else ", not shrunk"
        return (f"{self.group} {self.kind}: {self.pattern} ({len(self.graph.nodes)} node(s){shrunk}, opset {self.graph.opset}, "
                f"{self.graph.dtype}){where} x{self.count}" + (f" -> {self.bundle}" if self.bundle else ""))


def _size_key(g: Graph) -> tuple:
    return (len(g.nodes), len(g.outputs), len(g.inputs), sum(v.size for v in g.inputs), len(g.initializers),
            len(g.spec.nodes), g.spec.opset)
