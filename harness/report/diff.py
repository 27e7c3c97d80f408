"""Run-to-run diffs: per case x backend what changed between a base and a new set of results, like
with like."""

from __future__ import annotations

import fnmatch
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping
from .failures import _natural
from .records import PASSING
from .sources import portable_path
from .selection import NOT_RUN, NOTHING_EARLIER, NotCompared, Scope, Selection, like_for_like



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
    #: why it is allowed, when an expectation allows it (``--allow`` says nothing more)
    allowed_by: str = ""

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
    #: with :func:`diff_like_with_like`: the (suite, backend) pairs compared, each with the cases
    #: it was compared over (:mod:`.selection`), and the results left out with the reason
    over: dict[tuple[str, str], str] | None = None
    not_compared: list[NotCompared] = field(default_factory=list)

    @property
    def compared(self) -> list[tuple[str, str]] | None:
        return None if self.over is None else sorted(self.over)

    @property
    def only_base(self) -> dict[tuple[str, str], int]:
        """Pairs only the base ran (with their result counts)."""
        return {(n.suite, n.backend): n.results for n in self.not_compared if n.side == "base" and n.why.startswith(NOT_RUN)}

    @property
    def only_new(self) -> dict[tuple[str, str], int]:
        return {(n.suite, n.backend): n.results for n in self.not_compared if n.side == "new" and n.why == NOTHING_EARLIER}

    @property
    def disjoint(self) -> bool:
        """Both sides ran something, but nothing comparable: nothing to compare."""
        return self.over == {} and any(n.side == "base" for n in self.not_compared) and any(n.side == "new" for n in self.not_compared)

    def scope(self) -> str:
        """What was compared, in words (empty for a plain diff)."""
        if self.over is None:
            return ""
        if self.disjoint and self.only_base and self.only_new:
            return (f"{self.base} and {self.new} ran no suite on the same backend ({self.base}: {pair_text(self.only_base)}; "
                    f"{self.new}: {pair_text(self.only_new)}): nothing to compare")
        return Scope(self.over, self.not_compared).text()

    def of_kind(self, kind: str) -> list[Change]:
        return [c for c in self.changes if c.kind == kind]

    @property
    def regressions(self) -> list[Change]:
        """Regressions not accepted by an ``--allow`` pattern: what fails a CI gate."""
        return [c for c in self.changes if c.regression and not c.allowed]

    def counts(self) -> Counter:
        return Counter(c.kind for c in self.changes)

    def counts_line(self) -> str:
        """``3 regressed (1 allowed), 1 removed, 2 improved``: the count of every kind that occurs
        (with the regressions an ``--allow`` pattern or an expectation accepts), or ``no change``."""
        counts, allowed = self.counts(), Counter(c.kind for c in self.changes if c.allowed and c.regression)
        return ", ".join(f"{counts[k]:,} {k}" + (f" ({allowed[k]:,} allowed)" if allowed[k] else "")
                         for k in CHANGE_KINDS if counts[k]) or "no change"

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

    def allow_varying(self, entries: Any) -> int:
        """Accept the changes of cases that an expectation marks ``nondeterministic`` (the backend's
        output there varies from run to run; the entry names why) while both outcomes are ones the
        entry allows: a pass, unspecified, or an expected failure. Another failure, a skip or a
        case gone is still a regression. Returns how many were accepted."""
        from ..expectations import matching

        allowed_classes = {"pass", "unspecified", "xfail"}
        accepted = 0
        for change in self.changes:
            if not change.regression or change.allowed:
                continue
            if {outcome_class(change.before), outcome_class(change.after)} <= allowed_classes:
                varying = [e for e in matching(entries, change.backend, change.case_id) if e.nondeterministic]
                if varying:
                    # a shipped file by its place in the repository, another by its name: never a machine path
                    where = portable_path(varying[0].source, Path(__file__).resolve().parents[2], keep=1)
                    change.allowed, change.allowed_by = True, f"varies from run to run (nondeterministic in {where}): {varying[0].reason}"
                    accepted += 1
        return accepted

    def to_dict(self) -> dict[str, Any]:
        out = {"base": self.base, "new": self.new, "counts": dict(self.counts()), "changes": [c.to_dict() for c in self.changes]}
        if self.over is not None:
            out.update(compared=[[s, b, how] for (s, b), how in sorted(self.over.items())], scope=self.scope(), disjoint=self.disjoint,
                       not_compared=[n.__dict__ for n in self.not_compared])
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
                                  (row.get("message") or "") if a else "", (a or {}).get("bundle_rel", (a or {}).get("bundle_path") or (a or {}).get("bundle")) or ""))
    order = {k: n for n, k in enumerate(CHANGE_KINDS)}
    changes.sort(key=lambda c: (order[c.kind], _natural(c.case_id), c.backend))
    return RunDiff(base_label, new_label, changes)


def pair_text(pairs: Iterable[tuple[str, str]]) -> str:
    """``onnx-node on reference, onnxruntime; operators on onnxruntime``."""
    by_suite: dict[str, list[str]] = defaultdict(list)
    for suite, backend in sorted(pairs):
        by_suite[suite].append(backend)
    return "; ".join(f"{suite} on {', '.join(b)}" for suite, b in by_suite.items()) or "nothing"


def diff_like_with_like(base: list[dict[str, Any]], new: list[dict[str, Any]], base_label: str, new_label: str,
                        base_sel: Mapping[tuple[str, str], Selection] | None = None,
                        new_sel: Mapping[tuple[str, str], Selection] | None = None) -> RunDiff:
    """A diff like for like (:func:`.selection.like_for_like`): over the cases both sides ran
    of the (suite, backend) pairs both ran with the same draw; what a side ran alone is named in
    ``not_compared`` with its result count, never listed as removed or new. Two sides with
    nothing comparable give a diff with no change and ``disjoint`` set."""
    kept_base, kept_new, scope = like_for_like(base, new, base_label, new_label, base_sel, new_sel)
    diff = diff_results(kept_base, kept_new, base_label, new_label)
    diff.over, diff.not_compared = scope.compared, scope.not_compared
    return diff
