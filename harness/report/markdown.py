"""``summary.md``: short enough for a pull-request comment.

Totals per backend, then regressions against the baseline (first), improvements, the failures
that happen on one backend only, and the remaining failures, each list capped, each failure
with a link to its repro bundle. Tables by tabulate.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

from tabulate import tabulate

from ..execute import OUTCOMES
from .html import fmt_pct, fmt_ratio
from .matrix import CHANGE_KINDS, KINDS, REGRESSION_KINDS, Change, Report

#: GitHub refuses comments over 65,536 characters; stay well under
MAX_CHARS = 60_000
LIMITS = {"regressed": 30, "improved": 15, "groups": 25}


def _cell(text: Any, width: int = 110) -> str:
    """Text for one table cell (or list line): on one line, cut to ``width``, pipes escaped so
    they cannot split the row (GitHub honours the escape inside code spans too)."""
    text = " ".join(str(text or "").split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return text.replace("|", "\\|")


def _code(text: Any) -> str:
    return f"`{_cell(text, 300)}`"


def _link(bundle: str, folder: Path) -> str:
    if not bundle:
        return ""
    try:
        rel = os.path.relpath(bundle, folder)
    except ValueError:
        rel = bundle
    return f"[bundle]({Path(rel).as_posix()})".replace("|", "\\|")  # a cell's pipes are escaped, even in a link


def _more(n: int, shown: int, what: str) -> str:
    return f"\n_… and {n - shown:,} more {what}: see `index.html` or `results.json`._\n" if n > shown else ""


def render(report: Report, folder: Path) -> str:
    lines: list[str] = []
    title = f"## ONNX conformance: {report.title}"
    if report.diff is not None:
        title += f" (against {report.diff.base})"
    lines.append(title)
    lines.append("")
    present = [o for o in OUTCOMES if any(b.counts[o] for b in report.backends)]
    rows = []
    for b in report.backends:
        if not b.available:
            rows.append([_cell(b.label), "unavailable (below)"] + [""] * (len(present) + 1))
            continue
        rate = f"{fmt_pct(b.pass_rate)} of {b.loadable:,}" if b.pass_rate is not None else "-"
        rows.append([_cell(f"{b.label} {b.version}" if b.label == b.name else b.label), rate]
                    + [f"{b.counts[o]:,}" if b.counts[o] else "" for o in present] + [f"{b.not_loadable:,}"])
    lines.append(tabulate(rows, headers=["backend", "pass rate (loadable)", *present, "could not load"], tablefmt="github"))
    lines.append("")
    for b in report.backends:
        if not b.available:
            lines.append(f"- **{_cell(b.label)}** unavailable: {_cell(b.reason, 300)}")
    if any(not b.available for b in report.backends):
        lines.append("")

    by_pair = {(r["case_id"], r["backend"]): r for r in report.results}
    if report.diff is not None:
        counts = report.diff.counts()
        lines.append("**Changes:** " + (", ".join(f"{counts[k]:,} {k}" for k in CHANGE_KINDS if counts[k]) or "none"))
        lines.append("")
        for kind in REGRESSION_KINDS:  # each kind of regression in its own section
            regressed = report.diff.of_kind(kind)
            if regressed:
                lines.append(f"### Regressions: {kind}, {KINDS[kind]} ({len(regressed):,})")
                lines.append("")
                lines.append(_changes_table(regressed[: LIMITS["regressed"]], by_pair, folder))
                lines.append(_more(len(regressed), LIMITS["regressed"], kind))
        improved = report.diff.of_kind("improved")
        if improved:
            lines.append(f"### Improvements ({len(improved):,})")
            lines.append("")
            lines.append(_changes_table(improved[: LIMITS["improved"]], by_pair, folder, messages=False))
            lines.append(_more(len(improved), LIMITS["improved"], "improvements"))

    groups = failure_groups(report)
    if groups:
        n_fail = sum(g["failures"] for g in groups)
        n_only = sum(g["only"] for g in groups)
        lines.append(f"### Failures by op-version ({n_fail:,} failures; {n_only:,} fail only on one backend and pass on every other)")
        lines.append("")
        rows = [[_cell(g["backend"]), _cell(g["row"]), ", ".join(f"{n:,} {o}" for o, n in g["outcomes"].most_common()), f"{g['only']:,}" if g["only"] else "",
                 f"{_code(g['example']['case_id'])} {_link(g['example'].get('bundle_path', ''), folder)}".rstrip()]
                for g in groups[: LIMITS["groups"]]]
        lines.append(tabulate(rows, headers=["backend", "op-version", "failures", "only here", "example"], tablefmt="github"))
        lines.append(_more(len(groups), LIMITS["groups"], "op-versions with failures"))

    silent = report.unspecified()
    if silent:
        lines.append("### Where runtimes differ on unspecified behaviour (not counted in the pass rate)")
        lines.append("")
        rows = [[_cell(g["backend"]), _code(p["point"]), _cell(", ".join(p["op_versions"]), 60), f"{p['cases']:,}",
                 _cell(f"ours {p['expected']}, theirs {p['actual']}", 50), _cell(p["spec"], 90),
                 f"{_code(p['example'])} {_link(p['bundle'], folder)}".rstrip()]
                for g in silent for p in g["points"]]
        lines.append(tabulate(rows[: LIMITS["groups"]], headers=["backend", "spec-silent point", "op-versions", "cases", "first difference",
                                                               "spec text", "example"], tablefmt="github"))
        lines.append(_more(len(rows), LIMITS["groups"], "spec-silent points"))

    timed = report.perf.summary()
    if report.perf.onnxruntime and any(s["cases"] for s in timed.values()):
        lines.append("### Speed")
        lines.append("")
        lines.append(tabulate([[_cell(b), f"{s['cases']:,}", fmt_ratio(s["geomean_vs_fastest"]), fmt_ratio(s["geomean_vs_onnxruntime"])]
                               for b, s in timed.items() if s["cases"]],
                              headers=["backend", "timed cases", "geomean × fastest", f"geomean × {report.perf.onnxruntime}"], tablefmt="github"))
        lines.append("")
    lines.append("Re-run a failure: `python <bundle>/repro.py`. Full report: `index.html` (opens from disk); data: `results.json`, `junit.xml`.")
    text = "\n".join(lines).rstrip() + "\n"
    if len(text) > MAX_CHARS:  # a last resort; the caps above keep ordinary runs far below it
        text = text[: MAX_CHARS - 80].rsplit("\n", 1)[0] + "\n\n_(cut to fit a comment: see index.html)_\n"
    return text


def failure_groups(report: Report) -> list[dict[str, Any]]:
    """Failures grouped per backend and op-version (or suite, for multi-node graphs): those
    failing only on that backend first, then the largest."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    only = report.matrix.fails_only_here
    for r in report.failures():
        info = report.matrix.cases[r["case_id"]]
        row = info.op_version or (info.op_label if info.op else f"{info.suite} graphs")
        g = groups.setdefault((r["column"], row), {"backend": r["column"], "row": row, "outcomes": Counter(), "failures": 0,
                                                    "only": 0, "example": r})
        g["outcomes"][r["outcome"]] += 1
        g["failures"] += 1
        if (r["case_id"], r["column"]) in only:
            if not g["only"]:
                g["example"] = r
            g["only"] += 1
    return sorted(groups.values(), key=lambda g: (-g["only"], -g["failures"], g["row"], g["backend"]))


def _changes_table(changes: list[Change], by_pair: dict, folder: Path, messages: bool = True) -> str:
    rows = []
    for c in changes:
        row = [_code(c.case_id), _cell(c.backend), f"{c.before} → {c.after}"]
        if messages:
            r = by_pair.get((c.case_id, c.backend)) or {}
            row += [_cell(c.message, 90), _link(r.get("bundle_path") or c.bundle, folder)]
        rows.append(row)
    headers = ["case", "backend", "outcome"] + (["message", "repro"] if messages else [])
    return tabulate(rows, headers=headers, tablefmt="github")


class MarkdownWriter:
    name = "markdown"
    filename = "summary.md"

    def write(self, report: Report, folder: Path) -> Path:
        path = Path(folder) / self.filename
        path.write_text(render(report, Path(folder).resolve()), encoding="utf-8")
        return path
