"""Non-passes grouped by cause (backend, op, outcome, dtype set, normalized message): what a vendor
reads first, and what ``expectations update`` turns into entries."""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable
from .records import CaseInfo



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
_PATH = re.compile(r"(?:…|[A-Za-z]:)?(?:[\\/][\w.+-]+){2,}[\\/]?")  # …/a/b: a path made portable
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
    #: the reasons the members carry (an expectation's reason and link), most common first
    reasons: Counter = field(default_factory=Counter)
    #: the finding the deciding expectation names (``harness/findings``), if any
    finding: str = ""
    #: per reason, the first member carrying it
    with_reason: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)

    @property
    def known(self) -> dict[str, str]:
        """Why this failure is known, where the eye is: the expectation's ``reason``, its ``link``
        and ``finding`` (empty when no expectation explains it)."""
        if not self.reasons:
            return {}
        text, link = split_reason(self.reasons.most_common(1)[0][0])
        return {"reason": text, "link": link, "finding": self.finding, "others": str(len(self.reasons) - 1) if len(self.reasons) > 1 else ""}

    @property
    def label(self) -> str:
        """E.g. ``ArgMax unsupported for float16: NOT_IMPLEMENTED : Could not find ...``."""
        dtypes = ", ".join(self.dtypes)
        return f"{self.op} {self.outcome}" + (f" for {dtypes}" if dtypes and dtypes != "-" else "") + (f": {self.cause}" if self.cause else "")

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "op": self.op, "outcome": self.outcome, "kind": self.kind, "cause": self.cause,
                "cases": self.cases, "dtypes": dict(self.dtypes), "op_versions": self.op_versions,
                "example": self.example.get("case_id", ""), "label": self.label, "known": self.known}


_LINK = re.compile(r"^(.*?)\s*\((https?://[^\s()]+)\)$", re.S)


def split_reason(reason: str) -> tuple[str, str]:
    """A result's reason as ``expectations.apply`` writes it (``"<reason> (<link>)"``): (reason, link)."""
    m = _LINK.match(reason or "")
    return (m.group(1), m.group(2)) if m else (reason or "", "")


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
        if r.get("reason"):
            g.reasons[r["reason"]] += 1
            g.with_reason.setdefault(r["reason"], r)
    named = None
    for g in groups.values():
        if g.reasons:
            from .. import findings

            named = findings.named_by_expectations() if named is None else named
            r = g.with_reason[g.reasons.most_common(1)[0][0]]
            g.finding = findings.finding_of(named, r["backend"], r["case_id"], r["reason"]) or ""
        g.op_versions.sort(key=_natural)
        g.dtypes = Counter(dict(sorted(g.dtypes.items(), key=lambda kv: _natural(kv[0]))))
    return sorted(groups.values(), key=lambda g: (g.rank, -g.cases, order.get(g.backend, len(order)), _natural(g.op), g.cause))
